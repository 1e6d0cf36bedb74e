"""Claim parsing and the verdict rule (the rule printed in every report is the one applied)."""

import pytest

from bayesrank.errors import InputError
from bayesrank.review.claims import default_claims, parse_claim
from bayesrank.review.verdict import rule_text, verdict

PLAYERS = ["a>b", "c", "d", "e"]


def test_pair_names_may_contain_the_separator():
    c = parse_claim("a>b>c", "pairwise", players=PLAYERS)
    assert (c.kind, c.a, c.b, c.objective) == ("pair", "a>b", "c", "pair:a>b>c")
    assert parse_claim("topk:2", "pairwise", players=PLAYERS).k == 2
    assert parse_claim("order", "pairwise", players=PLAYERS).objective == "tau"


@pytest.mark.parametrize("text", ["x>c", "c>c", "topk:4", "topk:0", "topk:x", "best", "c>"])
def test_bad_claims_are_input_errors_naming_the_claim(text):
    with pytest.raises(InputError, match="claim"):
        parse_claim(text, "pairwise", players=PLAYERS)


def test_default_claims_follow_the_issue():
    names = [f"p{i}" for i in range(25)]
    texts = [c.text for c in default_claims(names)]
    assert texts == ["top1", "topk:5", "p0>p1", "p1>p2", "p2>p3", "p3>p4"]
    assert [c.text for c in default_claims(names[:4])] == ["top1", "topk:3", "p0>p1", "p1>p2", "p2>p3"]


@pytest.mark.parametrize("freq, prob, frac, expected", [
    (True, 0.99, None, "supported"),        # no overturning perturbation found
    (True, 0.99, 0.02, "supported"),        # overturned only by 2% >= 1%
    (True, 0.99, 0.005, "fragile"),         # overturned by 0.5% < 1%
    (True, 0.94, None, "unsupported"),      # posterior probability below the level
    (False, 0.99, None, "unsupported"),     # frequentist test does not reject
    (True, None, 0.5, "supported"),         # no Bayesian answer: the frequentist one decides
    (True, 0.95, 0.01, "supported"),        # boundaries: probability == level passes, fraction == threshold is not fragile
])
def test_verdict_rule(freq, prob, frac, expected):
    assert verdict(freq, prob, 0.95, frac, 0.01) == expected


def test_rule_text_states_the_thresholds():
    t = rule_text(0.9, 0.02)
    assert "90%" in t and "0.90" in t and "2.00%" in t


def test_reason_names_the_deciding_part_of_the_rule():
    from bayesrank.review.answer import reason

    freq = {"supported": True, "p_value": 2e-8}
    pert = {"drop": {"broken": True, "verified": True, "budget": 462, "fraction": 462 / 1670250},
            "flip": {"broken": True, "verified": True, "budget": 198, "fraction": 198 / 1670250},
            "add": {"broken": False, "verified": False, "budget": None, "fraction": None}}
    r = reason(freq, {"probability": 1.0}, pert, "fragile", 0.95)
    assert r == "significant (p = 2e-08); P(claim) = 1.000; overturned by flipping 198 comparisons (0.0119%)"
    r = reason({"supported": False, "p_value": 0.1}, {"probability": 0.9455}, {}, "unsupported", 0.95)
    assert r == "not significant (p = 0.1); P(claim) = 0.946 < 0.95"
    r = reason(freq, None, {"drop": {"broken": False, "verified": False}}, "supported", 0.95)
    assert r.endswith("no verified overturning perturbation within the budget")
