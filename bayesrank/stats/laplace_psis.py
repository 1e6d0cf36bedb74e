"""A Laplace approximation checked by Pareto-smoothed importance sampling (PSIS; Yao, Vehtari,
Simpson & Gelman 2018, "Yes, but did it work?"; the k̂ threshold of Vehtari, Simpson, Gelman, Yao
& Gabry 2024).

The proposal is the Laplace approximation q = N(x̂, Σ) (x̂ the posterior mode, Σ the inverse of the
negative Hessian there, in unconstrained coordinates). For S draws x_s ~ q the log importance
ratios are r_s = log p(x_s) − log q(x_s) (p unnormalised: constants cancel when the weights are
normalised). The generalised-Pareto shape k̂ of the ratios' upper tail measures how far q is from p
where it matters for expectations:

* k̂ ≤ min(1 − 1/log₁₀ S, 0.7): importance sampling from q converges at a practical rate; the
  PSIS-smoothed weights w_s correct the Laplace answer, and S' draws resampled with probabilities
  w_s (sampling–importance resampling) are equal-weight draws of the corrected posterior;
* above it the Gaussian misses mass the posterior has (its tails are too light, or the mode is not
  representative): the Laplace answer is not trusted and is reported as not converged.

The effective sample size of the weights is 1 / Σ w_s² (normalised weights). The Pareto smoothing is
:func:`bayesrank.stats.psis.psis_log_weights` (ArviZ's computation; tested against
``arviz_stats``' ``psislw`` on the same ratios).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayesrank.stats.psis import psis_log_weights


def khat_threshold(n_draws: int) -> float:
    """The largest Pareto k̂ at which S importance draws are still reliable: min(1 − 1/log₁₀ S, 0.7)."""
    return float(min(1.0 - 1.0 / np.log10(n_draws), 0.7)) if n_draws > 10 else 0.0


@dataclass(frozen=True)
class ImportanceCheck:
    """The PSIS diagnostic of a proposal: Pareto k̂, its threshold, the weights' ESS of S draws."""

    pareto_k: float
    threshold: float
    ess: float
    n_draws: int

    @property
    def ok(self) -> bool:
        return bool(self.pareto_k <= self.threshold)  # −inf: equal weights; +inf: no tail fit (not reliable)

    def line(self) -> str:
        state = "reliable" if self.ok else "NOT reliable"
        return (f"PSIS check of the Laplace approximation: Pareto k̂ {self.pareto_k:.2f} (reliable at ≤ "
                f"{self.threshold:.2f}: {state}), importance ESS {self.ess:,.0f} of {self.n_draws:,} draws")

    def to_dict(self) -> dict[str, Any]:
        return {"pareto_k": float(self.pareto_k), "threshold": float(self.threshold), "ess": float(self.ess),
                "n_draws": int(self.n_draws), "reliable": self.ok}


def gaussian_draws(mode: np.ndarray, cov: np.ndarray, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(x (n, d) ~ N(mode, cov), log q(x) up to the constant): x = mode + L e with cov = L Lᵀ, so
    log q = −½ |e|²."""
    chol = np.linalg.cholesky(np.asarray(cov, dtype=float))
    e = rng.standard_normal((n, len(mode)))
    return np.asarray(mode, dtype=float) + e @ chol.T, -0.5 * np.einsum("ij,ij->i", e, e)


def importance_check(log_ratios: np.ndarray) -> tuple[np.ndarray, ImportanceCheck]:
    """(normalised PSIS log weights (S,), the check) of log importance ratios r_s = log p − log q
    (non-finite ratios — a draw where p is zero — count as weight zero)."""
    r = np.asarray(log_ratios, dtype=float)
    s = r.size
    finite = np.isfinite(r)
    if finite.sum() < 10:
        raise ValueError(f"only {int(finite.sum())} of {s} importance ratios are finite")
    if np.ptp(r[finite]) <= 1e-12 * max(1.0, float(np.abs(r[finite]).max())):  # q ∝ p: equal weights, no tail
        lw = np.where(finite, -np.log(finite.sum()), -np.inf)
        return lw, ImportanceCheck(float("-inf"), khat_threshold(s), float(finite.sum()), s)
    lw_f, k = psis_log_weights(-r[finite][:, None])
    lw = np.full(s, -np.inf)
    lw[finite] = lw_f[:, 0]
    w = np.exp(lw)
    ess = float(1.0 / np.sum(w**2))
    k0 = float(k[0]) if np.isfinite(k[0]) else float("inf")
    return lw, ImportanceCheck(k0, khat_threshold(s), ess, s)


def resample(log_weights: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of n draws resampled with replacement with probabilities w_s (the weights normalised)."""
    w = np.exp(np.asarray(log_weights, dtype=float))
    return rng.choice(len(w), size=n, replace=True, p=w / w.sum())


def laplace_psis(log_density: Callable[[np.ndarray], np.ndarray], mode: np.ndarray, cov: np.ndarray, *,
                 n_draws: int = 4000, n_out: int | None = None, seed: int = 0) -> tuple[np.ndarray, np.ndarray, ImportanceCheck]:
    """(resampled draws (n_out, d), the proposal's draws (n_draws, d), the check).

    ``log_density(x)`` maps draws (n, d) to the unnormalised log posterior (n,) in the coordinates
    of ``mode`` and ``cov``."""
    rng = np.random.default_rng(seed)
    x, log_q = gaussian_draws(mode, cov, n_draws, rng)
    lp = np.asarray(log_density(x), dtype=float)
    lw, check = importance_check(lp - log_q)
    idx = resample(lw, n_draws if n_out is None else n_out, rng)
    return x[idx], x, check
