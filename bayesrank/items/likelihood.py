"""The collapsed Rasch log-likelihood: sufficient statistics, quadrature, value and gradient (a numba
kernel), analytic Hessian (NumPy) and the same formula as a PyTensor expression.

With ``logit P(model m solves item i) = θ_m − b_i`` and ``b_i ~ N(μ, σ)`` integrated out, the factor
``exp(Σ_m k_mi θ_m)`` does not involve b_i, so an item enters only through its total
``s_i = Σ_m k_mi`` and its trial pattern ``r_·i``::

    log p(y | θ, μ, σ) = Σ_m θ_m T_m + Σ_g c_g log I_g,     T_m = Σ_i k_mi,
    I_g = ∫ exp(a_g(x)) dx,   a_g(x) = log φ(x) − s_g b − Σ_m r_gm log(1 + e^{θ_m − b}),   b = μ + σx

over the distinct (pattern, total) groups g with c_g items each — at most M + 1 for 0/1 scores on a
complete matrix. Each integral is a trapezoid rule on fixed nodes x ∈ [−8, 8] (:func:`quadrature`).

Derivatives, with π_g the normalised integrand on the nodes, e_m = expit(θ_m − b) and
D_g = Σ_m r_gm e_m − s_g (= ∂a_g/∂μ)::

    ∂/∂θ_m = T_m − Σ_g c_g E_πg[r_gm e_m],   ∂/∂μ = Σ_g c_g E_πg[D_g],   ∂/∂σ = Σ_g c_g E_πg[D_g x]
    ∂²/∂φ∂ψ = Σ_g c_g (E_πg[∂²a_g/∂φ∂ψ] + Cov_πg(∂a_g/∂φ, ∂a_g/∂ψ))

Fractional scores that are not counts use the Bernoulli kernel with y in place of k (a
quasi-likelihood; totals are then not integers and each distinct total is a group).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

X_RANGE = 8.0
SIGMA_MAX = 10.0  # the default grid is accurate for σ up to this (the prior HalfNormal(2.5) puts 6e-5 above it)


def quadrature(max_trials: float, sigma_max: float = SIGMA_MAX) -> tuple[np.ndarray, np.ndarray]:
    """Trapezoid nodes x on [−8, 8] and log weights (with the N(0, 1) density) for items answered by
    at most ``max_trials`` model trials, accurate for σ ≤ ``sigma_max``.

    In x an integrand exp(a_g) has curvature −∂²a/∂x² = 1 + σ² Σ_m r_m e_m(1 − e_m) ≤ 1 + σ² trials/4,
    so its spread is at least ``1/√(1 + σ² trials/4)``; the spacing ``h`` is that spread (and ≤ 0.1).
    The trapezoid rule's relative error on such an analytic, Gaussian-like integrand is about
    ``2 exp(−2π² (spread/h)²)`` ≈ 5e-9 at the largest σ, less below it; it is compared with adaptive
    quadrature in the tests."""
    spread = 1.0 / np.sqrt(1.0 + sigma_max**2 * max(float(max_trials), 1.0) / 4.0)
    h = min(0.1, spread)
    x = np.linspace(-X_RANGE, X_RANGE, int(np.ceil(2 * X_RANGE / h)) + 1)
    return x, normal_trapezoid(x)


def normal_trapezoid(x: np.ndarray) -> np.ndarray:
    """Log weights of the trapezoid rule on equally spaced nodes x, times the N(0, 1) density."""
    logw = -0.5 * x**2 - 0.5 * np.log(2 * np.pi) + np.log(x[1] - x[0])
    logw[[0, -1]] += np.log(0.5)  # trapezoid end weights
    return logw


class GroupedItems:
    """Shared by the collapsed likelihoods' statistics: items grouped, with trial ``patterns``."""

    @property
    def n_items(self) -> int:
        return int(self.group_count.sum())

    @property
    def max_trials(self) -> float:
        return float(self.patterns.sum(axis=1).max())


@dataclass(frozen=True)
class RaschStats(GroupedItems):
    """Sufficient statistics of the collapsed Rasch likelihood and its quadrature grid."""

    players: np.ndarray  # (M,)
    totals: np.ndarray  # T_m (M,)
    patterns: np.ndarray  # (P, M) trial counts r of each distinct pattern (float)
    group_pattern: np.ndarray  # (G,) pattern of each group
    group_total: np.ndarray  # (G,) item total s_g
    group_count: np.ndarray  # (G,) items in the group
    item_group: np.ndarray  # (N,) group of each item
    item_const: np.ndarray  # (N,) log binomial coefficients of each item (0 for 0/1 scores)
    counts: bool  # binomial counts (True) or the fractional quasi-likelihood (False)
    x_nodes: np.ndarray  # quadrature nodes in x = (b − μ)/σ
    log_w: np.ndarray  # their log weights (trapezoid × N(0, 1) density)
    sigma_max: float = SIGMA_MAX  # the grid is accurate for σ ≤ sigma_max

    def regrid(self, sigma_max: float) -> RaschStats:
        """The same statistics on the grid accurate for σ ≤ ``sigma_max`` (:func:`quadrature`)."""
        x, logw = quadrature(self.max_trials, sigma_max)
        return replace(self, x_nodes=x, log_w=logw, sigma_max=float(sigma_max))


def sufficient(data, sigma_max: float = SIGMA_MAX) -> RaschStats:
    """The statistics of an :class:`~bayesrank.items.data.ItemScores` (totals per model, items grouped
    by trial pattern and total)."""
    from scipy.special import gammaln

    if data.binary:  # one trial per cell: one pattern, no binomial constants, totals by integer sums
        return _sufficient_binary(data, sigma_max)
    if data.successes is not None:
        k, r, counts = data.successes.astype(float), data.trials.astype(float), True
    else:
        k, r, counts = data.scores.astype(float), np.ones_like(data.scores, dtype=float), False
    n = k.shape[1]
    if (r == r[:, :1]).all():  # every item has the same trials (the common case): one pattern
        pat, pat_of_item = r[:, :1].T.copy(), np.zeros(n, dtype=np.int64)
    else:
        pat, pat_of_item = np.unique(r.T, axis=0, return_inverse=True)
        pat_of_item = pat_of_item.ravel()
    s = np.round(k.sum(axis=0), 12)
    tot_values, tot_code = np.unique(s, return_inverse=True)
    keys, item_group = np.unique(pat_of_item * len(tot_values) + tot_code.ravel(), return_inverse=True)
    item_group = item_group.ravel()
    const = (gammaln(r + 1) - gammaln(k + 1) - gammaln(r - k + 1)).sum(axis=0) if counts else np.zeros(n)
    x, logw = quadrature(pat.sum(axis=1).max(), sigma_max)
    return RaschStats(players=np.asarray([str(m) for m in data.models], dtype=object), totals=k.sum(axis=1),
                      patterns=np.ascontiguousarray(pat, dtype=float),
                      group_pattern=(keys // len(tot_values)).astype(np.int64),
                      group_total=tot_values[keys % len(tot_values)].astype(float),
                      group_count=np.bincount(item_group, minlength=len(keys)).astype(float),
                      item_group=item_group, item_const=const, counts=counts, x_nodes=x, log_w=logw,
                      sigma_max=float(sigma_max))


def _sufficient_binary(data, sigma_max: float) -> RaschStats:
    """:func:`sufficient` for 0/1 scores with one trial per cell (the same statistics, from the int8
    matrix without float copies)."""
    y = data.scores
    m, n = y.shape
    s = y.sum(axis=0, dtype=np.int64)
    tot_values, item_group = np.unique(s, return_inverse=True)
    item_group = item_group.ravel().astype(np.int64)
    x, logw = quadrature(1.0 * m, sigma_max)
    return RaschStats(players=np.asarray([str(p) for p in data.models], dtype=object),
                      totals=y.sum(axis=1, dtype=np.int64).astype(float), patterns=np.ones((1, m)),
                      group_pattern=np.zeros(len(tot_values), dtype=np.int64), group_total=tot_values.astype(float),
                      group_count=np.bincount(item_group, minlength=len(tot_values)).astype(float),
                      item_group=item_group, item_const=np.zeros(n), counts=True, x_nodes=x, log_w=logw,
                      sigma_max=float(sigma_max))


def every_total(st: RaschStats) -> RaschStats:
    """0/1 scores on a complete matrix: the statistics with one group per total s = 0..M (empty groups
    count 0), so data sets of the same shape share one compiled model (``build_rasch_model(mutable=True)``)."""
    m = len(st.players)
    if len(st.patterns) != 1 or not (st.patterns == 1).all():
        raise ValueError("every_total needs 0/1 scores with one trial per model and item")
    count = np.zeros(m + 1)
    np.add.at(count, np.rint(st.group_total).astype(int), st.group_count)
    return replace(st, group_pattern=np.zeros(m + 1, dtype=np.int64), group_total=np.arange(m + 1.0),
                   group_count=count, item_group=np.rint(st.group_total[st.item_group]).astype(int))


# ---------------------------------------------------------------------------------- value and gradient
def _kernel_py(theta, mu, sigma, x, logw, patterns, gpat, gtot, gcnt, totals, grad, li):
    """log-likelihood; writes ∂/∂(θ, μ, σ) into ``grad`` (M + 2) and log I_g into ``li`` (G).

    One exponential per (model, node): e^{−|θ_m − b_q|} is a product of e^{±θ_m} and e^{∓b_q}, and
    Σ_m log(1 + e^{−|z|}) is the log of a product (renormalised every 32 models)."""
    m_ = theta.shape[0]
    q_ = x.shape[0]
    p_ = patterns.shape[0]
    g_ = gtot.shape[0]
    ex = np.empty((m_, q_))
    f = np.zeros((p_, q_))
    e = np.zeros((p_, q_))
    prod = np.ones((p_, q_))
    b = np.empty(q_)
    eb = np.empty(q_)
    emb = np.empty(q_)
    for q in range(q_):
        b[q] = mu + sigma * x[q]
        eb[q] = np.exp(b[q])
        emb[q] = np.exp(-b[q])
    for m in range(m_):
        th = theta[m]
        et = np.exp(th)
        emt = np.exp(-th)
        for q in range(q_):
            if th > b[q]:
                t = emt * eb[q]
                p = 1.0 / (1.0 + t)
                zp = th - b[q]
            else:
                t = et * emb[q]
                p = t / (1.0 + t)
                zp = 0.0
            ex[m, q] = p
            for k in range(p_):
                r = patterns[k, m]
                if r != 0.0:
                    f[k, q] += r * zp
                    e[k, q] += r * p
                    if r == 1.0:
                        prod[k, q] *= 1.0 + t
                    else:
                        f[k, q] += r * np.log1p(t)
        if (m & 31) == 31:
            for k in range(p_):
                for q in range(q_):
                    f[k, q] += np.log(prod[k, q])
                    prod[k, q] = 1.0
    for k in range(p_):
        for q in range(q_):
            f[k, q] += np.log(prod[k, q])
    ll = 0.0
    for m in range(m_):
        ll += theta[m] * totals[m]
    w_pat = np.zeros((p_, q_))
    g_mu = 0.0
    g_sigma = 0.0
    a = np.empty(q_)
    for g in range(g_):
        k = gpat[g]
        s = gtot[g]
        mx = -np.inf
        for q in range(q_):
            a[q] = logw[q] - s * b[q] - f[k, q]
            if a[q] > mx:
                mx = a[q]
        tot = 0.0
        for q in range(q_):
            a[q] = np.exp(a[q] - mx)
            tot += a[q]
        li[g] = mx + np.log(tot)
        ll += gcnt[g] * li[g]
        c = gcnt[g] / tot
        for q in range(q_):
            w = a[q] * c
            w_pat[k, q] += w
            d = e[k, q] - s
            g_mu += w * d
            g_sigma += w * d * x[q]
    for m in range(m_):
        acc = 0.0
        for k in range(p_):
            r = patterns[k, m]
            if r != 0.0:
                s2 = 0.0
                for q in range(q_):
                    s2 += w_pat[k, q] * ex[m, q]
                acc += r * s2
        grad[m] = totals[m] - acc
    grad[m_] = g_mu
    grad[m_ + 1] = g_sigma
    return ll


def _log_posterior_py(x, sd_theta, sd_mu, sd_sigma, xn, logw, patterns, gpat, gtot, gcnt, totals):
    """(log posterior, its gradient) in the coordinates (z, μ, log σ) of the PyMC model
    (:func:`bayesrank.items.irt.log_posterior`, whose NumPy form it equals): θ = the zero-sum
    transform of z, priors z ~ N(0, sd_θ²), μ ~ N(0, sd_μ²), σ ~ HalfNormal(sd_σ), plus log σ (the
    Jacobian)."""
    m = x.shape[0]  # M + 1 coordinates
    n = m - 1  # M models
    s = 0.0
    for j in range(n - 1):
        s += x[j]
    sq = np.sqrt(n)
    norm = s / (sq + n)
    theta = np.empty(n)
    for j in range(n - 1):
        theta[j] = x[j] - norm
    theta[n - 1] = -s / sq
    mu = x[n - 1]
    sigma = np.exp(x[n])
    g = np.empty(n + 2)
    li = np.empty(gtot.shape[0])
    ll = _loglik_nb(theta, mu, sigma, xn, logw, patterns, gpat, gtot, gcnt, totals, g, li)
    out = np.empty(m)
    gsum = 0.0
    for j in range(n - 1):
        gsum += g[j]
    zz = 0.0
    for j in range(n - 1):
        out[j] = g[j] - gsum / (sq + n) - g[n - 1] / sq - x[j] / sd_theta**2
        zz += x[j] * x[j]
    out[n - 1] = g[n] - mu / sd_mu**2
    out[n] = (g[n + 1] - sigma / sd_sigma**2) * sigma + 1.0
    lp = ll - 0.5 * zz / sd_theta**2 - 0.5 * mu * mu / sd_mu**2 - 0.5 * sigma * sigma / sd_sigma**2 + x[n]
    return lp, out


_loglik_nb = None  # the compiled kernels (numba, once per process, cached on disk; they release the GIL)
_log_posterior_nb = None


def _kernel():
    """The compiled :func:`_kernel_py`."""
    return _compiled()[0]


def _compiled():
    global _loglik_nb, _log_posterior_nb
    if _log_posterior_nb is None:
        import numba

        _loglik_nb = numba.njit(cache=True, nogil=True)(_kernel_py)  # a global: _log_posterior_py calls it
        _log_posterior_nb = numba.njit(cache=True, nogil=True)(_log_posterior_py)
    return _loglik_nb, _log_posterior_nb


def log_posterior_function(st: RaschStats, prior: dict):
    """``x ↦ (log posterior, gradient)`` in the PyMC model's coordinates, one compiled call (the NUTS
    density; :func:`_log_posterior_py`)."""
    fn = _compiled()[1]
    sds = float(prior["theta"]), float(prior["mu"]), float(prior["sigma"])
    args = (st.x_nodes, st.log_w, st.patterns, st.group_pattern, st.group_total, st.group_count, st.totals)

    def logp(x):
        return fn(x, *sds, *args)

    return logp


#: ``data`` layout of the C-callable density: a header (length, M, Q, P, G, σ_θ, σ_μ, σ_σ), then the
#: quadrature nodes and log weights (Q each), the trial patterns (P × M, row-major), each group's
#: pattern, total and item count (G each) and the model totals (M). One array, so the compiled
#: cfuncs do not depend on the data set (cached on disk once) and nutpie passes it by pointer.
HEADER = 8
_CFUNCS = None


def _logp_c_py(dim, x_, out_, logp_, data_):
    """nutpie's log-density callback (a numba ``cfunc``): unpack ``data`` (``HEADER`` layout) and call
    :func:`_log_posterior_py`. Module level, not a closure, so numba's on-disk cache is hit."""
    head = numba.carray(data_, (1,), np.float64)
    data = numba.carray(data_, (int(head[0]),), np.float64)
    m, q, p, g = int(data[1]), int(data[2]), int(data[3]), int(data[4])
    o = HEADER
    xn = data[o:o + q]
    logw = data[o + q:o + 2 * q]
    o += 2 * q
    patterns = data[o:o + p * m].reshape((p, m))
    o += p * m
    gpat = np.empty(g, dtype=np.int64)
    for k in range(g):
        gpat[k] = int(data[o + k])
    gtot = data[o + g:o + 2 * g]
    gcnt = data[o + 2 * g:o + 3 * g]
    totals = data[o + 3 * g:o + 3 * g + m]
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (dim,))
    lp, grad = _log_posterior_nb(x, data[5], data[6], data[7], xn, logw, patterns, gpat, gtot, gcnt, totals)
    logp_[0] = lp
    for k in range(dim):
        out[k] = grad[k]
        if not np.isfinite(grad[k]):
            return 3
    if not np.isfinite(lp):
        return 4
    return 0


def _expand_c_py(dim, n_expanded, x_, out_, data_):
    """nutpie's expand callback: θ (the zero-sum transform of z), μ, σ = e^{log σ}."""
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_expanded,))
    n = dim - 1  # models
    s = 0.0
    for j in range(n - 1):
        s += x[j]
    sq = np.sqrt(n)
    for j in range(n - 1):
        out[j] = x[j] - s / (sq + n)
    out[n - 1] = -s / sq
    out[n] = x[n - 1]  # μ
    out[n + 1] = np.exp(x[n])  # σ
    return 0


numba = None  # imported on first use of the compiled kernels (start-up stays light)


def _cfuncs():
    """(logp cfunc, expand cfunc) of :func:`_log_posterior_py` for nutpie (no Python, no GIL per call)."""
    global _CFUNCS, numba
    if _CFUNCS is None:
        import numba as _numba
        from numba import cfunc, types

        numba = _numba  # the callbacks' global
        _compiled()  # _log_posterior_nb, which _logp_c_py calls
        sig_logp = types.int64(types.uint64, types.CPointer(types.double), types.CPointer(types.double),
                               types.CPointer(types.double), types.voidptr)
        sig_expand = types.int64(types.uint64, types.uint64, types.CPointer(types.double), types.CPointer(types.double),
                                 types.voidptr)
        _CFUNCS = (cfunc(sig_logp, cache=True)(_logp_c_py), cfunc(sig_expand, cache=True)(_expand_c_py))
    return _CFUNCS


def density_data(st: RaschStats, prior: dict) -> np.ndarray:
    """The statistics and priors packed in the layout the cfuncs read (``HEADER``)."""
    m, q, p, g = len(st.players), len(st.x_nodes), len(st.patterns), len(st.group_total)
    body = np.concatenate([st.x_nodes, st.log_w, np.ravel(st.patterns), st.group_pattern.astype(float),
                           st.group_total, st.group_count, st.totals])
    head = np.array([HEADER + len(body), m, q, p, g, prior["theta"], prior["mu"], prior["sigma"]], dtype=float)
    return np.ascontiguousarray(np.concatenate([head, body]))


def compiled_density(st: RaschStats, prior: dict):
    """The NUTS density as nutpie calls it without Python (:class:`bayesrank.stats.nuts.CFuncDensity`):
    the same function as :func:`log_posterior_function`; stored variables θ (M), μ, σ."""
    from bayesrank.stats.nuts import CFuncDensity

    logp_c, expand_c = _cfuncs()
    return CFuncDensity(logp_c.address, expand_c.address, density_data(st, prior), owner=(logp_c, expand_c))


def loglik(theta, mu, sigma, st: RaschStats, grad: bool = False, per_group: bool = False):
    """Collapsed log-likelihood (without the binomial constants); with ``grad`` also its gradient with
    respect to θ (M,), μ and σ; with ``per_group`` the log I_g (G,) instead."""
    theta = np.ascontiguousarray(theta, dtype=float)
    g = np.empty(len(theta) + 2)
    li = np.empty(len(st.group_total))
    ll = _kernel()(theta, float(mu), float(sigma), st.x_nodes, st.log_w, st.patterns, st.group_pattern,
                   st.group_total, st.group_count, st.totals, g, li)
    if per_group:
        return li
    if not grad:
        return ll
    return ll, g[:-2], g[-2], g[-1]


def group_loglik(theta, mu, sigma, st: RaschStats) -> np.ndarray:
    """log I_g for every group (G,)."""
    return loglik(theta, mu, sigma, st, per_group=True)


def loglik_hessian(theta, mu, sigma, st: RaschStats) -> np.ndarray:
    """(M + 2) × (M + 2) Hessian of :func:`loglik` in (θ, μ, σ), analytic (module docstring). With one
    trial pattern and fewer nodes than groups, the θθ block's covariance term is formed through the
    nodes (:func:`_hessian_one_pattern`: O(M²Q + (M + G)Q²) in place of O(M²(Q + G)))."""
    from scipy.special import expit, log_softmax

    m = len(theta)
    if len(st.patterns) == 1 and len(st.x_nodes) <= len(st.group_total):
        return _hessian_one_pattern(theta, mu, sigma, st)
    x = st.x_nodes
    b = mu + sigma * x
    z = theta[:, None] - b[None, :]
    ex = expit(z)  # (M, Q)
    vv = ex * (1 - ex)
    sp = np.logaddexp(0.0, z)
    r = st.patterns
    f, e, v = r @ sp, r @ ex, r @ vv  # (P, Q)
    s, c, gp = st.group_total, st.group_count, st.group_pattern
    pi = np.exp(log_softmax(st.log_w[None, :] - s[:, None] * b[None, :] - f[gp], axis=1))  # (G, Q)
    w = c[:, None] * pi
    d = e[gp] - s[:, None]  # ∂a/∂μ (G, Q)
    h = np.zeros((m + 2, m + 2))
    u = np.zeros((len(s), m + 2))  # E_πg of the first derivatives of a_g
    for k in range(len(r)):
        sel = gp == k
        wk = w[sel].sum(axis=0)
        wdk = (w[sel] * d[sel]).sum(axis=0)
        wddk = (w[sel] * d[sel] ** 2).sum(axis=0)
        a_ = r[k][:, None] * ex  # −∂a/∂θ_m (M, Q)
        v_ = r[k][:, None] * vv
        vw = v_ @ wk
        h[:m, :m] += (a_ * wk) @ a_.T - np.diag(vw)
        h[:m, m] += vw - a_ @ wdk
        h[:m, m + 1] += v_ @ (wk * x) - a_ @ (wdk * x)
        h[m, m] += wddk.sum() - v[k] @ wk
        h[m, m + 1] += wddk @ x - v[k] @ (wk * x)
        h[m + 1, m + 1] += wddk @ x**2 - v[k] @ (wk * x**2)
        u[sel, :m] = -pi[sel] @ a_.T
    u[:, m] = (pi * d).sum(axis=1)
    u[:, m + 1] = (pi * d) @ x
    h[m, :m], h[m + 1, :m], h[m + 1, m] = h[:m, m], h[:m, m + 1], h[m, m + 1]
    h -= u.T @ (c[:, None] * u)
    return 0.5 * (h + h.T)


def _hessian_one_pattern(theta, mu, sigma, st: RaschStats) -> np.ndarray:
    """:func:`loglik_hessian` for one trial pattern r (every item answered alike: the 0/1 matrix).

    With A = r·e (M, Q) and π (G, Q) the groups' normalised integrands, the θ rows of the groups'
    expected first derivatives are U_θ = −π Aᵀ, so Σ_g c_g (E_πg − Cov) of the θθ block is
    ``A (diag(w) − πᵀ diag(c) π) Aᵀ − diag(r·v·w)`` with w = Σ_g c_g π_g: a Q × Q kernel between
    two products with A, the same matrix as the group-by-group sum."""
    from scipy.special import expit, log_softmax

    m = len(theta)
    x = st.x_nodes
    b = mu + sigma * x
    z = theta[:, None] - b[None, :]
    ex = expit(z)  # (M, Q)
    vv = ex * (1 - ex)
    r0 = st.patterns[0]
    a_ = r0[:, None] * ex
    sp = np.logaddexp(0.0, z)
    f, e, v = r0 @ sp, r0 @ ex, r0 @ vv  # (Q,)
    s, c = st.group_total, st.group_count
    pi = np.exp(log_softmax(st.log_w[None, :] - s[:, None] * b[None, :] - f[None, :], axis=1))  # (G, Q)
    w = c[:, None] * pi
    d = e[None, :] - s[:, None]  # ∂a/∂μ (G, Q)
    wk = w.sum(axis=0)
    wdk = (w * d).sum(axis=0)
    wddk = (w * d**2).sum(axis=0)
    vw = (r0[:, None] * vv) @ wk
    um = (pi * d).sum(axis=1)  # E_πg[∂a/∂μ] (G,)
    us = (pi * d) @ x  # E_πg[∂a/∂σ]
    kern = np.diag(wk) - pi.T @ w  # (Q, Q): diag(w) − πᵀ diag(c) π
    h = np.zeros((m + 2, m + 2))
    h[:m, :m] = (a_ @ kern) @ a_.T
    h[:m, :m][np.diag_indices(m)] -= vw
    # θ–(μ, σ): E-terms minus Σ_g c_g u_θ,g u_(μ,σ),g with u_θ,g = −A π_g
    h[:m, m] = vw - a_ @ wdk + a_ @ (pi.T @ (c * um))
    h[:m, m + 1] = (r0[:, None] * vv) @ (wk * x) - a_ @ (wdk * x) + a_ @ (pi.T @ (c * us))
    h[m, m] = wddk.sum() - v @ wk - c @ um**2
    h[m, m + 1] = wddk @ x - v @ (wk * x) - c @ (um * us)
    h[m + 1, m + 1] = wddk @ x**2 - v @ (wk * x**2) - c @ us**2
    h[m, :m], h[m + 1, :m], h[m + 1, m] = h[:m, m], h[:m, m + 1], h[m, m + 1]
    return 0.5 * (h + h.T)


# ---------------------------------------------------------------------------------- PyTensor
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
