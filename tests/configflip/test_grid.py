"""Bad input gets clear messages; missing cells are reported, never imputed."""

import hashlib
import warnings

import numpy as np
import pandas as pd
import pytest

from bayesrank.configflip.analysis import analyze
from bayesrank.configflip.grid import EvalGrid
from bayesrank.configflip.metrics import pairwise_flips, tau_r
from bayesrank.errors import InputError

BASE = pd.DataFrame({"model": ["A", "B", "A", "B"], "benchmark": "b", "fewshot": ["0", "0", "5", "5"],
                     "score": [0.5, 0.6, 0.7, 0.4]})


def test_duplicate_cells_named():
    d = pd.concat([BASE, BASE.iloc[[0]]], ignore_index=True)
    with pytest.raises(InputError, match=r"duplicate cells: rows 0, 4"):
        EvalGrid.from_scores(d, axes=["fewshot"])


def test_score_out_of_range_named():
    d = BASE.assign(score=[0.5, 60.0, 0.7, 0.4])
    with pytest.raises(InputError, match=r"score outside \[0.0, 1.0\] in rows 1"):
        EvalGrid.from_scores(d, axes=["fewshot"])
    EvalGrid.from_scores(d, axes=["fewshot"], score_range=None)  # explicit opt-out works


def test_non_numeric_and_missing_scores():
    with pytest.raises(InputError, match="not numeric in rows 2"):
        EvalGrid.from_scores(BASE.assign(score=[0.5, 0.6, "high", 0.4]), axes=["fewshot"])
    with pytest.raises(InputError, match="missing"):
        EvalGrid.from_scores(BASE.assign(score=[0.5, 0.6, np.nan, 0.4]), axes=["fewshot"])


def test_missing_columns_and_axes():
    with pytest.raises(InputError, match=r"lacks column\(s\) \['score'\]"):
        EvalGrid.from_scores(BASE.drop(columns="score"), axes=["fewshot"])
    with pytest.raises(InputError, match="not in the table"):
        EvalGrid.from_scores(BASE, axes=["template"])
    with pytest.raises(InputError, match="no configuration axis"):
        EvalGrid.from_scores(BASE[["model", "benchmark", "score"]])


def test_single_configuration_is_a_clear_error():
    g = EvalGrid.from_scores(BASE[BASE.fewshot == "0"], axes=["fewshot"])
    with pytest.raises(InputError, match="single configuration"):
        pairwise_flips(g, "b")
    with pytest.raises(InputError, match="no benchmark has two or more configurations"):
        analyze(g)


def test_unbalanced_grid_reports_missing_cells_and_excludes_incomplete_configs():
    d = pd.concat([BASE, pd.DataFrame({"model": ["A"], "benchmark": "b", "fewshot": ["8"], "score": [0.9]})])
    with pytest.warns(UserWarning, match="1 \\(model, configuration\\) cells are missing"):
        g = EvalGrid.from_scores(d, axes=["fewshot"])
    miss = g.missing_cells()
    assert miss.to_dict(orient="records") == [{"benchmark": "b", "model": "B", "fewshot": "8"}]
    # pairwise counts use only configurations where both were scored (no imputation)
    p = pairwise_flips(g, "b").iloc[0]
    assert (p.n_plus, p.n_minus, p.n_configs) == (1, 1, 2)
    t = tau_r(g, "b")
    assert t["incomplete_configs_excluded"] == ["fewshot=8"] and t["n_configs"] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = analyze(g)
    assert len(res.missing_cells) == 1


def test_items_grid_aggregates_and_rejects_bad_items():
    items = pd.DataFrame({"model": ["A"] * 4 + ["B"] * 4, "benchmark": "b", "fewshot": ["0", "0", "5", "5"] * 2,
                          "item": ["i1", "i2"] * 4, "correct": [1, 0, 1, 1, 0, 0, 1, 0]})
    g = EvalGrid.from_items(items, axes=["fewshot"])
    w = g.wide("b")
    assert w.loc["fewshot=0", "A"] == 0.5 and w.loc["fewshot=5", "A"] == 1.0 and w.loc["fewshot=5", "B"] == 0.5
    assert set(g.data["n_items"]) == {2}
    assert g.item_subset_hash("b") == hashlib.sha256(b"i1\ni2").hexdigest()   # sorted item ids, newline-joined
    with pytest.raises(InputError, match=r"must be in \[0, 1\]"):
        EvalGrid.from_items(items.assign(correct=[2] + [1] * 7), axes=["fewshot"])
    with pytest.raises(InputError, match="duplicate"):
        EvalGrid.from_items(pd.concat([items, items.iloc[[0]]], ignore_index=True), axes=["fewshot"])


def test_missing_player_names_are_input_errors_not_the_string_none():
    items = pd.DataFrame({"model": ["A", None], "benchmark": "b", "t": ["x", "x"], "item": ["1", "1"],
                          "correct": [1, 0]})
    with pytest.raises(InputError, match="column 'model' is empty in rows 1"):
        EvalGrid.from_items(items, axes=["t"])
    with pytest.raises(InputError, match="column 'model' is empty in rows 1"):
        EvalGrid.from_scores(BASE.assign(model=["A", None, "A", "B"]), axes=["fewshot"])
