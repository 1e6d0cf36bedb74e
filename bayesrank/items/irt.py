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
scores on a complete matrix. The integral is a trapezoid rule in x = (b − μ)/σ on [−8, 8] with a
spacing below the width of an item's likelihood (:func:`quadrature`: 161 nodes for ≤ 4 models, 801
for 100; tested against adaptive quadrature to 1e-9). NUTS runs on (θ, μ, σ) only; the difficulties are not sampled.

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

X_RANGE = 8.0


def quadrature(max_trials: float) -> tuple[np.ndarray, np.ndarray]:
    """Trapezoid nodes x on [−8, 8] and log weights (with the N(0, 1) density) for items answered
    by at most ``max_trials`` model trials: an item's likelihood in b has SD ≥ 2/√trials, i.e. ≥
    2/(σ√trials) in x, and the spacing h = min(0.1, 0.2/√trials) keeps h below that SD for σ ≤ 10
    (the trapezoid rule's error on such integrands is then ~e^{−2π²(SD/h)²}, negligible)."""
    h = min(0.1, 0.2 / np.sqrt(max(max_trials, 1.0)))
    n = int(np.ceil(2 * X_RANGE / h)) + 1
    x = np.linspace(-X_RANGE, X_RANGE, n)
    logw = -0.5 * x**2 - 0.5 * np.log(2 * np.pi) + np.log(x[1] - x[0])
    logw[[0, -1]] += np.log(0.5)  # trapezoid end weights
    return x, logw

PRIOR = {"theta": 2.5, "mu": 2.5, "sigma": 2.5}
LOO_MAX_ITEMS = 2000  # item-level PSIS-LOO costs ~9 ms per item (ArviZ's Pareto smoothing): skipped above


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
    x_nodes: np.ndarray  # quadrature nodes in x = (b − μ)/σ
    log_w: np.ndarray  # their log weights (trapezoid × N(0, 1) density)

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
                      item_group=item_group.ravel(), item_const=const, counts=counts,
                      **dict(zip(("x_nodes", "log_w"), quadrature(pat.sum(axis=1).max()))))


# ---------------------------------------------------------------------------------- NumPy twin
def _softplus(z):
    return np.logaddexp(0.0, z)


def _logsumexp_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log Σ_q e^{a_gq} per row, e^{a − row max}) — scipy's logsumexp is ~10× slower at this size."""
    mx = a.max(axis=1, keepdims=True)
    e = np.exp(a - mx)
    return mx[:, 0] + np.log(e.sum(axis=1)), e


def group_loglik(theta, mu, sigma, st: RaschStats) -> np.ndarray:
    """log I_g for every group (G,)."""
    b = mu + sigma * st.x_nodes
    f = st.patterns @ _softplus(theta[:, None] - b[None, :])
    a = st.log_w[None, :] - st.group_total[:, None] * b[None, :] - f[st.group_pattern]
    return _logsumexp_rows(a)[0]


def loglik(theta, mu, sigma, st: RaschStats, grad: bool = False):
    """Collapsed log-likelihood (without the binomial constants) and, with ``grad``, its gradient
    with respect to θ (M,), μ and σ."""
    from scipy.special import expit

    b = mu + sigma * st.x_nodes
    z = theta[:, None] - b[None, :]
    f = st.patterns @ _softplus(z)
    a = st.log_w[None, :] - st.group_total[:, None] * b[None, :] - f[st.group_pattern]
    li, e = _logsumexp_rows(a)
    ll = float(theta @ st.totals + st.group_count @ li)
    if not grad:
        return ll
    w = e * (st.group_count / e.sum(axis=1))[:, None]  # c_g × posterior weights of the nodes
    if len(st.patterns) == 1:
        wp = w.sum(axis=0, keepdims=True)
    else:  # sum the groups of each pattern (one-hot product: np.add.at is slow)
        wp = (np.arange(len(st.patterns))[:, None] == st.group_pattern[None, :]).astype(float) @ w
    ex = expit(z)
    g_theta = st.totals - ((ex @ wp.T) * st.patterns.T).sum(axis=1)
    da_db = -st.group_total[:, None] + (st.patterns @ ex)[st.group_pattern]
    g_mu = float((w * da_db).sum())
    g_sigma = float((w * da_db * st.x_nodes[None, :]).sum())
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

    def hessian(x, eps=1e-5):
        h = np.empty((len(x), len(x)))
        for j in range(len(x)):
            e = np.zeros_like(x)
            e[j] = eps
            h[j] = (log_posterior(x + e, st, prior, grad=True)[1] - log_posterior(x - e, st, prior, grad=True)[1]) / (2 * eps)
        return 0.5 * (h + h.T)

    # Newton steps polish the mode (L-BFGS stalls on a log posterior of ~1e5 in magnitude, where f
    # differences reach rounding; the gradient stays accurate)
    _, g = log_posterior(x, st, prior, grad=True)
    hess = hessian(x)
    for _ in range(8):  # the Hessian at the L-BFGS point serves every step (the steps are tiny)
        if np.linalg.norm(g) < 1e-7:
            break
        x = x - np.linalg.solve(hess, g)
        _, g = log_posterior(x, st, prior, grad=True)
    hess = hessian(x)
    cov = np.linalg.inv(-hess)
    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal(x, cov, size=draws, method="eigh")
    free = z[:, : m - 1]
    theta = np.concatenate([free, -free.sum(axis=1, keepdims=True)], axis=1)
    gn = float(np.linalg.norm(g))
    diag = Diagnostics.optimizer("laplace (collapsed Rasch, NumPy)", bool(res.success) or gn < 1e-6, gn,
                                 iterations=int(res.nit), status=str(res.message), gradient_tol=1e-6)
    mode_theta, mode_mu, mode_sigma = _unpack(x, m)
    return RaschFit(st.players, theta, z[:, m - 1], np.exp(z[:, m]), "laplace", diag, mode=mode_theta,
                    extra={"mu_mode": float(mode_mu), "sigma_mode": float(mode_sigma)})


# ---------------------------------------------------------------------------------- PyMC
def collapsed_loglik_pt(theta, mu, sigma, st: RaschStats, totals=None, group_count=None):
    """The collapsed log-likelihood as a PyTensor expression (the same formula as :func:`loglik`);
    ``totals`` / ``group_count`` replace the statistics' own (e.g. by ``pm.Data``)."""
    import pytensor.tensor as pt

    totals = pt.as_tensor(st.totals) if totals is None else totals
    group_count = pt.as_tensor(st.group_count) if group_count is None else group_count
    b = mu + sigma * pt.as_tensor(st.x_nodes)
    z = theta[:, None] - b[None, :]
    f = pt.dot(pt.as_tensor(st.patterns), pt.softplus(z))
    a = pt.as_tensor(st.log_w)[None, :] - pt.as_tensor(st.group_total)[:, None] * b[None, :] - f[st.group_pattern]
    li = pt.logsumexp(a, axis=1)
    return pt.dot(theta, totals) + pt.dot(group_count, li)


def every_total(st: RaschStats) -> RaschStats:
    """0/1 scores on a complete matrix: the statistics with one group per total s = 0..M (empty groups
    count 0), so data sets of the same shape share one compiled model (``build_rasch_model(mutable=True)``)."""
    m = len(st.players)
    if len(st.patterns) != 1 or not (st.patterns == 1).all():
        raise ValueError("every_total needs 0/1 scores with one trial per model and item")
    count = np.zeros(m + 1)
    np.add.at(count, np.rint(st.group_total).astype(int), st.group_count)
    return RaschStats(st.players, st.totals, st.patterns, np.zeros(m + 1, dtype=int), np.arange(m + 1.0), count,
                      np.rint(st.group_total[st.item_group]).astype(int), st.item_const, st.counts, st.x_nodes,
                      st.log_w)


def build_rasch_model(data_or_stats, prior=PRIOR, mutable: bool = False):
    """The collapsed Rasch model: θ (dims ``player``), μ, σ; the items enter by a Potential. With
    ``mutable`` (0/1 scores, complete matrix) the model totals and the count of items per total are
    ``pm.Data`` (``totals``, ``items_per_total``), so one compiled model refits other data sets."""
    import pymc as pm

    st = data_or_stats if isinstance(data_or_stats, RaschStats) else sufficient(data_or_stats)
    if mutable:
        st = every_total(st)
    with pm.Model(coords={"player": list(st.players)}) as model:
        theta = pm.ZeroSumNormal("theta", sigma=prior["theta"], dims="player")
        mu = pm.Normal("mu", 0.0, prior["mu"])
        sigma = pm.HalfNormal("sigma", prior["sigma"])
        extra = {}
        if mutable:
            extra = {"totals": pm.Data("totals", st.totals), "group_count": pm.Data("items_per_total", st.group_count)}
        pm.Potential("items", collapsed_loglik_pt(theta, mu, sigma, st, **extra))
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
    from bayesrank._multiprocessing import pymc_mp_ctx

    st = data_or_stats if data is None else sufficient(data)
    model = build_rasch_model(st, prior)
    with model:  # PyMC's own NUTS (the package's default sampler: nutpie would compile with numba first)
        idata = pm.sample(draws=draws, tune=tune, chains=chains, random_seed=seed, progressbar=False,
                          target_accept=target_accept, compute_convergence_checks=False, nuts_sampler="pymc",
                          cores=min(chains, 2), mp_ctx=pymc_mp_ctx())
    post = idata["posterior"]
    theta = post["theta"].values.reshape(-1, len(st.players))
    mu, sigma = post["mu"].values.ravel(), post["sigma"].values.ravel()
    extra = {}
    if loo and data is not None and data.n_items <= LOO_MAX_ITEMS:
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


def total_distribution(theta, mu, sigma, st: RaschStats) -> np.ndarray:
    """P(an item drawn from N(μ, σ) is solved by exactly s of the M models), s = 0..M (0/1 scores):
    the Poisson-binomial law of the total given b (dynamic programming over the models) integrated
    over b with the model's quadrature."""
    from scipy.special import expit, softmax

    theta = np.atleast_2d(theta)  # (D, M): several draws at once
    mu, sigma = np.atleast_1d(mu), np.atleast_1d(sigma)
    b = mu[:, None] + sigma[:, None] * st.x_nodes[None, :]  # (D, Q)
    p = expit(theta[:, :, None] - b[:, None, :])  # (D, M, Q)
    f = np.zeros((len(b), len(st.x_nodes), theta.shape[1] + 1))
    f[:, :, 0] = 1.0
    for m in range(theta.shape[1]):
        q = p[:, m, :, None]
        f[:, :, 1:] = f[:, :, 1:] * (1 - q) + f[:, :, :-1] * q
        f[:, :, 0] *= 1 - p[:, m, :]
    out = np.einsum("q,dqs->ds", softmax(st.log_w), f)
    return out[0] if out.shape[0] == 1 else out


def ppc_item_totals(fit: RaschFit, data: ItemScores, n_draws: int = 100, seed: int = 0) -> dict:
    """Posterior predictive check of how many models solve an item (0/1 scores): for each of
    ``n_draws`` posterior draws of (θ, μ, σ), the exact law π of an item's total s = 0..M
    (:func:`total_distribution`), and a replicated histogram of N new items ~ Multinomial(N, π).
    Reported: the share of totals whose observed item count lies outside the central 95% of the
    replicated counts, and the posterior predictive p-value of the χ² distance to N·π."""
    rng = np.random.default_rng(seed)
    m, n = data.scores.shape
    st = sufficient(data)
    idx = rng.choice(len(fit.draws), size=min(n_draws, len(fit.draws)), replace=False)
    obs = np.bincount(np.rint(data.scores.sum(axis=0)).astype(int), minlength=m + 1)
    reps = np.empty((len(idx), m + 1))
    chi_obs = np.empty(len(idx))
    chi_rep = np.empty(len(idx))
    pis = np.concatenate([np.atleast_2d(total_distribution(fit.draws[c], fit.mu[c], fit.sigma[c], st))
                          for c in np.array_split(idx, max(1, len(idx) // 10))])
    for r in range(len(idx)):
        pi = np.clip(pis[r], 0, None) / pis[r].clip(0, None).sum()
        reps[r] = rng.multinomial(n, pi)
        e = n * pi + 0.5
        chi_obs[r] = ((obs - e) ** 2 / e).sum()
        chi_rep[r] = ((reps[r] - e) ** 2 / e).sum()
    lo, hi = np.quantile(reps, [0.025, 0.975], axis=0)
    return {"share_outside_95": float(((obs < lo) | (obs > hi)).mean()), "n_totals": int(m + 1),
            "p_value_chi2": float((chi_rep >= chi_obs).mean()), "n_draws": int(len(idx))}
