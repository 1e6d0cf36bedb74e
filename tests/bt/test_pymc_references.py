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
    assert fmap.diagnostics["converged"]
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
def test_map_davidson_equals_ridge_mle(llmfao_counts):
    """Davidson with a flat-ish prior on log ν (σ_λ = 1e4): MAP = MLE with ridge on θ only."""
    lf = map_laplace(build_bt_model(llmfao_counts, ties="davidson", prior_sigma=3.0, tie_prior_sigma=1e4))
    params, hess, _, _ = fit_newton(llmfao_counts, ties="davidson", ridge=1 / 9.0)
    k = llmfao_counts.n_players
    np.testing.assert_allclose(lf.theta, params[:k], atol=1e-7)
    assert lf.extra["log_nu"] == pytest.approx(params[k], abs=1e-7)
    np.testing.assert_allclose(lf.cov, constrained_covariance(hess, k, 1), rtol=1e-6, atol=1e-12)


@pytest.mark.slow
def test_nuts_agrees_with_laplace_on_arena(arena_counts):
    """129 models, 1.67M battles: the posterior is nearly Gaussian, so NUTS means/SDs must match
    the Laplace twin (ridge-MLE mode and penalised-Hessian covariance) within Monte Carlo error."""
    from bayesrank.bt.pymc_model import sample_nuts

    k = arena_counts.n_players
    params, hess, _, _ = fit_newton(arena_counts, ties="half", ridge=1 / DEFAULT_PRIOR_SIGMA**2)
    sd_lap = np.sqrt(np.diag(constrained_covariance(hess, k)))
    model = build_bt_model(arena_counts, ties="half")
    dt = sample_nuts(model, draws=400, tune=400, chains=2, seed=3, cores=1)
    th = dt.posterior["theta"].transpose("chain", "draw", "player").values.reshape(-1, k)
    assert int(np.asarray(dt.sample_stats["diverging"]).sum()) == 0
    import arviz as az

    ess = np.asarray(az.ess(dt, var_names=["theta"])["theta"])  # ArviZ 1: a DataTree with the posterior vars
    assert ess.shape == (k,) and ess.min() > 100
    mcse = th.std(axis=0) / np.sqrt(ess)
    z = (th.mean(axis=0) - params) / mcse
    assert np.abs(z).max() < 4.5, np.abs(z).max()
    # SD of an SD estimate ≈ SD / sqrt(2 ESS)
    rel = th.std(axis=0) / sd_lap - 1
    assert np.all(np.abs(rel) < 4.5 / np.sqrt(2 * ess)), np.abs(rel * np.sqrt(2 * ess)).max()
    assert abs(np.median(rel)) < 0.03
