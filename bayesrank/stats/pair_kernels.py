"""Compiled loops over all K(K−1)/2 pairs of a large board (numba), for the rank analysis.

NumPy's blocked versions (:func:`bayesrank.stats.ranksets.max_t_argmax`, the pairwise table's
``p_ahead``) allocate a (K, S) block per leading player; from :data:`bayesrank.stats.ranksets.COMPILED_ABOVE` players on
(4.5 million pairs at 3,000) these loops do the same arithmetic pair by pair, in place, draws in
parallel threads: the same numbers (the same division, the same first-reached argmax), several
times faster.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True, fastmath=False)
def _max_t(z, wf, wb):  # pragma: no cover - compiled
    n, k = z.shape
    out = np.full(n, -np.inf)
    arg = np.full(n, -1, dtype=np.int64)
    for s in prange(n):
        best, where = -np.inf, -1
        for a in range(k - 1):
            za = z[s, a]
            row = 0.0
            for b in range(a + 1, k):  # branch-free: max(t_ab, t_ba, 0) over the active directions
                d = za - z[s, b]
                t = max(d * wf[a, b], -d * wb[a, b])
                row = max(row, t)
            if row > best:
                for b in range(a + 1, k):
                    d = za - z[s, b]
                    if d * wf[a, b] == row and wf[a, b] > 0:
                        best, where = row, a * k + b
                        break
                    if -d * wb[a, b] == row and wb[a, b] > 0:
                        best, where = row, b * k + a
                        break
        out[s] = best
        arg[s] = where
    return out, arg


def max_t_argmax(errors: np.ndarray, sd: np.ndarray, pairs: np.ndarray):
    """:func:`bayesrank.stats.ranksets.max_t_argmax` (same contract) by the compiled pair loop:
    ``t = (Z_a − Z_b)·(1/sd_ab)`` over the active directions (the reciprocal: equal to the blocked
    division up to the last bit). A draw whose maximum is not positive (every active contrast
    negative, or none active) is recomputed by the blocked NumPy loop."""
    from bayesrank.stats.ranksets import _max_t_blocked

    z = np.ascontiguousarray(errors, dtype=float)
    pairs = np.asarray(pairs, dtype=bool)
    with np.errstate(divide="ignore"):
        inv = np.where(sd > 0, 1.0 / np.where(sd > 0, sd, 1.0), 0.0)
    wf = np.ascontiguousarray(np.where(pairs, inv, 0.0))
    wb = np.ascontiguousarray(np.where(pairs.T, inv, 0.0))
    out, arg = _max_t(z, wf, wb)
    bad = ~(out > 0) | (arg < 0)
    if bad.any():
        out[bad], arg[bad] = _max_t_blocked(z[bad], sd, pairs)
    return out, arg


@njit(parallel=True, cache=True)
def _ahead(dt):  # pragma: no cover - compiled
    k, n = dt.shape
    out = np.zeros(k * (k - 1) // 2)
    for a in prange(k - 1):
        base = a * (2 * k - a - 1) // 2
        for b in range(a + 1, k):
            c = 0
            for s in range(n):
                if dt[a, s] > dt[b, s]:
                    c += 1
            out[base + b - a - 1] = c
    return out


def ahead_share(draws: np.ndarray) -> np.ndarray:
    """Share of draws with θ_a > θ_b for every pair a < b, in ``numpy.triu_indices(K, 1)`` order."""
    d = np.asarray(draws, dtype=float)
    return _ahead(np.ascontiguousarray(d.T)) / len(d)
