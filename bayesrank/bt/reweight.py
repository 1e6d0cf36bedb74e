"""Inverse-propensity weights for uneven pair sampling (as arena-rank's ``reweighted=True``).

LMArena samples some pairs far more often than others; an unweighted Bradley–Terry fit then
answers "which model wins on the battles that happened to be sampled". Weighting each battle by
the inverse of how often its (unordered) pair was sampled targets the uniform-over-pairs mixture:

    v_n = 1 / max(n_{pair(n)}, min_pair_count),     then scaled to mean 1 over battles

``n_pair`` counts the pair's battles (frequency weights included); ``min_pair_count`` (default 50,
arena-rank's) is a *floor* on that count, so rarely sampled pairs do not get huge weights — it
does not drop any battle. The weights enter the loss as ``Σ f v ℓ`` and the sandwich meat as
``Σ f v² s sᵀ``; the Fisher interval ignores that the weights are not frequencies, so the default
interval with reweighting is the sandwich (``bayesrank.bt.mle.default_interval``).
"""

from __future__ import annotations

import numpy as np

from bayesrank.errors import InputError


def inverse_propensity_weights(data, min_pair_count: float = 50, normalize: bool = True) -> np.ndarray:
    """(R,) weights ``1/max(n_pair, min_pair_count)`` of :class:`~bayesrank.data.rows.PairRows`
    (mean 1 over battles when ``normalize``); every row of a pair gets the pair's weight."""
    if not (np.isfinite(min_pair_count) and min_pair_count >= 0):
        raise InputError(f"--min-pair-count must be a number >= 0, got {min_pair_count}")
    k = data.n_players
    code = np.minimum(data.i, data.j) * k + np.maximum(data.i, data.j)
    _, inv = np.unique(code, return_inverse=True)
    freq = data.total
    n_pair = np.bincount(inv, freq)[inv]
    w = 1.0 / np.maximum(n_pair, max(float(min_pair_count), 1e-300))
    if normalize:
        w = w / np.average(w, weights=freq)
    return w


def pair_sampling_table(data) -> pd.DataFrame:  # noqa: F821
    """player_a, player_b, n_battles, weight per unordered pair (weights as applied)."""
    import pandas as pd

    k = data.n_players
    lo, hi = np.minimum(data.i, data.j), np.maximum(data.i, data.j)
    df = pd.DataFrame({"code": lo * k + hi, "freq": data.total, "weight": data.weight})
    g = df.groupby("code").agg(n_battles=("freq", "sum"), weight=("weight", "first")).reset_index()
    return pd.DataFrame({"player_a": data.players[g["code"] // k], "player_b": data.players[g["code"] % k],
                         "n_battles": g["n_battles"], "weight": g["weight"]})
