"""Per-item rows aggregated a chunk at a time (bayesrank.items.accumulate): the cells summed chunk by
chunk equal the rows read at once (ItemScores.from_long) and a pandas pivot computed independently;
folders of thousands of harness logs are read log by log; Dask partitions are reduced where they
live; bad rows name their chunk."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from bayesrank.errors import InputError
from bayesrank.items.accumulate import CellAccumulator, aggregate_items_dask
from bayesrank.items.data import ItemScores
from bayesrank.items.readers import read_items


def _rows(seed=0, m=6, n=40, repeats=3, binary=True):
    """Long rows in shuffled order: repeated (model, item) cells (epochs), one item a model never scored."""
    rng = np.random.default_rng(seed)
    cells = [(f"model-{a}", f"q{i}") for a in range(m) for i in range(n) if not (a == 2 and i == 7)]
    rows = [(mo, it) for mo, it in cells for _ in range(int(rng.integers(1, repeats + 1)))]
    score = rng.integers(0, 2, len(rows)).astype(float) if binary else rng.choice([0.0, 0.25, 0.5, 1.0], len(rows))
    df = pd.DataFrame(rows, columns=["model", "item"]).assign(score=score)
    return df.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def _same(a: ItemScores, b: ItemScores):
    assert list(a.models) == list(b.models) and list(a.items) == list(b.items)
    np.testing.assert_array_equal(np.asarray(a.scores, float), np.asarray(b.scores, float))
    np.testing.assert_array_equal(np.asarray(a.trials), np.asarray(b.trials))
    assert (a.successes is None) == (b.successes is None)
    if a.successes is not None:
        np.testing.assert_array_equal(np.asarray(a.successes), np.asarray(b.successes))
    assert a.exclusions.counts == b.exclusions.counts and a.n_rows == b.n_rows


@pytest.mark.parametrize("binary", [True, False])
def test_cells_summed_chunk_by_chunk_equal_the_rows_read_at_once_and_a_pivot(binary):
    df = _rows(binary=binary)
    acc = CellAccumulator()
    for k, chunk in enumerate(np.array_split(np.arange(len(df)), 7)):
        acc.add(df.iloc[chunk], source=f"chunk {k}", row_offset=None)
    got = acc.scores()
    _same(got, ItemScores.from_long(df))
    pivot = df.pivot_table(index="model", columns="item", values="score", aggfunc="mean").dropna(axis=1)
    assert got.exclusions.counts == {"item not scored by every model": int((df["item"] == "q7").sum())}
    ref = pivot.loc[list(got.models), list(got.items)].to_numpy()
    np.testing.assert_allclose(np.asarray(got.scores, float), ref, rtol=0, atol=1e-15)
    assert "q7" not in set(got.items) and got.n_items == 39


def test_a_merged_accumulator_equals_one_fed_everything():
    df = _rows(seed=3)
    half = len(df) // 2
    a, b, whole = CellAccumulator(), CellAccumulator(), CellAccumulator()
    a.add(df.iloc[:half])
    b.add(df.iloc[half:])
    whole.add(df)
    a.merge(b)
    _same(a.scores(), whole.scores())


def test_a_bad_row_names_its_chunk_and_exclusions_are_counted():
    df = _rows(seed=1)
    df.loc[11, "score"] = 1.5
    acc = CellAccumulator()
    with pytest.raises(InputError, match=r"^chunk 1: 'score' outside \[0, 1\] in 1 row\(s\), rows \(DataFrame index\) \[11\]"):
        acc.add(df.iloc[:5], source="chunk 0", row_offset=None)
        acc.add(df.iloc[5:], source="chunk 1", row_offset=None)
        acc.scores()  # small chunks are checked together when the batch is reduced, each naming itself
    acc = CellAccumulator(batch_rows=1)  # every chunk reduced as it is added
    with pytest.raises(InputError, match=r"^chunk 1: 'score' outside"):
        acc.add(df.iloc[:5], source="chunk 0", row_offset=None)
        acc.add(df.iloc[5:], source="chunk 1", row_offset=None)
    acc = CellAccumulator()
    acc.add(df.iloc[:5], source="chunk 0", row_offset=None, on_invalid="exclude")
    acc.add(df.iloc[5:], source="chunk 1", row_offset=None, on_invalid="exclude")
    _same(acc.scores(), ItemScores.from_long(df, on_invalid="exclude"))


def _lm_eval_folder(root, n_models, n_items, seed=0):
    """lm-eval --output_path folders, one per model; returns the 0/1 matrix written."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, (n_models, n_items))
    for a in range(n_models):
        d = root / f"model-{a:04d}"
        d.mkdir()
        with open(d / "samples_gsm8k_2024-05-01T12-00-00.000001.jsonl", "w") as f:
            for i in range(n_items):
                f.write(json.dumps({"doc_id": i, "filter": "strict-match", "metrics": ["exact_match"],
                                    "exact_match": float(y[a, i]), "doc_hash": f"h{i}", "prompt_hash": "p",
                                    "arguments": {"gen_args_0": {"arg_0": "question text " * 20}}}) + "\n")
    return y


def test_a_thousand_lm_eval_files_are_read_file_by_file(tmp_path):
    """1,000 samples files (one per model, 30 items each): the matrix is the one written, every file
    counted once (memory is measured in benchmarks/bench_logs.py)."""
    y = _lm_eval_folder(tmp_path, 1000, 30)
    data, notes = read_items(tmp_path)
    assert data.n_models == 1000 and data.n_items == 30 and data.benchmark == "gsm8k"
    order = [int(m.split("-")[1]) for m in data.models]
    np.testing.assert_array_equal(np.asarray(data.scores, float), y[order].astype(float))
    assert "1000 file(s), 1000 model(s)" in notes[0] and data.n_rows == 30_000


def _inspect_json(path, model, task, scores):
    samples = [{"id": sid, "epoch": e, "scores": {"match": {"value": v}}} for sid, e, v in scores]
    path.write_text(json.dumps({"version": 2, "status": "success", "eval": {"model": model, "task": task},
                                "samples": samples}))


def test_a_folder_of_inspect_logs_of_two_tasks_streams_the_one_chosen(tmp_path):
    """600 Inspect JSON logs (300 models × 2 tasks, 2 epochs, C/I values): the task asked for is read,
    epochs averaged, equal to an independent pandas mean; several tasks without --benchmarks is one line."""
    rng = np.random.default_rng(5)
    truth = []
    for a in range(300):
        for task in ("arc", "mmlu"):
            vals = [(f"s{i}", e, "C" if rng.random() < 0.6 else "I") for i in range(8) for e in (1, 2)]
            _inspect_json(tmp_path / f"{task}-{a}.json", f"org/m{a}", task, vals)
            truth += [(f"org/m{a}", task, sid, 1.0 if v == "C" else 0.0) for sid, _, v in vals]
    ref = pd.DataFrame(truth, columns=["model", "task", "item", "y"])
    with pytest.raises(InputError, match="several benchmarks"):
        read_items(tmp_path)
    data, notes = read_items(tmp_path, benchmark="mmlu")
    want = ref[ref.task == "mmlu"].groupby(["model", "item"])["y"].mean().unstack()
    np.testing.assert_array_equal(np.asarray(data.scores, float), want.loc[list(data.models), list(data.items)].to_numpy())
    assert np.asarray(data.trials).max() == 2 and data.benchmark == "mmlu"
    assert "600 log(s), 300 model(s)" in notes[0]


def test_dask_partitions_are_reduced_where_they_live():
    import dask.dataframe as dd
    df = _rows(seed=4, binary=False)
    _same(aggregate_items_dask(dd.from_pandas(df, npartitions=5, sort=False)), ItemScores.from_long(df))
    df.loc[17, "score"] = -0.1
    ddf = dd.from_pandas(df, npartitions=3, sort=False)
    (k,) = [n for n in range(ddf.npartitions) if 17 in ddf.partitions[n].compute().index]
    with pytest.raises(InputError, match=rf"^partition {k}: 'score' outside \[0, 1\] in 1 row\(s\), rows \(DataFrame index\) \[17\]"):
        aggregate_items_dask(ddf)
    got = aggregate_items_dask(ddf, on_invalid="exclude")
    _same(got, ItemScores.from_long(df, on_invalid="exclude"))
