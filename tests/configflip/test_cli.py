"""`bayesrank configflip` / `bayesrank card` end to end: JSON validated against the shipped schemas and its
numbers equal the Python API; bad input exits 2 with one line; the CLI module loads no heavy library."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from bayesrank import datasets
from bayesrank.cli import main
from bayesrank.configflip.grid import EvalGrid
from bayesrank.configflip.metrics import pairwise_flips, tau_r
from bayesrank.configflip.paired import paired_tests
from bayesrank.configflip.simulate import simulate_grid
from bayesrank.protocol import validate

LONG = str(datasets.path("eval_grid/lm_eval_harness_2023/lm_eval_harness_results_long.csv"))


def test_configflip_cli_json_matches_api(tmp_path, spec_grid):
    data = tmp_path / "grid.csv"
    spec_grid.to_csv(data, index=False)
    out = tmp_path / "r.json"
    rc = main(["configflip", str(data), "--axes", "template,decoding,fewshot,scoring",
               "--range", "template!=cot,decoding=greedy", "--json", str(out)])
    assert rc == 0
    res = json.loads(out.read_text())
    validate(res, "configflip")
    assert res["schema"] == "configflip" and res["diagnostics"]["converged"]
    parts = res["diagnostics"]["extra"]["parts"]
    assert res["diagnostics"]["kind"] == "composite" and {p["kind"] for p in parts.values()} == {"exact"}
    assert res["range"] == "template!=cot,decoding=greedy"
    b = res["benchmarks"]["truthfulqa"]
    core = spec_grid[(spec_grid.template != "cot") & (spec_grid.decoding == "greedy")]
    g = EvalGrid.from_scores(core, axes=["template", "decoding", "fewshot", "scoring"])
    ref = pairwise_flips(g, "truthfulqa")
    assert [p["rho_flip"] for p in b["pairs"]] == pytest.approx(list(ref.rho_flip))
    assert [(p["player_a"], p["player_b"]) for p in b["pairs"]] == list(zip(ref.player_a, ref.player_b))
    assert [p["n_plus"] for p in b["pairs"]] == list(ref.n_plus)
    assert b["tau_R"] == pytest.approx(tau_r(g, "truthfulqa")["tau_R"])
    assert sum(o["count"] for o in b["orderings"]) == 18
    # the spec design: template x few-shot within each scoring path (decoding is fixed in the core range)
    ex = b["anova"][0]
    assert ex["factors"] == ["player", "template", "fewshot"] and ex["subset"] == {"scoring": "regex"}
    assert ex["residual_holds"].startswith("the player:template:fewshot interaction")
    assert [a["name"] for a in b["anova"]][-1] == "scoring"


def test_configflip_cli_on_real_lm_eval_grid_with_mle_flip_probabilities(tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = main(["configflip", LONG, "--benchmark-col", "task", "--score-col", "value", "--axes", "num_fewshot,metric",
               "--metric", "acc|acc_norm", "--benchmarks", "mathqa", "--models", "llama-7B,llama-13B,llama-30B",
               "--posterior", "mle", "--json", str(out), "--plots", str(tmp_path / "fig")])
    assert rc == 0
    res = json.loads(out.read_text())
    validate(res, "configflip")
    b = res["benchmarks"]["mathqa"]
    assert len(b["pairs"]) == 3 and all(p["p_flip"]["method"] == "mle" for p in b["pairs"])
    assert b["posterior"]["diagnostics"]["kind"] == "exact"
    # num_fewshot is the execution axis, metric (acc vs acc_norm) the scoring path: separate analysis
    assert b["anova_design"]["execution_axes"] == ["num_fewshot"] and b["anova_design"]["separate_axes"] == ["metric"]
    assert (tmp_path / "fig" / "flips_mathqa.png").exists() and (tmp_path / "fig" / "anova_shares.png").exists()
    assert "residual = " in capsys.readouterr().out


def per_item_csv(tmp_path):
    grid, _ = simulate_grid({"A": 0.6, "B": 0.0, "C": 0.55}, {"template": ["t1", "t2", "t3"]}, n_items=200,
                            per_item=True, seed=8, interaction={("C", "template", "t3"): -1.2})
    items = grid.items.assign(passage=lambda d: "p" + (d["item"].astype(int) // 5).astype(str))
    path = tmp_path / "items.csv"
    items.to_csv(path, index=False)
    return grid, items, path


def test_claims_from_per_item_csv_equal_the_api_and_validate(tmp_path):
    grid, items, path = per_item_csv(tmp_path)
    out = tmp_path / "r.json"
    rc = main(["configflip", str(path), "--axes", "template", "--claim", "A>B", "--claim", "C>B",
               "--cluster-col", "passage", "--n-boot", "300", "--seed", "3", "--json", str(out)])
    assert rc == 0
    res = json.loads(out.read_text())
    validate(res, "configflip")
    tests = pd.DataFrame(res["paired"]["tests"])
    g = EvalGrid.from_items(items, axes=["template"], keep=["passage"])
    api = paired_tests(g, ["A>B", "C>B"], cluster="passage", n_boot=300, seed=3).table()
    assert list(tests.claim) == list(api.claim) and list(tests.config) == list(api.config)
    assert tests.p_value.tolist() == pytest.approx(api.p_value.tolist())
    assert tests.se_cluster.tolist() == pytest.approx(api.se_cluster.tolist())
    assert (tests.test == "cluster-robust Wald").all() and (tests.n_clusters == 40).all()
    claims = {c["claim"]: c for c in res["paired"]["claims"]}
    assert claims["A>B"]["holds_everywhere"] and claims["C>B"]["b_better"] >= 1


def test_claim_without_items_is_an_input_error(tmp_path, spec_grid, capsys):
    data = tmp_path / "grid.csv"
    spec_grid.to_csv(data, index=False)
    assert main(["configflip", str(data), "--axes", "template,decoding,fewshot,scoring", "--claim", "qwen>yi"]) == 2
    assert "--claim needs per-item data" in capsys.readouterr().err


def test_cli_bad_input_is_one_clear_line(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"model": ["a", "b"], "benchmark": "x", "t": ["1", "1"], "score": [0.5, 50]}).to_csv(bad, index=False)
    assert main(["configflip", str(bad), "--axes", "t"]) == 2
    assert "score outside [0.0, 1.0] in rows 1" in capsys.readouterr().err.replace("\n", " ")
    assert main(["configflip", LONG, "--benchmark-col", "task", "--score-col", "value", "--axes", "num_fewshot",
                 "--metric", "acc", "--benchmarks", "boolq"]) == 2
    assert "duplicate cells" in capsys.readouterr().err
    assert main(["configflip", str(bad), "--axes", "t", "--level", "95"]) == 2
    assert "argument --level: expected a number strictly between 0 and 1, got 95" in capsys.readouterr().err


def test_card_cli(tmp_path):
    raw = datasets.path("eval_grid/lm_eval_harness_2023/raw/llama/llama-7B/llama-7B_gsm8k_8-shot.json")
    raw2 = datasets.path("eval_grid/lm_eval_harness_2023/raw/llama/llama-13B/llama-13B_gsm8k_8-shot.json")
    out = tmp_path / "card.yaml"
    js = tmp_path / "card_copy.json"
    assert main(["card", str(raw), str(raw2), "--axes", "num_fewshot", "--metric", "acc", "--out", str(out),
                 "--json", str(js), "--format", "lm-eval"]) == 0
    card = json.loads(js.read_text())
    validate(card, "grid_card")
    assert len(card["entries"]) == 2 and (tmp_path / "card.md").exists()
    # the 2023 files name the model by its checkpoint path (model_args pretrained=...)
    assert sorted(e["model"].rsplit("/", 1)[-1] for e in card["entries"]) == ["13B", "7B"]
    assert [e["score"] for e in card["entries"]] == [pytest.approx(r) for r in read_scores(raw, raw2)]


def read_scores(*paths):
    return [json.loads(p.read_text())["results"]["gsm8k"]["acc"] for p in paths]


def test_cli_module_imports_no_heavy_library():
    code = ("import argparse, sys, bayesrank.configflip.cli as c; c.register(argparse.ArgumentParser().add_subparsers()); "
            "print(sorted(m for m in ('pandas', 'numpy', 'scipy', 'pymc', 'pytensor', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
