"""Figures show the numbers they claim to show."""

import matplotlib
import numpy as np
import pandas as pd

from bayesrank.configflip import plots
from bayesrank.configflip.anova import anova_type2
from bayesrank.configflip.grid import EvalGrid
from bayesrank.configflip.metrics import reachable_orderings

matplotlib.use("Agg")


def grid():
    rows = [{"model": m, "benchmark": "b", "t": t, "score": s}
            for t, sc in (("x", (0.6, 0.5, 0.4)), ("y", (0.4, 0.5, 0.6)), ("z", (0.6, 0.6, 0.3)))
            for m, s in zip("ABC", sc)]
    return EvalGrid.from_scores(pd.DataFrame(rows), axes=["t"])


def test_flip_heatmap_encodes_signs_and_probabilities():
    g = grid()
    ax = plots.flip_heatmap(g, "b")
    img = ax.images[0].get_array()
    # rows: A vs B, A vs C, B vs C; columns x, y, z
    assert np.array_equal(np.asarray(img), [[1, -1, 0], [1, -1, 1], [1, -1, 1]])
    p = pd.DataFrame({"player_a": ["A"] * 3 + ["A"] * 3 + ["B"] * 3, "player_b": ["B"] * 3 + ["C"] * 3 + ["C"] * 3,
                      "config": ["t=x", "t=y", "t=z"] * 3, "p_a_greater": np.linspace(0, 1, 9)})
    ax = plots.flip_heatmap(g, "b", p)
    assert np.allclose(np.asarray(ax.images[0].get_array()), np.linspace(0, 1, 9).reshape(3, 3))


def test_ordering_and_anova_bars():
    g = grid()
    table, _ = reachable_orderings(g, "b")
    ax = plots.ordering_frequencies(table)
    assert sorted(b.get_width() for b in ax.patches) == sorted(table["count"])
    d = pd.DataFrame({"model": list("ABAB"), "t": list("xxyy"), "score": [0.1, 0.5, 0.3, 0.2]})
    t = anova_type2(d, "score", ["model", "t"], max_order=1)
    ax = plots.anova_shares({"b": t})
    assert np.isclose(sum(b.get_height() for b in ax.patches), np.nansum(t["share"]))


def test_grid_analysis_plot_views_show_its_numbers():
    from bayesrank.configflip.analysis import analyze

    res = analyze(grid())
    fig = res.plot(kind="flips")
    assert np.array_equal(np.asarray(fig.axes[0].images[0].get_array()), [[1, -1, 0], [1, -1, 1], [1, -1, 1]])
    fig = res.plot(kind="orderings")
    assert sorted(b.get_width() for b in fig.axes[0].patches) == sorted(res.results["b"].orderings["count"])
    fig = res.plot(kind="anova")
    shares = res.results["b"].anova["share"]
    assert np.isclose(sum(b.get_height() for b in fig.axes[0].patches), np.nansum(shares))
