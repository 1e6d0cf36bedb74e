"""PSIS-LOO (Vehtari, Gelman & Gabry 2017; Pareto smoothing as Vehtari, Simpson, Gelman, Yao &
Gabry 2024) for all N observations at once: the same computation as ArviZ 1's ``loo``
(``arviz_stats``), vectorised over the observations instead of one Python call per observation
(tests/stats/test_psis.py compares elpd, SE, p_loo, every Pareto k and log weight to ArviZ).

For observation i with log-likelihood draws ℓ_is (s = 1..S), the raw log weights are −ℓ_is. The
M = ⌊3√(S/r_eff)⌋ largest (⌊S/5⌋ if S·r_eff ≤ 225) are replaced by the expected order statistics
of a generalised Pareto fit to the weights' exceedances over the largest weight below them (Zhang &
Stephens' empirical-Bayes fit with the weak prior k ~ N(0.5) of 10 pseudo-observations; its shape
is the Pareto k), capped at the largest raw weight, and the weights are normalised. Then
elpd_i = log Σ_s w_is e^{ℓ_is}, p_loo_i = log(mean_s e^{ℓ_is}) − elpd_i, elpd = Σ elpd_i,
SE = √(N·var(elpd_i)), r_eff = mean over the posterior's parameters of ESS_mean / S.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PRIOR_BS = 3
PRIOR_K = 10


@dataclass
class PsisLoo:
    elpd: float
    se: float
    p_loo: float
    elpd_i: np.ndarray  # (N,)
    p_loo_i: np.ndarray  # (N,)
    pareto_k: np.ndarray  # (N,)
    log_weights: np.ndarray  # (S, N), normalised

    def good_k(self) -> float:
        """ArviZ's threshold for a reliable Pareto k at S draws: min(1 − 1/log10 S, 0.7)."""
        s = self.log_weights.shape[0]
        return min(1 - 1 / np.log10(s), 0.7) if s > 1 else 0.7


def tail_length(n_draws: int, r_eff: float) -> int:
    """M, the number of largest weights smoothed."""
    return int(np.floor(3 * (n_draws / r_eff) ** 0.5) if n_draws * r_eff > 225 else np.floor(n_draws / 5))


def _logsumexp(a: np.ndarray, axis: int = -1) -> np.ndarray:
    m = a.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(a - m).sum(axis=axis)) + np.squeeze(m, axis=axis)


def gpd_fit(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(k, σ) of a generalised Pareto fit to each row of ``x`` (N, M), sorted ascending, positive
    exceedances (Zhang & Stephens 2009 with the prior on k; NaN where the first quartile is the minimum)."""
    n = x.shape[1]
    m_est = 30 + int(n**0.5)
    xstar = x[:, int((n / 4 + 0.5) - 1)]
    bad = xstar <= x[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        b = 1 - np.sqrt(m_est / (np.arange(1, m_est + 1, dtype=float) - 0.5))
        b = b[None, :] / (PRIOR_BS * xstar[:, None]) + 1 / x[:, -1:]  # (N, m_est)
        k = np.log1p(-b[:, :, None] * x[:, None, :]).mean(axis=2)
        len_scale = n * (np.log(-b / k) - k - 1)
        w = np.exp(len_scale - _logsumexp(len_scale)[:, None])
        w = np.where(w >= 10 * np.finfo(float).eps, w, 0.0)
        w /= w.sum(axis=1, keepdims=True)
        b_post = (b * w).sum(axis=1)
        kappa = np.log1p(-b_post[:, None] * x).mean(axis=1)
        sigma = -kappa / b_post
        kappa = (n * kappa + PRIOR_K * 0.5) / (n + PRIOR_K)
    kappa = np.where(np.isnan(kappa), np.inf, kappa)
    return np.where(bad, np.nan, kappa), np.where(bad, np.nan, sigma)


def psis_log_weights(loglik: np.ndarray, r_eff: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(normalised PSIS log weights (S, N), Pareto k (N,)) of leaving out each column of ``loglik`` (S, N)."""
    lw = -np.ascontiguousarray(np.asarray(loglik, dtype=float).T)  # (N, S): one row per observation
    n_obs, s = lw.shape
    m = tail_length(s, r_eff)
    if m < 5:
        raise ValueError("n_draws_tail must be at least 5")
    lw -= lw.max(axis=1, keepdims=True)
    top = np.argpartition(lw, s - m - 1, axis=1)[:, s - m - 1:]  # the cutoff and the M largest, unordered
    vals = np.take_along_axis(lw, top, axis=1)
    o = np.argsort(vals, axis=1)
    top, vals = np.take_along_axis(top, o, axis=1), np.take_along_axis(vals, o, axis=1)
    cutoff, tail, idx = vals[:, 0], vals[:, 1:], top[:, 1:]
    max_tail = tail[:, -1]
    if np.any(np.abs(max_tail - tail[:, 0]) < np.finfo(float).tiny):
        raise ValueError("All tail values are the same")
    cut = np.exp(cutoff)
    khat, sigma = gpd_fit(np.exp(tail) - cut[:, None])
    smooth = np.isfinite(khat)
    if smooth.any():
        p = (np.arange(m) + 0.5) / m
        kk, sg, cc = khat[smooth, None], sigma[smooth, None], cut[smooth, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(kk == 0, cc - sg * np.log1p(-p), cc + sg * np.expm1(-kk * np.log1p(-p)) / kk)
            q = np.where(sg > 0, q, np.nan)
            sm = np.log(q)
        mt = max_tail[smooth, None]
        sm = np.where(sm > mt, mt, sm)
        rows = np.flatnonzero(smooth)
        lw[rows[:, None], idx[rows]] = sm
    lw -= _logsumexp(lw)[:, None]
    return lw.T, khat


def psis_loo(loglik: np.ndarray, r_eff: float = 1.0) -> PsisLoo:
    """PSIS-LOO of ``loglik`` (S draws, N observations); ``r_eff``: see :func:`relative_eff`."""
    ll = np.asarray(loglik, dtype=float)
    lw, k = psis_log_weights(ll, r_eff)
    s = ll.shape[0]
    llt = np.ascontiguousarray(ll.T)
    elpd_i = _logsumexp(lw.T + llt)
    p_loo_i = _logsumexp(llt) - np.log(s) - elpd_i
    n = len(elpd_i)
    se = float(np.sqrt(n * np.var(elpd_i, ddof=1))) if n > 1 else 0.0
    return PsisLoo(float(elpd_i.sum()), se, float(p_loo_i.sum()), elpd_i, p_loo_i, k, lw)


def relative_eff(draws: np.ndarray) -> float:
    """r_eff = mean over parameters of ESS_mean / S for draws (P, chains, draws); 1 with one chain."""
    from bayesrank.stats.convergence import ess_mean

    if draws.shape[1] == 1:
        return 1.0
    return float(np.mean(ess_mean(draws)) / (draws.shape[1] * draws.shape[2]))
