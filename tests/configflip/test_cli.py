"""`bayesrank configflip` / `bayesrank card` end to end; JSON numbers equal the Python API."""

import json

import pandas as pd
import pytest

from bayesrank import datasets
from bayesrank.cli import main
from bayesrank.configflip.grid import EvalGrid
from bayesrank.configflip.metrics import pairwise_flips, tau_r

LONG = str(datasets.path("eval_grid/lm_eval_harness_2023/lm_eval_harness_results_long.csv"))


def test_configflip_cli_json_matches_api(tmp_path, spec_grid):
    data = tmp_path / "grid.csv"
    spec_grid.to_csv(data, index=False)
    out = tmp_path / "r.json"
    rc = main(["configflip", str(data), "--axes", "template,decoding,fewshot,scoring",
               "--range", "template!=cot,decoding=greedy", "--json", str(out), "--anova-order", "2"])
    assert rc == 0
    res = json.loads(out.read_text())
    assert res["range"] == "template!=cot,decoding=greedy"
    b = res["benchmarks"]["truthfulqa"]
    core = spec_grid[(spec_grid.template != "cot") & (spec_grid.decoding == "greedy")]
    g = EvalGrid.from_scores(core, axes=["template", "decoding", "fewshot", "scoring"])
    ref = pairwise_flips(g, "truthfulqa")
    assert [p["rho_flip"] for p in b["pairs"]] == pytest.approx(list(ref.rho_flip))
    assert {k for k in b["pairs"][0]} >= {"model_a", "model_b", "n_plus", "n_minus", "n_ties", "rho_flip",
                                          "strict_order_free", "p_flip"}
    assert b["tau_R"] == pytest.approx(tau_r(g, "truthfulqa")["tau_R"])
    assert sum(o["count"] for o in b["orderings"]) == 18
    assert {a["term"] for a in b["anova"]} >= {"model", "template", "fewshot", "scoring", "model:template", "Residual"}
    assert all(set(a) >= {"term", "sum_sq", "share", "partial_eta_sq", "F", "p"} for a in b["anova"])


def test_configflip_cli_on_real_lm_eval_grid_with_mle_flip_probabilities(tmp_path):
    out = tmp_path / "r.json"
    rc = main(["configflip", LONG, "--benchmark-col", "task", "--score-col", "value", "--axes", "num_fewshot,metric",
               "--metric", "acc|acc_norm", "--benchmarks", "mathqa", "--models", "llama-7B,llama-13B,llama-30B",
               "--posterior", "mle", "--json", str(out), "--plots", str(tmp_path / "fig")])
    assert rc == 0
    b = json.loads(out.read_text())["benchmarks"]["mathqa"]
    assert len(b["pairs"]) == 3 and all(p["p_flip"]["method"] == "mle" for p in b["pairs"])
    assert (tmp_path / "fig" / "flips_mathqa.png").exists() and (tmp_path / "fig" / "anova_shares.png").exists()


def test_cli_bad_input_is_one_clear_line(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"model": ["a", "b"], "benchmark": "x", "t": ["1", "1"], "score": [0.5, 50]}).to_csv(bad, index=False)
    assert main(["configflip", str(bad), "--axes", "t"]) == 2
    assert "score outside [0.0, 1.0] in rows 1" in capsys.readouterr().err.replace("\n", " ")
    assert main(["configflip", LONG, "--benchmark-col", "task", "--score-col", "value", "--axes", "num_fewshot",
                 "--metric", "acc", "--benchmarks", "boolq"]) == 2
    assert "duplicate cells" in capsys.readouterr().err


def test_card_cli(tmp_path):
    raw = datasets.path("eval_grid/lm_eval_harness_2023/raw/llama/llama-7B/llama-7B_gsm8k_8-shot.json")
    raw2 = datasets.path("eval_grid/lm_eval_harness_2023/raw/llama/llama-13B/llama-13B_gsm8k_8-shot.json")
    out = tmp_path / "card.json"
    assert main(["card", str(raw), str(raw2), "--axes", "num_fewshot", "--metric", "acc", "--out", str(out)]) == 0
    card = json.loads(out.read_text())
    assert len(card["entries"]) == 2 and (tmp_path / "card.md").exists()
