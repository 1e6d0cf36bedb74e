"""Curvature-adjusted ("open-faced sandwich") posterior draws.

A posterior built from a likelihood that treats dependent observations as independent (judgments of
one item by several judges, battles on one prompt) is too narrow: its curvature is that of the
independence likelihood. Ribatet, Cooley & Davison (2012) and Shaby (2014) keep the posterior's
location and shape and rescale its spread so that its covariance is the robust (sandwich)
covariance of the estimator::

    θ' = θ̄ + L (θ − θ̄),    L = chol(Σ_target) · chol(Σ_post)⁻¹

for every draw θ, with θ̄ and Σ_post the draws' mean and covariance and Σ_target the target
covariance (the cluster-robust sandwich ``H⁻¹ B_cl H⁻¹`` of the same likelihood). Then the adjusted
draws have mean θ̄ and covariance Σ_target exactly, and their standardised shape (skewness,
non-Gaussian tails) is the posterior's. On the sum-to-zero space of Bradley–Terry scores both
covariances are singular: the map is applied in an orthonormal basis of that space (the first
``n_players`` coordinates), extra parameters (a tie parameter) as they are.

For a Gaussian posterior (the Laplace approximation) the adjusted draws are N(θ̄, Σ_target): the
credible intervals are the robust Wald intervals, so the Bayesian answer's coverage under
dependence is that of the cluster-robust covariance (tests/stats/test_adjusted_posterior.py checks it
by simulation with clustered truth).
"""

from __future__ import annotations

import numpy as np


def sum_to_zero_basis(n_players: int, n_extra: int = 0) -> np.ndarray:
    """Orthonormal (K+e) × (K−1+e) basis: the sum-to-zero space of the first K coordinates, then
    the e extra coordinates unchanged."""
    k = n_players
    q, _ = np.linalg.qr(np.eye(k)[:, :-1] - 1.0 / k)  # columns span {x : Σx = 0}
    out = np.zeros((k + n_extra, k - 1 + n_extra))
    out[:k, : k - 1] = q
    out[k:, k - 1:] = np.eye(n_extra)
    return out


def _chol(a: np.ndarray) -> np.ndarray:
    a = 0.5 * (a + a.T)
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:  # positive semidefinite: a tiny jitter on the diagonal
        return np.linalg.cholesky(a + 1e-12 * np.trace(a) / len(a) * np.eye(len(a)))


def adjust_draws(draws: np.ndarray, target_cov: np.ndarray, n_players: int | None = None,
                 center: np.ndarray | None = None) -> np.ndarray:
    """Adjusted draws (module docstring): ``draws`` (S, P), ``target_cov`` (P, P); with
    ``n_players`` the first K coordinates live on the sum-to-zero space (P − K extra ones);
    ``center`` (default the draws' mean) is the point the spread is rescaled around."""
    d = np.asarray(draws, dtype=float)
    p = d.shape[1]
    basis = np.eye(p) if n_players is None else sum_to_zero_basis(n_players, p - n_players)
    mean = d.mean(axis=0) if center is None else np.asarray(center, dtype=float)
    z = (d - d.mean(axis=0)) @ basis  # coordinates in the basis
    post = np.cov(z.T).reshape(basis.shape[1], basis.shape[1])
    target = basis.T @ np.asarray(target_cov, dtype=float) @ basis
    lmap = _chol(target) @ np.linalg.inv(_chol(post))
    return mean + (z @ lmap.T) @ basis.T


def adjust_draws_batch(draws: np.ndarray, target_cov: np.ndarray, n_players: int | None = None) -> np.ndarray:
    """:func:`adjust_draws` for many posteriors at once: ``draws`` (R, S, P), ``target_cov`` (R, P, P)
    → (R, S, P), each replicate adjusted around its own draws' mean (simulation studies)."""
    d = np.asarray(draws, dtype=float)
    p = d.shape[2]
    basis = np.eye(p) if n_players is None else sum_to_zero_basis(n_players, p - n_players)
    mean = d.mean(axis=1, keepdims=True)
    z = (d - mean) @ basis  # (R, S, q)
    post = np.einsum("rsa,rsb->rab", z, z) / (d.shape[1] - 1)
    target = basis.T @ np.asarray(target_cov, dtype=float) @ basis
    def sym(a):
        return 0.5 * (a + np.swapaxes(a, 1, 2))
    lmap = np.linalg.cholesky(sym(target)) @ np.linalg.inv(np.linalg.cholesky(sym(post)))
    return mean + (z @ np.swapaxes(lmap, 1, 2)) @ basis.T
