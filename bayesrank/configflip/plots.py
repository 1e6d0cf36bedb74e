"""Figures: pairwise flip heatmap over the configuration grid, ordering frequencies, ANOVA shares."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from .grid import EvalGrid


def flip_heatmap(grid: EvalGrid, benchmark: str, p_greater: pd.DataFrame | None = None, ax=None):
    """Rows: model pairs; columns: configurations. Colour: sign of the observed score difference
    (A>B red, B>A blue, tie white), or P(A > B | c) when ``p_greater`` (FlipResult.p_greater()) is given."""
    import matplotlib.pyplot as plt

    wide = grid.wide(benchmark)
    pairs = list(itertools.combinations(wide.columns, 2))
    if p_greater is not None:
        piv = p_greater.assign(pair=p_greater["player_a"] + " vs " + p_greater["player_b"]) \
            .pivot(index="pair", columns="config", values="p_a_greater")
        mat = piv.reindex(index=[f"{a} vs {b}" for a, b in pairs], columns=wide.index).to_numpy(float)
        vmin, vmax, label = 0.0, 1.0, "P(A > B | c)"
    else:
        mat = np.array([np.sign(wide[a] - wide[b]).to_numpy(float) for a, b in pairs])
        vmin, vmax, label = -1.0, 1.0, "sign(s_A - s_B)"
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6, 0.25 * wide.shape[0] + 3), 0.5 * len(pairs) + 2))
    im = ax.imshow(mat, aspect="auto", cmap="coolwarm_r" if p_greater is None else "coolwarm_r",
                   vmin=vmin, vmax=vmax, interpolation="nearest")
    ax.set_yticks(range(len(pairs)), [f"{a} vs {b}" for a, b in pairs])
    ax.set_xticks(range(wide.shape[0]), list(wide.index), rotation=90, fontsize=6)
    ax.set_title(f"{benchmark}: pairwise verdict per configuration")
    ax.figure.colorbar(im, ax=ax, label=label)
    ax.figure.tight_layout()
    return ax


def ordering_frequencies(orderings: pd.DataFrame, title: str = "", ax=None):
    """Bar chart of how many configurations induce each ordering."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.4 * len(orderings) + 1.5))
    ax.barh(orderings["ordering"][::-1], orderings["count"][::-1], color="tab:gray")
    ax.set_xlabel("number of configurations")
    ax.set_title(title or "reachable orderings")
    ax.figure.tight_layout()
    return ax


def anova_shares(tables: dict[str, pd.DataFrame], ax=None):
    """Stacked bars per benchmark: share of SS_total for each ANOVA term (residual in grey)."""
    import matplotlib.pyplot as plt

    terms = []
    for t in tables.values():
        terms += [x for x in t["term"] if x not in terms]
    if ax is None:
        _, ax = plt.subplots(figsize=(max(5, 1.2 * len(tables) + 3), 4))
    bottom = np.zeros(len(tables))
    cmap = plt.get_cmap("tab20")
    for i, term in enumerate(terms):
        vals = np.array([t.set_index("term")["share"].get(term, 0.0) for t in tables.values()], float)
        ax.bar(list(tables), vals, bottom=bottom, label=term,
               color="lightgrey" if term == "Residual" else cmap(i % 20))
        bottom += np.nan_to_num(vals)
    ax.set_ylabel("share of total sum of squares (Type II)")
    ax.legend(fontsize=7, bbox_to_anchor=(1.02, 1), loc="upper left")
    ax.tick_params(axis="x", rotation=45)
    ax.figure.tight_layout()
    return ax
