"""Compiled loops over the pairs of a large board (numba), for the rank analysis.

NumPy's blocked versions (:func:`bayesrank.stats.ranksets.max_t_argmax`, the pairwise table's
``p_ahead``) allocate a (K, S) block per leading player; from :data:`bayesrank.stats.ranksets.COMPILED_ABOVE` players on
(4.5 million pairs at 3,000) these loops do the same arithmetic, draws in parallel threads: the
max-t visits per draw only the pairs that can attain its maximum (sorted errors, a bound per
leading player), P(ahead) counts only the pairs whose draws overlap; the same numbers (the same
products, the same first-reached argmax).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True, fastmath=False)
def _max_t(z, w, wmax):  # pragma: no cover - compiled
    n, k = z.shape
    top = 0.0
    for a in range(k):
        top = max(top, wmax[a])
    out = np.full(n, -np.inf)
    arg = np.full(n, -1, dtype=np.int64)
    for s in prange(n):
        zs = z[s]
        order = np.argsort(zs)
        zmin = zs[order[0]]
        best, where, key = -np.inf, -1, 2 * k * k
        for q in range(k - 1, 0, -1):  # leading players from the largest error down
            a = order[q]
            za = zs[a]
            if (za - zmin) * top < best:  # no later leader can reach the best: t ≤ (Z_a − min Z)·max w
                break
            wa = wmax[a]
            for p in range(q):  # trailing players from the smallest error up: Z_a − Z_b decreases
                b = order[p]
                d = za - zs[b]
                if d <= 0.0 or d * wa < best:
                    break
                wab = w[a, b]
                if wab > 0.0:
                    t = d * wab
                    kk = 2 * (min(a, b) * k + max(a, b)) + (0 if a < b else 1)  # the pair loop's order
                    if t > best or (t == best and kk < key):
                        best, where, key = t, a * k + b, kk
        out[s] = best
        arg[s] = where
    return out, arg


def max_t_argmax(errors: np.ndarray, sd: np.ndarray, pairs: np.ndarray):
    """:func:`bayesrank.stats.ranksets.max_t_argmax` (same contract) by a compiled loop that visits only
    the pairs that can attain each draw's maximum: ``t_ab = (Z_a − Z_b)·w_ab`` with ``w_ab = 1/sd_ab``
    on the active ordered pairs (0 elsewhere) is at most ``(Z_a − Z_b)·max_b w_ab``, so with the draw's
    errors sorted, leaders ``a`` are taken from the largest ``Z_a`` down and their trailers ``b`` from
    the smallest ``Z_b`` up, each loop stopping where that bound falls below the best ``t`` found (on
    a 3,000-player board a few hundred thousand of the 9 million ordered pairs per draw). Exact: the
    same products as the blocked division up to the last bit of the reciprocal, and on an exact tie
    the pair :func:`~bayesrank.stats.ranksets._max_t_blocked` reaches first. A draw whose maximum is
    not positive (every active contrast negative, or none active) is recomputed by the blocked NumPy
    loop."""
    from bayesrank.stats.ranksets import _max_t_blocked

    z = np.ascontiguousarray(errors, dtype=float)
    pairs = np.asarray(pairs, dtype=bool)
    with np.errstate(divide="ignore"):
        inv = np.where(sd > 0, 1.0 / np.where(sd > 0, sd, 1.0), 0.0)
    w = np.ascontiguousarray(np.where(pairs, inv, 0.0))
    out, arg = _max_t(z, w, w.max(axis=1))
    bad = ~(out > 0) | (arg < 0)
    if bad.any():
        out[bad], arg[bad] = _max_t_blocked(z[bad], sd, pairs)
    return out, arg


@njit(parallel=True, cache=True)
def _ahead(dt, lo, hi):  # pragma: no cover - compiled
    k, n = dt.shape
    out = np.zeros(k * (k - 1) // 2)
    for a in prange(k - 1):
        base = a * (2 * k - a - 1) // 2
        for b in range(a + 1, k):
            if lo[a] > hi[b]:  # every draw of a above every draw of b
                out[base + b - a - 1] = n
                continue
            if hi[a] <= lo[b]:  # none above
                continue
            c = 0
            for s in range(n):
                if dt[a, s] > dt[b, s]:
                    c += 1
            out[base + b - a - 1] = c
    return out


def ahead_share(draws: np.ndarray) -> np.ndarray:
    """Share of draws with θ_a > θ_b for every pair a < b, in ``numpy.triu_indices(K, 1)`` order
    (counted draw by draw where the two players' ranges of draws overlap; 1 or 0 where they do not)."""
    d = np.asarray(draws, dtype=float)
    dt = np.ascontiguousarray(d.T)
    return _ahead(dt, dt.min(axis=1), dt.max(axis=1)) / len(d)
