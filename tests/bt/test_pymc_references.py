"""The PyMC model against its frequentist twin: MAP = ridge MLE (ridge = 1/prior_sigma²,
ZeroSumNormal prior), Laplace covariance = inverse penalised Hessian on the sum-to-zero space,
and NUTS posterior means/SDs = the Laplace/Gaussian twin on the 1.67M-battle arena data."""

import numpy as np
import pytest

from bayesrank.bt import DEFAULT_PRIOR_SIGMA, BradleyTerry, build_bt_model, map_laplace
from bayesrank.bt.mle import constrained_covariance, fit_newton


@pytest.mark.slow  # compiles the PyTensor Hessian (~10 s); tests/bt/test_pymc_model.py covers MAP = ridge MLE quickly
def test_map_equals_ridge_mle_and_laplace_equals_penalised_hessian(llmfao, llmfao_counts):
    """MAP = ridge MLE (ridge = 1/σ²); Laplace covariance (PyTensor Hessian) = inverse penalised Hessian."""
    bt = BradleyTerry(llmfao, ties="half")
    assert bt.prior_sigma == DEFAULT_PRIOR_SIGMA
    fmap = bt.fit("map")
    assert fmap.diagnostics.kind == "optimizer" and fmap.diagnostics.converged
    assert fmap.diagnostics.gradient_norm < 1e-8
    k = llmfao_counts.n_players
    params, hess, _, _ = fit_newton(llmfao_counts, ties="half", ridge=1 / bt.prior_sigma**2)
    np.testing.assert_allclose(fmap.score, params, atol=1e-8)
    np.testing.assert_allclose(fmap.cov, constrained_covariance(hess, k), rtol=1e-7, atol=1e-12)
    sd = np.sqrt(np.diag(constrained_covariance(hess, k)))
    # the prior is weak here: MAP ≈ MLE and Laplace SDs ≈ Fisher SDs (spec: reproduce the MLE when the prior is weak)
    mle, h0, _, _ = fit_newton(llmfao_counts, ties="half")
    assert np.abs(fmap.score - mle).max() < 0.01
    sd_ratio = sd / np.sqrt(np.diag(constrained_covariance(h0, k)))
    assert 0.97 < sd_ratio.min() and sd_ratio.max() <= 1.0
    np.testing.assert_allclose(fmap.upper - fmap.score, 1.959963984540054 * sd, rtol=1e-6)
    flap = bt.fit("laplace", draws=4000, seed=1)
    # Laplace draws: mean/SD within Monte Carlo error of the Gaussian at the mode
    se = sd / np.sqrt(4000)
    assert np.all(np.abs(flap.draws.mean(axis=0) - params) < 5 * se)
    np.testing.assert_allclose(flap.draws.std(axis=0), sd, rtol=0.08)
    np.testing.assert_allclose(flap.draws.sum(axis=1), 0.0, atol=1e-6)  # draws live on Σθ = 0


@pytest.mark.slow
def test_nuts_agrees_with_laplace_on_arena(arena_counts):
    """129 models, 1.67M battles: the posterior is nearly Gaussian, so NUTS means/SDs must match
    the Laplace twin (ridge-MLE mode and penalised-Hessian covariance) within Monte Carlo error —
    each standardised by its own MCSE (ArviZ mcse of the mean, mcse of the SD). The false-alarm
    rate of these bounds over seeds 0..19 is recorded by examples/bt_nuts_laplace_false_alarm.py."""
    from bayesrank.bt import density

    from .nuts_laplace import MEDIAN_REL_BOUND, Z_BOUND_MEAN, Z_BOUND_SD, nuts_laplace_z

    k = arena_counts.n_players
    params, hess, _, _ = fit_newton(arena_counts, ties="half", ridge=1 / DEFAULT_PRIOR_SIGMA**2)
    sd_lap = np.sqrt(np.diag(constrained_covariance(hess, k)))
    # the sampler fit("nuts") and the review use: nutpie on the hand-written density of the same model
    dens = density.BTDensity(arena_counts, "half", DEFAULT_PRIOR_SIGMA, 2.0, 1.0, False)
    dt = density.sample(dens, draws=400, tune=400, chains=2, seed=3)
    z = nuts_laplace_z(dt, params, sd_lap)
    assert z["divergences"] == 0 and z["ess_bulk_min"] > 100
    assert z["max_abs_sum"] < 1e-8  # every draw on Σθ = 0
    assert np.abs(z["z_mean"]).max() < Z_BOUND_MEAN, np.abs(z["z_mean"]).max()
    assert np.abs(z["z_sd"]).max() < Z_BOUND_SD, np.abs(z["z_sd"]).max()
    assert abs(np.median(z["rel_sd"])) < MEDIAN_REL_BOUND


@pytest.mark.slow
def test_davidson_map_twin_of_coverage_study_equals_pymc(llmfao_counts):
    """Davidson MAP = penalised MLE: the PyMC model's MAP and Laplace covariance with the default
    priors equal the NumPy twin with ridge 1/σ² on θ and 1/σ_λ² on λ (tests/bt/coverage_sim.davidson_map,
    the coverage study's Davidson posterior). The flat-prior limit is in test_pymc_model.py."""
    from .coverage_sim import _constrained_inv, davidson_map

    lf = map_laplace(build_bt_model(llmfao_counts, ties="davidson"))
    twin = davidson_map(llmfao_counts, llmfao_counts.counts[None], DEFAULT_PRIOR_SIGMA, 2.0)
    k = llmfao_counts.n_players
    np.testing.assert_allclose(lf.theta, twin.params[0, :k], atol=1e-7)
    assert lf.extra["log_nu"] == pytest.approx(twin.params[0, k], abs=1e-7)
    np.testing.assert_allclose(lf.cov, _constrained_inv(twin.hessian, 1)[0], rtol=1e-6, atol=1e-12)
