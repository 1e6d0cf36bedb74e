"""The PyMC twin of style-controlled BT: MAP = penalised row-level MLE (ridge 1/σ² on θ,
1/σ_β² on β), Laplace covariance = inverse penalised Hessian; NUTS cross-checks (slow)."""

import numpy as np
import pytest

from bayesrank.bt.style import StyleBT, covariance, fit_style_newton, simulate_style_battles

STYLE = "s0_a:s0_b,s1_a:s1_b"


@pytest.fixture(scope="module")
def bt():
    frame, _, _ = simulate_style_battles(n_players=6, n_battles=600, beta=(0.7, -0.3), tie_rate=0.1, seed=8)
    return StyleBT(frame, STYLE, prior_sigma=1.5, beta_sigma=0.5)


def test_model_dims(bt):
    m = bt.model
    assert m.named_vars_to_dims["theta"] == ("player",)
    assert m.named_vars_to_dims["beta"] == ("feature",)
    assert list(m.coords["feature"]) == ["s0", "s1"]


def test_map_and_laplace_equal_penalised_mle(bt):
    pen = fit_style_newton(bt.data, ridge=1 / 1.5**2, beta_ridge=1 / 0.5**2, tol=1e-12)
    fmap = bt.fit("map")
    np.testing.assert_allclose(np.concatenate([fmap.score, fmap.coef]), pen.params, atol=1e-6)
    np.testing.assert_allclose(fmap.cov, covariance(bt.data, pen.params, pen.hessian), atol=1e-6)
    assert fmap.diagnostics.converged
    lap = bt.fit("laplace", draws=4000, seed=1)
    np.testing.assert_allclose(lap.draws.mean(axis=0), pen.params, atol=4 * np.sqrt(np.diag(lap.cov).max() / 4000))
    assert lap.to_dict()["settings"]["beta_sigma"] == 0.5
    fmap.to_json()  # schema-validated
    lap.to_json()


@pytest.mark.slow
def test_nuts_agrees_with_laplace(bt):
    """600 battles, 8 parameters: the posterior is close to Gaussian, so NUTS means and SDs agree
    with the Laplace approximation to within 10% of an SD (means) and 10% (SDs)."""
    lap = bt.fit("laplace", draws=10)
    nuts = bt.fit("nuts", draws=500, tune=500, chains=2, seed=3)
    sd_l = np.sqrt(np.diag(lap.cov))
    sd_n = np.sqrt(np.diag(nuts.cov))
    assert nuts.diagnostics.converged, nuts.diagnostics.messages
    mean_l = np.concatenate([lap.score, lap.coef])
    mean_n = np.concatenate([nuts.score, nuts.coef])
    assert np.all(np.abs(mean_n - mean_l) < 0.1 * sd_l + 3 * sd_n / np.sqrt(nuts.diagnostics.ess_bulk_min))
    assert np.all(np.abs(sd_n / sd_l - 1) < 0.1)
    assert nuts.to_datatree()["posterior"]["beta"].dims[-1] == "feature"
    assert nuts.to_dict()["diagnostics"]["kind"] == "sampler"
    loo = nuts.diagnostics.extra["loo"]
    assert loo["pareto_k_max"] < 0.7 and np.isfinite(loo["elpd"])
    nuts.to_json()
