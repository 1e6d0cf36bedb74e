"""``review --scale elo``: the Bradley–Terry estimates and intervals the review shows are the logit
ones times 400/ln 10 (written out here as the reference, independently of the package's constant),
the unit is named, and nothing the verdict depends on changes (p-values, posterior probabilities,
verdicts, perturbation budgets and their evidence)."""

import json
import math

import numpy as np
import pytest

from bayesrank.cli import main
from bayesrank.errors import InputError
from bayesrank.protocol import validate
from bayesrank.review import review
from bayesrank.review.cli import claims_table

ELO = 400 / math.log(10)  # Elo points per logit (Elo's base-10 logistic with a 400-point scale)
CLAIMS = ["top1", "topk:3", "Boston Celtics>Denver Nuggets", "Denver Nuggets>Boston Celtics", "order"]
UNCHANGED = ("verdict", "reason", "sided", "selected", "relative_to", "perturbation", "significance_perturbation",
             "bayesian", "statement", "notes")


@pytest.fixture(scope="module")
def both():
    """The NBA 2023-24 season reviewed twice with the same seed, on each scale."""
    kw = dict(fast=True, seed=0, claims=CLAIMS)
    return review("nba", **kw), review("nba", scale="elo", **kw)


def _timeless(v):
    """``v`` without the audits' wall-clock ``seconds`` (the only field two identical runs differ in)."""
    if isinstance(v, dict):
        return {k: _timeless(x) for k, x in v.items() if k != "seconds"}
    if isinstance(v, list):
        return [_timeless(x) for x in v]
    return v


def _close(elo, logit):
    """Elo value = ELO × logit value to 1e-12 (relative; None and infinite ends stay as they are)."""
    if logit is None or not np.isfinite(logit):
        assert elo == logit
    else:
        assert elo == pytest.approx(ELO * logit, rel=1e-12, abs=1e-12)


def test_elo_scale_multiplies_estimates_and_changes_nothing_else(both):
    logit, elo = (r.to_dict() for r in both)
    assert logit["verdicts"] == elo["verdicts"] and logit["joint"] == elo["joint"]
    for a, b in zip(logit["claims"], elo["claims"]):
        for key in UNCHANGED:
            assert _timeless(a.get(key)) == _timeless(b.get(key)), (a["claim"], key)
        fa, fb = a["frequentist"], b["frequentist"]
        assert fa["p_value"] == fb["p_value"] and fa["supported"] == fb["supported"]
        assert fa["supported_by"] == fb["supported_by"]
        if a["kind"] == "order":  # a Kendall τ bound: no score scale
            assert fa == fb and fb["unit"] == "Kendall τ"
            continue
        assert (fa["unit"], fb["unit"]) == ("logit difference", "Elo points")
        for key in ("estimate", "lower", "upper"):
            _close(fb[key], fa[key])
        assert fa["intervals"].keys() == fb["intervals"].keys()
        for name, (lo, hi) in fa["intervals"].items():
            _close(fb["intervals"][name][0], lo)
            _close(fb["intervals"][name][1], hi)


def test_elo_leaderboard_is_the_logit_one_times_400_over_ln10(both):
    logit, elo = both
    assert list(logit.leaderboard["player"]) == list(elo.leaderboard["player"])
    for col in ("score", "lower", "upper"):
        np.testing.assert_allclose(elo.leaderboard[col], ELO * logit.leaderboard[col], rtol=1e-12, atol=1e-12)
    for col in ("rank", "rank_lower", "rank_upper"):
        assert list(elo.leaderboard[col]) == list(logit.leaderboard[col])
    assert abs(elo.leaderboard["score"].sum()) < 1e-9  # no anchor: centred as on the logit scale
    sec = {s.key: s for s in elo.sections}
    shown = dict(sec["leaderboard"].tables)["leaderboard (top 60)"]
    np.testing.assert_allclose(shown["score"], ELO * dict(next(s for s in logit.sections if s.key == "leaderboard")
                                                          .tables)["leaderboard (top 60)"]["score"], rtol=1e-12)
    assert sec["leaderboard"].data["unit"] == "Elo points" and "Elo points" in sec["leaderboard"].text[0]
    agr_l = next(s for s in logit.sections if s.key == "methods").tables[0][1]
    agr_e = sec["methods"].tables[0][1]
    np.testing.assert_allclose(agr_e["max_abs_score_diff"], ELO * agr_l["max_abs_score_diff"], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(agr_e["kendall_tau"], agr_l["kendall_tau"])


def test_elo_unit_is_named_on_the_page_markdown_terminal_and_json(both, tmp_path):
    from rich.console import Console

    _, elo = both
    html, md = elo.to_html(), elo.to_markdown()
    assert "Elo points" in html and "logit difference" not in html
    assert "Elo points" in md and "logit difference" not in md
    console = Console(width=140, record=True)
    console.print(claims_table(elo))
    assert "Elo points" in console.export_text()
    elo.to_json(tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    validate(doc, "review")
    assert {c["frequentist"]["unit"] for c in doc["claims"]} == {"Elo points", "Kendall τ"}


def test_elo_judges_consensus_scores_are_rescaled_and_judge_effects_are_not():
    kw = dict(kind="judges", fast=True, claims=["GPT 4>GPT 3.5 Turbo"], seed=0)
    logit, elo = review("llmfao-panel", **kw), review("llmfao-panel", scale="elo", **kw)
    sl, se = ({s.key: s for s in r.sections} for r in (logit, elo))
    tl, te = dict(sl["judges"].tables), dict(se["judges"].tables)
    cap = "consensus (HJA) beside pooled Bradley–Terry"
    for col in ("consensus_score", "consensus_lower", "pooled_bt_score", "pooled_bt_upper"):
        np.testing.assert_allclose(te[cap][col], ELO * tl[cap][col], rtol=1e-12, atol=1e-12)
    assert te["judges"].equals(tl["judges"])  # γ and its interval are unitless
    assert elo.claims[0].verdict == logit.claims[0].verdict
    assert elo.claims[0].frequentist["unit"] == "Elo points"


@pytest.mark.parametrize("data, kind", [("lm-eval-2023", "grid"), ("arena-bench-items", "items")])
def test_elo_scale_is_refused_for_non_bradley_terry_kinds(data, kind):
    with pytest.raises(InputError, match=f"--scale elo applies to pairwise and judge data.*{kind} data"):
        review(data, kind=kind, scale="elo", fast=True)


def test_elo_scale_on_confidence_records_is_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "conf.csv"
    path.write_text("correct,verbal,token\n1,0.9,0.8\n0,0.4,0.3\n")
    assert main(["review", str(path), "--scale", "elo", "--fast"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--scale elo applies to pairwise and judge data" in err
    assert "confidence data" in err
