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


# ---------------------------------------------------------------------- Monte Carlo error of coverage
def coverage_summary(cover: np.ndarray, level: float = 0.95) -> dict:
    """Coverage of (n_rep, K) hit indicators with its Monte Carlo SE. Intervals of one dataset are
    dependent (Σθ = 0), so the SE is the between-dataset SD of the per-dataset coverage / √n_rep."""
    c = np.asarray(cover, dtype=float)
    per_rep = c.mean(axis=1)
    se = per_rep.std(ddof=1) / np.sqrt(len(per_rep)) if len(per_rep) > 1 else np.nan
    rate = float(c.mean())
    return {"intervals": int(c.size), "datasets": int(c.shape[0]), "coverage": rate, "mc_se": float(se),
            "z_vs_nominal": float((rate - level) / se) if se > 0 else np.nan}


# ---------------------------------------------------------------------- ties: which interval covers?
def pseudo_true_half(theta, template, log_nu):
    """The half-win MLE's estimand under Davidson data: the half-win fit to the *expected* counts
    n·(P(i), P(j), P(tie)) (its score equation in expectation)."""
    d = theta[template.i] - theta[template.j]
    p = softmax(np.column_stack([d / 2, -d / 2, np.full_like(d, log_nu)]), axis=1)
    expected = template.with_counts(template.total[:, None] * p)
    return newton(tie_model("half"), expected).params[0]


def wald_cover(est, cov, truth_, level=0.95, widths=None, name=None):
    """(n_rep, K) hits of est ± z·sqrt(diag cov) (cov (n_rep, P, P)); the mean width goes in ``widths[name]``."""
    k = len(truth_)
    sd = np.sqrt(np.diagonal(cov, axis1=1, axis2=2)[:, :k])
    z = norm.ppf(0.5 + level / 2)
    if widths is not None:
        widths[name] = float(2 * z * sd.mean())
    return np.abs(est[:, :k] - truth_) <= z * sd


def _constrained_inv(hessian, n_extra=0):
    k = hessian.shape[-1] - n_extra
    q = constraint_basis(k, n_extra)
    return q @ np.linalg.inv(np.swapaxes(q, 0, 1)[None] @ hessian @ q) @ q.T


def tie_coverage(theta, template, log_nu, n_rep, seed, boot_reps=0, n_boot=200, prior_sigma=3.0,
                 tie_prior_sigma=2.0, level=0.95):
    """Coverage of 95% intervals on Davidson data with many ties, each against its own estimand:

    half-win estimator (target θ*_half, :func:`pseudo_true_half`): Fisher, sandwich, bootstrap
    percentile, and the half-win Laplace posterior (the PyMC model's exact twin: ridge 1/σ²);
    Davidson (target the true θ): Fisher and the Davidson Laplace posterior (ridge 1/σ² on θ and
    1/σ_λ² on λ, with the prior pulling λ to 0 — built here as a penalised Newton fit).
    Returns (hits per method, tie share, mean interval width per method)."""
    from bayesrank.bt.mle import meat

    batch = simulate_counts(theta, template, n_rep, seed, log_nu=log_nu)
    target_half = pseudo_true_half(theta, template, log_nu)
    k = len(theta)
    half = tie_model("half")
    dav = tie_model("davidson")
    rows, widths = {}, {}

    def add(name, est, cov, target):
        rows[name] = wald_cover(est, cov, target, level, widths, name)

    r_half = newton(half, template, batch_counts=batch)
    fisher_half = _constrained_inv(r_half.hessian)
    add("Fisher, half-win MLE", r_half.params, fisher_half, target_half)
    sand = np.stack([f @ meat(half, template.with_counts(c), p) @ f
                     for f, c, p in zip(fisher_half, batch, r_half.params)])
    add("sandwich, half-win MLE", r_half.params, sand, target_half)
    r_lap_half = newton(half, template, batch_counts=batch, ridge=1 / prior_sigma**2)
    add("Laplace, half-win posterior", r_lap_half.params, _constrained_inv(r_lap_half.hessian), target_half)
    r_dav = newton(dav, template, batch_counts=batch)
    add("Fisher, Davidson MLE", r_dav.params, _constrained_inv(r_dav.hessian, 1), theta)
    r_lap_dav = davidson_map(template, batch, prior_sigma, tie_prior_sigma)
    add("Laplace, Davidson posterior", r_lap_dav.params, _constrained_inv(r_lap_dav.hessian, 1), theta)
    if boot_reps:
        a = (1 - level) / 2
        hits = np.zeros((boot_reps, k), dtype=bool)
        wsum = 0.0
        for r in range(boot_reps):
            tc = template.with_counts(batch[r])
            fits = newton(half, tc, batch_counts=bootstrap_counts(tc, n_boot, seed + 1000 + r),
                          start=r_half.params[r]).params
            lo, hi = np.quantile(fits, [a, 1 - a], axis=0)
            hits[r] = (lo <= target_half) & (target_half <= hi)
            wsum += float((hi - lo).mean())
        rows["bootstrap percentile, half-win MLE"] = hits
        widths["bootstrap percentile, half-win MLE"] = wsum / boot_reps
    ties_share = float(batch[..., 2].sum() / batch.sum())
    return rows, ties_share, widths


def davidson_map(template, batch, prior_sigma, tie_prior_sigma):
    """Posterior mode of the PyMC Davidson model (ZeroSumNormal(σ) on θ, Normal(0, σ_λ) on λ) by
    Newton on the penalised loss: the NumPy twin of ``map_laplace`` (tested equal to 1e-7 with a
    flat λ prior in test_pymc_references; here the λ penalty 1/σ_λ² is added explicitly)."""
    from bayesrank.bt.mle import NewtonResult, objective

    dav = tie_model("davidson")
    k = template.n_players
    lam_pen = 1 / tie_prior_sigma**2

    def penalised(params, derivatives=True):
        out = objective(dav, template, params, batch, ridge=1 / prior_sigma**2, derivatives=derivatives)
        lam = params[:, k]
        if not derivatives:
            return out + 0.5 * lam_pen * lam**2
        loss, grad, hess = out
        grad[:, k] += lam_pen * lam
        hess[:, k, k] += lam_pen
        return loss + 0.5 * lam_pen * lam**2, grad, hess

    x = newton(dav, template, batch_counts=batch, ridge=1 / prior_sigma**2).params  # start: θ-ridge fit
    for _ in range(50):
        loss, grad, hess = penalised(x)
        step = np.linalg.solve(hess + _pin(k), grad[..., None])[..., 0]
        x = x - step
        if np.abs(step).max() < 1e-11:
            break
    loss, grad, hess = penalised(x)
    return NewtonResult(params=x, loss=loss, hessian=hess, iterations=0, converged=np.abs(step).max(axis=1) < 1e-9,
                        gradient=grad)


def _pin(k):
    u = np.zeros(k + 1)
    u[:k] = 1.0
    return np.outer(u, u) / k
