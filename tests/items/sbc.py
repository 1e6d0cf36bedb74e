"""Simulation-based calibration of the collapsed Rasch model under NUTS: the truth (θ̃, μ̃, σ̃) drawn
from the prior with independent NumPy code (ZeroSumNormal(σ_θ) = iid N(0, σ_θ²) centred), item
difficulties b_i ~ N(μ̃, σ̃) and 0/1 outcomes simulated item by item (the uncollapsed generative
story), the model compiled once by nutpie and refitted to each data set (``with_data``), ranks of the
truth among 99 thinned draws (bayesrank.sbc)."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from bayesrank.items import irt
from bayesrank.items.data import ItemScores
from bayesrank.sbc import L_DRAWS, rank_of_truth


def simulate(rng, m, n, prior=irt.PRIOR):
    z = rng.normal(0.0, prior["theta"], m)
    theta = z - z.mean()
    mu = rng.normal(0.0, prior["mu"])
    sigma = abs(rng.normal(0.0, prior["sigma"]))
    b = rng.normal(mu, sigma, n)
    y = (rng.random((m, n)) < expit(theta[:, None] - b[None, :])).astype(float)
    return np.concatenate([theta, [mu, sigma]]), y


def _stats(y):
    m, n = y.shape
    d = ItemScores(np.array([f"m{i}" for i in range(m)], dtype=object), np.array([str(i) for i in range(n)],
                   dtype=object), y, np.ones_like(y, dtype=np.int64), successes=y.astype(np.int64))
    return irt.every_total(irt.sufficient(d))


def sbc_ranks(n_sims=100, seed=0, m=4, n=40, draws=500, tune=500):
    import nutpie

    rng = np.random.default_rng(seed)
    _, first = simulate(np.random.default_rng(seed + 10**6), m, n)
    model = irt.build_rasch_model(_stats(first), mutable=True)
    compiled = nutpie.compile_pymc_model(model, freeze_model=False, backend="numba")
    ranks, divergences = [], 0
    for _ in range(n_sims):
        truth, y = simulate(rng, m, n)
        st = _stats(y)
        tr = nutpie.sample(compiled.with_data(totals=st.totals, items_per_total=st.group_count), draws=draws,
                           tune=tune, chains=2, cores=1, seed=int(rng.integers(2**31)), progress_bar=False,
                           target_accept=0.9)
        post = tr.posterior
        th = post["theta"].transpose("chain", "draw", "player").values
        qs = np.concatenate([th, post["mu"].values[..., None], post["sigma"].values[..., None]], axis=2)
        ranks.append(rank_of_truth(qs, truth, L_DRAWS))
        divergences += int(np.asarray(tr.sample_stats["diverging"]).sum())
    return np.array(ranks), divergences
