"""`bayesrank review` end to end on the bundled real data of every kind (issue: arena, LLMFAO judges,
the lm-eval 2023 grid, the Llama-3 BoolQ confidence records), through the command line."""

import json

import pytest

from bayesrank.cli import main
from bayesrank.protocol import validate


def _run(tmp_path, *args):
    out = tmp_path / "r.json"
    assert main(["review", *args, "--json", str(out), "--html", str(tmp_path / "r.html")]) == 0
    doc = json.loads(out.read_text())
    validate(doc, "review")
    assert (tmp_path / "r.html").stat().st_size > 10_000
    return doc


def test_lm_eval_2023_grid(tmp_path):
    doc = _run(tmp_path, "lm-eval-2023", "--fast", "--metric", "acc|acc_norm", "--axes", "num_fewshot,metric",
               "--models", "llama-7B,llama-13B,llama-30B", "--benchmarks", "mathqa,math_counting_and_prob")
    assert doc["kind"] == "grid"
    assert sorted(c["benchmark"] for c in doc["claims"]) == ["math_counting_and_prob", "mathqa"]
    by = {c["benchmark"]: c for c in doc["claims"]}
    # mathqa: the 30B model beats the 13B model in every configuration (the docs' example)
    assert by["mathqa"]["claim"] == "llama-30B>llama-13B@mathqa" and by["mathqa"]["verdict"] == "supported"
    assert by["mathqa"]["perturbation"]["configuration"]["budget"] == 0
    assert {"flips", "orderings", "anova", "flip_posterior"} <= set(doc["sections"])


@pytest.mark.slow
def test_arena_fast(tmp_path):
    doc = _run(tmp_path, "arena", "--fast")
    assert doc["kind"] == "pairwise" and doc["reproducibility"]["n_comparisons"] == 1670250
    assert [c["claim"] for c in doc["claims"]][:2] == ["top1", "topk:5"]
    top1 = doc["claims"][0]
    assert top1["frequentist"]["supported"] and all(p["verified"] for p in top1["perturbation"].values())
    assert len(doc["leaderboard"]) == 129


@pytest.mark.slow
def test_boolq_confidence_records(tmp_path):
    doc = _run(tmp_path, "boolq-llama3", "--fast")
    assert doc["kind"] == "confidence" and len(doc["claims"]) == 6  # six prompt variants
    assert {c["group"] for c in doc["claims"]} == {f"prompt{i}" for i in range(1, 7)}
    assert "protocol" in doc["sections"]
