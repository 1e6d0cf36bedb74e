"""Draws from a normal distribution on the sum-to-zero space, fast for large boards.

A covariance ``Σ`` of sum-to-zero scores (``Σ1 = 0``: Bradley–Terry θ, Laplace posteriors, rank-set
errors) is singular. NumPy's ``multivariate_normal(method="eigh")`` handles that by an
eigendecomposition (4.6 s for 3,000 players on one core); here, from :data:`CHOLESKY_ABOVE`
players on, ``Σ + 11ᵀ/K`` (positive definite: the null direction gets variance 1) is factored by
Cholesky (0.4 s) and each draw ``x = C w`` is projected, ``x − mean(x)``, whose covariance is
``P(Σ + 11ᵀ/K)P = Σ`` (P = I − 11ᵀ/K). The same law; other random numbers than the eigh route, so
smaller boards keep the eigh route and their seeded draws. A positive definite covariance of that
size (the paired covariance of mean benchmark scores) is drawn by NumPy's Cholesky route.
"""

from __future__ import annotations

import numpy as np

CHOLESKY_ABOVE = 1000


def sum_to_zero_normal(mean, cov, size: int, rng) -> np.ndarray:
    """(size, K) draws of ``N(mean, cov)`` for a covariance with ``cov·1 = 0`` (module docstring);
    other covariances (or small K) by NumPy's eigh route."""
    cov = np.asarray(cov, dtype=float)
    k = cov.shape[0]
    mean = np.broadcast_to(np.asarray(mean, dtype=float), (k,))
    scale = max(float(np.abs(np.diag(cov)).max()), 1e-300)
    if k >= CHOLESKY_ABOVE and np.abs(cov.sum(axis=1)).max() <= 1e-8 * scale * k:
        try:
            c = np.linalg.cholesky(cov + 1.0 / k)
        except np.linalg.LinAlgError:
            c = None
        if c is not None:
            w = rng.standard_normal((int(size), k))
            x = w @ c.T
            x -= x.mean(axis=1, keepdims=True)
            return x + mean
    if k >= CHOLESKY_ABOVE:  # a positive definite covariance (e.g. of mean benchmark scores): its Cholesky factor
        try:
            np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            pass
        else:
            return rng.multivariate_normal(mean, cov, size=int(size), method="cholesky")
    return rng.multivariate_normal(mean, cov, size=int(size), method="eigh")
