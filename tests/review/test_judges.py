"""The judges report on the bundled LLMFAO panel (crowd, GPT-3.5, GPT-4): each claim's per-judge status
equals a Bradley–Terry fit on that judge alone (its test: one-sided for a claim named in advance), and,
as an integration check (bayesrank against itself, not an independent reference), its HJA section
equals `bayesrank hja`."""

import json

import numpy as np
import pandas as pd
import pytest

from bayesrank.bt import BradleyTerry
from bayesrank.cli import main
from bayesrank.data import read_comparisons
from bayesrank.datasets import path
from bayesrank.review import review


@pytest.fixture(scope="module")
def panel_report():
    return review("llmfao-panel", fast=True, claims=["top1", "GPT 4>GPT 3.5 Turbo", "GPT 3.5 Turbo>GPT 4"])


def test_kind_is_detected_from_the_judge_column(panel_report):
    assert panel_report.kind == "judges"
    assert {s.key for s in panel_report.sections} >= {"judges", "claims_by_judge", "leaderboard"}


def test_integration_hja_section_equals_the_hja_command(panel_report, tmp_path):
    """Integration: the review's HJA section is the HJA command's result at the rank the data choose
    (``--rank auto``), and says which (the HJA fit itself is checked against independent references in
    tests/hja)."""
    out = tmp_path / "hja.json"
    assert main(["hja", "llmfao-panel", "--rank", "auto", "--json", str(out)]) == 0
    cmd = json.loads(out.read_text())
    sec = next(s for s in panel_report.sections if s.key == "judges")
    assert sec.data["rank"] == cmd["rank"] and sec.data["rank_selection"] == cmd["rank_selection"]
    assert sec.text[0].startswith(f"HJA rank {cmd['rank']} chosen by the data")
    cons = pd.DataFrame(cmd["consensus"]).set_index("player")
    sec = next(s for s in panel_report.sections if s.key == "judges")
    mine = pd.DataFrame(sec.data["consensus"]).set_index("player")
    np.testing.assert_allclose(mine["consensus_score"], cons.loc[mine.index, "score"], atol=1e-8)
    np.testing.assert_allclose(mine["consensus_lower"], cons.loc[mine.index, "lower"], atol=1e-8)
    judges = pd.DataFrame(sec.data["judges"]).set_index("judge")
    np.testing.assert_allclose(judges["gamma"], pd.DataFrame(cmd["judges"]).set_index("judge").loc[judges.index, "gamma"],
                               atol=1e-8)


def test_each_claim_under_each_judge_equals_a_fit_on_that_judge(panel_report):
    sec = next(s for s in panel_report.sections if s.key == "claims_by_judge")
    table = pd.DataFrame(sec.data["claims_by_judge"]).set_index("judge")
    comps = read_comparisons(path("llmfao-panel"))
    for judge in ("crowd", "gpt3", "gpt4"):
        sub = comps.subset(np.asarray(comps.frame["judge"] == judge))
        fit = BradleyTerry(sub).fit("mle")
        c = fit.contrast("GPT 4", "GPT 3.5 Turbo")
        z = 1.6448536269514722  # both claims are named in advance: one-sided, Φ⁻¹(0.95)
        expected = "holds, significant" if c.estimate > z * c.se else "holds" if c.estimate > 0 else "does not hold"
        assert table.loc[judge, "GPT 4>GPT 3.5 Turbo"] == expected
        reverse = "holds, significant" if -c.estimate > z * c.se else "holds" if c.estimate < 0 else "does not hold"
        assert table.loc[judge, "GPT 3.5 Turbo>GPT 4"] == reverse
    # the two opposite claims never both hold under one judge
    for _, row in table.iterrows():
        assert not (row["GPT 4>GPT 3.5 Turbo"].startswith("holds") and row["GPT 3.5 Turbo>GPT 4"].startswith("holds"))


def _flags_in(text: str) -> set[str]:
    import re

    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))


def _review_flags() -> set[str]:
    import argparse

    from bayesrank.review.cli import register

    sub = argparse.ArgumentParser().add_subparsers()
    register(sub)
    return {o for a in sub.choices["review"]._actions for o in a.option_strings}


def test_hja_falls_back_to_rank_0_where_rank_1_is_not_identified(tmp_path):
    """A Vicuna-80-like panel (four players judged by the human judge only): the review's HJA is the
    rank-0 fit, and its section says why rank 1 was not used."""
    from bayesrank.hja.model import HJA
    from tests.hja.panels import one_judge_panel

    data = tmp_path / "panel.csv"
    one_judge_panel().to_csv(data, index=False)
    rep = review(data, fast=True, claims=["top1"])
    assert rep.kind == "judges" and rep.parts["hja"].converged
    sec = next(s for s in rep.sections if s.key == "judges")
    assert sec.data["rank"] == 0
    assert "rank 1 (chosen by held-out fit) is not identified" in sec.text[0]
    assert "compared by one judge only (m6, m7, m8, m9)" in sec.text[0]
    ref = HJA(read_comparisons(data, judge="judge"), rank=0).fit("mle").table().set_index("player")
    mine = pd.DataFrame(sec.data["consensus"]).set_index("player")
    np.testing.assert_allclose(mine["consensus_score"], ref.loc[mine.index, "score"], atol=1e-8)


def test_hja_that_cannot_be_fitted_is_named_in_the_diagnostics(tmp_path):
    """One judge with 6 comparisons: no HJA (every judge needs 20). The review's diagnostics are not
    'converged', name the cause and a remedy, and the advice names only flags `review` has."""
    from tests.hja.panels import one_judge_panel

    df = one_judge_panel()
    small = df[df["judge"] == "claude"].head(6).assign(judge="tiny")
    data = tmp_path / "panel.csv"
    pd.concat([df, small]).to_csv(data, index=False)
    rep = review(data, fast=True, claims=["top1"])
    diag = rep.diagnostics
    assert not diag.converged and "NOT converged" in diag.line()
    text = " ".join(diag.messages)
    assert "HJA consensus not fitted" in text and "'tiny' (6)" in text and "Remedy:" in text
    everything = " ".join([*diag.messages, *rep.notes, *(t for s in rep.sections for t in s.text)])
    assert _flags_in(everything) <= _review_flags(), _flags_in(everything) - _review_flags()
    assert "min_per_judge" not in everything


def test_each_judges_fit_uses_the_reports_clusters():
    """With ``cluster="id"`` each judge's own fit is cluster-robust. Independent reference: statsmodels'
    logistic GLM on that judge's comparisons (y = 1, 0, ½) with ``cov_type="cluster"`` (groups = id).
    The crowd rates each output pair 1–5 times: 'Mythalion 13B>Luminous Base Control' is significant
    with the crowd's independence sandwich (t = 2.07) but not with its clusters (t = 1.52); the HJA
    consensus has no cluster model, and the report says so."""
    import statsmodels.api as sm

    claim = "Mythalion 13B>Luminous Base Control"
    rep = review("llmfao-panel", kind="judges", fast=True, cluster="id", claims=[claim], seed=0)
    table = pd.DataFrame(next(s for s in rep.sections if s.key == "claims_by_judge").data["claims_by_judge"])
    f = read_comparisons(path("llmfao-panel")).frame
    players = sorted(set(f["model_a"].astype(str)) | set(f["model_b"].astype(str)))
    idx = {p: k for k, p in enumerate(players)}
    for judge in ("crowd", "gpt3", "gpt4"):
        g = f[f["judge"] == judge]
        x = np.zeros((len(g), len(players)))
        x[np.arange(len(g)), [idx[p] for p in g["model_a"].astype(str)]] += 1
        x[np.arange(len(g)), [idx[p] for p in g["model_b"].astype(str)]] -= 1
        y = g["outcome"].astype(str).map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
        r = sm.GLM(y, x[:, 1:], family=sm.families.Binomial()).fit(
            tol=1e-13, cov_type="cluster", cov_kwds={"groups": g["id"].astype("category").cat.codes.to_numpy()})
        c = np.zeros(len(players) - 1)
        for p, sign in (("Mythalion 13B", 1.0), ("Luminous Base Control", -1.0)):
            if idx[p]:
                c[idx[p] - 1] += sign
        est, se = float(c @ r.params), float(np.sqrt(c @ r.cov_params() @ c))
        z = 1.6448536269514722  # named in advance: one-sided
        expected = "holds, significant" if est > z * se else "holds" if est > 0 else "does not hold"
        assert table.set_index("judge").loc[judge, claim] == expected
    assert table.set_index("judge").loc["crowd", claim] == "holds"
    assert any("HJA consensus has no model of clusters of id" in n for n in rep.notes)
