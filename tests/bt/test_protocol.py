"""Every Bradley-Terry fit method returns a protocol Result whose JSON validates against the shipped
``fit`` schema, with the diagnostics kind the protocol prescribes and the same table columns."""

import numpy as np
import pytest

from bayesrank.bt import BradleyTerry
from bayesrank.datasets import path
from bayesrank.protocol import Result

COLUMNS = ["player", "score", "lower", "upper", "rank", "rank_ci", "rank_ub", "n_matches"]


@pytest.fixture(scope="module")
def nba():
    return BradleyTerry(path("sports/nba_games_2023_24_tidy.csv"))


@pytest.mark.parametrize("method,kw,kind", [
    ("mle", {}, "optimizer"), ("mle", {"ci": "sandwich"}, "optimizer"), ("bootstrap", {"n_boot": 60}, "resampling"),
    ("map", {}, "optimizer"), ("laplace", {"draws": 50}, "optimizer"),
])
def test_every_method_speaks_the_protocol(nba, method, kw, kind):
    import json

    fit = nba.fit(method, **kw)
    assert isinstance(fit, Result) and fit.schema == "fit"
    assert fit.diagnostics.kind == kind and fit.diagnostics.converged, fit.diagnostics.messages
    if kind == "optimizer":
        assert fit.diagnostics.gradient_norm < 1e-6
    t = fit.table()
    assert list(t.columns) == COLUMNS and len(t) == 30
    doc = json.loads(fit.to_json())  # validated against bayesrank/schemas/fit.json
    assert doc["method"] == method and doc["diagnostics"]["kind"] == kind
    assert [p["player"] for p in doc["players"]] == list(t["player"])
    assert fit.summary().startswith("Bradley-Terry fit") and str(fit) == fit.summary()


def test_defaults_without_ties_are_fisher_and_binary(nba):
    """NBA has no ties: ci='auto' is Fisher and ties='auto' is the binary model for every method."""
    assert not nba.has_ties
    assert nba.fit("mle").interval == "fisher"
    assert nba.tie_model_for("nuts") == "half" and nba.tie_model_for("mle") == "half"


def test_defaults_with_ties_are_sandwich_and_davidson(llmfao):
    bt = BradleyTerry(llmfao)
    assert bt.has_ties
    fit = bt.fit("mle")
    assert fit.interval == "sandwich" and fit.ties == "half" and fit.settings["ci"] == "auto"
    assert bt.tie_model_for("nuts") == bt.tie_model_for("laplace") == "davidson"
    assert BradleyTerry(llmfao, ties="half").tie_model_for("nuts") == "half"  # an explicit choice is kept


def test_plot_draws_the_table(nba):
    import matplotlib

    matplotlib.use("Agg")
    fit = nba.fit("mle")
    fig = fit.plot(top=5)
    ax = fig.axes[0]
    t = fit.table().head(5)
    xs = ax.lines[0].get_xdata()  # the dots, best at the top (largest y)
    ys = ax.lines[0].get_ydata()
    order = np.argsort(-np.asarray(ys, dtype=float))
    np.testing.assert_allclose(np.asarray(xs, dtype=float)[order], t["score"].to_numpy())
    labels = [tick.get_text() for tick in ax.get_yticklabels()]
    top = int(np.argmax(ax.get_yticks()))
    assert labels[top] == f"{t['player'].iloc[0]} ({t['rank_ci'].iloc[0]})"


def test_mle_fit_through_the_api_loads_no_pymc_stack(tmp_path):
    """An MLE fit with intervals, table, contrasts and JSON loads neither PyMC/PyTensor/ArviZ nor
    scipy.stats or matplotlib (fresh interpreter)."""
    import json
    import subprocess
    import sys

    code = (
        "import sys, json\n"
        "from bayesrank.bt import BradleyTerry\n"
        "from bayesrank.datasets import path\n"
        "import bayesrank.bt.cli\n"
        "f = BradleyTerry(path('sports/nba_games_2023_24_tidy.csv')).fit('mle')\n"
        "f.table(); f.contrast(f.players[0], f.players[1]); f.significance(); f.to_json()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    mods = set(json.loads(out.strip().splitlines()[-1]))
    assert "bayesrank.bt.mle" in mods
    heavy = [m for m in ("pymc", "pytensor", "arviz", "scipy.stats", "matplotlib", "xarray") if m in mods]
    assert heavy == []


def test_default_bayesian_fit_with_ties_is_davidson_and_validates(llmfao):
    """ties='auto' on data with ties: MAP uses the Davidson model, reports log ν, and its JSON
    (whose schema requires log_nu for Davidson) validates; the MLE default is the sandwich."""
    import json

    bt = BradleyTerry(llmfao)
    fmap = bt.fit("map")
    assert fmap.ties == "davidson" and "log_nu" in fmap.extra and fmap.diagnostics.converged
    doc = json.loads(fmap.to_json())
    assert doc["ties"] == "davidson" and doc["settings"]["ties_requested"] == "auto"
    assert doc["extra"]["log_nu"] == pytest.approx(fmap.extra["log_nu"])
    mle = json.loads(bt.fit("mle").to_json())
    assert mle["ties"] == "half" and mle["interval"] == "sandwich" and mle["settings"]["ci_used"] == "sandwich"
