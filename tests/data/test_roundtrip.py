"""CSV/TSV/JSON/JSONL/Parquet round-trips give identical comparisons and sufficient statistics."""

import numpy as np
import pandas as pd
import pytest

from bayesrank.data import read_comparisons
from bayesrank.datasets import path


@pytest.fixture(scope="module")
def llmfao_raw():
    return pd.read_csv(path("llmfao/crowd-comparisons.csv"))


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".json", ".jsonl", ".parquet", ".csv.gz"])
def test_roundtrip_llmfao(tmp_path, llmfao_raw, suffix):
    f = tmp_path / f"data{suffix}"
    if suffix in (".csv", ".csv.gz"):
        llmfao_raw.to_csv(f, index=False)
    elif suffix == ".tsv":
        llmfao_raw.to_csv(f, sep="\t", index=False)
    elif suffix == ".json":
        llmfao_raw.to_json(f, orient="records")
    elif suffix == ".jsonl":
        llmfao_raw.to_json(f, orient="records", lines=True)
    else:
        llmfao_raw.to_parquet(f)
    ref = read_comparisons(llmfao_raw)
    got = read_comparisons(f)
    assert got.source == str(f)
    assert len(got) == len(ref) == 8931
    cr, cg = ref.aggregate(), got.aggregate()
    assert list(cr.players) == list(cg.players)
    np.testing.assert_array_equal(cr.counts, cg.counts)
    np.testing.assert_array_equal(got.judges.astype(str), ref.judges.astype(str))


def test_roundtrip_canonical_with_weights(tmp_path):
    c = read_comparisons(path("arena/chatbotarena_20240814.json"))
    f = tmp_path / "arena.parquet"
    c.frame.to_parquet(f)
    again = read_comparisons(f)
    assert again.n_comparisons == 1_670_250
    np.testing.assert_array_equal(again.aggregate().counts, c.aggregate().counts)


def test_unknown_suffix(tmp_path):
    from bayesrank.errors import InputError

    f = tmp_path / "data.xlsx"
    f.write_text("x")
    with pytest.raises(InputError, match="a spreadsheet file; export the sheet as CSV"):
        read_comparisons(f)
