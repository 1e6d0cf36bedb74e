"""Every result type speaks the one protocol (bayesrank.protocol.Result): table() is a labelled
DataFrame, summary() text, to_json() validates against the shipped schema (and names it),
diagnostics is a Diagnostics with the one meaning of converged, plot() returns a Figure.

Each result is built on small bundled or simulated data with the cheapest method that produces it."""

import json

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from bayesrank.datasets import path
from bayesrank.protocol import Diagnostics, Result, schema, validate


def _bt_fit():
    from bayesrank.bt import BradleyTerry

    return BradleyTerry(path("nba")).fit("mle")


def _bootstrap():
    from bayesrank.bt import BradleyTerry

    return BradleyTerry(path("nba")).fit("bootstrap", n_boot=50, seed=1)


def _ranks():
    from bayesrank.bt.ranks import analyze_ranks

    return analyze_ranks(_bt_fit(), n_sim=2000)


def _audit():
    from bayesrank.influence import audit

    return audit(path("nba"), objective="top1", actions=("drop", "flip"))


def _style():
    from bayesrank.bt import BradleyTerry
    from bayesrank.bt.simulate import simulate_style_battles

    frame, _, _ = simulate_style_battles(n_players=5, n_battles=1500, seed=2)
    return BradleyTerry(frame, style="s0_a:s0_b", position_effect=True).fit("mle")


def _style_audit_report():
    from bayesrank.bt.simulate import simulate_style_battles
    from bayesrank.influence import audit

    frame, _, _ = simulate_style_battles(n_players=5, n_battles=1500, seed=2)
    return audit(frame, style="s0_a:s0_b", objective="top1", actions=("drop", "flip"), position_effect=True)


def _hja():
    from bayesrank.hja import HJA

    return HJA(path("llmfao-panel"), rank=1).fit("mle")


def _calibration():
    from bayesrank.calibration.gap import analyze
    from bayesrank.calibration.records import from_frame

    rng = np.random.default_rng(0)
    v = rng.uniform(0.2, 0.95, 300)
    df = pd.DataFrame({"correct": (rng.random(300) < v).astype(int), "verbal": v, "token": np.clip(v + 0.1, 0, 0.99)})
    rec = from_frame(df, correct_col="correct", verbal_col="verbal", token_col="token")
    return analyze(rec, by=[], estimators=["ece"], scores=[], n_boot=50, posterior=False)


def _grid():
    from bayesrank.configflip.analysis import analyze
    from bayesrank.configflip.grid import EvalGrid

    rows = [(m, t, f, 0.5 + 0.1 * i + 0.01 * j - 0.02 * k)
            for i, m in enumerate("ABC") for j, t in enumerate(("x", "y")) for k, f in enumerate((0, 5))]
    df = pd.DataFrame(rows, columns=["model", "template", "fewshot", "score"]).assign(benchmark="b", n_items=200)
    return analyze(EvalGrid.from_scores(df, axes=["template", "fewshot"], n_items="n_items"))


def _review():
    from bayesrank.review import review

    return review("nba", fast=True, claims=["top1"], budget=20)


def _items():
    from bayesrank.items.readers import read_items
    from bayesrank.items.result import analyze_items

    return analyze_items(read_items(path("arena-bench-items"))[0])


BUILDERS = {"LeaderboardFit (mle)": _bt_fit, "LeaderboardFit (bootstrap)": _bootstrap, "RankAnalysis": _ranks,
            "AuditReport": _audit, "LeaderboardFit (style + position)": _style,
            "AuditReport (style + position)": _style_audit_report, "HJAFit": _hja,
            "CalibrationReport": _calibration, "GridAnalysis": _grid, "ReviewReport": _review, "ItemsAnalysis": _items}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_result_speaks_the_protocol(name):
    import matplotlib.pyplot as plt

    res = BUILDERS[name]()
    assert isinstance(res, Result)
    t = res.table()
    assert isinstance(t, pd.DataFrame) and len(t) > 0 and all(isinstance(c, str) for c in t.columns)
    text = res.summary()
    assert isinstance(text, str) and len(text) > 20 and str(res) == text
    d = res.diagnostics
    assert isinstance(d, Diagnostics)
    assert d.converged == (len(d.messages) == 0)  # converged exactly when no check failed
    doc = json.loads(res.to_json())
    assert doc["schema"] == res.schema and doc["diagnostics"]["converged"] == d.converged
    validate(doc, res.schema)
    validate(doc, "envelope")
    assert schema(res.schema)["$id"] == f"urn:bayesrank:schema:{res.schema}"
    fig = res.plot()
    assert isinstance(fig, Figure) and fig.axes
    plt.close("all")


def test_every_result_class_is_covered():
    """A new Result subclass must be added here (imported modules only; the list is explicit)."""
    import bayesrank.bt.ranks  # noqa: F401
    import bayesrank.bt.result  # noqa: F401
    import bayesrank.calibration.gap  # noqa: F401
    import bayesrank.configflip.analysis  # noqa: F401
    import bayesrank.configflip.paired  # noqa: F401
    import bayesrank.configflip.posterior  # noqa: F401
    import bayesrank.hja.model  # noqa: F401
    import bayesrank.influence.result  # noqa: F401
    import bayesrank.items.result  # noqa: F401
    import bayesrank.review.report  # noqa: F401

    names = {c.__name__ for c in Result.__subclasses__()}
    covered = {n.split(" ")[0] for n in BUILDERS} | {"PairedTests", "FlipResult"}  # tests/configflip cover these two
    assert names <= covered, names - covered
