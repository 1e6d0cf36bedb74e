"""Simulated leaderboards with known truth, fitted in batches (shared by the coverage tests and
``examples/bt_coverage.py``)."""

import numpy as np
from scipy.special import expit, softmax
from scipy.stats import norm

from bayesrank.bt.likelihood import tie_model
from bayesrank.bt.mle import bootstrap_counts, constraint_basis, newton
from bayesrank.data.aggregate import PairCounts


def truth(k, spread=1.0, seed=0):
    t = np.random.default_rng(seed).normal(0, spread, k)
    return t - t.mean()


def all_pairs(k, n_per_pair):
    i, j = np.triu_indices(k, 1)
    z = np.zeros(len(i))
    return PairCounts(np.array([f"p{a:02d}" for a in range(k)], dtype=object), i, j, z + n_per_pair, z, z)


def simulate_counts(theta, template, n_rep, seed, log_nu=None):
    """(n_rep, R, 3) counts: binary BT if ``log_nu`` is None, else Davidson with ν = e^log_nu."""
    rng = np.random.default_rng(seed)
    d = theta[template.i] - theta[template.j]
    n = template.total.astype(int)
    if log_nu is None:
        wi = rng.binomial(n, expit(d), size=(n_rep, len(d))).astype(float)
        return np.stack([wi, n - wi, np.zeros_like(wi)], axis=-1)
    p = softmax(np.column_stack([d / 2, -d / 2, np.full_like(d, log_nu)]), axis=1)
    return np.stack([rng.multinomial(n[r], p[r], size=n_rep) for r in range(len(d))], axis=1).astype(float)


def fisher_coverage(theta, template, batch, ties, level=0.95, ridge=0.0):
    """Share of Wald intervals θ̂ ± z·SD (Fisher, constrained) covering the truth: (n_rep, K) bool."""
    model = tie_model(ties)
    k = len(theta)
    res = newton(model, template, batch_counts=batch, ridge=ridge)
    q = constraint_basis(k, model.n_extra)
    cov = q @ np.linalg.inv(np.swapaxes(q, 0, 1)[None] @ res.hessian @ q) @ q.T
    sd = np.sqrt(np.diagonal(cov, axis1=1, axis2=2)[:, :k])
    z = norm.ppf(0.5 + level / 2)
    est = res.params[:, :k]
    return np.abs(est - theta) <= z * sd, res


def bootstrap_coverage(theta, template, batch, n_boot, seed, level=0.95):
    """Percentile-bootstrap intervals (multinomial resampling of comparisons, as LMArena): (n_rep, K) bool."""
    model = tie_model("half")
    k = len(theta)
    a = (1 - level) / 2
    cover = np.zeros((len(batch), k), dtype=bool)
    for r, c in enumerate(batch):
        tc = template.with_counts(c)
        boot = bootstrap_counts(tc, n_boot, seed + r)
        fits = newton(model, tc, batch_counts=boot, ridge=1e-6).params
        lo, hi = np.quantile(fits, [a, 1 - a], axis=0)
        cover[r] = (lo <= theta) & (theta <= hi)
    return cover
