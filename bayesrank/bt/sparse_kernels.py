"""Compiled loops of the large-board Bradley–Terry path (numba; :mod:`bayesrank.bt.sparse` imports
this module only on boards of :data:`bayesrank.bt.sparse.SPARSE_ABOVE` players or more).

:func:`batch_gradient` is the gradient of the binary loss of several count tables on the same rows,
``∇L_t(θ_t) = Σ_r (n_tr σ(θ_ti − θ_tj) − w_tr)(e_i − e_j) + ridge·θ_t``, one pass over the rows per
table (tables in parallel threads), skipping rows a table does not use (a bootstrap resample of a
sparse board leaves a third of its rows empty): the chord iteration's sweep without the (R, m)
temporaries of the sparse-matrix products.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def _gradient(theta, i, j, n, w, ridge):  # pragma: no cover - compiled
    m, k = theta.shape
    g = np.zeros((m, k))
    for t in prange(m):
        th = theta[t]
        gt = g[t]
        for r in range(i.shape[0]):
            nr = n[t, r]
            if nr == 0.0:
                continue
            a, b = i[r], j[r]
            e = 0.5 * nr * (1.0 + np.tanh(0.5 * (th[a] - th[b]))) - w[t, r]  # n σ(d) − w
            gt[a] += e
            gt[b] -= e
        if ridge != 0.0:
            for q in range(k):
                gt[q] += ridge * th[q]
    return g


def batch_gradient(theta: np.ndarray, i: np.ndarray, j: np.ndarray, n: np.ndarray, w: np.ndarray,
                   ridge: float = 0.0) -> np.ndarray:
    """(m, K) gradients of the tables with effective comparisons ``n`` and first-player wins ``w``
    (m, R) at ``theta`` (m, K) (module docstring)."""
    return _gradient(np.ascontiguousarray(theta, dtype=float), np.ascontiguousarray(i, dtype=np.int64),
                     np.ascontiguousarray(j, dtype=np.int64), np.ascontiguousarray(n, dtype=float),
                     np.ascontiguousarray(w, dtype=float), float(ridge))
