"""The item-response model: Bradley–Terry between models and items (Rasch), in PyMC, and the fits.

    logit P(model m solves item i) = θ_m − b_i,   θ ~ ZeroSumNormal(σ_θ),   b_i ~ Normal(μ, σ),
    μ ~ Normal(0, σ_μ),   σ ~ HalfNormal(σ_σ)

Each item is a "player" a model meets once (or r times: repeated measures are r binomial trials,
k successes). The difficulties integrate out (:mod:`bayesrank.items.likelihood`: an item enters
only through its total and trial pattern, at most M + 1 one-dimensional integrals for 0/1 scores),
so the posterior is over (θ, μ, σ) only.

**Coordinates.** The fits work in PyMC's unconstrained coordinates of :func:`build_rasch_model`:
``theta_zerosum__`` (M − 1; θ = the zero-sum transform's isometry of it, so the ZeroSumNormal
prior is N(0, σ_θ²) on each coordinate), μ, and log σ. There the posterior is close to
isotropic after scaling each coordinate (at 100 models × 10,000 items the correlation matrix
has eigenvalues 0.86–1.22), which is what a diagonal mass matrix needs.

* :func:`fit_laplace`: the posterior mode (trust-region Newton with the analytic gradient and
  Hessian) and the Gaussian with the inverse negative Hessian (``review --fast``).
* :func:`fit_nuts`: NUTS (nutpie) on the same log density, a numba kernel for its value and
  gradient (equal to the PyMC model's to rounding: tested) that nutpie calls as a C function
  (:func:`bayesrank.items.likelihood.compiled_density`: no Python, no GIL per call); ``sampler="pymc"`` samples
  :func:`build_rasch_model` with PyMC's own NUTS instead (the reference; slower). The quadrature
  grid is chosen for the σ range the Laplace fit allows (σ̂·e^{8·sd(log σ)}), and the draws are
  checked against it.

Fractional scores that are not counts (a grade in [0, 1]) use the Bernoulli kernel with y in place
of k — a quasi-likelihood (as the Bradley–Terry model's half-wins): the θ order it gives is the
order of the models' expected scores, but its posterior spread is not calibrated for such data.

Rasch is monotone: for every item population, a larger θ means a larger expected score, so
P(θ_A > θ_B) is the posterior probability that A's expected score on the benchmark's item
population exceeds B's — the estimand of the frequentist mean-score test.

:func:`build_full_model` is the same Rasch model with every b_i sampled (the reference the collapsed
posterior is tested against). ``twopl=True`` in :func:`fit_laplace` / :func:`fit_nuts`: the 2PL
model with an item discrimination a_i, (a_i, b_i) integrated out per response pattern
(:mod:`bayesrank.items.twopl`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesrank.items.data import ItemScores
from bayesrank.items.likelihood import (  # noqa: F401  (re-exported: the model's statistics)
    SIGMA_MAX,
    X_RANGE,
    RaschStats,
    collapsed_loglik_pt,
    every_total,
    group_loglik,
    loglik,
    loglik_hessian,
    quadrature,
    sufficient,
)

PRIOR = {"theta": 2.5, "mu": 2.5, "sigma": 2.5}
LOO_MAX_ITEMS = 2000  # item-level PSIS-LOO costs ~1 ms of CPU per item (ArviZ's Pareto smoothing; 12 s at 10,000): skipped above
SIGMA_SDS = 8.0  # the NUTS grid covers σ up to the Laplace mode × e^{8 sd(log σ)}
DRAWS, TUNE = 1000, 300  # NUTS per chain (nutpie's defaults): 500 draws left the max folded R-hat at 1.010–1.017 at 100 × 10,000


# ---------------------------------------------------------------------------------- coordinates
def zerosum(z: np.ndarray) -> np.ndarray:
    """θ (…, M) from PyMC's ``theta_zerosum__`` coordinates z (…, M − 1): the ZeroSumTransform's
    backward map, an isometry onto the sum-zero subspace (|θ| = |z|)."""
    z = np.asarray(z, dtype=float)
    n = z.shape[-1] + 1
    s = z.sum(axis=-1, keepdims=True)
    norm = s / (np.sqrt(n) + n)
    return np.concatenate([z - norm, -s / np.sqrt(n)], axis=-1)


def zerosum_inverse(theta: np.ndarray) -> np.ndarray:
    """z from a sum-zero θ (the transform's forward map)."""
    theta = np.asarray(theta, dtype=float)
    n = theta.shape[-1]
    norm = -theta[..., -1:] * np.sqrt(n) / (np.sqrt(n) + n)
    return theta[..., :-1] + norm


def _zerosum_grad(g_theta: np.ndarray) -> np.ndarray:
    """The chain rule through :func:`zerosum`: ∂/∂z from ∂/∂θ."""
    n = len(g_theta)
    return g_theta[:-1] - g_theta[:-1].sum() / (np.sqrt(n) + n) - g_theta[-1] / np.sqrt(n)


def zerosum_matrix(m: int) -> np.ndarray:
    """B (M, M − 1) with θ = B z."""
    return zerosum(np.eye(m - 1)).T


def jacobian_congruence(h: np.ndarray, sigma: float) -> np.ndarray:
    """``Jᵀ h J`` for J = ∂(θ, μ, σ)/∂(z, μ, log σ) (h: (M + 2)², the result (M + 1)²) in O(M²): the
    zero-sum map is ``B = P − u 1ᵀ`` (P = the first M − 1 unit columns, u = (α, …, α, β), α = 1/(√M + M),
    β = 1/√M), so ``BᵀAB = A₁₁ − w1ᵀ − 1wᵀ + (uᵀAu) 11ᵀ`` with w the first M − 1 entries of Au; μ maps
    to itself and σ = e^{log σ} scales its row and column by σ."""
    m = h.shape[0] - 2
    u = np.full(m, 1.0 / (np.sqrt(m) + m))
    u[-1] = 1.0 / np.sqrt(m)
    a = h[:m, :m]
    au = a @ u
    w = au[:-1]
    out = np.empty((m + 1, m + 1))
    out[: m - 1, : m - 1] = a[:-1, :-1]
    out[: m - 1, : m - 1] -= w[:, None]
    out[: m - 1, : m - 1] -= w[None, :]
    out[: m - 1, : m - 1] += u @ au
    scale = np.array([1.0, sigma])
    c = h[:m, m:]
    out[: m - 1, m - 1:] = (c[:-1] - (u @ c)[None, :]) * scale
    out[m - 1:, : m - 1] = out[: m - 1, m - 1:].T
    out[m - 1:, m - 1:] = h[m:, m:] * np.outer(scale, scale)
    return out


def _unpack(x, m):
    return zerosum(x[: m - 1]), float(x[m - 1]), float(np.exp(x[m]))


def log_posterior(x, st: RaschStats, prior=PRIOR, grad: bool = False, hess: bool = False):
    """Log posterior (up to a constant) in the coordinates (z, μ, log σ) of the PyMC model, with the
    log-σ Jacobian; with ``grad`` also its gradient, with ``hess`` also its Hessian."""
    m = len(st.players)
    theta, mu, sigma = _unpack(x, m)
    z = x[: m - 1]
    st_, sm, ss = prior["theta"] ** 2, prior["mu"] ** 2, prior["sigma"] ** 2
    lp_prior = -0.5 * (z @ z) / st_ - 0.5 * mu**2 / sm - 0.5 * sigma**2 / ss + x[m]
    if not grad and not hess:
        return loglik(theta, mu, sigma, st) + lp_prior
    ll, gt, gm, gs = loglik(theta, mu, sigma, st, grad=True)
    g = np.empty(m + 1)
    g[: m - 1] = _zerosum_grad(gt) - z / st_
    g[m - 1] = gm - mu / sm
    g[m] = (gs - sigma / ss) * sigma + 1.0
    if not hess:
        return ll + lp_prior, g
    hx = jacobian_congruence(loglik_hessian(theta, mu, sigma, st), sigma)
    hx[m, m] += gs * sigma  # second derivative of σ = e^u
    hx[: m - 1, : m - 1] -= np.eye(m - 1) / st_
    hx[m - 1, m - 1] -= 1.0 / sm
    hx[m, m] -= 2.0 * sigma**2 / ss
    return ll + lp_prior, g, hx


# ---------------------------------------------------------------------------------- fits
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


def _stats(data_or_stats) -> RaschStats:
    return data_or_stats if isinstance(data_or_stats, RaschStats) else sufficient(data_or_stats)


def _start(st: RaschStats) -> np.ndarray:
    """Starting point: θ from the logits of the models' mean scores, μ = −their mean, σ = 1."""
    n = st.n_items
    p_bar = np.clip(st.totals / (n * st.patterns.mean(axis=0).clip(1e-9)), 1e-3, 1 - 1e-3)
    logit = np.log(p_bar / (1 - p_bar))
    return np.concatenate([zerosum_inverse(logit - logit.mean()), [-logit.mean()], [0.0]])


NEWTON_TOL = 1e-9  # Newton stops when the mode is located to this many posterior SDs (the decrement)
CONVERGED_TOL = 1e-6  # ... and the fit counts as converged below this
LAPLACE_SIGMA_MAX = 4.0  # the mode is found on the grid accurate for σ ≤ this, refined while σ̂ > half of it


def posterior_mode(st: RaschStats, prior=PRIOR, x0=None, max_iter: int = 100) -> tuple[np.ndarray, np.ndarray, dict]:
    """(mode x, Hessian of the log posterior there, info): Newton's method with the analytic gradient
    and Hessian from :func:`_start` (or ``x0``), a backtracking (Armijo) line search, and a Levenberg
    shift where −H is not positive definite. It stops when the Newton decrement
    ``λ = √(gᵀ(−H)⁻¹g)`` — the gradient's norm in the coordinates where the Laplace posterior is
    N(0, I), i.e. the distance to the mode in posterior SDs — is ≤ :data:`NEWTON_TOL`, or when it
    stops falling (rounding). Scale-free: a gradient norm grows with the number of items, λ does not.
    ``info``: iterations, decrement, status."""
    x = _start(st) if x0 is None else np.asarray(x0, dtype=float).copy()
    lp, g, h = log_posterior(x, st, prior, hess=True)
    best, stalled, status, it = np.inf, 0, "iteration limit", 0
    dec = np.inf
    while it < max_iter:
        it += 1
        shift, neg = 0.0, -h
        scale = float(np.abs(np.diag(neg)).max()) or 1.0
        while True:
            try:
                chol = np.linalg.cholesky(neg + shift * np.eye(len(x)) if shift else neg)
                break
            except np.linalg.LinAlgError:
                shift = max(1e-8 * scale, 10 * shift)
        step = _cho_solve(chol, g)
        slope = float(g @ step)
        dec = float(np.sqrt(max(slope, 0.0)))
        if shift == 0.0:
            if dec <= NEWTON_TOL:
                status = "converged: Newton decrement below tolerance"
                break
            stalled = stalled + 1 if dec >= best else 0
            best = min(best, dec)
            if stalled >= 3:
                status = "stopped: the Newton decrement no longer falls (rounding)"
                break
        t = 1.0
        while True:
            xn = x + t * step
            lpn = _trial_log_posterior(xn, st, prior)
            # below rounding of the log posterior the full Newton step is taken (quadratic convergence)
            if np.isfinite(lpn) and (lpn >= lp + 1e-4 * t * slope or 0.5 * slope < 1e-11 * (1.0 + abs(lp))):
                break
            t *= 0.5
            if t < 1e-12:
                status = "line search failed"
                break
        if status == "line search failed":
            break
        x = xn
        lp, g, h = log_posterior(x, st, prior, hess=True)
    return x, h, {"nit": it, "decrement": dec, "message": status}


def _trial_log_posterior(x, st: RaschStats, prior) -> float:
    """The log posterior at a line-search trial point, −∞ where it is not representable (a Newton
    step far into a flat direction can put log σ where e^{log σ} or σ² overflows): the step is then
    halved like any other step that does not increase the log posterior."""
    with np.errstate(over="ignore", invalid="ignore"):
        try:
            lp = float(log_posterior(x, st, prior))
        except OverflowError:
            return -np.inf
    return lp if np.isfinite(lp) else -np.inf


def _cho_solve(chol: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(L Lᵀ)⁻¹ b`` from the lower Cholesky factor L (two triangular solves)."""
    from scipy.linalg import solve_triangular

    y = solve_triangular(chol, b, lower=True, check_finite=False)
    return solve_triangular(chol, y, lower=True, trans="T", check_finite=False)


def laplace_grid(st: RaschStats, sigma: float | None = None) -> RaschStats:
    """The statistics on the grid for the mode search: accurate for σ ≤ max(:data:`LAPLACE_SIGMA_MAX`,
    4σ) (never finer than ``st``'s own). Where σ is at most half a grid's bound the trapezoid rule's
    relative error is below ``2 exp(−8π²)`` ≈ 1e-34 (:func:`quadrature`): the same numbers as the
    default grid to rounding, on fewer nodes when many models make that grid fine."""
    top = LAPLACE_SIGMA_MAX if sigma is None else max(LAPLACE_SIGMA_MAX, 4.0 * sigma)
    return st.regrid(top) if top < st.sigma_max else st


def fit_laplace(data_or_stats, *, seed: int = 0, draws: int = 4000, prior=PRIOR, twopl: bool = False) -> RaschFit:
    """Posterior mode and the Laplace approximation: Gaussian draws with the inverse of the negative
    (analytic) Hessian in the coordinates (z, μ, log σ) (:func:`posterior_mode`, on the grid of
    :func:`laplace_grid`: refined until σ̂ is at most half its bound). Converged when −H is positive
    definite and the Newton decrement is ≤ :data:`CONVERGED_TOL` (reported as the gradient norm: the
    norm in the posterior's own metric). ``twopl``: the 2PL model
    (:func:`bayesrank.items.twopl.fit_laplace`; needs the data, not the statistics)."""
    from bayesrank.protocol import Diagnostics

    if twopl:
        from bayesrank.items import twopl as _twopl

        return _twopl.fit_laplace(data_or_stats, seed=seed, draws=draws, prior=prior)

    st = _stats(data_or_stats)
    m = len(st.players)
    grid = laplace_grid(st)
    x, h, res = posterior_mode(grid, prior)
    while np.exp(x[m]) > grid.sigma_max / 2 and grid.sigma_max < st.sigma_max:
        grid = laplace_grid(st, float(np.exp(x[m])))
        x, h, res = posterior_mode(grid, prior, x0=x)
    g = log_posterior(x, grid, prior, grad=True)[1]
    gn = float(np.linalg.norm(g))
    try:
        chol = np.linalg.cholesky(-h)
        ok = True
        cov = _cho_solve(chol, np.eye(m + 1))
    except np.linalg.LinAlgError:
        ok = False
        cov = np.linalg.pinv(-h)
    cov = 0.5 * (cov + cov.T)
    rng = np.random.default_rng(seed)
    zs = rng.multivariate_normal(x, cov, size=draws, method="cholesky" if ok else "eigh")
    dec = float(res["decrement"]) if ok else float("inf")
    diag = Diagnostics.optimizer("laplace (collapsed Rasch)", ok and dec <= CONVERGED_TOL, dec, iterations=int(res["nit"]),
                                 status=str(res["message"]), gradient_tol=CONVERGED_TOL, gradient_norm_raw=gn,
                                 grid={"nodes": int(len(grid.x_nodes)), "sigma_max": float(grid.sigma_max)})
    mode_theta, mode_mu, mode_sigma = _unpack(x, m)
    return RaschFit(st.players, zerosum(zs[:, : m - 1]), zs[:, m - 1], np.exp(zs[:, m]), "laplace", diag,
                    mode=mode_theta, extra={"mu_mode": mode_mu, "sigma_mode": mode_sigma, "x_mode": x, "cov": cov})


NUTS_MAX_MODELS = 1000  # above this many models a review uses fit_laplace_psis instead of NUTS (docs/scale.md)
PSIS_DRAWS = 4000  # proposal draws of the Laplace + PSIS fit (and as many resampled)


def log_posterior_draws(xs: np.ndarray, st: RaschStats, prior=PRIOR, threads: int = 2) -> np.ndarray:
    """The log posterior (:func:`log_posterior`) at each row of ``xs`` (n, M + 1): the compiled
    kernel (it releases the GIL) on ``threads`` threads."""
    from concurrent.futures import ThreadPoolExecutor

    from bayesrank.items.likelihood import log_posterior_function

    logp = log_posterior_function(st, prior)
    rows = [np.ascontiguousarray(x, dtype=float) for x in xs]
    if threads <= 1 or len(rows) < 2:
        return np.array([logp(x)[0] for x in rows])
    with ThreadPoolExecutor(threads) as pool:
        return np.array([lp for lp, _ in pool.map(logp, rows, chunksize=64)])


def fit_laplace_psis(data_or_stats, *, seed: int = 0, draws: int = PSIS_DRAWS, prior=PRIOR,
                     laplace: RaschFit | None = None) -> RaschFit:
    """The Laplace approximation corrected and checked by Pareto-smoothed importance sampling
    (:mod:`bayesrank.stats.laplace_psis`): ``draws`` Gaussian draws in (z, μ, log σ), their
    importance ratios against the collapsed posterior (on the grid of :func:`nuts_grid`, or one
    covering every drawn σ), the Pareto k̂, and as many draws resampled with the PSIS weights.
    Converged when the mode is (:func:`fit_laplace`) and k̂ ≤ min(1 − 1/log₁₀ S, 0.7). The
    stand-in for NUTS where NUTS is too slow (:data:`NUTS_MAX_MODELS`)."""
    import dataclasses

    from bayesrank.stats.laplace_psis import laplace_psis

    st = _stats(data_or_stats)
    m = len(st.players)
    laplace = fit_laplace(st, seed=seed, prior=prior) if laplace is None else laplace
    grids = []

    def log_density(xs):
        grids.append(covering_grid(st, nuts_grid(st, laplace), float(np.exp(xs[:, m].max()))))
        return log_posterior_draws(xs, grids[-1], prior)

    kept, _, check = laplace_psis(log_density, laplace.extra["x_mode"], laplace.extra["cov"], n_draws=draws, seed=seed)
    grid = grids[-1]
    base = laplace.diagnostics
    msgs = tuple(base.messages) + (() if check.ok else (f"laplace + PSIS: {check.line()}",))
    diag = dataclasses.replace(base, method="laplace + PSIS (collapsed Rasch)", converged=base.converged and check.ok,
                               messages=msgs, extra={**base.extra, "psis": check.to_dict(),
                                                     "psis_grid": {"nodes": int(len(grid.x_nodes)),
                                                                   "sigma_max": float(grid.sigma_max)}})
    extra = {**(laplace.extra or {}), "psis": check}
    return RaschFit(st.players, zerosum(kept[:, : m - 1]), kept[:, m - 1], np.exp(kept[:, m]), "laplace + PSIS", diag,
                    mode=laplace.mode, extra=extra)


def covering_grid(st: RaschStats, grid: RaschStats, sigma_top: float) -> RaschStats:
    """``grid`` when it is accurate up to ``sigma_top``, else the default grid, or one accurate up to
    2 × ``sigma_top`` when the default grid is not."""
    if sigma_top <= grid.sigma_max:
        return grid
    return st if sigma_top <= st.sigma_max else st.regrid(2 * sigma_top)


def nuts_grid(st: RaschStats, laplace: RaschFit) -> RaschStats:
    """The statistics on the coarsest grid accurate for σ up to the Laplace mode × e^{8 sd(log σ)}
    (never finer than the default grid's)."""
    m = len(st.players)
    sd_u = float(np.sqrt(laplace.extra["cov"][m, m]))
    top = laplace.extra["sigma_mode"] * np.exp(SIGMA_SDS * sd_u)
    return st.regrid(top) if top < st.sigma_max else st


def fit_nuts(data_or_stats, *, seed: int = 0, draws: int = DRAWS, tune: int = TUNE, chains: int = 4,
             prior=PRIOR, target_accept: float = 0.8, loo: bool = True, sampler: str = "nutpie",
             laplace: RaschFit | None = None, stats: RaschStats | None = None, progress=None,
             twopl: bool = False) -> RaschFit:
    """NUTS on the collapsed model, with diagnostics (R-hat, ESS, divergences) and PSIS-LOO over
    items (:func:`loo_items`).

    ``sampler="nutpie"`` (default): nutpie on :func:`log_posterior` (the numba kernel as a C-callable
    density, :func:`bayesrank.items.likelihood.compiled_density`), chains started at
    draws of the Laplace approximation (``laplace``, fitted when not given), on the grid of
    :func:`nuts_grid`; if a draw of σ leaves that grid's range the chains are re-run on the default
    grid. ``sampler="pymc"``: PyMC's NUTS on :func:`build_rasch_model`. ``stats``: the data's
    :func:`sufficient` statistics when already computed. ``twopl``: the 2PL model
    (:func:`bayesrank.items.twopl.fit_nuts`; ``stats`` then its statistics; nutpie only)."""
    from bayesrank.protocol import Diagnostics

    if twopl:
        from bayesrank.items import twopl as _twopl

        if sampler != "nutpie":
            raise ValueError("the 2PL model is sampled by nutpie only")
        return _twopl.fit_nuts(data_or_stats, seed=seed, draws=draws, tune=tune, chains=chains, prior=prior,
                               target_accept=target_accept, laplace=laplace, stats=stats, progress=progress, loo=loo)

    data = None if isinstance(data_or_stats, RaschStats) else data_or_stats
    st = stats if stats is not None else _stats(data_or_stats)
    m = len(st.players)
    extra = {}
    if sampler == "pymc":
        import pymc as pm

        from bayesrank._multiprocessing import pymc_mp_ctx
        from bayesrank.outputs import stop_if_interrupted

        with build_rasch_model(st, prior):
            idata = pm.sample(draws=draws, tune=tune, chains=chains, random_seed=seed, progressbar=False,
                              target_accept=target_accept, compute_convergence_checks=False, nuts_sampler="pymc",
                              cores=min(chains, 2), mp_ctx=pymc_mp_ctx())
        stop_if_interrupted()
        method = "nuts (PyMC, collapsed Rasch)"
    elif sampler == "nutpie":
        laplace = fit_laplace(st, seed=seed, prior=prior) if laplace is None else laplace
        grid = nuts_grid(st, laplace)
        idata = _nutpie(grid, laplace, prior, seed, draws, tune, chains, target_accept, progress)
        top = float(idata["posterior"]["sigma"].max())
        if top > grid.sigma_max:
            extra["regrid"] = {"sigma_max_drawn": top, "grid_sigma_max": grid.sigma_max}
            grid = covering_grid(st, grid, top)
            idata = _nutpie(grid, laplace, prior, seed, draws, tune, chains, target_accept, progress)
        extra["grid"] = {"nodes": int(len(grid.x_nodes)), "sigma_max": grid.sigma_max}
        method = "nuts (nutpie, collapsed Rasch)"
    else:
        raise ValueError(f"sampler must be 'nutpie' or 'pymc', got {sampler!r}")
    post = idata["posterior"]
    theta = post["theta"].transpose("chain", "draw", "player").values.reshape(-1, m)
    mu, sigma = post["mu"].values.ravel(), post["sigma"].values.ravel()
    if loo and data is not None and data.n_items <= LOO_MAX_ITEMS:
        extra["loo"] = loo_items(theta, mu, sigma, data, st, chains=chains)
    diag = Diagnostics.sampler(method, idata, var_names=["theta", "mu", "sigma"], **extra)
    return RaschFit(st.players, theta, mu, sigma, "nuts", diag, idata=idata, extra=extra)


def chain_start(laplace: RaschFit, m: int):
    """(init(seed): a draw of the Laplace approximation, expand(x): θ, μ, σ) for NUTS in (z, μ, log σ)."""
    x_mode, cov = laplace.extra["x_mode"], laplace.extra["cov"]
    try:
        chol = np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        chol = np.diag(np.sqrt(np.clip(np.diag(cov), 1e-12, None)))

    def init(s):
        return x_mode + chol @ np.random.default_rng(s).standard_normal(m + 1)

    def expand(x):
        theta, mu, sigma = _unpack(x, m)
        return {"theta": theta, "mu": np.asarray(mu), "sigma": np.asarray(sigma)}

    return init, expand


def _nutpie(st: RaschStats, laplace: RaschFit, prior, seed, draws, tune, chains, target_accept, progress):
    from bayesrank.stats.nuts import sample_logp

    m = len(st.players)
    init, expand = chain_start(laplace, m)
    from bayesrank.items.likelihood import compiled_density

    return sample_logp(compiled_density(st, prior), m + 1, expand,
                       {"theta": (m,), "mu": (), "sigma": ()}, init=init, draws=draws, tune=tune, chains=chains,
                       seed=seed, target_accept=target_accept, coords={"player": [str(p) for p in st.players]},
                       dims={"theta": ("player",)}, progress=progress, label="NUTS (item-response model)")


# ---------------------------------------------------------------------------------- PyMC
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


def build_full_model(data: ItemScores, prior=PRIOR):
    """The uncollapsed Rasch model with every difficulty b_i (dims ``player``, ``item``): Binomial on
    the trials (0/1 scores: Bernoulli); the reference for the collapsed model (same posterior of θ, μ, σ:
    tests/items/test_full_model.py), for small benchmarks."""
    import pymc as pm

    k = data.successes if data.successes is not None else data.scores
    with pm.Model(coords={"player": [str(m) for m in data.models], "item": [str(i) for i in data.items]}) as model:
        theta = pm.ZeroSumNormal("theta", sigma=prior["theta"], dims="player")
        mu = pm.Normal("mu", 0.0, prior["mu"])
        sigma = pm.HalfNormal("sigma", prior["sigma"])
        b = pm.Normal("b", mu, sigma, dims="item")
        eta = theta[:, None] - b[None, :]
        if data.successes is not None:
            pm.Binomial("y", n=data.trials, logit_p=eta, observed=k, dims=("player", "item"))
        else:
            pm.Potential("y", (k * eta - pm.math.log1pexp(eta)).sum())
    return model


# ---------------------------------------------------------------------------------- checks
def loo_items(theta, mu, sigma, data: ItemScores, st: RaschStats | None = None, chains: int = 1,
              max_draws: int = 500) -> dict:
    """PSIS-LOO leaving one item out: item i's marginal log-likelihood is ``θ·k_i + log I_g(i)``
    (+ its binomial constant; b_i integrated out), from up to ``max_draws`` evenly thinned draws.
    elpd, SE, p_loo, max Pareto k and the number of items with k > 0.7."""
    st = sufficient(data) if st is None else st
    th, m_, s_ = thin_for_loo(theta, mu, sigma, max_draws)
    k = (data.successes if data.successes is not None else data.scores).astype(float)
    lg = np.stack([group_loglik(th[j], m_[j], s_[j], st) for j in range(len(th))])
    return psis_items(th @ k + lg[:, st.item_group] + st.item_const[None, :], m_, chains)


def thin_for_loo(theta, mu, sigma, max_draws: int = 500):
    """Up to ``max_draws`` evenly thinned draws of (θ, μ, σ)."""
    step = max(1, len(theta) // max_draws)
    return theta[::step], mu[::step], sigma[::step]


def psis_items(ll: np.ndarray, mu: np.ndarray, chains: int = 1) -> dict:
    """PSIS-LOO (ArviZ) of the pointwise item log-likelihoods ``ll`` (draws × items): elpd, SE, p_loo,
    max Pareto k and the number of items with k > 0.7 (a NaN k counted as unreliable)."""
    import arviz as az
    import xarray as xr

    s = len(ll)
    chains = chains if s % chains == 0 else 1
    dt = xr.DataTree.from_dict({
        "posterior": xr.Dataset({"mu": (("chain", "draw"), mu.reshape(chains, -1))}),
        "log_likelihood": xr.Dataset({"items": (("chain", "draw", "item"), ll.reshape(chains, s // chains, -1))}),
    })
    res = az.loo(dt, pointwise=True)
    pk = np.asarray(res.pareto_k).ravel()
    return {"elpd": float(res.elpd), "se": float(res.se), "p_loo": float(res.p),
            "pareto_k_max": float(np.nanmax(pk)), "n_pareto_k_gt_0.7": int(np.sum(~(pk <= 0.7))),  # NaN k: unreliable
            "n_draws": int(s)}


def total_distribution(theta, mu, sigma, st: RaschStats) -> np.ndarray:
    """P(an item drawn from N(μ, σ) is solved by exactly s of the M models), s = 0..M (0/1 scores):
    the Poisson-binomial law of the total given b (dynamic programming over the models) integrated
    over b with the model's quadrature."""
    from scipy.special import expit, softmax

    theta = np.atleast_2d(theta)  # (D, M): several draws at once
    mu, sigma = np.atleast_1d(mu), np.atleast_1d(sigma)
    if len(st.patterns) == 1 and (st.patterns == 1).all():
        return _total_law_rasch(theta, mu, sigma, st)
    b = mu[:, None] + sigma[:, None] * st.x_nodes[None, :]  # (D, Q)
    return total_law(expit(theta[:, :, None] - b[:, None, :]), softmax(st.log_w))


def _total_law_rasch(theta, mu, sigma, st: RaschStats) -> np.ndarray:
    """:func:`total_distribution` for one trial per model and item, in O(M² + MQ) per draw: given b,
    ``P(total = s) = e^{−sb} γ_s(e^θ) / Π_m (1 + e^{θ_m − b})`` with γ_s the elementary symmetric
    polynomial of order s of the e^{θ_m} (the Rasch model's conditional likelihood), so integrated
    over b with the quadrature ``π_s = γ_s I_s / Σ_q w_q``, I_s the collapsed likelihood's integral
    for an item of total s (:func:`group_loglik` of :func:`every_total`) — node by node the same
    sum as the dynamic programme of :func:`total_law`. log γ by the recursion
    γ_s ← γ_s + e^{θ_j} γ_{s−1} in logs (every term positive: stable)."""
    from scipy.special import logsumexp

    d, m = theta.shape
    full = every_total(st)
    lg = np.full((d, m + 1), -np.inf)
    lg[:, 0] = 0.0
    for j in range(m):
        lg[:, 1:j + 2] = np.logaddexp(lg[:, 1:j + 2], lg[:, : j + 1] + theta[:, j : j + 1])
    li = np.stack([group_loglik(theta[k], mu[k], sigma[k], full) for k in range(d)])
    out = np.exp(lg + li - logsumexp(st.log_w))
    return out[0] if d == 1 else out


def total_law(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Σ_q w_q · PoissonBinomial(p[:, :, q]) — the law of the number of successes s = 0..M when model m
    succeeds with probability p[d, m, q] at node q (dynamic programming over the models); (D, M + 1),
    or (M + 1,) for one draw."""
    f = np.zeros((p.shape[0], p.shape[2], p.shape[1] + 1))
    f[:, :, 0] = 1.0
    for m in range(p.shape[1]):
        q = p[:, m, :, None]
        f[:, :, 1:] = f[:, :, 1:] * (1 - q) + f[:, :, :-1] * q
        f[:, :, 0] *= 1 - p[:, m, :]
    out = np.einsum("q,dqs->ds", w, f)
    return out[0] if out.shape[0] == 1 else out


def ppc_item_totals(fit: RaschFit, data: ItemScores, n_draws: int = 100, seed: int = 0,
                    stats: RaschStats | None = None, law=None) -> dict:
    """Posterior predictive check of how many models solve an item (0/1 scores): for each of
    ``n_draws`` posterior draws of (θ, μ, σ), the exact law π of an item's total s = 0..M
    (:func:`total_distribution`), and a replicated histogram of N new items ~ Multinomial(N, π).
    Reported: the share of totals whose observed item count lies outside the central 95% of the
    replicated counts, and the posterior predictive p-value of the χ² distance to N·π. ``stats``: the
    statistics whose quadrature grid to use (accurate for the draws' σ; default :func:`sufficient`'s);
    ``law``: the total's law (default :func:`total_distribution`; the 2PL's is
    :func:`bayesrank.items.twopl.total_distribution`, with its statistics)."""
    rng = np.random.default_rng(seed)
    m, n = data.scores.shape
    st = sufficient(data) if stats is None else stats
    law = total_distribution if law is None else law
    idx = rng.choice(len(fit.draws), size=min(n_draws, len(fit.draws)), replace=False)
    obs = np.bincount(np.rint(data.scores.sum(axis=0)).astype(int), minlength=m + 1)
    reps = np.empty((len(idx), m + 1))
    chi_obs = np.empty(len(idx))
    chi_rep = np.empty(len(idx))
    pis = np.concatenate([np.atleast_2d(law(fit.draws[c], fit.mu[c], fit.sigma[c], st))
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
