"""The notebook-style example runs as shipped and does what its cells say (examples/quickstart.py)."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pandas as pd

from bayesrank.protocol import validate

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_quickstart_reviews_a_dataframe_shows_it_and_saves_it(tmp_path, monkeypatch, capsys):
    out = tmp_path / "quick"
    monkeypatch.setattr(sys, "argv", [str(EXAMPLES / "quickstart.py"), str(out)])
    ns = runpy.run_path(str(EXAMPLES / "quickstart.py"), run_name="__main__")
    printed = capsys.readouterr().out
    report, fit, published = ns["report"], ns["fit"], ns["published"]
    assert printed.count("ReviewReport: Review of the data given") == 2
    assert repr(report) in printed and repr(fit) in printed and repr(published) in printed
    assert [c.claim.text for c in report.claims] == ["top1", "Boston Celtics>Denver Nuggets"]
    assert published.kind == "table"  # detected from the pyarrow table's columns
    assert sorted(p.name for p in out.iterdir()) == ["leaderboard.csv", "review.html", "review.json", "review.md"]
    doc = json.loads((out / "review.json").read_text())
    validate(doc, "review")
    assert [c["verdict"] for c in doc["claims"]] == [c.verdict for c in report.claims]
    board = pd.read_csv(out / "leaderboard.csv")
    assert board["player"].iloc[0] == fit.table()["player"].iloc[0] and len(board) == 30


def test_docs_python_page_runs_and_prints_what_it_shows(tmp_path, monkeypatch):
    """docs/python.md: its Python blocks run in order, and the printed views it quotes are the real ones."""
    import re

    monkeypatch.chdir(tmp_path)
    text = (EXAMPLES.parent / "docs" / "python.md").read_text()
    fenced = re.findall(r"^```(\w*)\n(.*?)^```$", text, flags=re.S | re.M)  # (language, body) in order
    ns: dict = {}
    for lang, block in fenced:
        if lang == "python":
            exec(compile(block, "docs/python.md", "exec"), ns)
    shown = [block for lang, block in fenced if not lang]
    assert shown[0].rstrip("\n") == repr(ns["report"])
    # the gradient's norm at convergence is round-off (5e-15 on one machine, 6e-15 on another): below 1e-10 it is masked
    def roundoff(s: str) -> str:
        return re.sub(r"\|gradient\| \d\.\de-(1[1-9]|[2-9]\d)\b", "|gradient| (round-off)", s)

    fit_lines = roundoff(repr(ns["fit"])).splitlines()
    quoted = [ln for ln in roundoff(shown[1]).rstrip("\n").splitlines() if ln.strip() != "…"]
    assert quoted[:5] == fit_lines[:5] and quoted[-2:] == fit_lines[-2:]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["leaderboard.csv", "review.html", "review.json",
                                                                     "review.md"]
