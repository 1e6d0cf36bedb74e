"""Simulation-based calibration of the items kind's NUTS path: the truth (θ̃, μ̃, σ̃) drawn from the prior
with independent NumPy code (ZeroSumNormal(σ_θ) = iid N(0, σ_θ²) centred), item difficulties
b_i ~ N(μ̃, σ̃) and 0/1 outcomes simulated item by item (the uncollapsed generative story), then the
package's own fit — :func:`bayesrank.items.irt.fit_nuts` as the review calls it (Laplace start and
grid, nutpie on the collapsed density) — and ranks of the truth among 99 thinned draws
(bayesrank.sbc)."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from bayesrank.items import irt
from bayesrank.items.data import ItemScores
from bayesrank.sbc import L_DRAWS, rank_of_truth

TWOPL_TAU, TWOPL_U_RANGE = 0.5, 4.0  # the 2PL prior log a ~ N(0, 0.5²) on ±4 SDs, written out (not imported)


def simulate(rng, m, n, prior=irt.PRIOR, twopl=False):
    """(truth θ, μ, σ; 0/1 scores (m, n)); ``twopl``: each item's discrimination a_i = e^{τ_a u},
    u ~ N(0, 1) truncated to ±4 (by rejection), logit P = a_i(θ_m − b_i)."""
    z = rng.normal(0.0, prior["theta"], m)
    theta = z - z.mean()
    mu = rng.normal(0.0, prior["mu"])
    sigma = abs(rng.normal(0.0, prior["sigma"]))
    b = rng.normal(mu, sigma, n)
    a = np.ones(n)
    if twopl:
        u = rng.normal(0.0, 1.0, n)
        while np.any(bad := np.abs(u) > TWOPL_U_RANGE):
            u[bad] = rng.normal(0.0, 1.0, int(bad.sum()))
        a = np.exp(TWOPL_TAU * u)
    y = (rng.random((m, n)) < expit(a[None, :] * (theta[:, None] - b[None, :]))).astype(float)
    return np.concatenate([theta, [mu, sigma]]), y


def items(y):
    m, n = y.shape
    return ItemScores(np.array([f"m{i}" for i in range(m)], dtype=object), np.array([str(i) for i in range(n)],
                      dtype=object), y, np.ones_like(y, dtype=np.int64), successes=y.astype(np.int64))


def sbc_ranks(n_sims=100, seed=0, m=4, n=40, draws=500, tune=300, chains=2, twopl=False, n_keep=L_DRAWS,
              psis=False):
    """(ranks (n_sims, m + 2) among ``n_keep`` thinned draws, divergences, simulations whose fit failed
    its convergence checks); ``twopl``: the 2PL story and fit; ``psis``: the Laplace + PSIS fit
    (:func:`bayesrank.items.irt.fit_laplace_psis`, ``draws`` resampled draws as one chain; ties among
    repeated draws broken at random)."""
    rng = np.random.default_rng(seed)
    ranks, divergences, not_converged = [], 0, 0
    for _ in range(n_sims):
        truth, y = simulate(rng, m, n, twopl=twopl)
        if psis:
            fit = irt.fit_laplace_psis(items(y), seed=int(rng.integers(2**31)), draws=draws)
            qs = np.concatenate([fit.draws, fit.mu[:, None], fit.sigma[:, None]], axis=1)[None]
            ranks.append(rank_of_truth(qs, truth, n_keep, rng=rng))
            not_converged += not fit.diagnostics.converged
            continue
        fit = irt.fit_nuts(items(y), seed=int(rng.integers(2**31)), draws=draws, tune=tune, chains=chains, loo=False,
                           twopl=twopl)
        qs = np.concatenate([fit.draws, fit.mu[:, None], fit.sigma[:, None]], axis=1).reshape(chains, draws, -1)
        ranks.append(rank_of_truth(qs, truth, n_keep))
        divergences += fit.diagnostics.divergences
        not_converged += not fit.diagnostics.converged
    return np.array(ranks), divergences, not_converged
