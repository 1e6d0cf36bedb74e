"""Claim parsing and the verdict rule (the rule printed in every report is the one applied)."""

import numpy as np
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
    """No default claim repeats another: top1 already claims #1 > #2, so the adjacent pairs start below."""
    names = [f"p{i}" for i in range(25)]
    texts = [c.text for c in default_claims(names)]
    assert texts == ["top1", "topk:5", "p1>p2", "p2>p3", "p3>p4"]
    assert [c.text for c in default_claims(names[:4])] == ["top1", "topk:3", "p1>p2", "p2>p3"]
    assert [c.text for c in default_claims(names[:2])] == ["top1"]


def test_statements_name_the_players():
    from bayesrank.review.claims import statement

    ranking = ["x", "y", "z", "w"]
    assert statement(parse_claim("top1", "pairwise", players=ranking), ranking) == "x is #1"
    assert statement(parse_claim("topk:3", "pairwise", players=ranking), ranking) == "x, y, z are the top 3"
    assert statement(parse_claim("y>z", "pairwise", players=ranking), ranking) is None  # the text names both


def test_claims_named_in_advance_are_one_sided_and_data_selected_ones_two_sided():
    assert parse_claim("c>d", "pairwise", players=PLAYERS).sided == "one-sided"
    for text in ("top1", "topk:2", "order"):
        assert parse_claim(text, "pairwise", players=PLAYERS).sided == "two-sided", text
    assert {c.sided for c in default_claims([f"p{i}" for i in range(25)])} == {"two-sided"}


def test_levels_match_between_the_test_and_the_posterior():
    """One-sided at L: z = Φ⁻¹(L), P ≥ L; two-sided: z = Φ⁻¹((1+L)/2), P ≥ (1+L)/2 — so at the
    flat-prior limit (P = Φ(t)) the test and the posterior decide alike for every t (scipy's norm)."""
    from scipy.stats import norm

    from bayesrank.review.verdict import critical_z, p_value, probability_threshold

    for level in (0.9, 0.95, 0.99):
        assert critical_z(level, "one-sided") == pytest.approx(norm.ppf(level), abs=1e-12)
        assert critical_z(level, "two-sided") == pytest.approx(norm.ppf(0.5 + level / 2), abs=1e-12)
        for sided in ("one-sided", "two-sided"):
            t = np.linspace(-4, 4, 2001)
            test = t > critical_z(level, sided)
            bayes = norm.cdf(t) >= probability_threshold(level, sided)
            assert (test == bayes).mean() > 0.999  # differ at most at the grid point on the boundary
            assert ((p_value(t, sided) < 1 - level) == test).all()
    np.testing.assert_allclose(p_value([1.0, -1.0], "one-sided"), norm.sf([1.0, -1.0]))
    np.testing.assert_allclose(p_value([1.0, -1.0], "two-sided"), [2 * norm.sf(1.0), 1.0])


@pytest.mark.parametrize("freq, prob, frac, searched, converged, expected", [
    (True, 0.99, None, True, True, "supported"),        # no overturning perturbation found in the searched range
    (True, 0.99, 0.02, True, True, "supported"),        # overturned only by 2% >= 1%
    (True, 0.99, 0.005, True, True, "fragile"),         # overturned by 0.5% < 1%
    (True, 0.99, 0.005, False, True, "fragile"),        # a witness below the threshold needs no full search
    (True, 0.99, None, False, True, "not searched"),    # none found, but the range below 1% was not searched
    (True, 0.99, 0.02, False, True, "not searched"),    # the witness found is above the threshold, range not covered
    (True, 0.94, None, True, True, "unsupported"),      # posterior probability below the threshold
    (False, 0.99, None, True, True, "unsupported"),     # frequentist test does not reject
    (False, 0.99, None, True, False, "unsupported"),    # the frequentist answer alone settles it
    (True, 0.99, None, True, False, "not converged"),   # no verdict on an unconverged posterior
    (True, 0.10, 0.005, True, False, "not converged"),  # ... whatever the posterior says
    (True, None, 0.5, True, True, "supported"),         # no Bayesian answer: the frequentist one decides
    (True, 0.95, 0.01, True, True, "supported"),        # boundaries: probability == threshold passes, fraction == threshold is not fragile
])
def test_verdict_rule(freq, prob, frac, searched, converged, expected):
    assert verdict(freq, prob, 0.95, frac, 0.01, searched=searched, converged=converged) == expected


def test_rule_text_states_the_thresholds():
    t = rule_text(0.9, 0.02)
    assert "90%" in t and "z = 1.282" in t and "z = 1.645" in t and "0.9 one-sided" in t and "0.95 two-sided" in t
    assert "2.00%" in t and "found by the greedy audit within B" in t and "not searched" in t and "not converged" in t


def test_reason_names_the_deciding_part_of_the_rule():
    from bayesrank.review.answer import reason

    rel = {"what": "effective comparisons informing ...", "n": 25102.0, "unit": "comparisons"}
    freq = {"supported": True, "p_value": 2e-8, "sided": "two-sided"}
    pert = {"drop": {"broken": True, "verified": True, "budget": 462, "fraction": 462 / 25102, "relative_to": rel},
            "flip": {"broken": True, "verified": True, "budget": 198, "fraction": 198 / 25102, "relative_to": rel},
            "add": {"broken": False, "verified": False, "budget": None, "fraction": None, "relative_to": rel}}
    r = reason(freq, {"probability": 1.0, "threshold": 0.975, "n_draws": 2000}, pert, "fragile", 0.95)
    # numbers as the columns write them: the posterior share to the resolution of 2,000 draws
    assert r == ("significant (two-sided p = 2.0e-08); P(claim) > 0.9995; overturned by flipping 198 comparisons "
                 "(0.79% of the claim's 25,102 effective comparisons)")
    r = reason({"supported": False, "p_value": 0.1, "sided": "one-sided"}, {"probability": 0.9455, "threshold": 0.95},
               {}, "unsupported", 0.95)
    assert r == "not significant (one-sided p = 0.10); P(claim) = 0.946, below 0.95"
    one = {"drop": {"broken": True, "verified": True, "budget": 1, "fraction": 0.001}}
    assert reason(freq, None, one, "fragile", 0.95).endswith("overturned by dropping 1 comparison (0.1%)")
    # a supported claim is not "overturned": its smallest perturbation found was not below the threshold
    big = {"flip": {"broken": True, "verified": True, "budget": 164, "fraction": 0.012}}
    assert reason(freq, None, big, "supported", 0.95).endswith(
        "the smallest overturning perturbation found: flipping 164 comparisons (1.2%)")
    assert "p < 1e-16" in reason({"supported": True, "p_value": 2e-284}, None, {}, "supported", 0.95)
    not_audited = {a: {"broken": None, "reason": "the claim is false at the point estimate"} for a in ("drop", "flip")}
    assert reason(freq, None, not_audited, "unsupported", 0.95).endswith("the claim is false at the point estimate")
    none = {a: {"broken": False, "verified": False, "budget": None, "fraction": None, "relative_to": rel,
                "searched_to": s} for a, s in (("drop", 1256), ("flip", 300))}
    r = reason(freq, None, none, "not searched", 0.95)
    assert r.endswith("none found by the greedy audit within 300 (1.2% of the claim's 25,102 effective comparisons)")



def test_review_of_symmetric_players_answers_the_tied_pair_without_auditing_it(tmp_path, capsys):
    """b and c have the same record against everyone and split their own games, so θ_b = θ_c up to
    round-off whichever way it falls: the default claim between them (#2 > #3) is answered —
    unsupported, not audited because it is tied at the point estimate — as the items kind answers a
    tie (the review exited 2 on 'the claim does not hold' when round-off put b a hair ahead)."""
    import json

    import pandas as pd

    from bayesrank.cli import main

    wins = {("a", "b"): (5, 2), ("a", "c"): (5, 2), ("a", "d"): (6, 1), ("b", "c"): (3, 3),
            ("b", "d"): (5, 2), ("c", "d"): (5, 2)}
    rows = [(x, y, "a" if k < w else "b") for (x, y), (w, lose) in wins.items() for k in range(w + lose)]
    f = tmp_path / "sym.csv"
    pd.DataFrame(rows, columns=["model_a", "model_b", "outcome"]).to_csv(f, index=False)
    assert main(["review", str(f), "--fast", "--json", str(tmp_path / "r.json")]) == 0
    claims = {c["claim"]: c for c in json.loads((tmp_path / "r.json").read_text())["claims"]}
    tied = claims.get("b>c") or claims["c>b"]
    assert tied["verdict"] == "unsupported"
    assert {p["reason"] for p in tied["perturbation"].values()} == {"the claim is tied at the point estimate"}
    assert not any(p["verified"] for p in tied["perturbation"].values())
    assert claims["top1"]["verdict"]
