"""HJA as a PyMC model in which every identification condition holds by construction.

Free variables (value space) → identified parameters (see ``models/hja.md`` for the argument):

- ``mu`` ~ ZeroSumNormal(σ_μ) over ``player``: ``Σμ = 0``.
- ``gamma_dev`` ~ ZeroSumNormal(σ_γ) over ``judge``; ``gamma = 1 + gamma_dev``: ``Σγ = K``.
- ``V_raw`` ~ Normal(0, 1) (item × component); project onto the orthogonal complement of
  ``[1, μ]`` and orthonormalise by Cholesky–Gram–Schmidt (``Q = Z L⁻ᵀ``, ``LLᵀ = ZᵀZ``): columns of
  ``V`` are centred, orthonormal and orthogonal to μ. Gaussian ``V_raw`` makes ``V`` Haar-uniform.
- ``U_dir_raw`` ~ Normal(0, 1) (judge × component); centre over judges and orthonormalise: ``P``.
- ``s_increment`` ~ HalfNormal(σ_s); ``s_c = Σ_{l ≥ c} s_increment_l``: positive, decreasing.
- ``U = P diag(s)``: judge rows sum to zero, orthogonal columns with norms ``s`` (ordered).
- sign convention: column c of ``(U, V)`` is multiplied by ``sign(V_{a_c, c})`` (anchor item ``a_c``)
  so that ``V_{a_c, c} > 0``; the product ``U Vᵀ`` (hence the likelihood) is unchanged, so the raw
  posterior's 2^r sign modes all fold onto one identified representative.

Likelihood: the observed variable ``wins`` (dim ``cell`` = one (judge, pair) cell), a ``CustomDist``
whose log-density is the binomial kernel ``y log σ(η) + (n − y) log σ(−η)`` — valid for fractional
half-tie counts ``y = wins + ties/2``, which PyMC's Binomial would round — and whose random generator
is a symbolic ``Binomial(round(n), σ(η))`` graph (compiles in every backend; a replicated cell has no
ties). So the fit has ``log_likelihood`` and ``posterior_predictive`` groups: PSIS-LOO and posterior
predictive checks work as for any PyMC model (:mod:`bayesrank.hja.checks`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from bayesrank.compile_mode import optimizer_mode
from bayesrank.hja.anchor import HJAParams, constraint_violations, sign_anchors
from bayesrank.hja.data import JudgePairCounts
from bayesrank.outputs import stop_if_interrupted


def _orthonormalise(Z):
    """Cholesky–Gram–Schmidt: ``(Z L⁻ᵀ, L)`` with ``L Lᵀ = ZᵀZ`` (Q factor of a QR with positive diagonal)."""
    L = pt.linalg.cholesky(Z.T @ Z)
    return pt.linalg.solve_triangular(L, Z.T, lower=True).T, L


#: Concentration m of the radial (Gram–Schmidt) nuisance: the log density of the triangular factor L is
#: ``m·Σ_c (d − c) log L_cc − m‖L‖²/2`` (mode ``L = diag(√(d − c))``, sd ≈ 1/√(2m)). m = 1 is the plain
#: Normal prior + Bartlett term (default). The identified parameters' posterior does not depend on m.
#: Pinning the radius (m = 100) was tried as a reparameterisation and is slower: the tight radial
#: direction is not axis-aligned, so a diagonal mass matrix cannot absorb it and NUTS needs ~2× the
#: leapfrog steps per draw (benchmarks/bench_hja.py, docs/hja.md).
RADIAL_CONCENTRATION = 1.0


def _bartlett_radius(L, dim: int, r: int, concentration: float = 1.0):
    """``m·Σ_c (dim − c)·log L_cc − (m − 1)‖L‖²_F/2`` (c = 0..r−1; the Normal(0, 1) prior of the raw variable
    supplies the remaining ``−‖L‖²/2``): a Wishart/Bartlett-shaped density of the Gram–Schmidt factor with
    mode ``L_cc = √(dim − c)``, away from the singular point ``Z = 0``. It depends on the non-identified
    factor only (rotation invariant), so the orthonormal factor stays Haar-uniform."""
    m = float(concentration)
    out = m * pt.sum((dim - np.arange(r)) * pt.log(pt.diagonal(L)))
    if m != 1.0:
        out = out - 0.5 * (m - 1.0) * pt.sum(pt.tril(L) ** 2)
    return out


def _wins_logp(value, n, eta):
    """Binomial kernel for fractional (half-tie) counts: ``y log σ(η) + (n − y) log σ(−η)``."""
    return -value * pt.softplus(-eta) - (n - value) * pt.softplus(eta)


def _wins_dist(n, eta, size):
    """Replicated wins: ``Binomial(round(n), σ(η))`` as a symbolic graph (no Python random op)."""
    return pt.cast(pm.Binomial.dist(n=pt.cast(pt.round(n), "int64"), p=pt.sigmoid(eta), size=size), "float64")


def build_hja_model(counts: JudgePairCounts, rank: int, anchors=None, sigma_mu: float = 3.0,
                    sigma_gamma: float = 1.0, sigma_s: float = 3.0,
                    radial_concentration: float = RADIAL_CONCENTRATION) -> pm.Model:
    """PyMC HJA model on aggregated (judge, pair) counts (see module docstring); dims ``judge``,
    ``player``, ``component``, ``cell``; observed ``wins`` (data ``wins_obs``, ``n_comparisons``)."""
    K, N, r = counts.n_judges, counts.n_items, rank
    anchors = np.zeros(r, dtype=int) if anchors is None else np.asarray(anchors, dtype=int)
    coords = {"judge": [str(j) for j in counts.judges], "player": [str(i) for i in counts.items],
              "component": list(range(r)), "cell": np.arange(counts.n_rows)}
    with pm.Model(coords=coords) as model:
        kk = pm.Data("cell_judge", counts.k, dims="cell")
        ii = pm.Data("cell_player_a", counts.i, dims="cell")
        jj = pm.Data("cell_player_b", counts.j, dims="cell")
        y = pm.Data("wins_obs", np.asarray(counts.y, float), dims="cell")
        n = pm.Data("n_comparisons", np.asarray(counts.n, float), dims="cell")
        mu = pm.ZeroSumNormal("mu", sigma=sigma_mu, dims="player")
        gamma_dev = pm.ZeroSumNormal("gamma_dev", sigma=sigma_gamma, dims="judge")
        gamma = pm.Deterministic("gamma", 1.0 + gamma_dev, dims="judge")
        S = gamma[:, None] * mu[None, :]  # judge score matrix (K × N)
        if r:
            Z = pm.Normal("V_raw", 0.0, 1.0, dims=("player", "component"))
            ones = pt.ones((N, 1)) / np.sqrt(N)
            mdir = (mu / pt.sqrt(pt.sum(mu**2)))[:, None]
            Zp = Z - ones @ (ones.T @ Z) - mdir @ (mdir.T @ Z)
            Q, LV = _orthonormalise(Zp)
            pm.Potential("V_raw_radius", _bartlett_radius(LV, N - 2, r, radial_concentration))
            Y = pm.Normal("U_dir_raw", 0.0, 1.0, dims=("judge", "component"))
            Yp = Y - Y.mean(axis=0, keepdims=True)
            Pj, LU = _orthonormalise(Yp)
            pm.Potential("U_dir_raw_radius", _bartlett_radius(LU, K - 1, r, radial_concentration))
            inc = pm.HalfNormal("s_increment", sigma=sigma_s, dims="component")
            s = pm.Deterministic("singular_values", pt.cumsum(inc[::-1])[::-1], dims="component")
            flip = pt.sign(Q[anchors, np.arange(r)])
            V = pm.Deterministic("V", Q * flip[None, :], dims=("player", "component"))
            U = pm.Deterministic("U", Pj * (s * flip)[None, :], dims=("judge", "component"))
            S = S + U @ V.T
        # η_c = S[k, i] − S[k, j]: two gathers from the K × N score matrix (cheaper to differentiate than
        # gathering γ, μ, U, V per cell)
        flat = S.flatten()
        eta = flat[kk * N + ii] - flat[kk * N + jj]
        pm.CustomDist("wins", n, eta, dist=_wins_dist, logp=_wins_logp, observed=y, dims="cell")
    model.hja_rank = r
    model.hja_anchors = anchors
    return model


def initial_point(params: HJAParams) -> dict:
    """Free-variable values reproducing identified ``params`` (Gram–Schmidt factors at their prior mode)."""
    start = {"mu": params.mu, "gamma_dev": params.gamma - 1.0}
    if params.rank:
        s = params.singular_values
        K, N, r = len(params.gamma), len(params.mu), params.rank
        start["V_raw"] = params.V * np.sqrt(N - 2.0 - np.arange(r))  # at the radial mode
        start["U_dir_raw"] = params.U / s * np.sqrt(K - 1.0 - np.arange(r))
        start["s_increment"] = np.append(-np.diff(s), s[-1]).clip(1e-6)
    return start


def to_value_point(model, start: dict) -> dict:
    """Map free-RV values (constrained space) to the model's value (unconstrained) space."""
    point = {}
    for rv in model.free_RVs:
        value_var = model.rvs_to_values[rv]
        tr = model.rvs_to_transforms.get(rv)
        v = np.asarray(start[rv.name], dtype=float)
        point[value_var.name] = np.asarray(tr.forward(pt.as_tensor(v), *rv.owner.inputs).eval()) if tr else v
    return point


def _identified_expr(model):
    outs = [model["mu"], model["gamma"]]
    if model.hja_rank:
        outs += [model["V"].flatten(), model["U"].flatten()]
    return pt.concatenate(outs)


def compile_flat(model, h_hess: float = 1e-5, h_jac: float = 1e-6):
    """Functions of the flattened value vector ``x``: ``f(x) = (log p, ∇ log p, θ(x))`` (one compiled
    PyTensor function, exact gradient) and ``derivs(x) = (∇² log p, ∂θ/∂x)`` by central differences
    of the exact gradient / of θ (error O(h²): ~1e-10 relative). ``log p`` is the model's log density
    without the value transforms' log-Jacobians (as ``pm.find_MAP``); ``θ = (μ, γ, vec V, vec U)``.
    (PyTensor's symbolic Hessian through the Cholesky–Gram–Schmidt graph compiles for minutes.)"""
    import pytensor
    from pytensor.graph.replace import graph_replace

    point = model.initial_point()
    names = [v.name for v in model.value_vars]
    shapes = [np.shape(point[n]) for n in names]
    sizes = [int(np.prod(sh)) for sh in shapes]
    x = pt.vector("x")
    parts, o = [], 0
    for sz, sh in zip(sizes, shapes):
        parts.append(x[o:o + sz].reshape(sh))
        o += sz
    (theta_expr,) = model.replace_rvs_by_values([_identified_expr(model)])
    cost, theta = graph_replace([model.logp(jacobian=False), theta_expr], dict(zip(model.value_vars, parts)),
                                strict=False)
    compile_mode = optimizer_mode(model)  # no numba compilation on small data (bayesrank.compile_mode)
    fn = pytensor.function([x], [cost, pytensor.grad(cost, x), theta], on_unused_input="ignore", mode=compile_mode)

    def f(x):
        lp, g, th = fn(np.asarray(x, dtype=float))
        return float(lp), np.asarray(g), np.asarray(th)

    def derivs(x):
        n = len(x)
        H = np.empty((n, n))
        J = None
        for c in range(n):
            e = np.zeros(n)
            e[c] = h_hess
            H[:, c] = (f(x + e)[1] - f(x - e)[1]) / (2 * h_hess)
            e[c] = h_jac
            col = (f(x + e)[2] - f(x - e)[2]) / (2 * h_jac)
            if J is None:
                J = np.empty((len(col), n))
            J[:, c] = col
        return 0.5 * (H + H.T), J

    def ravel(pt_dict):
        return np.concatenate([np.asarray(pt_dict[n], dtype=float).ravel() for n in names])

    return f, derivs, ravel


@dataclass
class MAPResult:
    value_point: np.ndarray
    theta: np.ndarray
    cov: np.ndarray
    iterations: int
    success: bool
    gradient_norm: float
    status: str


def map_laplace(model, start: dict | None = None, tol: float = 1e-9, max_iter: int = 100) -> MAPResult:
    """MAP point, θ̂ at the MAP and the Laplace covariance of θ = (μ, γ, vec V, vec U).

    MAP: damped Newton on the model's log density (exact PyTensor gradient and Hessian, no log-Jacobian
    of the value transforms, as ``pm.find_MAP``) from ``start`` (a dict of free-RV values; default the
    model's initial point); success when ``‖∇ log p‖ ≤ tol``. Laplace: ``Cov θ ≈ J H⁻¹ Jᵀ`` with
    ``H = −∇² log p`` in value space and ``J = ∂θ/∂x`` (exact) at the MAP. The Gaussian priors of
    ``V_raw``/``U_dir_raw`` (and the Bartlett potentials) depend only on the non-identified Gram–Schmidt
    factors, so the pushed-forward covariance is the inverse Hessian in identified coordinates.
    """
    f, derivs, ravel = compile_flat(model)
    x = ravel(to_value_point(model, start) if start is not None else model.initial_point())
    lp, g, _ = f(x)
    it, status = 0, "iteration limit"
    for it in range(1, max_iter + 1):  # noqa: B007 (the count is reported after the loop)
        if np.linalg.norm(g) <= tol:
            status = "gradient below tolerance"
            break
        negh = -derivs(x)[0]
        lam = 0.0
        for _ in range(30):  # Levenberg damping when −H is not positive definite
            try:
                np.linalg.cholesky(negh + lam * np.eye(len(x)))
                break
            except np.linalg.LinAlgError:
                lam = max(2 * lam, 1e-8 * max(1.0, np.abs(negh).max()))
        step = np.linalg.solve(negh + lam * np.eye(len(x)), g)
        t = 1.0
        for _ in range(60):
            cand = x + t * step
            clp, cg, _ = f(cand)
            if np.isfinite(clp) and clp >= lp - 1e-13 * max(1.0, abs(lp)):
                break
            t /= 2
        else:
            status = "line search failed"
            break
        if clp <= lp and np.linalg.norm(cg) >= np.linalg.norm(g):  # stalled at rounding level
            status = "no further progress"
            break
        x, lp, g = cand, clp, cg
    else:
        it = max_iter
    lp, g, theta = f(x)
    H, jac = derivs(x)
    gn = float(np.linalg.norm(g))
    cov = jac @ np.linalg.solve(-H, jac.T)
    return MAPResult(x, theta, 0.5 * (cov + cov.T), it, gn <= tol, gn, status)


def fit_laplace(hja, start_from_mle: bool = True, tol: float = 1e-9, **prior):
    """MAP + Laplace from the PyMC model, as an :class:`~bayesrank.hja.model.HJAFit`; diagnostics = the
    Newton optimizer's status and the gradient norm of the log posterior at the MAP."""
    from bayesrank.hja.mle import fit_constrained_mle, neg_loglik
    from bayesrank.hja.model import HJAFit
    from bayesrank.protocol import Diagnostics

    counts, r = hja.counts, hja.rank
    mle = fit_constrained_mle(counts, r, n_starts=1, seed=hja.seed, warn=False).best.params
    anchors = sign_anchors(mle.V) if r else None
    model = build_hja_model(counts, r, anchors, **prior)
    res = map_laplace(model, start=initial_point(mle) if start_from_mle else None, tol=tol)
    p = HJAParams.from_vector(res.theta, counts.n_judges, counts.n_items, r)
    diag = Diagnostics.optimizer("HJA MAP (Newton on the PyMC log posterior)", res.success, res.gradient_norm,
                                 iterations=res.iterations, status=res.status)
    return HJAFit(counts, p, "laplace", diag, neg_loglik(counts, p), cov=res.cov, level=hja.level,
                  information="laplace", info={"anchors": anchors, "mle_neg_loglik": neg_loglik(counts, mle),
                                               "prior": {"sigma_mu": 3.0, "sigma_gamma": 1.0, "sigma_s": 3.0, **prior}})


def default_sampler() -> str:
    """``"nutpie"`` when installed (a dependency of bayesrank), else PyMC's NUTS."""
    import importlib.util

    return "nutpie" if importlib.util.find_spec("nutpie") is not None else "pymc"


def nutpie_backend() -> str:
    """nutpie's JAX backend when JAX is installed (compiles in seconds, about half the CPU time per
    gradient of the numba backend on HJA; benchmarks/bench_hja.py), else numba."""
    import importlib.util

    return "jax" if importlib.util.find_spec("jax") is not None else "numba"


def fit_nuts(hja, draws: int = 1000, tune: int = 1000, chains: int = 2, cores: int | None = None,
             seed: int | None = None, target_accept: float = 0.9, progressbar: bool = False,
             sampler: str | None = None, log_likelihood: bool = True, nuts_kwargs: dict | None = None,
             backend: str | None = None, **prior):
    """NUTS posterior (started at the MLE) as an :class:`~bayesrank.hja.model.HJAFit` with draws.

    ``sampler``: ``"nutpie"`` (default when installed) or ``"pymc"``; ``nuts_kwargs`` go to the sampler
    (e.g. ``{"adaptation": "low_rank"}`` for nutpie); ``backend``: nutpie's ``"jax"`` (default when JAX is
    installed) or ``"numba"``. Diagnostics
    (:meth:`bayesrank.protocol.Diagnostics.sampler`): max R-hat, min bulk/tail ESS over the identified
    parameters μ, γ and the singular values, and the divergence count. ``log_likelihood``: add the
    pointwise log-likelihood group (per (judge, pair) cell) for PSIS-LOO.

    Per-column sign symmetry: the model folds every draw onto the sign convention
    ``V[a_c, c] > 0`` with anchors ``a_c`` = the MLE's largest-|loading| players; draws are additionally
    checked against the MLE columns (``info["sign_agreement"]`` = fraction of draws whose column c has
    a positive inner product with the MLE's column c).
    """
    from bayesrank.hja.anchor import reanchor_scores
    from bayesrank.hja.mle import fit_constrained_mle, neg_loglik
    from bayesrank.hja.model import HJAFit
    from bayesrank.protocol import Diagnostics

    counts, r = hja.counts, hja.rank
    mle = fit_constrained_mle(counts, r, n_starts=1, seed=hja.seed, warn=False).best.params
    anchors = sign_anchors(mle.V) if r else None
    model = build_hja_model(counts, r, anchors, **prior)
    seed = hja.seed if seed is None else seed
    sampler = sampler or default_sampler()
    kw = {"nuts_sampler": sampler, "nuts": {"target_accept": target_accept, **(nuts_kwargs or {})}}
    if sampler == "nutpie":
        backend = backend or nutpie_backend()
        kw["compile_kwargs"] = {"backend": backend, "gradient_backend": backend}
        sampler = f"nutpie-{backend}"
    from bayesrank._multiprocessing import pymc_mp_ctx

    with model:
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=cores if cores is not None else min(chains, 2),
                          random_seed=seed, initvals=initial_point(mle), progressbar=progressbar,
                          compute_convergence_checks=False, mp_ctx=pymc_mp_ctx(), **kw)
        stop_if_interrupted()  # PyMC returns the draws it has on Ctrl-C: never report a shorter chain
        if log_likelihood and "log_likelihood" not in idata.children:
            idata = pm.compute_log_likelihood(idata, model=model, progressbar=False)
    post = idata["posterior"]
    names = ["gamma", "mu"] + (["U", "V"] if r else [])
    d = {}
    for name in names:
        a = post[name].values  # (chain, draw, ...)
        d[name] = a.reshape((-1,) + a.shape[2:])
    if not r:
        d["U"] = np.zeros((len(d["mu"]), counts.n_judges, 0))
        d["V"] = np.zeros((len(d["mu"]), counts.n_items, 0))
    summary_vars = ["mu", "gamma"] + (["singular_values"] if r else [])
    diag = Diagnostics.sampler(f"HJA NUTS ({sampler})", idata, summary_vars)
    # point summary: the identified representative of the posterior-mean score matrix (averaging U, V
    # draw by draw would break orthonormality)
    S_mean = (np.einsum("sk,si->ki", d["gamma"], d["mu"]) + np.einsum("skc,sic->ki", d["U"], d["V"])) / len(d["mu"])
    p = reanchor_scores(S_mean, r, anchors)
    info = {"anchors": anchors, "sampler": sampler,
            "constraint_violations": constraint_violations(d["gamma"], d["mu"], d["U"], d["V"], anchors)}
    if r:
        info["sign_agreement"] = (np.einsum("sic,ic->sc", d["V"], mle.V) > 0).mean(0)
    fit = HJAFit(counts, p, "nuts", diag, neg_loglik(counts, p), draws=d, idata=idata, level=hja.level, info=info)
    fit.model = model
    return fit
