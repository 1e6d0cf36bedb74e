"""Simulation-based calibration (Talts et al. 2018) of the Bradley-Terry PyMC model under NUTS
(shared by tests/bt/test_sbc.py and examples/bt_sbc.py).

For each simulation: draw (θ̃[, λ̃]) from the prior with independent NumPy code (ZeroSumNormal(σ) =
iid N(0, σ²) projected onto Σθ = 0; λ ~ N(0, σ_λ)), simulate counts on every pair, fit the
package's model with the sampler ``BradleyTerry.fit("nuts")`` uses (nutpie on the hand-written log
density, :mod:`bayesrank.bt.density`, whose value and gradient equal the PyMC model's —
tests/bt/test_density.py), thin the draws to L = 99 and record the rank of the truth among
them. If the posterior computation is right every rank is uniform on {0, …, 99}.

Ranks, uniformity tests (chi-square on 10 bins + dispersion of (u − ½)², Bonferroni over all 2P at
family-wise ``alpha``) and their power come from the model-free ``bayesrank.sbc`` (shared with the HJA
SBC); this module holds only the Bradley–Terry parts: prior simulation, design and fitting loop.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, softmax

from bayesrank.sbc import L_DRAWS, rank_of_truth

from .coverage_sim import all_pairs


def simulate(rng, template, ties, prior_sigma, tie_prior_sigma):
    k = template.n_players
    z = rng.normal(0.0, prior_sigma, k)
    theta = z - z.mean()
    d = theta[template.i] - theta[template.j]
    n = template.total.astype(int)
    if ties == "davidson":
        lam = rng.normal(0.0, tie_prior_sigma)
        p = softmax(np.column_stack([d / 2, -d / 2, np.full_like(d, lam)]), axis=1)
        counts = np.stack([rng.multinomial(n[r], p[r]) for r in range(len(d))]).astype(float)
        return np.append(theta, lam), counts
    wins = rng.binomial(n, expit(d)).astype(float)
    return theta, np.column_stack([wins, n - wins, np.zeros_like(wins)])


def sbc_ranks(ties="half", n_sims=200, seed=0, k=4, per_pair=15, prior_sigma=1.5, tie_prior_sigma=1.0,
              draws=500, tune=300):
    """(n_sims, P) ranks of the true parameters among L = 99 thinned posterior draws, and the
    number of divergent transitions over all fits — through the sampler ``BradleyTerry.fit("nuts")``
    uses (nutpie on :mod:`bayesrank.bt.density`, 2 chains)."""
    from bayesrank.bt import density

    template = all_pairs(k, per_pair)
    rng = np.random.default_rng(seed)
    ranks, divergences = [], 0
    for _s in range(n_sims):
        truth, counts = simulate(rng, template, ties, prior_sigma, tie_prior_sigma)
        dens = density.BTDensity(template.with_counts(counts), ties, prior_sigma, tie_prior_sigma, 1.0, False)
        tr = density.sample(dens, draws=draws, tune=tune, chains=2, seed=int(rng.integers(2**31)))
        post = tr.posterior["theta"].transpose("chain", "draw", "player").values.reshape(-1, k)
        if ties == "davidson":
            post = np.column_stack([post, tr.posterior["log_nu"].values.reshape(-1)])
        ranks.append(rank_of_truth(post.reshape(2, draws, -1), truth, L_DRAWS))
        divergences += int(np.asarray(tr.sample_stats["diverging"]).sum())
    return np.array(ranks), divergences
