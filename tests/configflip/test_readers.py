"""Readers on real harness files (bundled lm-eval 2023 results) and format-faithful fixtures."""

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from bayesrank import datasets
from bayesrank.configflip.readers import (
    items_from_stderr,
    n_from_stderr,
    read_any,
    read_helm_run,
    read_inspect_log,
    read_lm_eval_dir,
    read_lm_eval_results,
    read_lm_eval_samples,
    summarise_items,
    to_grid,
)

GRID = "eval_grid/lm_eval_harness_2023"


@pytest.fixture(scope="module")
def raw_rows():
    return read_lm_eval_dir(datasets.path(f"{GRID}/raw"))


def test_real_lm_eval_results_reproduce_the_bundled_long_table(raw_rows):
    long = pd.read_csv(datasets.path(f"{GRID}/lm_eval_harness_results_long.csv"))
    long = long[~long.metric.str.contains("_stderr")]           # the long table also lists stderr keys as rows
    long["metric"] = long.metric.str.split(",").str[0]
    raw = raw_rows.assign(source_file=raw_rows.source_file.str.replace(r"^.*?/raw/", "results/", regex=True))
    m = long.merge(raw, left_on=["source_file", "task", "metric"], right_on=["source_file", "benchmark", "metric"])
    assert len(m) == len(long) == len(raw) == 3503
    assert np.allclose(m.value, m.score, rtol=0, atol=0)
    assert (m.num_fewshot_x.astype(int) == m.num_fewshot_y.astype(int)).all()


def test_real_stderr_implies_the_known_item_counts(raw_rows):
    # lm-eval's stderr is sqrt(p(1-p)/(n-1)); boolq validation has 3270 items, arc_easy test 2376, piqa 1838
    for task, n in (("boolq", 3270), ("arc_easy", 2376), ("piqa", 1838)):
        r = raw_rows[(raw_rows.benchmark == task) & (raw_rows.metric == "acc")]
        assert (r.n_items == n).all(), task
    df = pd.DataFrame({"benchmark": ["t", "t"], "score": [0.0, 0.5], "stderr": [0.0, np.sqrt(0.25 / 99)]})
    assert list(items_from_stderr(df)) == [100, 100]             # the all-wrong cell takes its task's count
    assert n_from_stderr(1.0, 0.0) is None


def test_lm_eval_v04_results_and_samples_agree(fixtures):
    res = read_lm_eval_results(fixtures / "results_2024-05-01T12-00-00.123456.json")
    acc = res[res.metric == "acc"].iloc[0]
    assert acc.model == "EleutherAI/pythia-160m" and acc.num_fewshot == 5 and acc.n_items == 20
    assert acc.harness_version == "0.4.2" and acc.harness_commit == "4f8195f" and acc.model_revision == "step100000"
    assert acc.fewshot_seed == 1234 and acc.quantisation == "float16"
    raw = json.loads((fixtures / "results_2024-05-01T12-00-00.123456.json").read_text())
    prompt = raw["configs"][acc.benchmark]["doc_to_text"]           # the template text the hash fingerprints
    assert acc.template_hash == hashlib.sha256(prompt.encode()).hexdigest()
    samples = read_lm_eval_samples(fixtures / "samples_arc_easy_2024-05-01T12-00-00.123456.jsonl")
    assert samples.benchmark.iloc[0] == "arc_easy" and len(samples) == 20
    assert samples.correct.mean() == pytest.approx(acc.score)      # per-item log aggregates to the reported acc
    norm = read_lm_eval_samples(fixtures / "samples_arc_easy_2024-05-01T12-00-00.123456.jsonl", metric="acc_norm")
    assert norm.correct.mean() == pytest.approx(res[res.metric == "acc_norm"].score.iloc[0])


def test_inspect_log_aggregate_equals_per_sample_scores(fixtures):
    agg = read_inspect_log(fixtures / "inspect_mmlu_anatomy.json")
    items = read_inspect_log(fixtures / "inspect_mmlu_anatomy.json", items=True)
    row = agg[agg.metric == "choice/accuracy"].iloc[0]
    assert row.score == pytest.approx(items.correct.mean()) and row.n_items == 12 == len(items)
    assert row.harness == "inspect_ai" and row.harness_version == "0.3.25" and row.temperature == 0.0
    assert row.harness_commit == "a1b2c3d" and row.model == "openai/gpt-4o-mini"
    assert set(items.correct) <= {0.0, 1.0}


def test_helm_run_ignores_perturbed_instances(fixtures):
    per = read_helm_run(fixtures / "helm_run", items=True)
    stats = json.loads((fixtures / "helm_run" / "per_instance_stats.json").read_text())
    clean = [s for s in stats if not s.get("perturbation")]
    em = [st["sum"] for s in clean for st in s["stats"] if st["name"]["name"] == "exact_match"]
    assert len(per) == 10 and per.correct.mean() == pytest.approx(np.mean(em))
    agg = read_helm_run(fixtures / "helm_run")
    r = agg.iloc[0]
    assert r.benchmark == "mmlu:anatomy" and r.model == "qwen/qwen2.5-7b-instruct" and r.num_fewshot == 5
    assert r.score == pytest.approx(np.mean(em)) and r.n_items == 10 and r.method == "multiple_choice_joint"


def test_read_any_dispatch_and_cross_harness_grid(fixtures):
    rows = pd.concat([read_any(fixtures / "inspect_mmlu_anatomy.json").assign(metric="acc"),
                      read_any(fixtures / "helm_run").assign(metric="acc")], ignore_index=True)
    rows["model"] = "qwen2.5-7b"           # one nominal model evaluated in two harnesses
    rows["benchmark"] = "mmlu_anatomy"
    g = to_grid(rows, axes=["harness"])
    w = g.wide("mmlu_anatomy")
    assert set(w.index) == {"harness=inspect_ai", "harness=helm"}


def test_bad_files(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        read_lm_eval_results(p)
    p.write_text(json.dumps({"foo": 1}))
    with pytest.raises(ValueError, match="not an lm-evaluation-harness results file"):
        read_lm_eval_results(p)
    with pytest.raises(FileNotFoundError):
        read_any(tmp_path / "missing.csv")


def test_summarise_items_gives_cell_scores_and_subset_hashes(fixtures):
    import hashlib

    items = read_lm_eval_samples(fixtures / "samples_arc_easy_2024-05-01T12-00-00.123456.jsonl", model="pythia")
    cell = summarise_items(items)
    assert len(cell) == 1 and cell.n_items.iloc[0] == 20
    assert cell.score.iloc[0] == pytest.approx(items.correct.mean())
    ids = "\n".join(sorted(str(i) for i in range(20)))
    assert cell.item_subset_hash.iloc[0] == hashlib.sha256(ids.encode()).hexdigest()
    prompts = "\n".join(items.prompt_hash.astype(str))               # fingerprint of the per-item prompt hashes
    assert cell.template_hash.iloc[0] == hashlib.sha256(prompts.encode()).hexdigest()
    assert read_inspect_log(fixtures / "inspect_mmlu_anatomy.json").template_hash.notna().all()


def test_reader_values_equal_the_raw_json_read_directly(raw_rows):
    """Independent of the bundled long table: every (file, task, metric) the reader returns for three
    raw files equals json.load(file)["results"][task][metric]."""
    root = datasets.path(f"{GRID}/raw")
    files = sorted(root.rglob("*.json"))[:3]
    for f in files:
        res = json.loads(f.read_text())["results"]
        rows = raw_rows[raw_rows.source_file.str.endswith(str(f.relative_to(root)))]
        expected = {(t, m): v for t, ms in res.items() for m, v in ms.items() if not m.endswith("_stderr")}
        got = {(r.benchmark, r.metric): r.score for r in rows.itertuples()}
        assert len(expected) >= 1 and len(got) == len(expected), f
        assert got == pytest.approx(expected, rel=0, abs=0), f
