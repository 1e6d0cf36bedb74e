"""The Bradley-Terry model as one PyMC model on pair rows (the twin of :mod:`bayesrank.bt.mle`).

Generative story (one row ``r`` per aggregated pair, ordered pair, cluster-pair or comparison)::

    θ ~ ZeroSumNormal(σ)                       # Σθ = 0 by construction (K−1 free dims)
    α ~ Normal(0, σ_β)                         # position effect (position=True)
    β ~ Normal(0, σ_β)                         dims feature
    η_r = θ_i − θ_j [+ α] [+ X_r β]
    half / drop:  w_r ~ Binomial(n_r, σ(η_r))
    davidson:     λ ~ Normal(0, σ_λ);  (w_i, w_j, t)_r ~ Multinomial(n_r, softmax(η/2, −η/2, λ))

With ``ties="half"`` the observed "wins" are ``w_i + t/2`` out of ``n_r`` (fractional counts are
fine for the Binomial log-density, which is then the half-win likelihood up to a constant; the
same kernel serves outcomes split in shares and importance-weighted counts ``v·C``).
The ZeroSumNormal transform is a linear isometry, so its prior adds ``‖θ‖²/(2σ²)``: the MAP is
exactly the penalised MLE with ``ridge = 1/σ²`` (and ``beta_ridge = 1/σ_β²``) — the frequentist
twin used in the tests. Without features, position effect or clusters the rows are the
aggregated pair counts, so NUTS evaluates the likelihood on ~K² rows, not on every comparison.

MAP and Laplace are computed by Newton's method on the model's own PyTensor log-density in the
unconstrained value space (``theta_zerosum__`` [, ``alpha``, ``beta``, ``log_nu``]); the covariance
is the inverse negative Hessian there, mapped to θ through the (linear) transform.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pymc as pm

from bayesrank.bt.likelihood import tie_model
from bayesrank.compile_mode import optimizer_mode
from bayesrank.data.rows import PairRows
from bayesrank.outputs import stop_if_interrupted

#: Prior scale of θ on the logit scale. 3 logits ≈ a 95% win probability between players one
#: prior SD apart: weakly informative for LLM/sports leaderboards (spreads of 1–4 logits).
DEFAULT_PRIOR_SIGMA = 3.0
#: Prior scale of the Davidson tie parameter log ν (ν = 1: ties as likely as a win at d = 0... up to 1/3).
DEFAULT_TIE_PRIOR_SIGMA = 2.0
#: Prior SD of a feature coefficient and of the position effect: 1 logit per unit (per SD of a
#: standardised feature difference; LMArena's fitted style coefficients are 0.02–0.27): weakly informative.
DEFAULT_BETA_SIGMA = 1.0
#: order of the model's parameters (and value variables): the MLE's φ = (θ, α, β, λ)
PARAMETERS = ("theta", "alpha", "beta", "log_nu")


def _fractional_binomial_logp(value, n, d):
    """``w log σ(d) + (n − w) log σ(−d)``: the Binomial kernel, valid for fractional (half-tie or
    weighted) counts. PyMC's Binomial would cast fractional observations to integers."""
    import pytensor.tensor as pt

    return -value * pt.softplus(-d) - (n - value) * pt.softplus(d)


def _fractional_binomial_dist(n, d, size):
    """Symbolic generator for predictive draws: ``Binomial(round(n), σ(d))`` cast to float, so the
    observed half-win counts keep their fractions. Built from PyMC's own Binomial, it compiles in
    every PyTensor backend (a Python ``random=`` callable would force Numba's object mode)."""
    import pymc as pm
    import pytensor.tensor as pt

    return pm.Binomial.dist(n=pt.round(n).astype("int64"), p=pt.sigmoid(d), size=size).astype("float64")


def pair_labels(counts: PairRows) -> list[str]:
    return [f"{a} vs {b}" for a, b in zip(counts.players[counts.i], counts.players[counts.j])]


def is_pair_table(rows: PairRows) -> bool:
    """One row per unordered pair (the zero-feature aggregate): rows are labelled by their pair."""
    return not (rows.unit or rows.ordered or rows.cluster is not None or rows.n_features)


def build_bt_model(
    counts: PairRows,
    ties: str = "half",
    prior_sigma: float = DEFAULT_PRIOR_SIGMA,
    tie_prior_sigma: float = DEFAULT_TIE_PRIOR_SIGMA,
    mutable: bool = False,
    *,
    position: bool = False,
    beta_sigma: float = DEFAULT_BETA_SIGMA,
) -> pm.Model:
    """PyMC Bradley-Terry model on the rows ``counts`` (named dims ``player``, ``feature``, and
    ``pair``/``pair_obs`` for pair counts or ``battle`` (comparison rows) / ``row`` otherwise).

    ``mutable=True`` puts the counts in ``pm.Data`` containers (``n_obs`` and ``wins_obs`` for
    binary/half ties, ``outcome_counts`` for Davidson) so one compiled model can be refitted to new
    counts on the same rows (simulation-based calibration, coverage studies); every row must then
    have comparisons."""
    import pymc as pm
    import pytensor.tensor as pt

    tm = tie_model(ties)
    if tm.n_extra and counts.fractional:
        from bayesrank.errors import InputError

        raise InputError("ties='davidson' models whole outcomes; these rows split outcomes in shares: use ties='half'")
    labelled = is_pair_table(counts)
    obs_dim = "pair" if labelled else "battle" if counts.unit else "row"
    coords = {"player": [str(p) for p in counts.players],
              obs_dim: pair_labels(counts) if labelled else np.arange(counts.n_rows)}
    if counts.n_features:
        coords["feature"] = list(counts.features)
    c = counts.weighted_counts()
    X = counts.X
    with pm.Model(coords=coords) as model:
        theta = pm.ZeroSumNormal("theta", sigma=prior_sigma, dims="player")
        d = theta[counts.i] - theta[counts.j]
        if position:
            if not counts.ordered:
                from bayesrank.errors import InputError

                raise InputError("a position effect needs ordered rows (build them with position_effect=True)")
            d = d + pm.Normal("alpha", 0.0, beta_sigma)
        if counts.n_features:
            beta = pm.Normal("beta", 0.0, beta_sigma, dims="feature")
            d = d + pt.dot(pt.as_tensor(X), beta)
        if tm.n_extra == 0:
            wi, wj = tm.effective(c)
            n = wi + wj
            keep = n > 0
            if mutable and not keep.all():
                raise ValueError("mutable=True needs every row to have comparisons")
            kept_dim = f"{obs_dim}_obs" if labelled else obs_dim
            if labelled:
                model.add_coord(kept_dim, np.asarray(coords[obs_dim], dtype=object)[keep])
            elif not keep.all():
                model.add_coord(f"{obs_dim}_obs", np.flatnonzero(keep))
                kept_dim = f"{obs_dim}_obs"
            n_obs, wins_obs = n[keep], wi[keep]
            if mutable:
                n_obs = pm.Data("n_obs", n_obs, dims=kept_dim)
                wins_obs = pm.Data("wins_obs", wins_obs, dims=kept_dim)
            pm.CustomDist(
                "wins", n_obs, d[np.flatnonzero(keep)], logp=_fractional_binomial_logp,
                dist=_fractional_binomial_dist, observed=wins_obs, dims=kept_dim,
            )
        else:
            model.add_coord("outcome", ["i_wins", "j_wins", "tie"])
            log_nu = pm.Normal("log_nu", 0.0, tie_prior_sigma)
            logits = pt.stack([0.5 * d, -0.5 * d, pt.broadcast_to(log_nu, d.shape)], axis=-1)
            p = pt.special.softmax(logits, axis=-1)
            obs = pm.Data("outcome_counts", c, dims=(obs_dim, "outcome")) if mutable else c
            pm.Multinomial("outcomes", n=obs.sum(axis=1), p=p, observed=obs, dims=(obs_dim, "outcome"))
    model._bayesrank_ties = ties  # noqa: SLF001 - remembered for summaries
    return model


def parameter_draws(dt, model=None) -> tuple[np.ndarray, list[str]]:
    """(S, P) posterior draws of φ = (θ, α, β, λ) (chains stacked) and the variable names present."""
    post = dt.posterior
    names = [n for n in PARAMETERS if n in post.data_vars]
    parts = []
    for n in names:
        v = post[n]
        other = [dim for dim in v.dims if dim not in ("chain", "draw")]
        arr = v.transpose("chain", "draw", *other).values
        parts.append(arr.reshape(arr.shape[0] * arr.shape[1], -1))
    return np.concatenate(parts, axis=1), names


@dataclass
class LaplaceFit:
    """Mode and Gaussian approximation of a PyMC model's posterior in θ (and λ) coordinates."""

    theta: np.ndarray  # (K,)
    cov: np.ndarray  # (P, P) covariance of (θ[, λ])
    extra: dict  # e.g. {"log_nu": value}
    value_mode: dict  # mode in the unconstrained value space
    value_hessian: np.ndarray  # negative log-density Hessian in value space
    iterations: int
    converged: bool
    gradient_norm: float = float("nan")  # ‖∇ log p‖ in value space at the returned mode
    status: str = ""

    @property
    def params(self) -> np.ndarray:
        """The mode as φ = (θ, α, β, λ) (the order of ``cov``)."""
        return np.concatenate([self.theta, *[np.atleast_1d(self.extra[n]) for n in PARAMETERS[1:] if n in self.extra]])


def compile_flat_logp(model, cheap: bool = False):
    """One compiled function of the flattened value vector ``x``: (log p, ∇ log p, ∇² log p, θ(x)).

    The Hessian uses PyTensor's vectorised Jacobian of the gradient (no scan), and ``θ(x)`` is
    the model's own back-transform of the value variables (``model.unobserved_value_vars``).
    ``cheap=True`` also returns a second function ``x -> (log p, θ(x))`` without derivatives (line
    searches and the linear transform's Jacobian need no Hessian).
    """
    import pytensor
    import pytensor.tensor as pt
    from pytensor.gradient import jacobian
    from pytensor.graph.replace import graph_replace

    point = model.initial_point()
    names = [v.name for v in model.value_vars]
    sizes = [int(np.asarray(point[n]).size) for n in names]
    shapes = [np.shape(point[n]) for n in names]
    x = pt.vector("x")
    parts, o = [], 0
    for s, sh in zip(sizes, shapes):
        parts.append(x[o : o + s].reshape(sh))
        o += s
    replace = dict(zip(model.value_vars, parts))
    theta_expr = next(v for v in model.unobserved_value_vars if v.name == "theta")
    cost, theta = graph_replace([model.logp(), theta_expr], replace, strict=False)
    grad = pytensor.grad(cost, x)
    hess = jacobian(grad, x, vectorize=True)
    compile_mode = optimizer_mode(model)  # no numba compilation on small data (bayesrank.compile_mode)
    fn = pytensor.function([x], [cost, grad, hess, theta], mode=compile_mode)
    x0 = np.concatenate([np.asarray(point[n], dtype=float).ravel() for n in names])
    if cheap:
        return fn, pytensor.function([x], [cost, theta], mode=compile_mode), names, sizes, x0
    return fn, names, sizes, x0


def map_laplace(model, tol: float = 1e-11, max_iter: int = 100) -> LaplaceFit:
    """MAP by damped Newton on the model's log-density (PyTensor gradient and Hessian), then the
    Laplace covariance ``(−∇² log p)⁻¹`` mapped from value space to θ (and ``log_nu``)."""
    fn, fn_value, names, sizes, x = compile_flat_logp(model, cheap=True)
    lp, g, h, _ = fn(x)
    converged, it, status = False, 0, f"no convergence in {max_iter} iterations"
    for it in range(1, max_iter + 1):  # noqa: B007 (the count is reported after the loop)
        step = np.linalg.solve(-h, g)
        t = 1.0
        for _ in range(60):
            cand = x + t * step
            clp = float(fn_value(cand)[0])
            if clp >= lp - 1e-12 * abs(lp):
                break
            t /= 2
        else:  # no ascent possible along the Newton direction: at the mode to machine precision
            converged, status = True, "line search: no further ascent (mode to machine precision)"
            break
        x = cand
        lp, g, h, _ = fn(x)
        if np.max(np.abs(t * step)) < tol:
            converged, status = True, f"Newton step < {tol:g}"
            break
    neg_h = -h
    cov_v = np.linalg.inv(neg_h)
    theta = np.asarray(fn_value(x)[1])
    zname = model.rvs_to_values[model["theta"]].name
    # θ = J z is linear: J from the back-transform of unit vectors (other value vars held at the mode)
    zo = names.index(zname)
    off = int(sum(sizes[:zo]))
    m = sizes[zo]
    base = x.copy()
    base[off : off + m] = 0.0
    theta0 = np.asarray(fn_value(base)[1])
    cols = []
    for k in range(m):
        e = base.copy()
        e[off + k] = 1.0
        cols.append(np.asarray(fn_value(e)[1]) - theta0)
    jac = np.column_stack(cols)
    k_players = jac.shape[0]
    extras = [(n, s, int(sum(sizes[: names.index(n)]))) for n, s in zip(names, sizes) if n != zname]
    full = np.zeros((k_players + sum(s for _, s, _ in extras), len(x)))
    full[:k_players, off : off + m] = jac
    r = k_players
    extra = {}
    for n, s, o in extras:
        full[r : r + s, o : o + s] = np.eye(s)
        extra[n] = float(x[o]) if s == 1 else x[o : o + s].copy()
        r += s
    cov = full @ cov_v @ full.T
    mode = {n: x[int(sum(sizes[:i])) : int(sum(sizes[: i + 1]))] for i, n in enumerate(names)}
    return LaplaceFit(theta=theta, cov=cov, extra=extra, value_mode=mode, value_hessian=neg_h, iterations=it, converged=converged,
                      gradient_norm=float(np.linalg.norm(g)), status=status)


def sample_nuts(
    model,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    seed: int = 0,
    sampler: str = "pymc",
    progressbar: bool = False,
    cores: int | None = None,
    target_accept: float | None = None,
):
    """NUTS draws as an ArviZ ``DataTree`` with a ``log_likelihood`` group (one entry per pair);
    ``target_accept`` None keeps the sampler's default."""
    import pymc as pm

    from bayesrank._multiprocessing import pymc_mp_ctx

    with model:
        kwargs = dict(
            draws=draws, tune=tune, chains=chains, random_seed=seed, progressbar=progressbar,
            nuts_sampler=sampler, cores=cores if cores is not None else min(chains, 2),
            mp_ctx=pymc_mp_ctx(),  # forkserver once JAX's runtime started: forking it may deadlock
        )
        if target_accept is not None:
            kwargs["target_accept"] = float(target_accept)
        dt = pm.sample(**kwargs)
        stop_if_interrupted()  # PyMC returns the draws it has on Ctrl-C: never report a shorter chain
        if "log_likelihood" not in dt.children:
            dt = pm.compute_log_likelihood(dt, model=model, progressbar=False)
    return dt


def posterior_predictive_check(model, dt, counts: PairRows, ties: str, seed: int = 0) -> dict:
    """Observed vs replicated win rates per row (aggregated rows: pairs, ordered pairs, cluster-pairs):
    per-row tail probabilities and the share of rows whose observed rate lies outside the central 95%
    replicated interval (≈ 5% if the model fits)."""
    import pymc as pm

    with model:
        pp = pm.sample_posterior_predictive(dt, random_seed=seed, progressbar=False)
    grp = pp["posterior_predictive"] if "posterior_predictive" in pp.children else pp.posterior_predictive
    tm = tie_model(ties)
    c = counts.weighted_counts()
    if tm.n_extra == 0:
        wi, wj = tm.effective(c)
        n = wi + wj
        keep = n > 0
        rep = np.asarray(grp["wins"]).reshape(-1, int(keep.sum())) / n[keep]
        obs = wi[keep] / n[keep]
    else:
        keep = c.sum(axis=1) > 0
        arr = np.asarray(grp["outcomes"])
        arr = arr.reshape(-1, arr.shape[-2], arr.shape[-1])[:, keep]
        tot = c[keep].sum(axis=1)
        rep = (arr[..., 0] + 0.5 * arr[..., 2]) / tot
        obs = (c[keep, 0] + 0.5 * c[keep, 2]) / tot
    return predictive_summary(obs, rep)


def predictive_summary(obs: np.ndarray, rep: np.ndarray) -> dict:
    """Observed win shares ``obs`` (rows,) against replicated ones ``rep`` (draws, rows): per-row
    two-sided tail probabilities and the share of rows outside the central 95% replicated interval."""
    lo, hi = np.quantile(rep, [0.025, 0.975], axis=0)
    tail = np.minimum((rep >= obs).mean(axis=0), (rep <= obs).mean(axis=0)) * 2
    return {
        "n_pairs": int(len(obs)),
        "share_outside_95": float(np.mean((obs < lo) | (obs > hi))),
        "min_tail_prob": float(tail.min()),
        "observed_rate": obs,
        "replicated_mean": rep.mean(axis=0),
        "replicated_lower": lo,
        "replicated_upper": hi,
    }
