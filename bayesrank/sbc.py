"""Simulation-based calibration (Talts et al. 2018), the model-free part.

A model's SBC loop draws the truth θ̃ from the prior, simulates data, fits, and hands this module the
posterior draws. Here:

- :func:`thin_draws`: interleave the chains (c0 d0, c1 d0, c0 d1, …), keep every ``t``-th draw with
  ``t = ⌊C·D / (L + 1)⌋``, the first L (default L = 99): thinning makes the kept draws nearly independent.
- :func:`rank_of_truth`: ``rank = #{kept draws < truth}`` per quantity, in {0, …, L}; uniform on that set
  when the posterior computation is right. Ties (probability 0 for continuous posteriors) count as not
  below, or are broken uniformly at random with a seeded ``rng``.
- :func:`uniformity`: per quantity two tests, Bonferroni over all of them (2 × #quantities tests,
  family-wise level ``alpha``):

  * chi-square on ``B`` equal bins of ranks (default 10 bins of 10 rank values), ``Σ (O − n/B)² / (n/B)``
    ~ χ²_{B−1} — any departure; strong against a shifted posterior;
  * dispersion: the mean over simulations of ``(u − ½)²``, ``u = (rank + ½)/(L + 1)``, against its exact
    null mean ``(m² − 1)/(12 m²)`` and variance ``(m² − 1)(3m² − 7)/(240 m⁴) − mean²`` (``m = L + 1``, u
    uniform on the m points ``(k + ½)/m``), two-sided normal z — strong against a posterior whose SD is
    wrong (too narrow piles ranks at both ends, too wide in the middle).

- :func:`power`: each test's chance to detect a computed posterior ``N(μ + δ·s, (c·s)²)`` when the right
  one is ``N(μ, s²)``. The rank law is exact for that alternative: given the truth's standard score Z ~
  N(0, 1), rank ~ Binomial(L, Φ((Z − δ)/c)), mixed over Z by quadrature (:func:`rank_distribution`);
  the rejection rate of both tests under it is computed by seeded multinomial Monte Carlo.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import binom, chi2, norm

L_DRAWS = 99
BINS = 10
TESTS = ("chi2", "dispersion")


def thin_draws(draws: np.ndarray, n_keep: int = L_DRAWS) -> np.ndarray:
    """(chain, draw, quantity) draws → (n_keep, quantity): chains interleaved, every ``⌊C·D/(n_keep+1)⌋``-th
    draw, the first ``n_keep``."""
    draws = np.asarray(draws)
    if draws.ndim != 3:
        raise ValueError(f"draws must be (chain, draw, quantity), got shape {draws.shape}")
    n_chains, n_draws, n_q = draws.shape
    step = n_chains * n_draws // (n_keep + 1)
    if step < 1:
        raise ValueError(f"{n_chains} chains × {n_draws} draws < {n_keep + 1}: too few draws to keep {n_keep}")
    return draws.transpose(1, 0, 2).reshape(n_chains * n_draws, n_q)[::step][:n_keep]


def rank_of_truth(draws: np.ndarray, truth: np.ndarray, n_keep: int = L_DRAWS,
                  rng: np.random.Generator | None = None) -> np.ndarray:
    """Rank of each true quantity among the thinned (:func:`thin_draws`) draws: #{kept < truth} in {0, …, n_keep};
    with ``rng`` a tie adds a uniform draw from {0, …, #ties}."""
    kept = thin_draws(draws, n_keep)
    truth = np.asarray(truth, dtype=float)
    if truth.shape != kept.shape[1:]:
        raise ValueError(f"truth has shape {truth.shape}, the draws have {kept.shape[1]} quantities")
    below = (kept < truth).sum(axis=0)
    if rng is None:
        return below
    return below + rng.integers(0, (kept == truth).sum(axis=0) + 1)


def dispersion_moments(m: int = L_DRAWS + 1) -> tuple[float, float]:
    """Mean and variance of (u − ½)² for u uniform on the m points (k + ½)/m, k = 0, …, m − 1."""
    mean = (m * m - 1) / (12 * m * m)
    fourth = (m * m - 1) * (3 * m * m - 7) / (240 * m**4)
    return mean, fourth - mean * mean


def _check_bins(n_draws: int, bins: int) -> None:
    if (n_draws + 1) % bins:
        raise ValueError(f"{n_draws + 1} rank values do not split into {bins} equal bins")


def _tests(value_counts: np.ndarray, n_draws: int, bins: int) -> tuple[np.ndarray, ...]:
    """Chi-square statistic and p-value, dispersion z and p-value from counts of each rank value
    (… × (n_draws + 1); every row sums to the number of simulations n)."""
    n = value_counts.sum(axis=-1)
    bin_counts = value_counts.reshape(value_counts.shape[:-1] + (bins, -1)).sum(axis=-1)
    expected = n[..., None] / bins
    stat = ((bin_counts - expected) ** 2 / expected).sum(axis=-1)
    g = ((np.arange(n_draws + 1) + 0.5) / (n_draws + 1) - 0.5) ** 2
    mean0, var0 = dispersion_moments(n_draws + 1)
    z_disp = (value_counts @ g / n - mean0) / np.sqrt(var0 / n)
    return stat, chi2.sf(stat, bins - 1), z_disp, 2 * norm.sf(np.abs(z_disp)), bin_counts


def uniformity(ranks: np.ndarray, names=None, alpha: float = 0.01, n_draws: int = L_DRAWS,
               bins: int = BINS) -> dict:
    """Chi-square (``bins`` equal bins) and dispersion test of uniform ranks per quantity (column of the
    (simulation × quantity) ``ranks``), Bonferroni over all 2 × #quantities tests at family-wise ``alpha``.

    Returns ``table`` (per quantity: chi2, chi2_p, dispersion_z, dispersion_p), the same as arrays,
    ``bin_counts`` (quantity × bin), ``min_p``, ``threshold`` = alpha / (2 · #quantities) and ``uniform``.
    """
    _check_bins(n_draws, bins)
    ranks = np.asarray(ranks)
    if ranks.ndim != 2 or not np.issubdtype(ranks.dtype, np.integer):
        raise ValueError("ranks must be an integer (simulation × quantity) array")
    if ranks.min() < 0 or ranks.max() > n_draws:
        raise ValueError(f"ranks must lie in 0..{n_draws}")
    p = ranks.shape[1]
    offsets = (n_draws + 1) * np.arange(p)
    value_counts = np.bincount((ranks + offsets).ravel(), minlength=p * (n_draws + 1)).reshape(p, n_draws + 1)
    stat, p_chi2, z_disp, p_disp, bin_counts = _tests(value_counts, n_draws, bins)
    min_p = float(min(p_chi2.min(), p_disp.min()))
    threshold = alpha / (len(TESTS) * p)
    table = pd.DataFrame({"quantity": list(names) if names is not None else range(p), "chi2": stat,
                          "chi2_p": p_chi2, "dispersion_z": z_disp, "dispersion_p": p_disp})
    return {"table": table, "chi2": stat, "chi2_p": p_chi2, "dispersion_z": z_disp, "dispersion_p": p_disp,
            "bin_counts": bin_counts, "min_p": min_p, "threshold": threshold, "uniform": bool(min_p > threshold)}


def rank_distribution(c: float = 1.0, delta: float = 0.0, n_draws: int = L_DRAWS, grid: int = 4001) -> np.ndarray:
    """P(rank = r), r = 0..n_draws, when the n_draws draws come from N(δ, c²) and the truth Z from N(0, 1):
    rank | Z ~ Binomial(n_draws, Φ((Z − δ)/c)), mixed over Z on a fine grid of ±10 (trapezoid weights)."""
    z = np.linspace(-10.0, 10.0, grid)
    w = norm.pdf(z)
    w[[0, -1]] /= 2
    w /= w.sum()
    pmf = w @ binom.pmf(np.arange(n_draws + 1)[None, :], n_draws, norm.cdf((z - delta) / c)[:, None])
    return pmf / pmf.sum()


def power(n_sims: int, n_quantities: int, c: float = 1.0, delta: float = 0.0, alpha: float = 0.01,
          test: str = "chi2", n_draws: int = L_DRAWS, bins: int = BINS, reps: int = 20_000, seed: int = 0) -> float:
    """Chance that one quantity's ``test`` (``"chi2"`` or ``"dispersion"``, at the Bonferroni level
    alpha / (2 · n_quantities) of :func:`uniformity`) rejects after ``n_sims`` simulations when the computed
    posterior is N(μ + δ·s, (c·s)²) instead of N(μ, s²).

    The ranks' law is exact (:func:`rank_distribution`); the tests' rejection rate under it is the share of
    ``reps`` seeded multinomial samples of ``n_sims`` ranks that the tests of :func:`uniformity` reject
    (Monte Carlo SE ≤ 0.5/√reps = 0.0035), so the finite-sample behaviour of both statistics is included.
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    _check_bins(n_draws, bins)
    level = alpha / (len(TESTS) * n_quantities)
    value_counts = np.random.default_rng(seed).multinomial(n_sims, rank_distribution(c, delta, n_draws), size=reps)
    _, p_chi2, _, p_disp, _ = _tests(value_counts, n_draws, bins)
    return float(((p_chi2 if test == "chi2" else p_disp) < level).mean())
