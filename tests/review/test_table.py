"""`bayesrank review TABLE --kind table`: published results tables end to end (page, Markdown, JSON,
terminal), the verdict rule on a held-out table built from real per-item results, score tables,
and the one-line errors for malformed tables."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from bayesrank.cli import main
from bayesrank.datasets import path as bundled
from bayesrank.protocol import validate
from bayesrank.review.api import detect_kind
from tests.stats.test_margins import alpaca_wins, extreme_tables, one_sided


def run(tmp_path, *args, code=0):
    out = tmp_path / "r.json"
    got = main(["review", *map(str, args), "--json", str(out), "--html", str(tmp_path / "r.html"),
                "--md", str(tmp_path / "r.md")])
    assert got == code
    doc = json.loads(out.read_text())
    validate(doc, "review")
    return doc


def expected_verdict(low, high, prob, threshold, overturn, fragile_below=0.01, alpha=0.05):
    """The table rule as the issue states it, written here."""
    if not low < alpha:
        return "unsupported"
    if not high < alpha:
        return "undetermined by the table"
    if prob < threshold:
        return "unsupported"
    return "fragile" if overturn < fragile_below else "supported"


def test_held_out_real_table_bounds_truth_and_verdicts(tmp_path):
    """AlpacaEval 2.0 per-instruction wins (real paired data) reduced to a published table — win rate
    in percent with two decimals and n — then reviewed: p_value_bounds equal scipy's exact McNemar on
    the extreme tables built from the margins here, the true paired p lies inside, and the three
    verdicts follow the rule (one supported, one undetermined by the table, one unsupported)."""
    w = alpaca_wins()
    models = ["FuseChat-Qwen-2.5-7B-Instruct", "FuseChat-Llama-3.2-3B-Instruct", "claude-2", "claude-2.1", "claude"]
    n = len(w)
    table = pd.DataFrame({"model": models, "win_rate": [round(100 * w[m].mean(), 2) for m in models], "n_total": n})
    path = tmp_path / "alpaca_eval_table.csv"
    table.to_csv(path, index=False)
    assert detect_kind(path) == "table"
    claims = ["FuseChat-Qwen-2.5-7B-Instruct>FuseChat-Llama-3.2-3B-Instruct", "claude-2>claude-2.1", "claude-2>claude"]
    doc = run(tmp_path, path, *[f"--claim={c}" for c in claims])
    assert any("percentages" in x for x in doc["notes"])
    verdicts = []
    for c, (a, b) in zip(doc["claims"], [x.split(">") for x in claims]):
        ya, yb = w[a].to_numpy(int), w[b].to_numpy(int)
        lo_t, hi_t = extreme_tables(int(ya.sum()), int(yb.sum()), n)
        f = c["frequentist"]
        assert c["sided"] == "one-sided"
        assert f["p_value_bounds"] == pytest.approx([one_sided(lo_t), one_sided(hi_t)], rel=1e-9, abs=1e-300)
        true = np.array([[np.sum(ya & yb), np.sum(ya & (1 - yb))], [np.sum((1 - ya) & yb), np.sum((1 - ya) & (1 - yb))]])
        assert f["p_value_bounds"][0] <= one_sided(true) <= f["p_value_bounds"][1]
        assert mcnemar(true, exact=True).pvalue >= mcnemar(lo_t, exact=True).pvalue
        gap = int(ya.sum() - yb.sum())
        assert c["perturbation"]["regrade"]["budget"] == gap
        assert c["verdict"] == expected_verdict(*f["p_value_bounds"], c["bayesian"]["probability"], 0.95, gap / n)
        assert (c["to_settle"] is None) == (c["verdict"] == "supported")
        verdicts.append(c["verdict"])
    assert verdicts == ["supported", "undetermined by the table", "unsupported"]
    md = (tmp_path / "r.md").read_text()
    assert "undetermined by the table" in md and "claude-2>claude-2.1" in md
    assert 'class="verdict undetermined-by-the-table"' in (tmp_path / "r.html").read_text()
    assert doc["verdicts"]["undetermined by the table"] == 1


def lm_eval_arc(tmp_path):
    """A real published table: ARC-challenge 0-shot accuracies and stderr of the lm-eval-harness 2023
    results (bundled), n = 1,172 items (= the n implied by every row's stderr)."""
    d = pd.read_csv(bundled("lm-eval-2023"))
    x = d[(d["task"] == "arc_challenge") & (d["metric"] == "acc") & (d["num_fewshot"] == 0)]
    t = x[["model", "task", "value", "stderr"]].rename(columns={"task": "benchmark", "value": "accuracy"}).assign(n=1172)
    path = tmp_path / "arc_challenge.csv"
    t.to_csv(path, index=False)
    return path, t


def test_lm_eval_arc_table_end_to_end(tmp_path, capsys):
    path, t = lm_eval_arc(tmp_path)
    doc = run(tmp_path, path)
    assert doc["kind"] == "table"
    out = capsys.readouterr().out
    assert "claims and verdicts" in out and "undetermined by the table" in out
    top1 = doc["claims"][0]
    assert top1["claim"] == "top1" and top1["statement"] == "llama-30B is #1 on arc_challenge"
    # intersection–union: each bound is the largest over the 21 rivals, recomputed here
    acc = t.set_index("model")["accuracy"]
    xs = (acc * 1172).round().astype(int)
    lows, highs = [], []
    for _rival, x in xs.drop("llama-30B").items():
        lo_t, hi_t = extreme_tables(int(xs["llama-30B"]), int(x), 1172)
        lows.append(min(1, 2 * one_sided(lo_t)))
        highs.append(min(1, 2 * one_sided(hi_t)))
    assert top1["frequentist"]["p_value_bounds"] == pytest.approx([max(lows), max(highs)], rel=1e-9)
    assert len(top1["contrasts"]) == 21
    assert top1["perturbation"]["regrade"]["budget"] == int(xs["llama-30B"] - xs["llama-13B"])
    assert "pairing" in doc["sections"] and doc["sections"]["pairing"]["prior"]["shape"] > 0
    assert "published_se" in doc["sections"] and not any("far from" in n for n in doc["notes"])


def test_to_settle_reaches_its_power_by_simulation(tmp_path):
    """The items to add for an undetermined claim: items drawn like the table's at its largest
    discordance (d = +1 w.p. (δ + γ)/2, −1 w.p. (δ − γ)/2), the exact McNemar test at the claim's
    sidedness reaches the stated 80% power within 3 Monte Carlo SEs (2,000 replications)."""
    path, _ = lm_eval_arc(tmp_path)
    doc = run(tmp_path, path, "--claim", "llama-13B>mpt-7b")
    c = doc["claims"][0]
    assert c["verdict"] == "undetermined by the table"
    s = c["to_settle"]
    assert s["unit"] == "items" and s["power"] == 0.8
    total = 1172 + s["additional"]
    gam, dlt = s["difference"], s["discordance_rate"]
    rng = np.random.default_rng(7)
    reps = 2000
    draws = rng.multinomial(total, [(dlt + gam) / 2, (dlt - gam) / 2, 1 - dlt], size=reps)
    p = stats.binom.sf(draws[:, 0] - 1, draws[:, 0] + draws[:, 1], 0.5)
    power = float(np.mean(p < 0.05))
    assert abs(power - 0.8) < 3 * math.sqrt(0.8 * 0.2 / reps)


def test_score_table_bounds_and_asymmetric_intervals(tmp_path):
    """Arena-style: score with a published 95% interval; the pair's p-value bounds are the z-tests at
    SE |se_A − se_B| and se_A + se_B (closed form here); an asymmetric interval is noted."""
    t = pd.DataFrame({"model": ["A", "B", "C"], "score": [1283.0, 1279.0, 1250.0],
                      "lower": [1279.0, 1274.0, 1240.0], "upper": [1287.0, 1284.0, 1266.0], "votes": [9000, 8000, 500]})
    path = tmp_path / "arena.csv"
    t.to_csv(path, index=False)
    assert detect_kind(path) == "table"
    doc = run(tmp_path, path, "--claim", "A>B", "--claim", "A>C")
    z = stats.norm.ppf(0.975)
    se = {"A": 8 / (2 * z), "B": 10 / (2 * z), "C": 26 / (2 * z)}
    for c, rival in zip(doc["claims"], ("B", "C")):
        est = 1283.0 - t.set_index("model").loc[rival, "score"]
        want = [stats.norm.sf(est / abs(se["A"] - se[rival])), stats.norm.sf(est / (se["A"] + se[rival]))]
        assert c["frequentist"]["p_value_bounds"] == pytest.approx(want, rel=1e-9)
        assert c["to_settle"] is None or c["to_settle"]["settleable"] is False
    # 1,283 ± 4 vs 1,279 ± 5: significant only if the two scores were almost perfectly correlated
    assert doc["claims"][0]["verdict"] == "undetermined by the table"
    assert doc["claims"][1]["verdict"] == "supported"
    assert any("asymmetric" in n for n in doc["notes"])
    doc = run(tmp_path, path, "--claim", "A>C", "--interval-level", "0.9")
    assert doc["claims"][0]["frequentist"]["se_bounds"][1] == pytest.approx(
        8 / (2 * stats.norm.ppf(0.95)) + 26 / (2 * stats.norm.ppf(0.95)))


def test_different_n_falls_back_to_the_unpaired_test(tmp_path):
    t = pd.DataFrame({"model": ["A", "B"], "correct": [700, 600], "n": [1000, 1100]})
    path = tmp_path / "t.csv"
    t.to_csv(path, index=False)
    doc = run(tmp_path, path, "--claim", "A>B")
    c = doc["claims"][0]
    assert c["frequentist"]["p_value_bounds"] is None
    from statsmodels.stats.proportion import proportions_ztest

    assert c["frequentist"]["p_value"] == pytest.approx(proportions_ztest([700, 600], [1000, 1100],
                                                                          alternative="larger")[1])
    assert any("different numbers of items" in n for n in c["notes"])
    assert c["verdict"] == "supported"


def test_inconsistent_published_se_is_noted(tmp_path):
    t = pd.DataFrame({"model": ["A", "B"], "accuracy": [0.712, 0.705], "n": [1319, 1319], "stderr": [0.025, 0.0126]})
    path = tmp_path / "t.csv"
    t.to_csv(path, index=False)
    doc = run(tmp_path, path)
    assert any("far from √(p(1 − p)/n)" in n and "clustered or resampled" in n for n in doc["notes"])
    f = doc["claims"][0]["frequentist"]
    assert f["p_value_published_se"] == pytest.approx(min(1, 2 * stats.norm.sf(
        (939 - 930) / 1319 / math.hypot(0.025, 0.0126))), rel=1e-6)


@pytest.mark.parametrize("rows,message", [
    ("model,correct,n\nA,12,10\nB,5,10\n", "correct > n on line 2"),
    ("model,accuracy,n\nA,0.5,10\nB,120,10\n", "accuracies outside [0, 1]"),
    ("model,accuracy,n\nA,-0.1,10\nB,0.5,10\n", "accuracies outside [0, 1]"),
    ("model,correct,n\nA,3.5,10\nB,5,10\n", "whole numbers"),
    ("model,correct,n\nA,3,10\nA,5,10\n", "listed more than once"),
    ("model,correct,n\nA,3,x\nB,5,10\n", "needs a number"),
])
def test_malformed_tables_are_one_line_errors(tmp_path, capsys, rows, message):
    path = tmp_path / "bad.csv"
    path.write_text(rows)
    assert main(["review", str(path), "--kind", "table"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_percentages_and_rounding_are_stated(tmp_path):
    t = pd.DataFrame({"model": ["ours", "baseline"], "benchmark": "GSM8K", "accuracy": [71.2, 70.5], "n": 1319})
    path = tmp_path / "gsm8k.csv"
    t.to_csv(path, index=False)
    doc = run(tmp_path, path, "--claim", "ours>baseline@GSM8K")
    assert any("percentages" in n for n in doc["notes"]) and any("round(accuracy × n)" in n for n in doc["notes"])
    c = doc["claims"][0]
    assert [x["correct_a"] for x in c["contrasts"]] == [939] and c["contrasts"][0]["correct_b"] == 930
    # 9 items apart: significant only if the two models disagreed on at most 39 items
    f = c["frequentist"]
    assert c["verdict"] == "undetermined by the table" and c["benchmark"] == "GSM8K"
    assert f["discordance_bounds"][0] == 9 and f["p_value_bounds"][0] == pytest.approx(2.0**-9)
    d = f["discordance_to_significance"]
    assert stats.binomtest((d + 9) // 2, d, 0.5, alternative="greater").pvalue < 0.05
    assert stats.binomtest((d + 11) // 2, d + 2, 0.5, alternative="greater").pvalue >= 0.05


def test_names_are_escaped_in_the_markdown(tmp_path):
    """Model names are untrusted: a pipe or an asterisk in a name cannot break the Markdown table
    (the review's md_esc), nor a tag the page."""
    t = pd.DataFrame({"model": ["ours|v2*", "<b>base</b>"], "correct": [700, 600], "n": [1000, 1000]})
    path = tmp_path / "t.csv"
    t.to_csv(path, index=False)
    run(tmp_path, path)
    md = (tmp_path / "r.md").read_text()
    assert "ours\\|v2\\*" in md and "ours|v2*" not in md
    assert "<b>base</b>" not in (tmp_path / "r.html").read_text()


def test_table_page_has_no_horizontal_overflow(tmp_path):
    """The new verdict's long badge wraps inside its cell (Chromium at 1,280 and 720 pixels)."""
    from tests.review.chromium import layout

    path, _ = lm_eval_arc(tmp_path)
    run(tmp_path, path)
    page = (tmp_path / "r.html").read_text()
    for width in (1280, 720):
        scroll, client, over = layout(page, width, tmp_path)
        assert scroll <= client and not over, over


def test_model_card_snippet_runs():
    from tests.bt.test_model_card import snippets

    blocks = snippets("table.md")
    assert blocks
    for block in blocks:
        exec(compile(block, "models/table.md", "exec"), {})


def test_tsv_and_json_tables_read_as_the_csv(tmp_path):
    t = pd.DataFrame({"model": ["A", "B", "C"], "correct": [700, 650, 600], "n": 1000, "accuracy": [0.7, 0.65, 0.61]})
    t.to_csv(tmp_path / "t.csv", index=False)
    t.to_csv(tmp_path / "t.tsv", index=False, sep="\t")
    (tmp_path / "t.json").write_text(t.to_json(orient="records"))
    docs = [run(tmp_path, tmp_path / f"t.{ext}") for ext in ("csv", "tsv", "json")]
    for d in docs[1:]:
        assert [c["frequentist"]["p_value_bounds"] for c in d["claims"]] == \
            [c["frequentist"]["p_value_bounds"] for c in docs[0]["claims"]]
    assert any("disagrees with correct / n by more than one item on line 4" in n for n in docs[0]["notes"])


def test_numbers_as_papers_print_them(tmp_path):
    """'71.2%' (a percent sign) and '1,319' (a thousands separator) read as 0.712 and 1319."""
    path = tmp_path / "printed.csv"
    path.write_text('model,accuracy,n\nours,71.2%,"1,319"\nbaseline,70.5%,"1,319"\n')
    doc = run(tmp_path, path)
    assert any("written with %" in n for n in doc["notes"])
    c = doc["claims"][0]["contrasts"][0]
    assert (c["correct_a"], c["correct_b"], c["n_a"]) == (939, 930, 1319)
