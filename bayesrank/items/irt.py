"""The item-response model: Bradley–Terry between models and items (Rasch), in PyMC and its NumPy twin.

    logit P(model m solves item i) = θ_m − b_i,   θ ~ ZeroSumNormal(σ_θ),   b_i ~ Normal(μ, σ),
    μ ~ Normal(0, σ_μ),   σ ~ HalfNormal(σ_σ)

Each item is a "player" a model meets once (or r times: repeated measures are r binomial trials,
k successes). **Collapsed likelihood.** Given (θ, μ, σ) the difficulty b_i integrates out, and the
factor ``exp(Σ_m k_mi θ_m)`` does not involve b_i, so an item enters only through its total
``s_i = Σ_m k_mi`` and its trial pattern ``r_·i``::

    log p(y | θ, μ, σ) = Σ_m θ_m T_m + Σ_g c_g log I_g + const,     T_m = Σ_i k_mi,
    I_g = ∫ exp(−b s_g − Σ_m r_gm log(1 + e^{θ_m − b})) N(b | μ, σ) db

over the distinct (pattern, total) groups g with c_g items each — at most M + 1 integrals for 0/1
scores on a complete matrix. The integral is a trapezoid rule in x = (b − μ)/σ on [−8, 8] (641
nodes: spacing 0.025σ, far below the width of an item's likelihood for any M; tested against
adaptive quadrature to 1e-9). NUTS runs on (θ, μ, σ) only; the difficulties are not sampled.

Fractional scores that are not counts (a grade in [0, 1]) use the Bernoulli kernel with y in place
of k — a quasi-likelihood (as the Bradley–Terry model's half-wins): the θ order it gives is the
order of the models' expected scores, but its posterior spread is not calibrated for such data.

Rasch is monotone: for every item population, a larger θ means a larger expected score, so
P(θ_A > θ_B) is the posterior probability that A's expected score on the benchmark's item
population exceeds B's — the estimand of the frequentist mean-score test.

The **2PL** option (``logit P = a_m(θ_m − b_i)``, discrimination ``a_m`` log-normal) has no such
reduction: the full model with every b_i, for small benchmarks (:func:`build_full_model`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesrank.items.data import ItemScores

X_NODES = np.linspace(-8.0, 8.0, 641)
_H = X_NODES[1] - X_NODES[0]
LOG_W = -0.5 * X_NODES**2 - 0.5 * np.log(2 * np.pi) + np.log(_H)
LOG_W[[0, -1]] += np.log(0.5)  # trapezoid end weights

PRIOR = {"theta": 2.5, "mu": 2.5, "sigma": 2.5}


@dataclass(frozen=True)
class RaschStats:
    """Sufficient statistics of the collapsed Rasch likelihood."""

    players: np.ndarray  # (M,)
    totals: np.ndarray  # T_m (M,)
    patterns: np.ndarray  # (P, M) trial counts r of each distinct pattern
    group_pattern: np.ndarray  # (G,) pattern of each group
    group_total: np.ndarray  # (G,) item total s_g
    group_count: np.ndarray  # (G,) items in the group
    item_group: np.ndarray  # (N,) group of each item
    item_const: np.ndarray  # (N,) log binomial coefficients of each item (0 for 0/1 scores)
    counts: bool  # binomial counts (True) or the fractional quasi-likelihood (False)

    @property
    def n_items(self) -> int:
        return int(self.group_count.sum())


def sufficient(data: ItemScores) -> RaschStats:
    from scipy.special import gammaln

    if data.successes is not None:
        k, r, counts = data.successes.astype(float), data.trials.astype(float), True
    else:
        k, r, counts = data.scores.astype(float), np.ones_like(data.scores, dtype=float), False
    pat, pat_of_item = np.unique(r.T, axis=0, return_inverse=True)
    s = k.sum(axis=0)
    keys = pd.DataFrame({"p": pat_of_item.ravel(), "s": np.round(s, 12)})
    grp, item_group = np.unique(keys.to_numpy(), axis=0, return_inverse=True)
    const = (gammaln(r + 1) - gammaln(k + 1) - gammaln(r - k + 1)).sum(axis=0) if counts else np.zeros(len(s))
    return RaschStats(players=np.asarray([str(m) for m in data.models], dtype=object), totals=k.sum(axis=1),
                      patterns=pat, group_pattern=grp[:, 0].astype(int), group_total=grp[:, 1],
                      group_count=np.bincount(item_group.ravel(), minlength=len(grp)).astype(float),
                      item_group=item_group.ravel(), item_const=const, counts=counts)


# ---------------------------------------------------------------------------------- NumPy twin
def _softplus(z):
    return np.logaddexp(0.0, z)


def group_loglik(theta, mu, sigma, st: RaschStats) -> np.ndarray:
    """log I_g for every group (G,)."""
    from scipy.special import logsumexp

    b = mu + sigma * X_NODES
    f = st.patterns @ _softplus(theta[:, None] - b[None, :])
    a = LOG_W[None, :] - st.group_total[:, None] * b[None, :] - f[st.group_pattern]
    return logsumexp(a, axis=1)


def loglik(theta, mu, sigma, st: RaschStats, grad: bool = False):
    """Collapsed log-likelihood (without the binomial constants) and, with ``grad``, its gradient
    with respect to θ (M,), μ and σ."""
    from scipy.special import expit, logsumexp

    b = mu + sigma * X_NODES
    z = theta[:, None] - b[None, :]
    f = st.patterns @ _softplus(z)
    a = LOG_W[None, :] - st.group_total[:, None] * b[None, :] - f[st.group_pattern]
    li = logsumexp(a, axis=1)
    ll = float(theta @ st.totals + st.group_count @ li)
    if not grad:
        return ll
    w = np.exp(a - li[:, None]) * st.group_count[:, None]  # c_g × posterior weights of the nodes
    wp = np.zeros((len(st.patterns), len(X_NODES)))
    np.add.at(wp, st.group_pattern, w)
    ex = expit(z)
    g_theta = st.totals - np.einsum("pm,mq,pq->m", st.patterns, ex, wp)
    da_db = -st.group_total[:, None] + (st.patterns @ ex)[st.group_pattern]
    g_mu = float((w * da_db).sum())
    g_sigma = float((w * da_db * X_NODES[None, :]).sum())
    return ll, g_theta, g_mu, g_sigma


def _unpack(x, m):
    free = x[: m - 1]
    theta = np.concatenate([free, [-free.sum()]])
    return theta, x[m - 1], np.exp(x[m])


def log_posterior(x, st: RaschStats, prior=PRIOR, grad: bool = False):
    """Log posterior in the unconstrained coordinates (θ_1..θ_{M−1}, μ, log σ), θ_M = −Σ θ_j."""
    m = len(st.players)
    theta, mu, sigma = _unpack(x, m)
    lp_prior = (-0.5 * (theta**2).sum() / prior["theta"] ** 2 - 0.5 * mu**2 / prior["mu"] ** 2
                - 0.5 * sigma**2 / prior["sigma"] ** 2 + np.log(sigma))
    if not grad:
        return loglik(theta, mu, sigma, st) + lp_prior
    ll, gt, gm, gs = loglik(theta, mu, sigma, st, grad=True)
    gt = gt - theta / prior["theta"] ** 2
    g = np.empty_like(x)
    g[: m - 1] = gt[: m - 1] - gt[m - 1]
    g[m - 1] = gm - mu / prior["mu"] ** 2
    g[m] = (gs - sigma / prior["sigma"] ** 2) * sigma + 1.0
    return ll + lp_prior, g


@dataclass
class RaschFit:
    """A fit of the Rasch model: θ draws (S, M) with μ, σ draws; the method; diagnostics."""

    players: np.ndarray
    draws: np.ndarray  # (S, M) θ
    mu: np.ndarray  # (S,)
    sigma: np.ndarray  # (S,)
    method: str
    diagnostics: object
    mode: np.ndarray | None = None  # θ at the posterior mode (laplace)
    idata: object = None
    extra: dict | None = None

    @property
    def score(self) -> np.ndarray:
        return self.draws.mean(axis=0)

    def table(self) -> pd.DataFrame:
        lo, hi = np.quantile(self.draws, [0.025, 0.975], axis=0)
        return pd.DataFrame({"player": [str(p) for p in self.players], "theta": self.score,
                             "theta_sd": self.draws.std(axis=0, ddof=1), "theta_lower": lo, "theta_upper": hi})


def fit_laplace(data_or_stats, *, seed: int = 0, draws: int = 4000, prior=PRIOR) -> RaschFit:
    """Posterior mode (L-BFGS on the collapsed log posterior, analytic gradient) and the Laplace
    approximation: Gaussian draws with the inverse of the negative Hessian (central differences of
    the analytic gradient) in the coordinates (θ_1..θ_{M−1}, μ, log σ)."""
    from scipy.optimize import minimize

    from bayesrank.protocol import Diagnostics

    st = data_or_stats if isinstance(data_or_stats, RaschStats) else sufficient(data_or_stats)
    m = len(st.players)
    n = st.n_items
    p_bar = np.clip(st.totals / (n * st.patterns.mean(axis=0).clip(1e-9)), 1e-3, 1 - 1e-3)
    logit = np.log(p_bar / (1 - p_bar))
    x0 = np.concatenate([(logit - logit.mean())[: m - 1], [-logit.mean()], [0.0]])

    def fun(x):
        v, g = log_posterior(x, st, prior, grad=True)
        return -v, -g

    res = minimize(fun, x0, jac=True, method="L-BFGS-B", options={"maxiter": 5000, "gtol": 1e-9, "ftol": 1e-15})
    x = res.x
    _, g = log_posterior(x, st, prior, grad=True)
    eps = 1e-5
    hess = np.empty((len(x), len(x)))
    for j in range(len(x)):
        e = np.zeros_like(x)
        e[j] = eps
        hess[j] = (log_posterior(x + e, st, prior, grad=True)[1] - log_posterior(x - e, st, prior, grad=True)[1]) / (2 * eps)
    hess = 0.5 * (hess + hess.T)
    cov = np.linalg.inv(-hess)
    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal(x, cov, size=draws, method="eigh")
    free = z[:, : m - 1]
    theta = np.concatenate([free, -free.sum(axis=1, keepdims=True)], axis=1)
    gn = float(np.linalg.norm(g))
    diag = Diagnostics.optimizer("laplace (collapsed Rasch, NumPy)", bool(res.success) or gn < 1e-4, gn,
                                 iterations=int(res.nit), status=str(res.message), gradient_tol=1e-4)
    mode_theta, mode_mu, mode_sigma = _unpack(x, m)
    return RaschFit(st.players, theta, z[:, m - 1], np.exp(z[:, m]), "laplace", diag, mode=mode_theta,
                    extra={"mu_mode": float(mode_mu), "sigma_mode": float(mode_sigma)})


# ---------------------------------------------------------------------------------- PyMC
def collapsed_loglik_pt(theta, mu, sigma, st: RaschStats):
    """The collapsed log-likelihood as a PyTensor expression (the same formula as :func:`loglik`)."""
    import pytensor.tensor as pt

    b = mu + sigma * pt.as_tensor(X_NODES)
    z = theta[:, None] - b[None, :]
    f = pt.dot(pt.as_tensor(st.patterns), pt.softplus(z))
    a = pt.as_tensor(LOG_W)[None, :] - pt.as_tensor(st.group_total)[:, None] * b[None, :] - f[st.group_pattern]
    li = pt.logsumexp(a, axis=1)
    return pt.dot(theta, pt.as_tensor(st.totals)) + pt.dot(pt.as_tensor(st.group_count), li)


def build_rasch_model(data_or_stats, prior=PRIOR):
    """The collapsed Rasch model: θ (dims ``player``), μ, σ; the items enter by a Potential."""
    import pymc as pm

    st = data_or_stats if isinstance(data_or_stats, RaschStats) else sufficient(data_or_stats)
    with pm.Model(coords={"player": list(st.players)}) as model:
        theta = pm.ZeroSumNormal("theta", sigma=prior["theta"], dims="player")
        mu = pm.Normal("mu", 0.0, prior["mu"])
        sigma = pm.HalfNormal("sigma", prior["sigma"])
        pm.Potential("items", collapsed_loglik_pt(theta, mu, sigma, st))
    return model


def build_full_model(data: ItemScores, prior=PRIOR, twopl: bool = False):
    """The uncollapsed model with every difficulty b_i (dims ``player``, ``item``): Binomial on the
    trials (0/1 scores: Bernoulli). ``twopl``: a discrimination a_m ~ LogNormal(0, 0.5) per model,
    logit P = a_m(θ_m − b_i) — no collapsed form; for small benchmarks."""
    import pymc as pm

    k = data.successes if data.successes is not None else data.scores
    with pm.Model(coords={"player": [str(m) for m in data.models], "item": [str(i) for i in data.items]}) as model:
        theta = pm.ZeroSumNormal("theta", sigma=prior["theta"], dims="player")
        mu = pm.Normal("mu", 0.0, prior["mu"])
        sigma = pm.HalfNormal("sigma", prior["sigma"])
        b = pm.Normal("b", mu, sigma, dims="item")
        eta = theta[:, None] - b[None, :]
        if twopl:
            a = pm.LogNormal("a", 0.0, 0.5, dims="player")
            eta = a[:, None] * eta
        if data.successes is not None:
            pm.Binomial("y", n=data.trials, logit_p=eta, observed=k, dims=("player", "item"))
        else:
            pm.Potential("y", (k * eta - pm.math.log1pexp(eta)).sum())
    return model


def fit_nuts(data_or_stats, *, seed: int = 0, draws: int = 500, tune: int = 500, chains: int = 4,
             prior=PRIOR, target_accept: float = 0.9, loo: bool = True) -> RaschFit:
    """NUTS on the collapsed model (PyMC), with diagnostics (R-hat, ESS, divergences) and PSIS-LOO
    over items (:func:`loo_items`)."""
    import pymc as pm

    from bayesrank.protocol import Diagnostics

    data = None if isinstance(data_or_stats, RaschStats) else data_or_stats
    st = data_or_stats if data is None else sufficient(data)
    model = build_rasch_model(st, prior)
    with model:
        idata = pm.sample(draws=draws, tune=tune, chains=chains, random_seed=seed, progressbar=False,
                          target_accept=target_accept, compute_convergence_checks=False)
    post = idata["posterior"]
    theta = post["theta"].values.reshape(-1, len(st.players))
    mu, sigma = post["mu"].values.ravel(), post["sigma"].values.ravel()
    extra = {}
    if loo and data is not None:
        extra["loo"] = loo_items(theta, mu, sigma, data, st, chains=chains)
    diag = Diagnostics.sampler("nuts (collapsed Rasch)", idata, var_names=["theta", "mu", "sigma"], **extra)
    return RaschFit(st.players, theta, mu, sigma, "nuts", diag, idata=idata, extra=extra)


# ---------------------------------------------------------------------------------- checks
def loo_items(theta, mu, sigma, data: ItemScores, st: RaschStats | None = None, chains: int = 1,
              max_draws: int = 500) -> dict:
    """PSIS-LOO leaving one item out: item i's marginal log-likelihood is ``θ·k_i + log I_g(i)``
    (+ its binomial constant; b_i integrated out), from up to ``max_draws`` evenly thinned draws.
    elpd, SE, p_loo, max Pareto k and the number of items with k > 0.7."""
    import arviz as az
    import xarray as xr

    st = sufficient(data) if st is None else st
    step = max(1, len(theta) // max_draws)
    th, m_, s_ = theta[::step], mu[::step], sigma[::step]
    s = len(th)
    chains = chains if s % chains == 0 else 1
    k = (data.successes if data.successes is not None else data.scores).astype(float)
    lg = np.stack([group_loglik(th[j], m_[j], s_[j], st) for j in range(s)])
    ll = th @ k + lg[:, st.item_group] + st.item_const[None, :]
    dt = xr.DataTree.from_dict({
        "posterior": xr.Dataset({"mu": (("chain", "draw"), m_.reshape(chains, -1))}),
        "log_likelihood": xr.Dataset({"items": (("chain", "draw", "item"), ll.reshape(chains, s // chains, -1))}),
    })
    res = az.loo(dt, pointwise=True)
    pk = np.asarray(res.pareto_k).ravel()
    return {"elpd": float(res.elpd), "se": float(res.se), "p_loo": float(res.p),
            "pareto_k_max": float(np.nanmax(pk)), "n_pareto_k_gt_0.7": int(np.sum(pk > 0.7)), "n_draws": int(s)}


def ppc_item_totals(fit: RaschFit, data: ItemScores, n_draws: int = 100, seed: int = 0) -> dict:
    """Posterior predictive check of how many models solve an item (0/1 scores): for draws of
    (θ, μ, σ), N new items b ~ N(μ, σ) and y ~ Bernoulli(expit(θ − b)) give a histogram of item
    totals s = 0..M; reported: the share of totals whose observed item count lies outside the central
    95% of the replicated counts, and the posterior predictive p-value of the χ² distance."""
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    m, n = data.scores.shape
    idx = rng.choice(len(fit.draws), size=min(n_draws, len(fit.draws)), replace=False)
    obs = np.bincount(np.rint(data.scores.sum(axis=0)).astype(int), minlength=m + 1)
    reps = np.empty((len(idx), m + 1))
    for r, j in enumerate(idx):
        b = rng.normal(fit.mu[j], fit.sigma[j], size=n)
        y = rng.random((m, n)) < expit(fit.draws[j][:, None] - b[None, :])
        reps[r] = np.bincount(y.sum(axis=0), minlength=m + 1)
    lo, hi = np.quantile(reps, [0.025, 0.975], axis=0)
    expected = reps.mean(axis=0) + 0.5
    chi_obs = ((obs - expected) ** 2 / expected).sum()
    chi_rep = ((reps - expected) ** 2 / expected).sum(axis=1)
    return {"share_outside_95": float(((obs < lo) | (obs > hi)).mean()), "n_totals": int(m + 1),
            "p_value_chi2": float((chi_rep >= chi_obs).mean()), "n_draws": int(len(idx))}
