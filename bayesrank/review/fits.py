"""Every Bradley–Terry fit method on the same data, through ``BradleyTerry.fit`` (as ``bayesrank fit``).

=============  ====================================================================================
key            fit
=============  ====================================================================================
``default``    MLE with the package's default interval (the one the verdict uses)
``fisher``     MLE, Fisher (observed information) interval
``sandwich``   MLE, sandwich interval
``bootstrap``  MLE, percentile interval of seeded resampling of comparisons
``map``        posterior mode of the model with its Hessian's Wald interval (not with ``fast``): the mode
               and Hessian of the ``laplace`` fit (the same computation), so it is done once
``laplace``    Laplace approximation of the posterior by its NumPy twin (MAP = ridge MLE with ridge 1/σ²,
               covariance = inverse Hessian; equal to ``BradleyTerry.fit("laplace")``'s Newton on the PyMC
               log-density for half ties, tested; with Davidson ties the twin leaves the tie parameter
               unpenalised where the PyMC model gives it a N(0, σ_λ²) prior — a curvature of 1/σ_λ² = 0.25
               beside the data's, ~10⁵ on the arena). No PyMC graph is built or compiled.
``nuts``       NUTS posterior (not with ``fast`` or ``nuts=False``; nutpie on the model's hand-written log
               density, :mod:`bayesrank.bt.density`, 4 chains × :data:`NUTS_DRAWS` after :data:`NUTS_TUNE`
               tuning steps); re-run once with 4× the tuning
               steps and ``target_accept`` 0.95 when it fails its convergence checks (R-hat, ESS,
               divergences). If it still fails, the claims it answers get the verdict ``not converged``.
``claims``     the posterior the claims' Bayesian answers use (:func:`claims_posterior`): with the
               Fisher interval the Bayesian fit above; with ties (the default interval is the sandwich)
               the half-win posterior — the estimand of the leaderboard, the frequentist answer and
               the audits — curvature-adjusted to the sandwich (``bayesrank.stats.adjusted_posterior``);
               with clusters (``--cluster``) adjusted to the cluster-robust sandwich
=============  ====================================================================================
"""

from __future__ import annotations

import numpy as np

N_BOOT = 200
#: NUTS per chain: 1,000 draws after 500 tuning steps. With 500 draws the arena's 130 parameters
#: give max R-hat 1.008–1.013 (the 1.01 rule fails by chance in about half the runs, and the re-run
#: costs 2.5× more); with 1,000 draws 1.004–1.005 (6 of 6 runs, min bulk ESS ≥ 950).
NUTS_DRAWS = 1000
NUTS_TUNE = 500


def fit_all(comps, *, level: float, seed: int, fast: bool, nuts: bool = True, draws: int = NUTS_DRAWS, chains: int = 4,
            progress=None, ridge: float = 0.0, tune: int | None = None, cluster: str | None = None,
            position_effect: bool = False, penalty: str | None = None) -> dict:
    """Every fit of the table above (``ridge``: the MLE-based fits' L2 penalty; ``tune``: NUTS
    tuning steps, default :data:`NUTS_TUNE` or ``draws`` if fewer; ``cluster``, ``position_effect``: the model's terms).
    ``penalty="firth"`` (no finite MLE): the MLE-based fits are Firth's bias-reduced fit; its
    leaderboard intervals are Wald at the estimate (the claims get profile intervals, review.pairwise),
    and the bootstrap is left out when its resamples have no Firth estimate (a disconnected graph)."""
    from bayesrank.bt import BradleyTerry
    from bayesrank.errors import NumericalError

    bt = BradleyTerry(comps, level=level, ridge=ridge, cluster=cluster, position_effect=position_effect,
                      penalty=penalty)
    fits = {}

    def step(label, fn):
        if progress:
            progress(f"fitting: {label}")
        fits[label] = fn()

    if penalty:  # Wald with the information at Firth's estimate: the profile test's likelihood (with half-win
        # ties conservative, as that test); the sandwich, shown beside it, can be degenerate on such sparse
        # data (two teams whose only games were draws with each other: a contrast of variance 0)
        step("default", lambda: bt.fit("mle", ci="fisher"))
    else:
        step("default", lambda: bt.fit("mle"))
    step("fisher", lambda: bt.fit("mle", ci="fisher"))
    step("sandwich", lambda: bt.fit("mle", ci="sandwich"))
    try:
        step("bootstrap", lambda: bt.fit("bootstrap", n_boot=N_BOOT, seed=seed))
    except NumericalError as e:
        if not penalty:
            raise
        fits["default"].settings["bootstrap_left_out"] = str(e)
    step("laplace", lambda: laplace_twin(bt, seed=seed))
    if not fast:
        step("map", lambda: map_of_laplace(fits["laplace"]))
        if nuts:
            step("nuts", lambda: nuts_fit(bt, draws=draws, chains=chains, seed=seed, progress=progress, tune=tune))
    step("claims", lambda: claims_posterior(bt, fits, fast=fast, nuts=nuts, draws=draws, chains=chains, seed=seed,
                                            progress=progress, tune=tune))
    return fits


def claims_posterior(bt, fits: dict, *, fast: bool, nuts: bool, draws: int, chains: int, seed: int, progress=None,
                     tune: int | None = None):
    """The posterior behind the claims' Bayesian answers, on the same estimand as the frequentist
    answer and the audits. Without ties every tie model is the binary Bradley–Terry model: the
    Bayesian fit (NUTS, else Laplace) as it is. With ties the frequentist answer and the audits score a
    tie as half a win (LMArena's estimator, the leaderboard shown) with the sandwich covariance; the
    half-win likelihood misstates the variance of a tie (a sure half point), so its posterior is
    rescaled to the sandwich: θ' = θ̄ + L(θ − θ̄), L = chol(Σ_sandwich) chol(Σ_post)⁻¹ (Ribatet,
    Cooley & Davison 2012; Shaby 2014). The Davidson posterior (the ``nuts``/``laplace`` fits) is
    reported beside it as another tie model."""
    import dataclasses

    from bayesrank.stats.adjusted_posterior import adjust_draws

    default = fits["default"]
    base = fits.get("nuts") or fits.get("laplace")
    firth_ties = default.settings.get("penalty") == "firth" and bool(bt.rows.counts[:, 2].any())
    if (default.settings.get("ci_used", default.interval) == "fisher" and not firth_ties) or base is None:
        return base
    from bayesrank.bt import BradleyTerry

    if not bt.rows.counts[:, 2].any():  # no ties: every tie model is the binary one, the Bayesian fit as it is
        post, scoring = base, ""
    else:
        half = BradleyTerry(bt.rows, ties="half", level=bt.level, prior_sigma=bt.prior_sigma, ridge=bt.ridge,
                            position_effect=bt.position, beta_sigma=bt.beta_sigma)
        if fast or not nuts:
            post = laplace_twin(half, seed=seed)
        else:  # only its draws are used: no predictive check or PSIS-LOO (the Davidson fit's are reported)
            post = half_win_posterior(half, draws=draws, chains=chains, seed=seed, progress=progress, tune=tune)
        scoring = ", half-win"
    target = ("Fisher information at Firth's estimate" if firth_ties else
              "cluster-robust sandwich" if default.interval.startswith("cluster") else "sandwich")
    k = len(post.players)
    adjusted = adjust_draws(post.draws[:, :k], default.theta_cov, n_players=k)
    q = (1 - bt.level) / 2
    lower, upper = np.quantile(adjusted, [q, 1 - q], axis=0)
    return dataclasses.replace(post, draws=adjusted, method=f"{post.method}{scoring}, adjusted to the {target}",
                               cov=np.cov(adjusted.T), score=adjusted.mean(axis=0), lower=lower, upper=upper,
                               interval=f"{post.interval}; curvature-adjusted to the {target} covariance")


def half_win_posterior(half, *, draws: int, chains: int, seed: int, progress=None, tune: int | None = None):
    """The half-win posterior behind the claims (:func:`claims_posterior`): its Laplace approximation
    (:func:`laplace_twin`) corrected and checked by Pareto-smoothed importance sampling against the
    exact log posterior (:mod:`bayesrank.stats.laplace_psis`; ``chains × draws`` proposal draws in
    PyMC's zero-sum coordinates z = Bᵀθ, as many resampled) when k̂ ≤ min(1 − 1/log₁₀ S, 0.7) —
    on a large board its posterior is close to Gaussian and this costs a fraction of NUTS; else (and
    with a position effect or features) NUTS (:func:`nuts_fit`), the check's line kept in its
    settings."""
    import dataclasses

    from bayesrank.bt.density import BTDensity, zerosum_theta
    from bayesrank.stats.laplace_psis import laplace_psis

    def nuts(**note):
        fit = nuts_fit(half, draws=draws, chains=chains, seed=seed, progress=progress, tune=tune, ppc=False, loo=False)
        fit.settings.update(note)
        return fit

    if half.position or half.n_covariates:
        return nuts()
    if progress:
        progress("fitting: half-win posterior (Laplace + PSIS)")
    lap = laplace_twin(half, seed=seed)
    if not lap.diagnostics.converged:
        return nuts(laplace_psis={"why_nuts": "the Laplace approximation's mode search did not converge"})
    k = len(lap.players)
    basis = zerosum_theta(np.eye(k - 1)).T  # B (K, K−1): θ = B z, an isometry onto Σθ = 0
    dens = BTDensity(half.rows, "half", half.prior_sigma, half.tie_prior_sigma, half.beta_sigma, False)
    cov = basis.T @ lap.cov[:k, :k] @ basis
    kept, _, check = laplace_psis(lambda xs: np.array([dens.logp_grad(x)[0] for x in xs]), basis.T @ lap.score[:k],
                                  0.5 * (cov + cov.T), n_draws=chains * draws, seed=seed)
    if not check.ok:
        return nuts(laplace_psis={**check.to_dict(), "why_nuts": "the PSIS check of the Laplace approximation failed"})
    theta = zerosum_theta(kept)
    q = (1 - half.level) / 2
    lower, upper = np.quantile(theta, [q, 1 - q], axis=0)
    diag = dataclasses.replace(lap.diagnostics, method="laplace + PSIS (half-win)", extra={
        **lap.diagnostics.extra, "psis": check.to_dict()})
    fit = dataclasses.replace(lap, method="laplace + PSIS", draws=theta, score=theta.mean(axis=0), cov=np.cov(theta.T),
                              lower=lower, upper=upper, diagnostics=diag,
                              interval=f"equal-tailed, Laplace corrected by PSIS ({check.line()})")
    fit.settings = {**(lap.settings or {}), "draws": int(len(theta)), "psis": check.to_dict()}
    return fit


RETRY_TUNE_FACTOR = 4
RETRY_TARGET_ACCEPT = 0.95


def nuts_fit(model, *, draws: int, chains: int, seed: int, progress=None, tune: int | None = None, **kw):
    """NUTS on ``model`` (a ``BradleyTerry`` of any model: ``.fit("nuts", ...)``), re-run once with
    more tuning and a higher target acceptance when the first run fails its convergence checks; the
    first run's diagnostics are kept in ``settings["rerun"]``."""
    tune = min(NUTS_TUNE, draws) if tune is None else tune
    fit = model.fit("nuts", draws=draws, tune=tune, chains=chains, seed=seed, **kw)
    if fit.diagnostics.converged:
        return fit
    if progress:
        progress("NUTS did not converge: re-running with more tuning")
    first = fit.diagnostics.line()
    fit = model.fit("nuts", draws=draws, tune=RETRY_TUNE_FACTOR * max(tune, draws), chains=chains, seed=seed,
                    target_accept=RETRY_TARGET_ACCEPT, **kw)
    fit.settings["rerun"] = {"first_run": first, "tune": RETRY_TUNE_FACTOR * max(tune, draws),
                             "target_accept": RETRY_TARGET_ACCEPT, "converged": bool(fit.diagnostics.converged)}
    return fit


def map_of_laplace(laplace):
    """The MAP fit as ``BradleyTerry.fit("map")`` returns it, from the Laplace fit: the same
    mode, the same Hessian (Wald interval), no draws."""
    from dataclasses import replace

    diag = replace(laplace.diagnostics, method=laplace.diagnostics.method.replace("(LAPLACE)", "(MAP)"))
    fit = replace(laplace, method="map", interval="Wald (MAP Hessian)", draws=None, diagnostics=diag)
    fit.settings = {}
    return fit


def laplace_twin(bt, seed: int = 0, draws: int = 2000):
    """Laplace approximation computed without PyTensor: the PyMC model's MAP equals the ridge MLE
    with ridge 1/σ² and its Laplace covariance the inverse ridge Hessian (tests/bt checks both)."""
    from dataclasses import replace

    from bayesrank.bt import BradleyTerry
    from bayesrank.stats.gaussian import sum_to_zero_normal

    ties = bt.tie_model_for("laplace")  # the Bayesian fits' tie model (Davidson when the data have ties; as given)
    twin = BradleyTerry(bt.rows, ties=ties, ridge=1.0 / bt.prior_sigma**2, beta_ridge=1.0 / bt.beta_sigma**2,
                        level=bt.level, position_effect=bt.position)
    fit = twin.fit("mle", ci="fisher")
    k = len(fit.players)
    rng = np.random.default_rng(seed)
    fit.draws = sum_to_zero_normal(fit.score, fit.cov[:k, :k], draws, rng)  # eigh below 1,000 players
    fit.method = "laplace"
    fit.interval = "Laplace (NumPy twin: ridge MLE + inverse Hessian)"
    fit.diagnostics = replace(fit.diagnostics, method="newton on the ridge-penalised likelihood = the log posterior "
                                                      "(NumPy twin) (LAPLACE)")
    fit.n_excluded = bt.exclusions.total
    return fit
