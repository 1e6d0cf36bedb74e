"""The PyMC twin of style-controlled BT (the one builder, ``build_bt_model`` on comparison rows):
MAP = penalised row-level MLE (ridge 1/σ² on θ, 1/σ_β² on β), Laplace covariance = inverse
penalised Hessian, for half-win ties and — at the flat-prior limit — Davidson ties and a position
effect; NUTS cross-checks (slow)."""

import numpy as np
import pytest

from bayesrank.bt import BradleyTerry
from bayesrank.bt.mle import constrained_covariance, fit_newton
from bayesrank.bt.simulate import simulate_style_battles

STYLE = "s0_a:s0_b,s1_a:s1_b"


@pytest.fixture(scope="module")
def bt():
    frame, _, _ = simulate_style_battles(n_players=6, n_battles=600, beta=(0.7, -0.3), tie_rate=0.1, seed=8)
    return BradleyTerry(frame, STYLE, ties="half", prior_sigma=1.5, beta_sigma=0.5)


def test_model_dims(bt):
    m = bt.model
    assert m.named_vars_to_dims["theta"] == ("player",)
    assert m.named_vars_to_dims["beta"] == ("feature",)
    assert list(m.coords["feature"]) == ["s0", "s1"]


def test_map_and_laplace_equal_penalised_mle(bt):
    params, hess, _, _ = fit_newton(bt.rows, "half", ridge=1 / 1.5**2, beta_ridge=1 / 0.5**2, tol=1e-12)
    fmap = bt.fit("map")
    np.testing.assert_allclose(np.concatenate([fmap.score, fmap.coef]), params, atol=1e-6)
    np.testing.assert_allclose(fmap.cov, constrained_covariance(hess, bt.rows.n_players), atol=1e-6)
    assert fmap.diagnostics.converged
    lap = bt.fit("laplace", draws=4000, seed=1)
    np.testing.assert_allclose(lap.draws.mean(axis=0), params, atol=4 * np.sqrt(np.diag(lap.cov).max() / 4000))
    assert lap.to_dict()["settings"]["beta_sigma"] == 0.5
    fmap.to_json()  # schema-validated
    lap.to_json()


@pytest.mark.parametrize("position", [False, True])
def test_davidson_map_with_features_equals_mle_at_flat_prior(position):
    """Davidson ties with features (and a position effect): at σ = 10³ the MAP is the MLE and the
    Laplace covariance the inverse observed information, to 1e-6 (the MLE is itself checked against
    an independent maximisation in tests/bt/test_core_references.py)."""
    frame, _, _ = simulate_style_battles(n_players=5, n_battles=800, beta=(0.5,), tie_rate=0.2, seed=4,
                                         position=0.3)
    bt = BradleyTerry(frame, "s0_a:s0_b", position_effect=position, prior_sigma=1e3, beta_sigma=1e3,
                      tie_prior_sigma=1e3)
    assert bt.tie_model_for("map") == "davidson"
    params, hess, _, _ = fit_newton(bt.rows, "davidson", position=position, tol=1e-12)
    fmap = bt.fit("map")
    got = np.concatenate([fmap.score, [fmap.position["coef"]] if position else [], fmap.coef, [fmap.extra["log_nu"]]])
    np.testing.assert_allclose(got, params, atol=1e-5)
    np.testing.assert_allclose(fmap.cov, constrained_covariance(hess, bt.rows.n_players), rtol=1e-3, atol=1e-7)
    assert bt.model.named_vars_to_dims.get("beta") == ("feature",) and ("alpha" in bt.model.named_vars) == position
    fmap.to_json()


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
