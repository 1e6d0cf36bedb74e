"""Out-of-core aggregation equals the in-memory reader + aggregate: same counts, same exclusion
counts, same errors (naming the file and its rows). Reference: ``read_comparisons(whole).aggregate()``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayesrank.data import read_comparisons
from bayesrank.data.streaming import aggregate_files
from bayesrank.datasets import path
from bayesrank.errors import InputError


def _split(df: pd.DataFrame, folder, parts: int, kind: str) -> list:
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for n, chunk in enumerate(np.array_split(np.arange(len(df)), parts)):
        f = folder / f"part-{n:02d}.{kind}"
        piece = df.iloc[chunk]
        if kind == "parquet":
            piece.to_parquet(f, index=False)
        else:
            piece.to_csv(f, index=False, sep="\t" if kind == "tsv" else ",")
        files.append(f)
    return files


def _assert_same_counts(streamed, reference):
    assert list(streamed.players) == list(reference.players)
    np.testing.assert_array_equal(streamed.i, reference.i)
    np.testing.assert_array_equal(streamed.j, reference.j)
    np.testing.assert_allclose(streamed.counts, reference.counts, rtol=1e-12, atol=0)


@pytest.mark.parametrize("kind", ["csv", "parquet", "tsv"])
def test_llmfao_split_into_files_equals_in_memory(tmp_path, kind):
    raw = pd.read_csv(path("llmfao/crowd-comparisons.csv"))
    _split(raw, tmp_path / "votes", 4, kind)
    reference = read_comparisons(path("llmfao/crowd-comparisons.csv")).aggregate()
    # small batches: player sets differ from batch to batch, pairs appear in both orientations
    got = aggregate_files(tmp_path / "votes", batch_rows=700)
    assert got.format == "llmfao" and got.rows == len(raw) and len(got.files) == 4
    _assert_same_counts(got, reference)
    assert got.total.sum() == len(raw)  # every row counted once


def test_streamed_counts_fit_like_in_memory_counts(tmp_path):
    from bayesrank.bt import BradleyTerry

    raw = pd.read_csv(path("llmfao/crowd-comparisons.csv"))
    _split(raw, tmp_path, 2, "parquet")
    streamed = BradleyTerry(aggregate_files(tmp_path)).fit("mle").table().set_index("player")
    direct = BradleyTerry(read_comparisons(raw).aggregate()).fit("mle").table().set_index("player")
    np.testing.assert_allclose(streamed.loc[direct.index, "score"], direct["score"], rtol=0, atol=1e-12)


def test_battles_from_arena_pair_counts_glob(tmp_path):
    """Arena pair counts (first 300 pairs) expanded to one row per battle, written as 3 Parquet files."""
    obj = pd.read_json(path("arena"), typ="series")
    models = np.asarray(obj["models"], dtype=object)
    x, y = np.asarray(obj["X"])[:300], np.asarray(obj["Y"], dtype=np.int64)[:300]
    labels = np.array(["model_a", "model_b", "tie", "tie (bothbad)"])
    reps = y.ravel()
    battles = pd.DataFrame({"model_a": np.repeat(np.repeat(models[x[:, 0]], 4), reps),
                            "model_b": np.repeat(np.repeat(models[x[:, 1]], 4), reps),
                            "winner": np.repeat(np.tile(labels, len(x)), reps)})
    battles = battles.sample(frac=1.0, random_state=0).reset_index(drop=True)  # interleave pairs across files
    _split(battles, tmp_path, 3, "parquet")
    got = aggregate_files(str(tmp_path / "part-*.parquet"), batch_rows=50_000)
    _assert_same_counts(got, read_comparisons(battles).aggregate())
    # and the totals agree with the source pair counts themselves (an independent tally)
    assert got.total.sum() == y.sum()


def test_tennis_walkovers_excluded_and_counted_as_in_memory(tmp_path):
    raw = pd.read_csv(path("atp-2024"))
    _split(raw, tmp_path, 3, "csv")
    reference = read_comparisons(path("atp-2024"))
    got = aggregate_files(tmp_path, batch_rows=400)
    assert reference.excluded.total > 0
    assert got.excluded.counts == reference.excluded.counts
    _assert_same_counts(got, reference.aggregate())


def _bad_frames():
    a = pd.DataFrame({"model_a": ["x", "y", "z", "x"], "model_b": ["y", "z", "x", "z"], "outcome": ["a", "b", "tie", "a"]})
    b = pd.DataFrame({"model_a": ["x", "y", "y", None, "z"], "model_b": ["y", "y", "z", "x", "z"],
                      "outcome": ["b", "a", "a", "a", "tie"]})
    return a, b


def test_bad_rows_raise_naming_the_file_and_the_rows_the_in_memory_reader_names(tmp_path):
    a, b = _bad_frames()
    a.to_csv(tmp_path / "part-0.csv", index=False)
    b.to_csv(tmp_path / "part-1.csv", index=False)
    with pytest.raises(InputError) as mem:
        read_comparisons(tmp_path / "part-1.csv")
    with pytest.raises(InputError) as streamed:
        aggregate_files(tmp_path)
    # the same message, naming the file as given and the line (1-based: header on line 1, data row 3 on line 5)
    assert str(streamed.value) == str(mem.value).replace(f"of {tmp_path / 'part-1.csv'}", "of part-1.csv")
    assert str(streamed.value).startswith("line 5 of part-1.csv: column 'model_a' has no player name")


def test_bad_rows_excluded_and_counted_like_in_memory(tmp_path):
    a, b = _bad_frames()
    a.to_csv(tmp_path / "part-0.csv", index=False)
    b.to_csv(tmp_path / "part-1.csv", index=False)
    whole = read_comparisons(pd.concat([a, b], ignore_index=True), on_invalid="exclude")
    got = aggregate_files(tmp_path, on_invalid="exclude")
    assert got.excluded.counts == whole.excluded.counts == {"missing name in 'model_a'": 1, "self-comparison": 2}
    assert got.excluded.examples["self-comparison"] == ["part-1.csv line 3", "part-1.csv line 6"]
    _assert_same_counts(got, whole.aggregate())


def test_unknown_outcome_label_names_file_and_row(tmp_path):
    a, _ = _bad_frames()
    a.loc[2, "outcome"] = "maybe"
    a.to_parquet(tmp_path / "votes.parquet", index=False)
    with pytest.raises(InputError, match=r"^record 3 of votes\.parquet: column 'outcome' has outcome value\(s\) 'maybe'"):
        aggregate_files(tmp_path / "votes.parquet")


def test_missing_value_strings_are_missing_names_in_both_paths(tmp_path):
    (tmp_path / "v.csv").write_text("model_a,model_b,outcome\nx,y,a\nNA,y,b\ny,x,tie\n")
    whole = read_comparisons(tmp_path / "v.csv", on_invalid="exclude")
    got = aggregate_files(tmp_path / "v.csv", on_invalid="exclude")
    assert got.excluded.counts == whole.excluded.counts == {"missing name in 'model_a'": 1}
    _assert_same_counts(got, whole.aggregate())


def test_unstreamable_inputs_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="cannot be streamed"):
        aggregate_files(_one_csv(tmp_path), format="arena_counts")
    pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "outcome": ["a"]}).to_parquet(tmp_path / "y.parquet")
    with pytest.raises(InputError, match="mixed file types"):
        aggregate_files(tmp_path)
    with pytest.raises(FileNotFoundError):
        aggregate_files(tmp_path / "nothing-*.csv")


def _one_csv(folder):
    f = folder / "x.csv"
    f.write_text("model_a,model_b,outcome\nx,y,a\n")
    return f


def test_players_first_seen_out_of_name_order_keep_their_wins(tmp_path):
    """File 0 meets z and y first; later files bring a: the result is still in sorted-name order
    with each win on the right side (checked against counts tallied by hand)."""
    pd.DataFrame({"model_a": ["z", "z"], "model_b": ["y", "y"], "outcome": ["a", "tie"]}).to_csv(tmp_path / "0.csv", index=False)
    pd.DataFrame({"model_a": ["a", "y", "y"], "model_b": ["z", "a", "z"], "outcome": ["a", "a", "a"]}).to_csv(
        tmp_path / "1.csv", index=False)
    got = aggregate_files(tmp_path)
    assert list(got.players) == ["a", "y", "z"]
    table = {(got.players[i], got.players[j]): tuple(c) for i, j, c in zip(got.i, got.j, got.counts)}
    assert table == {("a", "y"): (0, 1, 0), ("a", "z"): (1, 0, 0), ("y", "z"): (1, 1, 1)}


@pytest.fixture(scope="module")
def dask_client():
    import distributed
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def test_dask_dataframe_on_a_local_cluster_equals_in_memory(dask_client, tmp_path):
    import dask.dataframe as dd

    from bayesrank.data.streaming import aggregate_dask

    raw = pd.read_csv(path("atp-2024"))
    reference = read_comparisons(raw)
    got = aggregate_dask(dd.from_pandas(raw, npartitions=5))
    assert got.rows == len(raw) and got.excluded.counts == reference.excluded.counts  # walkovers, as in memory
    _assert_same_counts(got, reference.aggregate())
    _split(pd.read_csv(path("llmfao/crowd-comparisons.csv")), tmp_path, 3, "parquet")
    got = aggregate_dask(dd.read_parquet(str(tmp_path)))
    _assert_same_counts(got, read_comparisons(path("llmfao/crowd-comparisons.csv")).aggregate())


def test_dask_bad_rows_name_the_partition_and_exclusions_are_counted(dask_client):
    import dask.dataframe as dd

    from bayesrank.data.streaming import aggregate_dask

    a, b = _bad_frames()
    whole = pd.concat([a, b], ignore_index=True)  # row 7 has no model_a
    ddf = dd.from_pandas(whole, npartitions=2, sort=False)
    (k,) = [n for n in range(ddf.npartitions) if 7 in ddf.partitions[n].compute().index]
    with pytest.raises(InputError, match=rf"^partition {k}: row 7 \(DataFrame index\): column 'model_a' has no player name"):
        aggregate_dask(ddf)
    got = aggregate_dask(ddf, on_invalid="exclude")
    ref = read_comparisons(whole, on_invalid="exclude")
    assert got.excluded.counts == ref.excluded.counts
    _assert_same_counts(got, ref.aggregate())


def test_fit_cli_streams_a_folder_or_glob(tmp_path):
    """``bayesrank fit DIR`` / ``GLOB``: same leaderboard and exclusion count as the whole file in memory."""
    import json

    from bayesrank.cli import main

    raw = pd.read_csv(path("llmfao/crowd-comparisons.csv"))
    raw.loc[[10, 4000], "right"] = raw.loc[[10, 4000], "left"]  # two self-comparisons
    raw.to_csv(tmp_path / "whole.csv", index=False)
    _split(raw, tmp_path / "parts", 3, "csv")
    for name, data in [("mem", tmp_path / "whole.csv"), ("dir", tmp_path / "parts"), ("glob", tmp_path / "parts" / "*.csv")]:
        assert main(["fit", str(data), "--exclude-invalid", "--json", str(tmp_path / f"{name}.json")]) == 0
    mem, folder, glob_ = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("mem", "dir", "glob"))
    assert mem["n_excluded"] == folder["n_excluded"] == glob_["n_excluded"] == 2
    scores = [pd.DataFrame(d["players"]).set_index("player")["score"] for d in (mem, folder, glob_)]
    np.testing.assert_allclose(scores[1].loc[scores[0].index], scores[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(scores[2].loc[scores[0].index], scores[0], rtol=0, atol=1e-12)
    assert main(["fit", str(tmp_path / "parts")]) == 2  # without --exclude-invalid: bad input, named


def test_folder_of_gzipped_csvs_streams_like_the_uncompressed_files(tmp_path):
    """``.csv.gz`` parts (documented as supported) are read through gzip: the same counts as the
    in-memory reader of the whole table, and an error names the compressed file and its line."""
    import gzip

    raw = pd.read_csv(path("llmfao/crowd-comparisons.csv"))
    folder = tmp_path / "votes"
    folder.mkdir()
    for n, chunk in enumerate(np.array_split(np.arange(len(raw)), 3)):
        with gzip.open(folder / f"part-{n}.csv.gz", "wt") as f:
            f.write(raw.iloc[chunk].to_csv(index=False))
    got = aggregate_files(folder, batch_rows=500)
    assert got.format == "llmfao" and got.rows == len(raw) and len(got.files) == 3
    _assert_same_counts(got, read_comparisons(raw).aggregate())
    bad = raw.iloc[:10].copy()
    bad.loc[3, "right"] = bad.loc[3, "left"]
    with gzip.open(folder / "part-3.csv.gz", "wt") as f:
        f.write(bad.to_csv(index=False))
    with pytest.raises(InputError, match=r"^line 5 of part-3\.csv\.gz: columns 'left'/'right' name the same player"):
        aggregate_files(folder)


def test_folder_of_json_lines_is_read_by_every_pairwise_command(tmp_path):
    """A folder of files streaming cannot read (JSON lines) is read in memory, as review reads it."""
    from bayesrank.data.readers import read_pairwise

    raw = pd.read_csv(path("llmfao/crowd-comparisons.csv"))
    (tmp_path / "v").mkdir()
    raw.iloc[:300].to_json(tmp_path / "v" / "a.jsonl", orient="records", lines=True)
    raw.iloc[300:].to_json(tmp_path / "v" / "b.jsonl", orient="records", lines=True)
    got = read_pairwise(tmp_path / "v").aggregate()
    _assert_same_counts(got, read_comparisons(raw).aggregate())
