"""Simulated grids with known truth (for tests, examples and benchmarks).

Truth: ``eta[m, c] = ability[m] + sum_a effect_a[l_a(c)] + sum_a interaction_a[m, l_a(c)]``; per-item
correctness ``y[m, c, i] ~ Bernoulli(logit^-1(eta[m, c] + u[i]))`` with ``u[i] ~ N(0, item_sd)``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from .grid import EvalGrid, config_label


def simulate_grid(abilities: dict[str, float], axes: dict[str, list[str]], n_items: int = 300, *,
                  axis_effect_sd: float = 0.0, interaction: dict[tuple[str, str, str], float] | None = None,
                  item_sd: float = 1.0, per_item: bool = True, benchmark: str = "sim", seed: int = 0):
    """Return ``(grid, truth)``; ``truth`` is a (config x model) DataFrame of true ``eta``.

    ``interaction[(model, axis, level)] = shift`` adds a model-specific effect of an axis level
    (a true configuration-driven reversal when it changes the sign of a gap).
    """
    rng = np.random.default_rng(seed)
    models = list(abilities)
    names = list(axes)
    combos = list(itertools.product(*(axes[a] for a in names)))
    effects = {a: dict(zip(axes[a], rng.normal(0, axis_effect_sd, len(axes[a])))) for a in names}
    u = rng.normal(0, item_sd, n_items)
    truth = pd.DataFrame(index=[config_label(c, names) for c in combos], columns=models, dtype=float)
    rows, item_rows = [], []
    for combo in combos:
        lab = config_label(combo, names)
        for m in models:
            eta = abilities[m] + sum(effects[a][lv] for a, lv in zip(names, combo))
            eta += sum((interaction or {}).get((m, a, lv), 0.0) for a, lv in zip(names, combo))
            truth.loc[lab, m] = eta
            y = rng.random(n_items) < 1 / (1 + np.exp(-(eta + u)))
            rows.append({"model": m, "benchmark": benchmark, **dict(zip(names, combo)), "score": y.mean(),
                         "n_items": n_items})
            if per_item:
                item_rows.append(pd.DataFrame({"model": m, "benchmark": benchmark,
                                               **{a: lv for a, lv in zip(names, combo)},
                                               "item": np.arange(n_items).astype(str), "correct": y.astype(float)}))
    if per_item:
        grid = EvalGrid.from_items(pd.concat(item_rows, ignore_index=True), axes=names)
    else:
        grid = EvalGrid.from_scores(pd.DataFrame(rows), axes=names, n_items="n_items")
    return grid, truth
