"""The 2PL option of the item-response model: an item discrimination a_i, both item parameters
integrated out per response pattern.

    logit P(model m solves item i) = a_i (θ_m − b_i),   θ ~ ZeroSumNormal(σ_θ),
    b_i ~ Normal(μ, σ),   log a_i ~ Normal(0, τ_a) on [−4τ_a, 4τ_a] (τ_a = 0.5, fixed),
    μ ~ Normal(0, σ_μ),   σ ~ HalfNormal(σ_σ)

With a_i free the factor exp(Σ_m k_mi θ_m) no longer leaves the integral, so an item does not
reduce to its total; it reduces to its **response pattern** (k_·i, r_·i): items with the same
pattern share one marginal likelihood (at most min(N, 2^M) groups for 0/1 scores)::

    log p(y | θ, μ, σ) = Σ_g c_g log I_g,
    I_g = ∫∫ exp(a (t_g − s_g b) − Σ_m r_pm softplus(a (θ_m − b))) N(x) N(u) dx du,
    b = μ + σx,   a = e^{τ_a u},   t_g = Σ_m k_gm θ_m,   s_g = Σ_m k_gm

(p the group's trial pattern). The softplus sums are shared by every group of a trial pattern, so
one evaluation costs M·Q exponentials plus G·Q for the groups (Q nodes). Derivatives, with π_g the
normalised integrand on the nodes and e_m = expit(a(θ_m − b))::

    ∂/∂θ_m = Σ_g c_g (k_gm E_πg[a] − r_pm E_πg[a e_m]),
    ∂/∂μ = Σ_g c_g E_πg[a (Σ_m r_pm e_m − s_g)],   ∂/∂σ = the same with the factor x.

**Grid** (:func:`grid`): :func:`u_rule` in u on [−4, 4] (the trapezoid; with several trials per
model refined, with Gregory end weights, at the cap) and, row by row, a trapezoid in x on [−8, 8],
each spacing the narrowest integrand's spread: in u ``1/√(1 + τ_a² T)`` (the curvature of
Σ r softplus(a(θ − b)) in u is at most 0.44 τ_a² T, T the trials per item; the factor 1 leaves room
for the linear term), in x at discrimination a ``1/√(1 + σ_max² a² T/4)`` (as the Rasch grid), both
at most 0.5. Compared with scipy's adaptive quadrature in the tests. The truncation of log a at ±4τ_a
(prior mass 6e-5 outside) is part of the model.

The fits are those of the Rasch model on this density (same coordinates z, μ, log σ; same
:class:`~bayesrank.items.irt.RaschFit`): :func:`fit_laplace` (mode by BFGS with the analytic
gradient from the Rasch mode, Hessian by central differences of the gradient) and :func:`fit_nuts`
(nutpie through :func:`bayesrank.stats.nuts.sample_logp` on the numba kernel, chains started at
Laplace draws, the grid chosen for σ ≤ σ̂·e^{8 sd(log σ)}). :func:`item_parameters` draws (a_i, b_i)
from their conditional posterior given each draw of (θ, μ, σ). For small benchmarks: the cost grows
with the number of distinct patterns (10,000 items on 100 models: 10,000 groups).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from bayesrank.items.data import ItemScores
from bayesrank.items.likelihood import GroupedItems, normal_trapezoid

TAU_A = 0.5  # prior SD of log a_i
U_RANGE = 4.0  # log a_i / τ_a ∈ [−4, 4]
X_RANGE = 8.0
H_MAX = 0.5  # largest spacing (the N(0, 1) weight alone is integrated to ~1e-34 at this spacing)
SIGMA_MAX = 10.0


#: Gregory end weights of order h⁶ (the trapezoid rule's end terms removed up to the fifth derivative)
GREGORY = np.array([95 / 288, 317 / 240, 23 / 30, 793 / 720, 157 / 160])


def u_rule(max_trials: float, tau: float = TAU_A, model_trials: float = 1.0):
    """(u nodes, log weights with the N(0, 1) density) of the rule in u = log a / τ_a on [−4, 4].

    Spacing ``min(0.5, 1/√(1 + τ_a² T))`` (T the trials per item over all models). One trial per model
    and item: the trapezoid (the integrand is small at the truncation, error ~2e-5 of I_g). Several
    trials per model (n > 1): an item that separates the models piles its integrand up at the cap
    u = 4, where the trapezoid's end term h²/12·f'(4) grows with n; there the spacing is divided by
    max(2, √n/2) and the end weights are Gregory's (:data:`GREGORY`): error ≤ 1e-4 of I_g up to 30
    trials per model (tested against scipy's adaptive quadrature)."""
    t = max(float(max_trials), 1.0)
    h = min(H_MAX, 1.0 / np.sqrt(1.0 + tau**2 * t))
    if model_trials <= 1.0:
        u = np.linspace(-U_RANGE, U_RANGE, int(np.ceil(2 * U_RANGE / h)) + 1)
        return u, normal_trapezoid(u)
    h /= max(2.0, np.sqrt(float(model_trials)) / 2.0)
    u = np.linspace(-U_RANGE, U_RANGE, max(int(np.ceil(2 * U_RANGE / h)) + 1, 2 * len(GREGORY)))
    w = np.ones_like(u)
    w[: len(GREGORY)], w[-len(GREGORY):] = GREGORY, GREGORY[::-1]
    return u, -0.5 * u**2 - 0.5 * np.log(2 * np.pi) + np.log(u[1] - u[0]) + np.log(w)


def grid(max_trials: float, sigma_max: float = SIGMA_MAX, tau: float = TAU_A, model_trials: float = 1.0):
    """(x nodes, u nodes, log weights) of the 2-D rule (module docstring): :func:`u_rule` in u and, row
    by row, the trapezoid in x, with the N(0, 1) densities of x and u in the weights."""
    t = max(float(max_trials), 1.0)
    u_row, lu = u_rule(t, tau, model_trials)
    xs, us, lw = [], [], []
    for u, l_u in zip(u_row, lu):
        a = np.exp(tau * u)
        hx_target = min(H_MAX, 1.0 / np.sqrt(1.0 + sigma_max**2 * a**2 * t / 4.0))
        nx = int(np.ceil(2 * X_RANGE / hx_target)) + 1
        x = np.linspace(-X_RANGE, X_RANGE, nx)
        lx = normal_trapezoid(x)
        xs.append(x)
        us.append(np.full(nx, u))
        lw.append(lx + l_u)
    return np.concatenate(xs), np.concatenate(us), np.concatenate(lw)


@dataclass(frozen=True)
class TwoPLStats(GroupedItems):
    """Items grouped by response pattern, and the quadrature grid."""

    players: np.ndarray  # (M,)
    patterns: np.ndarray  # (P, M) trial counts of each distinct trial pattern
    group_pattern: np.ndarray  # (G,) trial pattern of each group
    group_k: np.ndarray  # (G, M) successes (or fractional scores) of each group
    group_count: np.ndarray  # (G,) items in the group
    item_group: np.ndarray  # (N,)
    counts: bool
    x_nodes: np.ndarray
    u_nodes: np.ndarray
    log_w: np.ndarray
    sigma_max: float = SIGMA_MAX
    tau: float = TAU_A

    def regrid(self, sigma_max: float) -> TwoPLStats:
        x, u, lw = grid(self.max_trials, sigma_max, self.tau, float(self.patterns.max()))
        return replace(self, x_nodes=x, u_nodes=u, log_w=lw, sigma_max=float(sigma_max))


def sufficient(data: ItemScores, sigma_max: float = SIGMA_MAX, tau: float = TAU_A) -> TwoPLStats:
    """The response patterns of an :class:`~bayesrank.items.data.ItemScores` (successes of r trials,
    or fractional scores as a Bernoulli quasi-likelihood)."""
    if data.successes is not None:
        k, r, counts = data.successes.astype(float), data.trials.astype(float), True
    else:
        k, r, counts = data.scores.astype(float), np.ones_like(data.scores, dtype=float), False
    pat, pat_of_item = np.unique(r.T, axis=0, return_inverse=True)
    key = np.concatenate([pat_of_item.reshape(-1, 1).astype(float), np.round(k.T, 12)], axis=1)
    keys, item_group = np.unique(key, axis=0, return_inverse=True)
    item_group = item_group.ravel()
    x, u, lw = grid(pat.sum(axis=1).max(), sigma_max, tau, float(pat.max()))
    return TwoPLStats(players=np.asarray([str(m) for m in data.models], dtype=object),
                      patterns=np.ascontiguousarray(pat, dtype=float),
                      group_pattern=keys[:, 0].astype(np.int64), group_k=np.ascontiguousarray(keys[:, 1:]),
                      group_count=np.bincount(item_group, minlength=len(keys)).astype(float),
                      item_group=item_group, counts=counts, x_nodes=x, u_nodes=u, log_w=lw,
                      sigma_max=float(sigma_max), tau=float(tau))


#: largest (M + G)·Q (models plus response patterns, times quadrature nodes) the review samples: about
#: 3 ms of CPU per gradient; above it the 2PL's quadrature is too slow for NUTS
MAX_WORK = 1_000_000


def check_size(st: TwoPLStats) -> None:
    """One-line :class:`~bayesrank.errors.InputError` when the 2PL density is too costly to sample."""
    from bayesrank.errors import InputError

    m, g, q = len(st.players), len(st.group_count), len(st.x_nodes)
    if (m + g) * q > MAX_WORK:
        raise InputError(f"--twopl: {m} models and {g:,} distinct response patterns need {(m + g) * q:,} quadrature "
                         f"terms per evaluation (at most {MAX_WORK:,}): the 2PL option is for small benchmarks; "
                         "drop --twopl for the Rasch model")


# ---------------------------------------------------------------------------------- kernel
def _kernel_py(theta, mu, sigma, tau, x, u, logw, patterns, gpat, gk, gcnt, grad, li):
    """log-likelihood; writes ∂/∂(θ, μ, σ) into ``grad`` (M + 2) and log I_g into ``li`` (G)."""
    m_ = theta.shape[0]
    q_ = x.shape[0]
    p_ = patterns.shape[0]
    g_ = gk.shape[0]
    b = np.empty(q_)
    a = np.empty(q_)
    for q in range(q_):
        b[q] = mu + sigma * x[q]
        a[q] = np.exp(tau * u[q])
    f = np.zeros((p_, q_))  # Σ_m r softplus(z)
    e = np.zeros((p_, q_))  # Σ_m r expit(z)
    for m in range(m_):
        th = theta[m]
        for q in range(q_):
            z = a[q] * (th - b[q])
            if z > 0:
                t = np.exp(-z)
                sp = z + np.log1p(t)
                p = 1.0 / (1.0 + t)
            else:
                t = np.exp(z)
                sp = np.log1p(t)
                p = t / (1.0 + t)
            for k in range(p_):
                r = patterns[k, m]
                if r != 0.0:
                    f[k, q] += r * sp
                    e[k, q] += r * p
    w_pat = np.zeros((p_, q_))
    abar = np.empty(g_)
    g_mu = 0.0
    g_sigma = 0.0
    ll = 0.0
    lg = np.empty(q_)
    for g in range(g_):
        k = gpat[g]
        t_g = 0.0
        s_g = 0.0
        for m in range(m_):
            t_g += gk[g, m] * theta[m]
            s_g += gk[g, m]
        mx = -np.inf
        for q in range(q_):
            lg[q] = logw[q] + a[q] * (t_g - s_g * b[q]) - f[k, q]
            if lg[q] > mx:
                mx = lg[q]
        tot = 0.0
        for q in range(q_):
            lg[q] = np.exp(lg[q] - mx)
            tot += lg[q]
        li[g] = mx + np.log(tot)
        ll += gcnt[g] * li[g]
        c = gcnt[g] / tot
        ab = 0.0
        for q in range(q_):
            w = lg[q] * c
            w_pat[k, q] += w
            ab += w * a[q]
            d = w * a[q] * (e[k, q] - s_g)
            g_mu += d
            g_sigma += d * x[q]
        abar[g] = ab  # c_g E_πg[a]
    for m in range(m_):
        acc = 0.0
        for g in range(g_):
            acc += gk[g, m] * abar[g]
        th = theta[m]
        for k in range(p_):
            r = patterns[k, m]
            if r != 0.0:
                s2 = 0.0
                for q in range(q_):
                    z = a[q] * (th - b[q])
                    if z > 0:
                        p = 1.0 / (1.0 + np.exp(-z))
                    else:
                        t = np.exp(z)
                        p = t / (1.0 + t)
                    s2 += w_pat[k, q] * a[q] * p
                acc -= r * s2
        grad[m] = acc
    grad[m_] = g_mu
    grad[m_ + 1] = g_sigma
    return ll


_KERNEL = None


def _kernel():
    """The compiled :func:`_kernel_py` (numba, cached on disk, releases the GIL)."""
    global _KERNEL
    if _KERNEL is None:
        import numba

        _KERNEL = numba.njit(cache=True, nogil=True)(_kernel_py)
    return _KERNEL


def loglik(theta, mu, sigma, st: TwoPLStats, grad: bool = False, per_group: bool = False):
    """Collapsed 2PL log-likelihood (without binomial constants); with ``grad`` also its gradient in
    θ (M,), μ and σ; with ``per_group`` the log I_g (G,) instead."""
    theta = np.ascontiguousarray(theta, dtype=float)
    g = np.empty(len(theta) + 2)
    li = np.empty(len(st.group_count))
    ll = _kernel()(theta, float(mu), float(sigma), float(st.tau), st.x_nodes, st.u_nodes, st.log_w, st.patterns,
                   st.group_pattern, st.group_k, st.group_count, g, li)
    if per_group:
        return li
    if not grad:
        return ll
    return ll, g[:-2], g[-2], g[-1]


def log_posterior(x, st: TwoPLStats, prior=None):
    """(log posterior up to a constant, gradient) in the Rasch fits' coordinates (z, μ, log σ), with
    the log-σ Jacobian and the same priors (:func:`bayesrank.items.irt.log_posterior`)."""
    from bayesrank.items.irt import PRIOR, _zerosum_grad, zerosum

    prior = PRIOR if prior is None else prior
    m = len(st.players)
    z = x[: m - 1]
    theta, mu, sigma = zerosum(z), float(x[m - 1]), float(np.exp(x[m]))
    s_t, s_m, s_s = prior["theta"] ** 2, prior["mu"] ** 2, prior["sigma"] ** 2
    ll, gt, gm, gs = loglik(theta, mu, sigma, st, grad=True)
    lp = ll - 0.5 * (z @ z) / s_t - 0.5 * mu**2 / s_m - 0.5 * sigma**2 / s_s + x[m]
    g = np.empty(m + 1)
    g[: m - 1] = _zerosum_grad(gt) - z / s_t
    g[m - 1] = gm - mu / s_m
    g[m] = (gs - sigma / s_s) * sigma + 1.0
    return lp, g


# ---------------------------------------------------------------------------------- fits
def _hessian(fun, x, h=1e-5):
    """Central differences of the analytic gradient, symmetrised."""
    n = len(x)
    hx = np.empty((n, n))
    for j in range(n):
        d = np.zeros(n)
        d[j] = h
        hx[:, j] = (fun(x + d)[1] - fun(x - d)[1]) / (2 * h)
    return 0.5 * (hx + hx.T)


def fit_laplace(data: ItemScores, *, seed: int = 0, draws: int = 4000, prior=None, stats: TwoPLStats | None = None):
    """Posterior mode (BFGS with the analytic gradient, from the Rasch model's mode) and the Gaussian
    with the inverse negative Hessian (central differences of the gradient). The mode is searched on
    the grid accurate for σ up to twice the Rasch fit's σ̂·e^{8 sd(log σ)}, and again on ``stats``'
    grid if the 2PL's own range exceeds it."""
    from bayesrank.items import irt

    prior = irt.PRIOR if prior is None else prior
    st = sufficient(data) if stats is None else stats
    rasch = irt.fit_laplace(irt.sufficient(data), prior=prior, draws=10)
    coarse = _sigma_top(rasch, len(st.players)) * 2
    first = st.regrid(coarse) if coarse < st.sigma_max else st
    fit = _laplace(first, prior, rasch.extra["x_mode"], seed, draws)
    if first is not st and _sigma_top(fit, len(st.players)) > first.sigma_max:
        fit = _laplace(st, prior, fit.extra["x_mode"], seed, draws)
    return fit


def _sigma_top(fit, m) -> float:
    """σ̂·e^{8 sd(log σ)} of a Laplace fit: the largest σ its posterior reaches."""
    from bayesrank.items.irt import SIGMA_SDS

    return float(fit.extra["sigma_mode"] * np.exp(SIGMA_SDS * np.sqrt(fit.extra["cov"][m, m])))


def _laplace(st: TwoPLStats, prior, start, seed, draws):
    from scipy.optimize import minimize

    from bayesrank.items import irt
    from bayesrank.protocol import Diagnostics

    m = len(st.players)
    res = minimize(lambda x: tuple(-v for v in log_posterior(x, st, prior)), start, jac=True, method="BFGS",
                   options={"gtol": 1e-7, "maxiter": 1000})
    x = res.x
    g = log_posterior(x, st, prior)[1]
    h = _hessian(lambda y: log_posterior(y, st, prior), x)
    gn = float(np.linalg.norm(g))
    ok = bool(np.all(np.linalg.eigvalsh(-h) > 0))
    cov = np.linalg.inv(-h) if ok else np.linalg.pinv(-h)
    cov = 0.5 * (cov + cov.T)
    zs = np.random.default_rng(seed).multivariate_normal(x, cov, size=draws, method="cholesky" if ok else "eigh")
    diag = Diagnostics.optimizer("laplace (collapsed 2PL)", ok and gn < 1e-4, gn, iterations=int(res.nit),
                                 status=str(res.message), gradient_tol=1e-4)
    theta, mu, sigma = irt._unpack(x, m)
    return irt.RaschFit(st.players, irt.zerosum(zs[:, : m - 1]), zs[:, m - 1], np.exp(zs[:, m]), "laplace", diag,
                        mode=theta, extra={"mu_mode": mu, "sigma_mode": sigma, "x_mode": x, "cov": cov,
                                           "model": "2pl", "groups": int(len(st.group_count)),
                                           "grid_sigma_max": st.sigma_max})


def nuts_grid(st: TwoPLStats, laplace) -> TwoPLStats:
    """The coarsest grid accurate for σ up to the Laplace mode × e^{8 sd(log σ)} (as the Rasch fit),
    never beyond the default grid's σ range."""
    top = min(_sigma_top(laplace, len(st.players)), SIGMA_MAX)
    return st if top == st.sigma_max else st.regrid(top)


def fit_nuts(data: ItemScores, *, seed: int = 0, draws: int | None = None, tune: int | None = None, chains: int = 4,
             prior=None, target_accept: float = 0.8, laplace=None, stats: TwoPLStats | None = None, progress=None,
             loo: bool = True):
    """NUTS (nutpie, :func:`bayesrank.stats.nuts.sample_logp`) on :func:`log_posterior`, chains started
    at Laplace draws, on :func:`nuts_grid`'s grid (re-run on the default grid if a draw of σ leaves
    it); diagnostics R-hat, ESS, divergences; PSIS-LOO over items (:func:`loo_items`) when ``loo`` and
    the benchmark has at most ``irt.LOO_MAX_ITEMS`` items."""
    from bayesrank.items import irt
    from bayesrank.protocol import Diagnostics

    prior = irt.PRIOR if prior is None else prior
    draws = irt.DRAWS if draws is None else draws
    tune = irt.TUNE if tune is None else tune
    st = sufficient(data) if stats is None else stats
    laplace = fit_laplace(data, seed=seed, prior=prior, stats=st) if laplace is None else laplace
    m = len(st.players)
    g = nuts_grid(st, laplace)
    extra = {"model": "2pl", "groups": int(len(st.group_count))}
    idata = _sample(g, laplace, prior, seed, draws, tune, chains, target_accept, progress)
    top = float(idata["posterior"]["sigma"].max())
    if top > g.sigma_max:
        extra["regrid"] = {"sigma_max_drawn": top, "grid_sigma_max": g.sigma_max}
        g = st.regrid(max(SIGMA_MAX, 2 * top))
        check_size(g)  # the wider grid has more nodes: refuse in one line rather than sample for hours
        idata = _sample(g, laplace, prior, seed, draws, tune, chains, target_accept, progress)
    extra["grid"] = {"nodes": int(len(g.x_nodes)), "sigma_max": g.sigma_max}
    post = idata["posterior"]
    theta = post["theta"].transpose("chain", "draw", "player").values.reshape(-1, m)
    diag = Diagnostics.sampler("nuts (nutpie, collapsed 2PL)", idata, var_names=["theta", "mu", "sigma"], **extra)
    mu, sigma = post["mu"].values.ravel(), post["sigma"].values.ravel()
    if loo and data.n_items <= irt.LOO_MAX_ITEMS:
        extra["loo"] = loo_items(theta, mu, sigma, data, g, chains=chains)
    return irt.RaschFit(st.players, theta, mu, sigma, "nuts", diag, idata=idata, extra=extra)


def _sample(st, laplace, prior, seed, draws, tune, chains, target_accept, progress):
    from bayesrank.items.irt import chain_start
    from bayesrank.stats.nuts import sample_logp

    m = len(st.players)
    init, expand = chain_start(laplace, m)

    def logp(x):
        return log_posterior(x, st, prior)

    return sample_logp(logp, m + 1, expand, {"theta": (m,), "mu": (), "sigma": ()}, init=init, draws=draws,
                       tune=tune, chains=chains, seed=seed, target_accept=target_accept,
                       coords={"player": [str(p) for p in st.players]}, dims={"theta": ("player",)},
                       progress=progress, label="NUTS (2PL item-response model)")


# ---------------------------------------------------------------------------------- item parameters
def item_parameters(fit, st: TwoPLStats, n_draws: int = 200, seed: int = 0):
    """(a, b) draws (D, N): for each of ``n_draws`` posterior draws of (θ, μ, σ), every item's
    (a_i, b_i) drawn from its conditional posterior on the quadrature nodes (π_g of its group)."""
    from scipy.special import log_softmax

    rng = np.random.default_rng(seed)
    idx = rng.choice(len(fit.draws), size=min(n_draws, len(fit.draws)), replace=False)
    n = len(st.item_group)
    a_out, b_out = np.empty((len(idx), n)), np.empty((len(idx), n))
    a = np.exp(st.tau * st.u_nodes)
    for j, d in enumerate(idx):
        theta, mu, sigma = fit.draws[d], fit.mu[d], fit.sigma[d]
        b = mu + sigma * st.x_nodes
        z = a[None, :] * (theta[:, None] - b[None, :])  # (M, Q)
        f = st.patterns @ np.logaddexp(0.0, z)  # (P, Q)
        t = st.group_k @ theta
        s = st.group_k.sum(axis=1)
        lg = st.log_w[None, :] + a[None, :] * (t[:, None] - s[:, None] * b[None, :]) - f[st.group_pattern]
        pi = np.exp(log_softmax(lg, axis=1))  # (G, Q)
        cdf = np.cumsum(pi, axis=1)
        grp = st.item_group
        q = (cdf[grp] < rng.random(n)[:, None]).sum(axis=1).clip(max=len(b) - 1)
        a_out[j], b_out[j] = a[q], b[q]
    return a_out, b_out


# ---------------------------------------------------------------------------------- checks
def loo_items(theta, mu, sigma, data: ItemScores, st: TwoPLStats | None = None, chains: int = 1,
              max_draws: int = 500) -> dict:
    """PSIS-LOO leaving one item out: item i's marginal log-likelihood is ``log I_g(i) − log Σ_q w_q``
    plus its binomial constant (a_i and b_i integrated out; the factor e^{a t_g} is inside the
    integral; the grid's weight normalises the truncated prior of (x, u), so an item's laws over its
    response patterns sum to 1), from up to ``max_draws`` evenly thinned draws
    (:func:`bayesrank.items.irt.psis_items`)."""
    from scipy.special import logsumexp

    from bayesrank.items import irt

    st = sufficient(data) if st is None else st
    th, m_, s_ = irt.thin_for_loo(theta, mu, sigma, max_draws)
    lg = np.stack([loglik(th[j], m_[j], s_[j], st, per_group=True) for j in range(len(th))])
    const = irt.sufficient(data).item_const - logsumexp(st.log_w)
    return irt.psis_items(lg[:, st.item_group] + const[None, :], m_, chains)


def total_distribution(theta, mu, sigma, st: TwoPLStats) -> np.ndarray:
    """P(an item drawn from the 2PL's item population is solved by exactly s of the M models),
    s = 0..M (0/1 scores): the Poisson-binomial law given (a, b) integrated on the 2-D grid."""
    from scipy.special import expit, softmax

    from bayesrank.items.irt import total_law

    theta = np.atleast_2d(theta)
    mu, sigma = np.atleast_1d(mu), np.atleast_1d(sigma)
    a = np.exp(st.tau * st.u_nodes)
    b = mu[:, None] + sigma[:, None] * st.x_nodes[None, :]  # (D, Q)
    return total_law(expit(a[None, None, :] * (theta[:, :, None] - b[:, None, :])), softmax(st.log_w))
