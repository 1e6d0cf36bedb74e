"""Simulation-based calibration (Talts et al. 2018) of the Bradley-Terry PyMC model under NUTS
(shared by tests/bt/test_sbc.py and examples/bt_sbc.py).

For each simulation: draw (θ̃[, λ̃]) from the prior with independent NumPy code (ZeroSumNormal(σ) =
iid N(0, σ²) projected onto Σθ = 0; λ ~ N(0, σ_λ)), simulate counts on every pair, fit the
package's model (``build_bt_model(..., mutable=True)``, compiled once by nutpie and refitted to
each dataset with ``with_data``), thin the draws to L = 99 and record the rank of the truth among
them. If the posterior computation is right every rank is uniform on {0, …, 99}.

Uniformity: per parameter two tests, Bonferroni over all 2P (family-wise level ``alpha``): a
chi-square test on 10 equal bins (any departure; strong against shifted posteriors) and a
dispersion test on the mean of ``(u − ½)²``, ``u = (rank + ½)/(L + 1)``, whose exact mean and
variance under uniform ranks are known (strong against posteriors whose SD is wrong: a too-narrow
posterior piles ranks at both ends). :func:`power` gives each test's chance to detect a posterior
whose SD is wrong by a factor ``c`` or whose centre is off by ``delta`` posterior SDs.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, softmax
from scipy.stats import chi2, ncx2, norm

from .coverage_sim import all_pairs

L_DRAWS = 99
BINS = 10


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
              draws=500, tune=300, backend="numba"):
    """(n_sims, P) ranks of the true parameters among L = 99 thinned posterior draws, and the
    number of divergent transitions over all fits."""
    import nutpie

    from bayesrank.bt.pymc_model import build_bt_model

    template = all_pairs(k, per_pair)
    rng = np.random.default_rng(seed)
    _, first = simulate(np.random.default_rng(seed + 10**6), template, ties, prior_sigma, tie_prior_sigma)
    model = build_bt_model(template.with_counts(first), ties, prior_sigma, tie_prior_sigma, mutable=True)
    compiled = nutpie.compile_pymc_model(model, freeze_model=False, backend=backend, gradient_backend=
                                         "jax" if backend == "jax" else "pytensor")
    ranks, divergences = [], 0
    thin = 2 * draws // (L_DRAWS + 1)
    for s in range(n_sims):
        truth, counts = simulate(rng, template, ties, prior_sigma, tie_prior_sigma)
        data = ({"outcome_counts": counts} if ties == "davidson"
                else {"wins_obs": counts[:, 0], "n_obs": counts[:, :2].sum(axis=1)})
        tr = nutpie.sample(compiled.with_data(**data), draws=draws, tune=tune, chains=2, cores=1,
                           seed=int(rng.integers(2**31)), progress_bar=False)
        post = tr.posterior["theta"].transpose("chain", "draw", "player").values.reshape(-1, k)
        if ties == "davidson":
            post = np.column_stack([post, tr.posterior["log_nu"].values.reshape(-1)])
        # thin by interleaving chains: draws (c0 d0, c1 d0, c0 d1, ...) -> every `thin`-th, first L
        kept = post.reshape(2, draws, -1).transpose(1, 0, 2).reshape(2 * draws, -1)[::thin][:L_DRAWS]
        ranks.append((kept < truth).sum(axis=0))
        divergences += int(np.asarray(tr.sample_stats["diverging"]).sum())
    return np.array(ranks), divergences


def _dispersion_moments(m: int = L_DRAWS + 1):
    """Mean and variance of (u − ½)² for u uniform on the m points (k + ½)/m."""
    mean = (m * m - 1) / (12 * m * m)
    fourth = (m * m - 1) * (3 * m * m - 7) / (240 * m**4)
    return mean, fourth - mean * mean


def uniformity(ranks: np.ndarray, alpha: float = 0.01) -> dict:
    """Per parameter: chi-square on 10 bins of 10 rank values, and the dispersion z of mean (u − ½)²;
    Bonferroni over the 2P tests."""
    n, p = ranks.shape
    bins = ranks * BINS // (L_DRAWS + 1)
    counts = np.stack([np.bincount(bins[:, j], minlength=BINS) for j in range(p)])
    expected = n / BINS
    stat = ((counts - expected) ** 2 / expected).sum(axis=1)
    p_chi2 = chi2.sf(stat, BINS - 1)
    u = (ranks + 0.5) / (L_DRAWS + 1)
    mean0, var0 = _dispersion_moments()
    z_disp = (((u - 0.5) ** 2).mean(axis=0) - mean0) / np.sqrt(var0 / n)
    p_disp = 2 * norm.sf(np.abs(z_disp))
    pmin = float(min(p_chi2.min(), p_disp.min()))
    return {"chi2": stat, "p_values": p_chi2, "dispersion_z": z_disp, "dispersion_p": p_disp, "min_p": pmin,
            "threshold": alpha / (2 * p), "uniform": bool(pmin > alpha / (2 * p)), "bin_counts": counts}


def _rank_law(c: float, delta: float, nodes: int = 200):
    """Gauss-Hermite nodes/weights for u = Φ((Z − δ)/c), Z ~ N(0, 1)."""
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    return norm.cdf((x - delta) / c), w / w.sum()


def power(n_sims: int, n_params: int, c: float = 1.0, delta: float = 0.0, alpha: float = 0.01,
          test: str = "chi2") -> float:
    """Chance that one parameter's ``test`` (``"chi2"`` or ``"dispersion"``, at level alpha/(2·n_params))
    rejects when the computed posterior is N(μ + δ·s, (c·s)²) instead of N(μ, s²): rank/L ≈ Φ((Z − δ)/c)."""
    level = alpha / (2 * n_params)
    if test == "chi2":
        edges = np.linspace(0, 1, BINS + 1)
        cdf = norm.cdf(c * norm.ppf(np.clip(edges, 1e-300, 1 - 1e-16)) + delta)  # P(Φ((Z−δ)/c) ≤ e)
        cdf[0], cdf[-1] = 0.0, 1.0
        prob = np.diff(cdf)
        lam = n_sims * ((prob - 1 / BINS) ** 2 / (1 / BINS)).sum()
        return float(ncx2.sf(chi2.isf(level, BINS - 1), BINS - 1, lam))
    u, w = _rank_law(c, delta)
    g = (u - 0.5) ** 2
    m1 = float((w * g).sum())
    v1 = float((w * g * g).sum()) - m1 * m1
    mean0, var0 = _dispersion_moments()
    crit = norm.isf(level / 2) * np.sqrt(var0 / n_sims)
    shift = m1 - mean0
    sd = np.sqrt(v1 / n_sims)
    return float(norm.sf((crit - shift) / sd) + norm.cdf((-crit - shift) / sd))
