"""Readers of per-item results: Inspect logs written by Inspect itself, long/wide tables, lm-eval samples
folders, HELM runs, Every Eval Ever records (validated against that project's schema), SWE-bench lists,
and every bad-input path (one line naming the rows, exit code 2)."""

import json
import shutil
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest

from bayesrank.errors import InputError
from bayesrank.items.data import MISSING_ITEM, ItemScores
from bayesrank.items.readers import detect_format, read_items

from .conftest import long_frame, rasch_matrix

FIXTURES = Path(__file__).parents[1] / "configflip" / "fixtures"
EEE_SCHEMA = Path(__file__).parent / "fixtures" / "every_eval_ever" / "instance_level_eval.schema.json"


def test_inspect_eval_logs_match_the_answers_given(inspect_logs):
    folder, expected = inspect_logs
    assert detect_format(folder) == "inspect"
    data, notes = read_items(folder)
    assert sorted(data.models) == [f"mockllm/{m}" for m in sorted(expected)]
    for m, per_sample in expected.items():
        row = data.scores[data.index(f"mockllm/{m}")]
        for s, outcomes in per_sample.items():
            assert row[list(data.items).index(s)] == np.mean(outcomes)  # epochs averaged within the sample
    assert (data.trials == 2).all() and data.successes is not None and not data.binary
    assert any("repeated measures" in n for n in notes)
    # one log read alone: the same samples and epochs as Inspect's own reader gives
    from inspect_ai.log import read_eval_log

    one = sorted(folder.rglob("*.eval"))[0]
    ref = read_eval_log(str(one))
    from bayesrank.data.harness import read_inspect_log

    rows = read_inspect_log(one, items=True)
    theirs = {(str(s.id), s.epoch): {"C": 1.0, "I": 0.0}[s.scores["match"].value] for s in ref.samples}
    assert {(r.sample_id, r.epoch): r.correct for r in rows.itertuples()} == theirs
    assert rows["model"].iloc[0] == ref.eval.model


def test_long_csv_round_trip_and_repeats(tmp_path):
    y = rasch_matrix(4, 50)
    df = long_frame(y)
    p = tmp_path / "long.csv"
    df.to_csv(p, index=False)
    data, _ = read_items(p)
    np.testing.assert_array_equal(data.scores, y)
    assert data.binary and data.n_items == 50
    # parquet / jsonl give the same matrix
    for suffix in (".parquet", ".jsonl"):
        q = tmp_path / f"long{suffix}"
        df.to_parquet(q) if suffix == ".parquet" else df.to_json(q, orient="records", lines=True)
        np.testing.assert_array_equal(read_items(q)[0].scores, y)
    # repeated measures are averaged and counted once
    rep = pd.concat([df, df.assign(score=1.0)], ignore_index=True)
    d2 = ItemScores.from_long(rep)
    np.testing.assert_allclose(d2.scores, (y + 1) / 2)
    assert (d2.trials == 2).all() and (d2.successes == y + 1).all()


def test_wide_matrix(tmp_path):
    y = rasch_matrix(3, 20)
    wide = pd.DataFrame(y.T, columns=["a", "b", "c"]).assign(question=[f"q{j}" for j in range(20)])
    wide = wide[["question", "a", "b", "c"]]
    p = tmp_path / "wide.csv"
    wide.to_csv(p, index=False)
    data, _ = read_items(p)
    assert list(data.models) == ["a", "b", "c"] and list(data.items) == list(wide["question"])
    np.testing.assert_array_equal(data.scores, y)


def test_incomplete_items_are_excluded_and_counted():
    y = rasch_matrix(3, 10)
    df = long_frame(y)
    df = df[~((df["model"] == "llm1") & df["item"].isin(["q2", "q5"]))]
    data = ItemScores.from_long(df)
    assert data.n_items == 8
    assert data.exclusions.counts == {MISSING_ITEM: 4}  # two items × the two models that scored them


@pytest.mark.parametrize("bad, reason", [(1.5, "outside"), ("high", "not a number"), (None, "missing or not")])
def test_bad_scores_name_the_lines(bad, reason, tmp_path):
    df = long_frame(rasch_matrix(2, 5))
    df["score"] = df["score"].astype(object)
    df.loc[3, "score"] = bad
    with pytest.raises(InputError, match=rf"{reason}.*lines \[5\]"):
        ItemScores.from_long(df)
    kept = ItemScores.from_long(df, on_invalid="exclude")
    assert kept.exclusions.total == 1 + 1 and kept.n_items == 4  # the bad row, then its item for the other model


def test_cluster_must_be_constant_within_an_item():
    df = long_frame(rasch_matrix(2, 4), clusters=np.array(["a", "a", "b", "b"]))
    df.loc[5, "family"] = "c"
    with pytest.raises(InputError, match="several values of cluster column 'family'"):
        ItemScores.from_long(df, cluster="family")


def test_lm_eval_samples_folder(tmp_path):
    src = FIXTURES / "samples_arc_easy_2024-05-01T12-00-00.123456.jsonl"
    lines = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    for name, flip in (("pythia-1b", False), ("pythia-2b", True)):
        d = tmp_path / name
        d.mkdir()
        with open(d / src.name, "w") as f:
            for rec in lines:
                r = dict(rec)
                if flip:
                    r["acc"] = 1.0 - float(r["acc"])
                f.write(json.dumps(r) + "\n")
    assert detect_format(tmp_path) == "lm-eval"
    data, notes = read_items(tmp_path)
    acc = np.array([float(r["acc"]) for r in lines])
    np.testing.assert_array_equal(data.scores[data.index("pythia-1b")], acc)
    np.testing.assert_array_equal(data.scores[data.index("pythia-2b")], 1 - acc)
    assert data.benchmark == "arc_easy" and list(data.items) == [str(r["doc_id"]) for r in lines]


def test_helm_run_folders(tmp_path):
    for name in ("m1", "m2"):
        run = tmp_path / f"run_{name}"
        shutil.copytree(FIXTURES / "helm_run", run)
        spec = json.loads((run / "run_spec.json").read_text())
        spec["adapter_spec"]["model"] = f"org/{name}"
        (run / "run_spec.json").write_text(json.dumps(spec))
    assert detect_format(tmp_path) == "helm"
    data, _ = read_items(tmp_path)
    stats = json.loads((FIXTURES / "helm_run" / "per_instance_stats.json").read_text())
    ref = {}
    for inst in stats:
        if inst.get("perturbation"):
            continue
        for st in inst["stats"]:
            if st["name"]["name"] == "exact_match" and not st["name"].get("perturbation") and \
                    st["name"].get("split") in (None, "test"):
                ref[f"{inst['instance_id']}#{inst.get('train_trial_index', 0)}"] = st["sum"] / st["count"]
    assert sorted(data.models) == ["org/m1", "org/m2"]
    row = dict(zip(data.items, data.scores[0]))
    assert row == pytest.approx(ref)


def test_every_eval_ever_records_validate_and_read(tmp_path):
    schema = json.loads(EEE_SCHEMA.read_text())
    y = rasch_matrix(3, 6)
    recs = []
    for m in range(3):
        for j in range(6):
            recs.append({"schema_version": "0.3.0", "evaluation_id": f"run-{m}", "model_id": f"org/model-{m}",
                         "evaluation_name": "toyqa", "sample_id": f"toy_{j:03d}", "interaction_type": "single_turn",
                         "input": {"raw": f"question {j}", "reference": ["yes"]},
                         "output": {"raw": ["yes" if y[m, j] else "no"]},
                         "answer_attribution": [],
                         "evaluation": {"score": float(y[m, j]), "is_correct": bool(y[m, j])}})
    for r in recs:
        jsonschema.validate(r, schema)  # the records are valid Every Eval Ever instances
    p = tmp_path / "instances.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    assert detect_format(p) == "eee"
    data, _ = read_items(p)
    np.testing.assert_array_equal(data.scores, y)
    assert data.benchmark == "toyqa"


def test_swe_bench_resolved_lists(tmp_path):
    universe = [f"repo__{i}" for i in range(8)]
    (tmp_path / "instances.txt").write_text("\n".join(universe))
    (tmp_path / "sys_a.json").write_text(json.dumps({"resolved": universe[:5]}))
    (tmp_path / "sys_b.txt").write_text("\n".join(universe[3:6]))
    assert detect_format(tmp_path) == "swe-bench"
    data, notes = read_items(tmp_path)
    assert data.n_items == 8 and sorted(data.models) == ["sys_a", "sys_b"]
    assert data.scores[data.index("sys_a")].sum() == 5 and data.scores[data.index("sys_b")].sum() == 3
    (tmp_path / "sys_c.json").write_text(json.dumps(["not_an_instance"]))
    with pytest.raises(InputError, match="not in instances list"):
        read_items(tmp_path)
