"""``bayesrank review`` on per-item results: one command on a folder of Inspect .eval logs and one on a
long model,item,score CSV; detection; the JSON validates; bad input exits 2 with one line."""

import json

import numpy as np
import pytest

from bayesrank.cli import main
from bayesrank.review.api import detect_kind

from .conftest import long_frame, rasch_matrix


def test_inspect_folder_one_command(inspect_logs, tmp_path, capsys):
    folder, expected = inspect_logs
    assert detect_kind(folder) == "items"
    out = tmp_path / "r.json"
    code = main(["review", str(folder), "--fast", "--json", str(out), "--md", str(tmp_path / "r.md"),
                 "--html", str(tmp_path / "r.html")])
    assert code == 0
    rep = json.loads(out.read_text())
    assert rep["kind"] == "items" and rep["schema"] == "review"
    means = {f"mockllm/{m}": np.mean([np.mean(v) for v in s.values()]) for m, s in expected.items()}
    lb = {r["player"]: r["score"] for r in rep["leaderboard"]}
    assert lb == pytest.approx(means)
    top = rep["claims"][0]
    assert top["claim"] == "top1" and top["frequentist"]["test"] == "paired t"  # epochs averaged: fractional
    assert any("repeated measures" in n for n in rep["notes"])


def test_long_csv_one_command(tmp_path):
    y = rasch_matrix(6, 500, seed=3, spread=1.0)
    p = tmp_path / "long.csv"
    long_frame(y).to_csv(p, index=False)
    assert detect_kind(p) == "items"
    out = tmp_path / "r.json"
    assert main(["review", str(p), "--fast", "--json", str(out), "--claim", "llm0>llm1", "--claim", "top1"]) == 0
    rep = json.loads(out.read_text())
    pair, top = rep["claims"]
    assert pair["frequentist"]["sided"] == "one-sided" and top["frequentist"]["sided"] == "two-sided"
    assert pair["bayesian"]["threshold"] == 0.95 and top["bayesian"]["threshold"] == pytest.approx(0.975)
    flip = top["perturbation"]["flip"]
    lead = int(np.argmax(y.mean(axis=1)))
    gap = min(y[lead].sum() - y[b].sum() for b in range(6) if b != lead)
    assert flip["budget"] == gap and flip["verified"]
    # the fraction is of the claim's own evidence: the inverse Simpson index of the binding contrast's
    # per-item variance shares (binding = the contrast with the largest two-sided McNemar p)
    from statsmodels.stats.contingency_tables import mcnemar

    others = [b for b in range(6) if b != lead]
    ps = [mcnemar([[0, int(((y[lead] == 1) & (y[b] == 0)).sum())], [int(((y[lead] == 0) & (y[b] == 1)).sum()), 0]],
                  exact=True).pvalue for b in others]
    b = others[int(np.argmax(ps))]
    v = ((y[lead] - y[b]) - (y[lead] - y[b]).mean()) ** 2
    n_eff = v.sum() ** 2 / (v**2).sum()
    assert flip["relative_to"]["n"] == pytest.approx(n_eff, rel=1e-12)
    assert flip["fraction"] == pytest.approx(gap / n_eff) and flip["fraction_of_all"] == pytest.approx(gap / 500)
    discordant = int((y[lead] != y[b]).sum())
    assert abs(n_eff - discordant) < 0.05 * discordant  # ≈ the discordant items


def test_bad_input_exits_2(tmp_path, capsys):
    p = tmp_path / "bad.csv"
    df = long_frame(rasch_matrix(2, 5))
    df.loc[2, "score"] = 3.0
    df.to_csv(p, index=False)
    assert main(["review", str(p), "--fast"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "outside [0, 1]" in err[0] and "lines [4]" in err[0]
    assert main(["review", str(p), "--kind", "items", "--axes", "x", "--fast"]) == 2


def test_bundled_real_benchmark_arena_bench(tmp_path):
    """15 models × 300 questions graded 1–10 by GPT-4 (arena-hard-auto's arena-bench-v1, Apache-2.0):
    the matrix equals an independent pandas reading; the claims' tests equal scipy's paired t test and
    the re-grade minimum equals a direct sort of the per-item capacities."""
    import pandas as pd
    from scipy import stats

    from bayesrank.datasets import path
    from bayesrank.review.api import review

    raw = pd.read_csv(path("arena-bench-items"))
    wide = raw.pivot(index="item", columns="model", values="score").dropna()
    assert wide.shape == (271, 15) and len(raw) == 4461
    rep = review("arena-bench-items", fast=True, claims=["top1"])
    means = wide.mean().sort_values(ascending=False)
    lead = means.index[0]
    ps = {b: stats.ttest_rel(wide[lead], wide[b]).pvalue for b in means.index[1:]}
    worst = max(ps, key=ps.get)
    f = rep.claims[0].frequentist
    assert f["test"] == "paired t" and f["p_value"] == pytest.approx(ps[worst], rel=1e-10)
    assert f["contrast"] == f"{lead} − {worst}"
    # smallest re-grades over the leader's contrasts: sort of capacities y_lead and 1 − y_b
    best = min(int(np.searchsorted(np.cumsum(np.sort(np.concatenate([wide[lead], 1 - wide[b]]))[::-1]),
                                   (wide[lead] - wide[b]).sum() - 1e-12) + 1) for b in means.index[1:])
    assert rep.claims[0].perturbation["flip"]["budget"] == best
    assert rep.to_dict()["reproducibility"]["n_rows"] == 4461
    rep.to_json(tmp_path / "r.json")


def test_loss_of_significance_on_the_real_benchmark(tmp_path):
    """The significant claim on the bundled fractional benchmark: the smallest re-grades and drops that
    remove the paired t test's significance, applied to the scores and re-tested with scipy's
    ttest_rel (p ≥ 0.05 after; one action fewer along the witness still p < 0.05), schema-valid JSON."""
    import pandas as pd
    from scipy import stats

    from bayesrank.datasets import path
    from bayesrank.review.api import review

    rep = review("arena-bench-items", fast=True, claims=["gpt-4-0314>gpt-3.5-turbo"])
    raw = pd.read_csv(path("arena-bench-items"))
    wide = raw.pivot(index="item", columns="model", values="score").dropna()
    sig = rep.claims[0].significance_perturbation
    for action in ("flip", "drop"):
        e = sig[action]
        assert e["broken"] and e["verified"] and e["exact"] and e["lower_bound"] == e["budget"]

        def p_after(acts):
            w = wide.copy()
            for a in acts:
                if a["kind"] == "drop":
                    w = w.drop(index=a["item"])
                else:
                    w.loc[a["item"], a["model"]] = a["to"]
            return stats.ttest_rel(w["gpt-4-0314"], w["gpt-3.5-turbo"], alternative="greater").pvalue

        assert p_after(e["actions"]) >= 0.05 > p_after(e["actions"][:-1])
    rep.to_json(tmp_path / "r.json")  # validates against the schema
