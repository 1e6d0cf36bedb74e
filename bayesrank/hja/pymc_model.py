"""HJA as a PyMC model in which every identification condition holds by construction.

Free variables (value space) → identified parameters (see ``models/hja.md`` for the argument):

- ``mu`` ~ ZeroSumNormal(σ_μ) over ``item``: ``Σμ = 0``.
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

Likelihood: ``Potential`` with the binomial log-likelihood of the (judge, pair) counts.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from bayesrank.hja.anchor import HJAParams, constraint_violations, sign_anchors
from bayesrank.hja.data import JudgePairCounts


def _orthonormalise(Z):
    """Cholesky–Gram–Schmidt: ``(Z L⁻ᵀ, L)`` with ``L Lᵀ = ZᵀZ`` (Q factor of a QR with positive diagonal)."""
    L = pt.linalg.cholesky(Z.T @ Z)
    return pt.linalg.solve_triangular(L, Z.T, lower=True).T, L


def _bartlett_radius(L, dim: int, r: int):
    """``Σ_c (dim − c)·log L_cc`` (c = 0..r−1): with the Normal prior this gives the Gram–Schmidt factor a
    Wishart/Bartlett-shaped density whose mode is away from the singular point ``Z = 0``. It depends on
    the non-identified factor only (rotation invariant), so the orthonormal factor stays Haar-uniform."""
    return pt.sum((dim - np.arange(r)) * pt.log(pt.diagonal(L)))


def build_hja_model(counts: JudgePairCounts, rank: int, anchors=None, sigma_mu: float = 3.0,
                    sigma_gamma: float = 1.0, sigma_s: float = 3.0) -> pm.Model:
    """PyMC HJA model on aggregated (judge, pair) counts (see module docstring)."""
    K, N, r = counts.n_judges, counts.n_items, rank
    anchors = np.zeros(r, dtype=int) if anchors is None else np.asarray(anchors, dtype=int)
    coords = {"judge": [str(j) for j in counts.judges], "item": [str(i) for i in counts.items],
              "component": list(range(r)), "cell": np.arange(counts.n_rows)}
    with pm.Model(coords=coords) as model:
        kk = pm.Data("cell_judge", counts.k, dims="cell")
        ii = pm.Data("cell_item_i", counts.i, dims="cell")
        jj = pm.Data("cell_item_j", counts.j, dims="cell")
        y = pm.Data("wins_i", counts.y, dims="cell")
        n = pm.Data("n_comparisons", counts.n, dims="cell")
        mu = pm.ZeroSumNormal("mu", sigma=sigma_mu, dims="item")
        gamma_dev = pm.ZeroSumNormal("gamma_dev", sigma=sigma_gamma, dims="judge")
        gamma = pm.Deterministic("gamma", 1.0 + gamma_dev, dims="judge")
        eta = gamma[kk] * (mu[ii] - mu[jj])
        if r:
            Z = pm.Normal("V_raw", 0.0, 1.0, dims=("item", "component"))
            ones = pt.ones((N, 1)) / np.sqrt(N)
            mdir = (mu / pt.sqrt(pt.sum(mu**2)))[:, None]
            Zp = Z - ones @ (ones.T @ Z) - mdir @ (mdir.T @ Z)
            Q, LV = _orthonormalise(Zp)
            pm.Potential("V_raw_radius", _bartlett_radius(LV, N - 2, r))
            Y = pm.Normal("U_dir_raw", 0.0, 1.0, dims=("judge", "component"))
            Yp = Y - Y.mean(axis=0, keepdims=True)
            Pj, LU = _orthonormalise(Yp)
            pm.Potential("U_dir_raw_radius", _bartlett_radius(LU, K - 1, r))
            inc = pm.HalfNormal("s_increment", sigma=sigma_s, dims="component")
            s = pm.Deterministic("singular_values", pt.cumsum(inc[::-1])[::-1], dims="component")
            flip = pt.sign(Q[anchors, np.arange(r)])
            V = pm.Deterministic("V", Q * flip[None, :], dims=("item", "component"))
            U = pm.Deterministic("U", Pj * (s * flip)[None, :], dims=("judge", "component"))
            eta = eta + pt.sum(U[kk] * (V[ii] - V[jj]), axis=1)
        pm.Potential("loglik", pt.sum(y * pt.log(pt.sigmoid(eta)) + (n - y) * pt.log(pt.sigmoid(-eta))))
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


def _identified_fn(model):
    """Compiled map from a point (value space) to θ = (μ, γ, vec V, vec U)."""
    outs = [model["mu"], model["gamma"]]
    if model.hja_rank:
        outs += [model["V"].flatten(), model["U"].flatten()]
    (out,) = model.replace_rvs_by_values([pt.concatenate(outs)])
    return model.compile_fn(out, inputs=model.value_vars, point_fn=True, on_unused_input="ignore")


def to_value_point(model, start: dict) -> dict:
    """Map free-RV values (constrained space) to the model's value (unconstrained) space."""
    point = {}
    for rv in model.free_RVs:
        value_var = model.rvs_to_values[rv]
        tr = model.rvs_to_transforms.get(rv)
        v = np.asarray(start[rv.name], dtype=float)
        point[value_var.name] = np.asarray(tr.forward(pt.as_tensor(v), *rv.owner.inputs).eval()) if tr else v
    return point


def map_laplace(model, start: dict | None = None, tol: float = 1e-9) -> tuple[dict, np.ndarray, np.ndarray]:
    """MAP point (value space), θ̂ at the MAP, and the Laplace covariance of θ = (μ, γ, vec V, vec U).

    The MAP is the mode of the posterior density in the model's natural parametrisation (no
    log-Jacobian of the value transforms, as ``pm.find_MAP``), found by L-BFGS on PyTensor's compiled
    ``logp``/``dlogp`` from ``start``. The Gaussian priors of ``V_raw``/``U_dir_raw`` depend only on the
    non-identified Gram–Schmidt factors, so they do not pull the identified parameters. The Hessian of
    −log p in the unconstrained value space is the central difference of the compiled gradient
    (step 1e-5), inverted there, and pushed to θ with the Jacobian of the identified deterministics
    (central differences of the compiled map, step 1e-6): ``Cov θ ≈ J H⁻¹ Jᵀ``.
    """
    from pymc.blocking import DictToArrayBijection
    from scipy.optimize import minimize

    point = to_value_point(model, start) if start is not None else model.initial_point()
    point = {v.name: point[v.name] for v in model.value_vars}
    raveled = DictToArrayBijection.map(point)
    logp = model.compile_logp(jacobian=False)
    dlogp = model.compile_dlogp(jacobian=False)

    def unravel(x):
        return DictToArrayBijection.rmap(raveled._replace(data=x), start_point=point)

    def f(x):
        return -float(logp(unravel(x)))

    def g(x):
        return -np.asarray(dlogp(unravel(x)), dtype=float)

    res = minimize(f, raveled.data, jac=g, method="L-BFGS-B", options={"maxiter": 20000, "ftol": 1e-15,
                                                                       "gtol": tol})
    x0 = res.x
    n = len(x0)
    h = 1e-5
    H = np.empty((n, n))
    for c in range(n):
        e = np.zeros(n)
        e[c] = h
        H[:, c] = (g(x0 + e) - g(x0 - e)) / (2 * h)
    H = 0.5 * (H + H.T)
    theta_fn = _identified_fn(model)

    def theta_at(x):
        return np.asarray(theta_fn(unravel(x)))

    theta0 = theta_at(x0)
    h = 1e-6
    Jac = np.empty((len(theta0), n))
    for c in range(n):
        e = np.zeros(n)
        e[c] = h
        Jac[:, c] = (theta_at(x0 + e) - theta_at(x0 - e)) / (2 * h)
    cov = Jac @ np.linalg.solve(H, Jac.T)
    return unravel(x0), theta0, 0.5 * (cov + cov.T)


def fit_laplace(hja, start_from_mle: bool = True, **prior):
    """MAP + Laplace from the PyMC model, as an :class:`~bayesrank.hja.model.HJAFit`."""
    from bayesrank.hja.mle import fit_constrained_mle
    from bayesrank.hja.model import HJAFit
    from bayesrank.hja.mle import neg_loglik

    counts, r = hja.counts, hja.rank
    mle = fit_constrained_mle(counts, r, n_starts=1, seed=hja.seed, warn=False).best.params
    anchors = sign_anchors(mle.V) if r else None
    model = build_hja_model(counts, r, anchors, **prior)
    _, theta, cov = map_laplace(model, start=initial_point(mle) if start_from_mle else None)
    p = HJAParams.from_vector(theta, counts.n_judges, counts.n_items, r)
    return HJAFit(counts, p, "laplace", True, neg_loglik(counts, p), cov=cov, level=hja.level,
                  info={"anchors": anchors, "mle_neg_loglik": neg_loglik(counts, mle)})


def fit_nuts(hja, draws: int = 500, tune: int = 500, chains: int = 2, cores: int = 1, seed: int | None = None,
             target_accept: float = 0.9, progressbar: bool = False, **prior):
    """NUTS posterior (started at the MLE) as an :class:`~bayesrank.hja.model.HJAFit` with draws.

    Per-column sign symmetry: the model folds every draw onto the sign convention
    ``V[a_c, c] > 0`` with anchors ``a_c`` = the MLE's largest-|loading| items; draws are additionally
    checked against the MLE columns (``info["sign_agreement"]`` = fraction of draws whose column c has
    a positive inner product with the MLE's column c).
    """
    import arviz as az

    from bayesrank.hja.mle import fit_constrained_mle, neg_loglik
    from bayesrank.hja.model import HJAFit

    counts, r = hja.counts, hja.rank
    mle = fit_constrained_mle(counts, r, n_starts=1, seed=hja.seed, warn=False).best.params
    anchors = sign_anchors(mle.V) if r else None
    model = build_hja_model(counts, r, anchors, **prior)
    seed = hja.seed if seed is None else seed
    with model:
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=cores, random_seed=seed,
                          initvals=initial_point(mle), target_accept=target_accept, progressbar=progressbar,
                          compute_convergence_checks=False)
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
    rhat = az.rhat(idata, var_names=summary_vars)
    max_rhat = float(max(float(rhat[v].max()) for v in summary_vars))
    # point summary: the identified representative of the posterior-mean score matrix (averaging U, V
    # draw by draw would break orthonormality)
    from bayesrank.hja.anchor import reanchor_scores

    S_mean = (np.einsum("sk,si->ki", d["gamma"], d["mu"]) + np.einsum("skc,sic->ki", d["U"], d["V"])) / len(d["mu"])
    p = reanchor_scores(S_mean, r, anchors)
    info = {"anchors": anchors, "max_rhat": max_rhat,
            "constraint_violations": constraint_violations(d["gamma"], d["mu"], d["U"], d["V"], anchors)}
    if r:
        info["sign_agreement"] = (np.einsum("sic,ic->sc", d["V"], mle.V) > 0).mean(0)
    return HJAFit(counts, p, "nuts", max_rhat < 1.01, neg_loglik(counts, p), draws=d, idata=idata,
                  level=hja.level, info=info)
