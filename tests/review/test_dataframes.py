"""``review(df)``: a table in memory is reviewed as the same table in a file is by the command line.

For every kind (pairwise, judges, items, grid, confidence, table) a DataFrame, with renamed columns
named through ``columns=`` (and ``outcome_map=`` for pairwise data), is reviewed in memory; the same
DataFrame is written as CSV and reviewed by ``bayesrank review FILE`` with the same flags; the two
JSON documents must agree in everything but what names the data (the title's file name and the
appendix's data, hash and command). A pyarrow Table gives the same answers as its DataFrame; bad
rows are named by the DataFrame's index; a frame type that is not read is one line.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from bayesrank.cli import main
from bayesrank.datasets import path as bundled
from bayesrank.errors import InputError
from bayesrank.review import review


def _pairwise():
    df = pd.read_csv(bundled("nba")).rename(columns={"home_team": "host", "away_team": "guest"})
    df["result"] = np.where(df["home_pts"] > df["away_pts"], "H", "G")
    df = df[["host", "guest", "result"]]
    return df, {"kind": "pairwise", "columns": "a=host,b=guest,outcome=result", "outcome_map": "H=a,G=b",
                "claims": ["top1", "Boston Celtics>Denver Nuggets"], "budget": 20}


def _judges():
    df = pd.read_csv(bundled("llmfao-panel"))
    keep = sorted(set(df["left"]))[:8]
    df = df[df["left"].isin(keep) & df["right"].isin(keep)].rename(columns={"judge": "rater"})
    return df.reset_index(drop=True), {"kind": "judges", "columns": "a=left,b=right,outcome=winner,judge=rater",
                                       "claims": ["top1"], "budget": 20}


def _items():
    df = pd.read_csv(bundled("arena-bench-items")).rename(columns={"model": "system", "item": "question"})
    return df[["system", "question", "score"]], {"kind": "items", "columns": "model=system,item=question,score=score",
                                                "claims": ["top1", "gpt-4-0314>gpt-3.5-turbo"]}


def _grid():
    rows = []
    for t in ("plain", "chat"):
        for k, fewshot in enumerate((0, 3, 5)):
            base = 0.55 + 0.02 * k + (0.01 if t == "chat" else 0.0)
            rows += [("A", t, fewshot, base + 0.08 + 0.01 * k), ("B", t, fewshot, base),
                     ("C", t, fewshot, base + (0.02 if fewshot == 0 else -0.03))]
    df = pd.DataFrame(rows, columns=["system", "template", "fewshot", "acc"]).assign(task="quiz", n_items=500)
    return df, {"kind": "grid", "columns": "model=system,benchmark=task,score=acc", "claims": ["A>B", "C>B@quiz"]}


def _confidence():
    rng = np.random.default_rng(3)
    v = rng.uniform(0.2, 0.95, 400)
    df = pd.DataFrame({"is_right": (rng.random(400) < v).astype(int), "stated": v.round(3),
                       "logprob_conf": np.clip(v + 0.1, 0, 0.99).round(3), "model": rng.choice(["m1", "m2"], 400)})
    return df, {"kind": "confidence", "columns": "correct=is_right,verbal=stated,token=logprob_conf"}


def _table():
    df = pd.read_csv(bundled("lm-eval-2023-table")).rename(columns={"accuracy": "acc", "n": "items"})
    return df, {"kind": "table", "columns": "accuracy=acc,n=items", "claims": ["top1@arc_challenge"]}


CASES = {"pairwise": _pairwise, "judges": _judges, "items": _items, "grid": _grid, "confidence": _confidence,
         "table": _table}


def _flags(opts: dict) -> list[str]:
    out = ["--kind", opts["kind"], "--columns", opts["columns"], "--fast"]
    if "outcome_map" in opts:
        out += ["--outcome-map", opts["outcome_map"]]
    for c in opts.get("claims", []):
        out += ["--claim", c]
    if "budget" in opts:
        out += ["--budget", str(opts["budget"])]
    return out


def _comparable(doc: dict) -> dict:
    """The document without what names the data (file name in the title, path, hash, command) and
    the audits' wall times (``seconds``)."""
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "seconds"}
        return [strip(v) for v in x] if isinstance(x, list) else x

    doc = strip(json.loads(json.dumps(doc)))
    doc.pop("title")
    for key in ("data", "data_sha256", "command", "versions"):
        doc["reproducibility"].pop(key)
    return doc


@pytest.mark.parametrize("kind", list(CASES))
def test_a_dataframe_is_reviewed_as_the_command_line_reviews_its_csv(kind, tmp_path):
    df, opts = CASES[kind]()
    rep = review(df, fast=True, **{k: v for k, v in opts.items()})
    assert rep.kind == kind and rep.title.startswith("Review of the data given")
    assert rep.reproducibility["data"] == "<in memory>"
    csv, out = tmp_path / "data.csv", tmp_path / "cli.json"
    df.to_csv(csv, index=False)
    assert main(["review", str(csv), *_flags(opts), "--json", str(out)]) == 0
    cli = json.loads(out.read_text())
    assert cli["title"] == rep.title.replace("the data given", "data.csv")
    assert _comparable(json.loads(rep.to_json())) == _comparable(cli)


@pytest.mark.parametrize("kind", ["items", "table", "grid"])
def test_the_kind_is_detected_in_memory_as_in_the_file(kind, tmp_path):
    df, opts = CASES[kind]()
    opts = {k: v for k, v in opts.items() if k != "kind"}
    rep = review(df, fast=True, **opts)
    csv = tmp_path / "data.csv"
    df.to_csv(csv, index=False)
    assert rep.kind == review(csv, fast=True, **opts).kind == kind


def test_a_pyarrow_table_gives_the_answers_of_its_dataframe():
    import pyarrow as pa

    df, opts = _table()
    a = review(pa.Table.from_pandas(df), fast=True, **opts)
    b = review(df, fast=True, **opts)
    assert _comparable(json.loads(a.to_json())) == _comparable(json.loads(b.to_json()))
    assert a.reproducibility["data_sha256"] == b.reproducibility["data_sha256"]


def test_bad_rows_of_a_dataframe_are_named_by_its_index():
    df, opts = _items()
    df = df.set_axis(np.arange(len(df)) + 1000)
    df.loc[1007, "score"] = 2.0
    with pytest.raises(InputError) as err:
        review(df, fast=True, **opts)
    msg = str(err.value)
    assert "outside [0, 1]" in msg and "DataFrame index" in msg and "[1007]" in msg and "\n" not in msg


def test_a_frame_type_that_is_not_read_is_one_line():
    class FakePolars:  # what a polars DataFrame looks like to the reader: to_pandas, not a pandas frame
        __module__ = "polars.dataframe.frame"

        def to_pandas(self):
            raise AssertionError("not called")

    FakePolars.__name__ = "DataFrame"
    with pytest.raises(InputError, match=r"polars\.DataFrame is not read directly; pass a pandas DataFrame"):
        review(FakePolars(), fast=True)
    with pytest.raises(InputError, match="cannot read a list as a table"):
        review([1, 2, 3], fast=True)
