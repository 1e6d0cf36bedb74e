"""Kendall's τ-b of two score vectors, as ``scipy.stats.kendalltau(x, y).statistic`` (its default
variant), without importing ``scipy.stats`` (a third of a second at start-up).

Over the ``N = n(n−1)/2`` pairs ``i < j``, with ``s_ij = sign(x_i − x_j)·sign(y_i − y_j)``,
``n_x`` / ``n_y`` the pairs tied in ``x`` / ``y``::

    τ_b = Σ s_ij / sqrt(N − n_x) / sqrt(N − n_y)       (NaN when x or y is constant, or has a NaN)

The numerator is the integer concordant − discordant count and the division is scipy's, in the
same order, so the value is the same to the last bit. ``O(n²)`` memory: meant for leaderboards
(hundreds of players), not for long series.
"""

from __future__ import annotations

import numpy as np


def kendall_tau_b(x, y) -> float:
    """τ-b between ``x`` and ``y`` (module docstring)."""
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y need the same length, got {x.size} and {y.size}")
    n = x.size
    if n < 2 or np.isnan(x).any() or np.isnan(y).any():
        return float("nan")
    iu = np.triu_indices(n, 1)
    sx = np.sign(x[:, None] - x[None, :])[iu].astype(np.int64)
    sy = np.sign(y[:, None] - y[None, :])[iu].astype(np.int64)
    tot = n * (n - 1) // 2
    x_ties, y_ties = tot - np.count_nonzero(sx), tot - np.count_nonzero(sy)
    if x_ties == tot or y_ties == tot:
        return float("nan")
    con_minus_dis = int((sx * sy).sum())
    tau = con_minus_dis / np.sqrt(tot - x_ties) / np.sqrt(tot - y_ties)
    return float(min(1.0, max(-1.0, tau)))
