"""The first minute: `bayesrank demo` prints a short summary that fits a 100-column terminal (no cell
cut off), keeps library warnings off stderr, and says where the report is."""

import json
import os
import re
import subprocess
import sys

import pytest
from rich.console import Console

from bayesrank.demo import claims_summary, top_table
from bayesrank.review.render import claim_label


def _printed(renderable, width=100) -> str:
    con = Console(width=width, record=True, file=open(os.devnull, "w"), color_system=None)
    con.print(renderable)
    return con.export_text()


def test_summary_keeps_every_word_at_100_columns(nba_report):
    text = _printed(claims_summary(nba_report))
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 100
    words = set(text.split())
    for c in nba_report.claims:
        for w in (claim_label(c) + " " + c.reason + " " + c.verdict).split():
            assert w in words, w  # wrapped at spaces, never cut


def test_top_table_keeps_every_name_at_100_columns(nba_report):
    text = _printed(top_table(nba_report, 10))
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 100
    for name in nba_report.leaderboard["player"].head(10):
        assert name in text


def _demo(tmp_path, dataset):
    env = {**os.environ, "COLUMNS": "100"}
    res = subprocess.run([sys.executable, "-m", "bayesrank.cli", "demo", "--dataset", dataset, "--no-nuts",
                          "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=900,
                         cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    return res


@pytest.mark.slow
def test_demo_output_fits_100_columns_and_stderr_is_quiet(tmp_path):
    res = _demo(tmp_path, "nba")
    lines = res.stdout.splitlines()
    assert "…" not in res.stdout and max(len(line) for line in lines) <= 100
    assert res.stderr.strip() == ""  # warnings are in the report, not on stderr
    assert re.search(r"The report: .*review\.html", res.stdout.replace("\n", " "))
    assert (tmp_path / "out" / "review.html").stat().st_size > 10_000
    assert "Boston Celtics is #1" in res.stdout
    # the τ line is a lower bound of the JSON's smallest τ-b, floored (never rounded up), "= 1" only for 1
    agreement = json.loads((tmp_path / "out" / "review.json").read_text())["sections"]["methods"]["agreement"]
    low = min(a["kendall_tau"] for a in agreement)
    shown = re.search(r"Kendall τ (= 1|≥ (\d\.\d{3}))", res.stdout.replace("\n", " "))
    assert shown, res.stdout
    if low > 1 - 1e-12:
        assert shown.group(1) == "= 1"
    else:
        assert float(shown.group(2)) <= low < float(shown.group(2)) + 0.001


@pytest.mark.slow
def test_map_row_is_the_map_fit():
    """The review fits the posterior's mode once (the Laplace fit's NumPy twin, no PyMC graph) and
    reports its MAP row from it: equal to `BradleyTerry.fit("map")` (Newton on the PyMC log-density)."""
    import numpy as np

    from bayesrank.bt import BradleyTerry
    from bayesrank.datasets import path
    from bayesrank.review import review

    rep = review("nba", claims=["top1"], nuts=False)
    mine = rep.results["fits"]["map"]
    ref = BradleyTerry(path("nba")).fit("map")
    assert (mine.method, mine.interval, mine.draws) == ("map", ref.interval, None)
    for field in ("score", "lower", "upper"):
        np.testing.assert_allclose(getattr(mine, field), getattr(ref, field), rtol=0, atol=1e-10)
    np.testing.assert_allclose(mine.cov, ref.cov, rtol=0, atol=1e-12)
    assert mine.diagnostics.converged and "(MAP)" in mine.diagnostics.method


def test_review_without_nuts_builds_no_pymc_model():
    """With ties (LLMFAO) and ``nuts=False`` every Bayesian row of the review is the NumPy twin: no
    PyMC model is built or compiled (run in a fresh interpreter; fails if a fit imports PyMC)."""
    import json
    import subprocess
    import sys

    code = ("import sys, json\nfrom bayesrank.review import review\nrep = review('llmfao', nuts=False)\n"
            "print(json.dumps([sorted(m for m in sys.modules if m.split('.')[0] in ('pymc', 'pytensor')),"
            " rep.results['fits']['claims'].method]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    heavy, method = json.loads(out.strip().splitlines()[-1])
    assert heavy == [] and method == "laplace, half-win, adjusted to the sandwich"


def test_demo_scale_elo_reaches_the_review(monkeypatch, tmp_path):
    """`demo --scale elo` asks its review for Elo points (and names it in the command it records)."""
    import bayesrank.review.api as api
    from bayesrank.cli import main

    seen = {}

    class Stop(Exception):
        pass

    def fake_review(data, **kw):
        seen.update(kw)
        raise Stop

    monkeypatch.setattr(api, "review", fake_review)
    with pytest.raises(Stop):
        main(["demo", "--dataset", "nba", "--no-nuts", "--scale", "elo", "--out", str(tmp_path)])
    assert seen["scale"] == "elo" and seen["command"][-2:] == ["--scale", "elo"]
    seen.clear()
    with pytest.raises(Stop):
        main(["demo", "--dataset", "nba", "--no-nuts", "--out", str(tmp_path)])
    assert seen["scale"] == "logit" and "--scale" not in seen["command"]


def test_top_table_in_elo_points_names_the_unit(nba_report):
    """The printed top of an Elo review: scores and bounds = the logit review's × 400/ln 10, and the
    title says Elo points (the logit one says logit scale)."""
    import math

    from bayesrank.review import review

    elo = review("nba", fast=True, seed=0, claims=["top1"], scale="elo")
    text, logit_text = _printed(top_table(elo, 5), width=200), _printed(top_table(nba_report, 5), width=200)
    assert "Elo points" in text and "logit scale" not in text and "logit scale" in logit_text
    a, b = elo.leaderboard.head(5), nba_report.leaderboard.head(5)
    assert list(a["player"]) == list(b["player"])
    for col in ("score", "lower", "upper"):
        assert (a[col].to_numpy() == pytest.approx(b[col].to_numpy() * 400 / math.log(10), rel=1e-12))
