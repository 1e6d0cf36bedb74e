"""The review's "to lose significance" answer (``significance_perturbation``) on llmfao (3,471 of
8,931 comparisons are ties, so the review's interval is the sandwich): every verified break is
replayed on the raw comparisons and the review's contrast test redone with statsmodels' HC0 GLM."""

import json

import numpy as np
import pandas as pd
import pytest

from bayesrank.data import read_comparisons
from bayesrank.datasets import path
from bayesrank.review import review
from tests.influence.significance_reference import fit_glm, replay, significance_margin

PAIR = "GPT 4>Falcon Instruct (40B)"


@pytest.fixture(scope="module")
def report():
    return review("llmfao", fast=True, seed=0, claims=[PAIR, "top1", "order"], budget=60)


@pytest.fixture(scope="module")
def rows():
    f = read_comparisons(path("llmfao")).frame
    y = f["outcome"].astype(str).map({"a": 1.0, "b": 0.0, "tie": 0.5})
    return pd.DataFrame({"a": f["model_a"].astype(str), "b": f["model_b"].astype(str), "y": y})


def _claim(report, text):
    return next(c for c in report.claims if c.claim.text == text)


def test_significance_is_lost_by_statsmodels_after_the_listed_actions(report, rows):
    c = _claim(report, PAIR)
    players = sorted(set(rows.a) | set(rows.b))
    a, b = PAIR.split(">")
    theta, cov = fit_glm(rows, players, "half")  # HC0: the review's sandwich, independently
    i, j = players.index(a), players.index(b)
    f = c.frequentist
    assert f["supported"] and f["interval"] == "sandwich" and f["sided"] == "one-sided"  # named in advance
    z = 1.6448536269514722  # Φ⁻¹(0.95): the one-sided test; its significance audit uses the same z
    assert f["lower"] == pytest.approx(theta[i] - theta[j] - z * np.sqrt(cov[i, i] + cov[j, j] - 2 * cov[i, j]),
                                       abs=1e-7)
    n = len(rows)
    for action, p in c.significance_perturbation.items():
        assert p["broken"] and p["verified"] and p["objective"] == f"{PAIR}+sig", action
        assert p["objective_details"]["covariance"] == "auto" and p["fraction_of_all"] == pytest.approx(p["budget"] / n)
        assert p["fraction"] == pytest.approx(p["budget"] / c.relative_to["n"])
        assert p["objective_details"]["z"] == pytest.approx(z)
        after = significance_margin(replay(rows, p["actions"]), players, [(a, b)], level=0.90)  # two-sided 90% = z
        before = significance_margin(replay(rows, p["actions"], limit=p["budget"] - 1), players, [(a, b)], level=0.90)
        assert after < 0 < before, (action, after, before)
        assert p["budget"] <= c.perturbation[action]["budget"], action  # greedy: fewer than the reversal here


def test_claims_without_significance_to_lose_are_not_audited(report):
    top1, order = _claim(report, "top1"), _claim(report, "order")
    assert not top1.frequentist["supported"]
    for c, why in ((top1, "not significant"), (order, "order claim")):
        assert set(c.significance_perturbation) == {"drop", "flip", "add"}
        for p in c.significance_perturbation.values():
            assert p["broken"] is None and p["budget"] is None and not p["verified"] and why in p["reason"]


def test_json_html_and_markdown_show_the_column(report, tmp_path):
    out = tmp_path / "r.json"
    report.to_json(out)  # validated against schemas/review.json
    doc = json.loads(out.read_text())
    pair = next(c for c in doc["claims"] if c["claim"] == PAIR)
    assert pair["significance_perturbation"]["flip"]["budget"] == _claim(report, PAIR).significance_perturbation["flip"]["budget"]
    budget = pair["significance_perturbation"]["drop"]["budget"]
    page, md = report.to_html(), report.to_markdown()
    assert "to lose significance" in page and f"drop: {budget} (" in page and "removes its significance" in page
    row = next(line for line in md.splitlines() if line.startswith("| GPT 4>Falcon"))
    assert f"drop: {budget} (" in row and row.count("✓") >= 6
    assert "not significant: no significance to lose" in md


def test_table_and_terminal_show_the_significance_fractions(report):
    """``ReviewReport.table()`` has the significance fraction per action (the JSON's, verified breaks
    only) and the terminal table of ``bayesrank review`` a 'to lose significance' column."""
    from rich.console import Console

    from bayesrank.review.cli import claims_table

    row = report.table().set_index("claim").loc[PAIR]
    sp = _claim(report, PAIR).significance_perturbation
    for action, p in sp.items():
        assert row[f"{action}_significance_fraction"] == (p["fraction"] if p["broken"] and p["verified"] else None)
    console = Console(width=250, record=True)
    console.print(claims_table(report))
    text = console.export_text()
    assert "to lose significance" in text and f"drop: {sp['drop']['budget']} (" in text


@pytest.mark.slow
def test_arena_significance_is_lost_before_the_reversal():
    """1.67M arena votes (sandwich): every significant default claim loses its significance by a
    verified drop, flip and add, each no larger than the verified reversal of the same action."""
    rep = review("arena", fast=True, seed=0)
    supported = [c for c in rep.claims if c.frequentist["supported"]]
    assert len(supported) == 4 and {c.claim.text for c in supported} >= {"top1", "topk:5"}
    for c in supported:
        for action, p in c.significance_perturbation.items():
            rev = c.perturbation[action]
            assert p["broken"] and p["verified"] and rev["broken"] and rev["verified"], (c.claim.text, action)
            assert p["final_value"] < 0 < p["initial_value"]
            assert p["budget"] <= rev["budget"], (c.claim.text, action, p["budget"], rev["budget"])


def test_claims_posterior_with_ties_is_the_half_win_posterior_at_the_sandwich(report, rows):
    """With ties the claims' Bayesian answer uses the half-win posterior (the estimand of the test and
    the audits), rescaled to the sandwich: its contrasts' variances equal statsmodels' HC0 GLM on the
    raw comparisons (1e-6); the Davidson posterior is reported beside it, not deciding."""
    fits = report.results["fits"]
    post = fits["claims"]
    assert post.ties == "half" and "adjusted to the sandwich" in post.method
    players = [str(p) for p in post.players]
    theta, cov = fit_glm(rows, players, "half")
    d = np.cov(post.draws.T)
    for a, b in [(0, 1), (3, 17), (10, 40)]:
        v_sm = cov[a, a] + cov[b, b] - 2 * cov[a, b]
        assert d[a, a] + d[b, b] - 2 * d[a, b] == pytest.approx(v_sm, rel=1e-6)
    c = _claim(report, PAIR)
    assert c.bayesian["ties"] == "half" and c.bayesian["other_tie_model"]["ties"] == "davidson"
