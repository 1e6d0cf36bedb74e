"""Obvious cluster columns are proposed in the report when present and not used."""

import pandas as pd

from bayesrank.data import read_comparisons
from bayesrank.datasets import path
from bayesrank.review.clusters import proposal_note, propose


def test_llmfao_items_and_prompts_are_proposed():
    """LLMFAO: one pair of outputs (column id) rated by 1–5 crowd workers, 13 prompts; counts by pandas."""
    raw = pd.read_csv(path("llmfao"))
    props = {p["column"]: p for p in propose(read_comparisons(path("llmfao")).frame)}
    assert set(props) == {"id", "prompt"}
    assert props["id"]["n_groups"] == raw["id"].nunique() == 2139
    assert props["prompt"]["n_groups"] == raw["prompt"].nunique() == 13
    assert props["id"]["rows"] == len(raw) and not props["id"]["both_orders"]
    assert "'id' groups the 8,931 comparisons into 2,139 groups" in proposal_note(props["id"])


def test_both_orders_and_non_grouping_columns():
    df = pd.DataFrame({"model_a": ["x", "y", "x", "x"], "model_b": ["y", "x", "z", "y"],
                       "question_id": [1, 1, 2, 3], "id": [10, 11, 12, 13], "prompt": ["p"] * 4})
    props = {p["column"]: p for p in propose(df)}
    assert set(props) == {"question_id"}  # id: one row per value; prompt: a single group
    assert props["question_id"]["both_orders"]  # x–y judged as (x, y) and (y, x) on question 1
    assert propose(df, used="question_id") == []
    assert propose(read_comparisons(path("nba")).frame) == []


def test_the_report_names_them():
    from bayesrank.review import review

    rep = review("llmfao", fast=True, claims=["top1"], budget=5)
    data = next(s for s in rep.sections if s.key == "data")
    assert [p["column"] for p in data.data["cluster_proposals"]] == ["id", "prompt"]
    assert any("column 'id' groups" in n for n in rep.notes) and any("column 'id'" in t for t in data.text)
    assert "cluster_proposals" in rep.to_dict()["sections"]["data"]
