"""One reader path: ``read_pairwise`` takes a file, a bundled name, a DataFrame, Comparisons or
PairRows, and ``read_comparisons`` resolves bundled names itself (``BradleyTerry("arena")`` works as
``audit("arena")`` does)."""

import numpy as np
import pandas as pd
import pytest

from bayesrank.data import Comparisons, PairRows, read_comparisons
from bayesrank.data.readers import read_pairwise
from bayesrank.datasets import path
from bayesrank.errors import InputError


def test_bundled_names_resolve_in_the_reader():
    by_name = read_comparisons("llmfao")
    by_path = read_comparisons(path("llmfao"))
    assert by_name.source == by_path.source and len(by_name) == len(by_path)
    pd.testing.assert_frame_equal(by_name.frame, by_path.frame)


def test_every_input_kind_gives_the_same_fit(tmp_path):
    from bayesrank.bt import BradleyTerry

    comps = read_comparisons("nba")
    csv = tmp_path / "games.csv"
    comps.frame[["model_a", "model_b", "outcome"]].to_csv(csv, index=False)
    inputs = {"name": "nba", "path": path("nba"), "csv": csv, "frame": pd.read_csv(csv), "comparisons": comps,
              "rows": comps.aggregate()}
    scores = {k: pd.Series(BradleyTerry(v).fit("mle").score, index=BradleyTerry(v).players) for k, v in inputs.items()}
    for k, s in scores.items():
        np.testing.assert_allclose(s.loc[scores["name"].index], scores["name"], atol=1e-12, err_msg=k)
    assert read_pairwise(comps) is comps and isinstance(read_pairwise(comps.aggregate()), PairRows)
    assert isinstance(read_pairwise(csv), Comparisons)


def test_bad_inputs_say_what_was_expected():
    with pytest.raises(InputError, match="cannot read comparisons from a int; expected a path"):
        read_pairwise(42)
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_comparisons("no-such-dataset.csv")
