"""The PyMC Bradley-Terry model against its frequentist twin (exact) and NUTS against Laplace."""

import numpy as np
import pytest

from bayesrank.bt import BradleyTerry
from bayesrank.bt.mle import constrained_covariance, newton
from bayesrank.bt.likelihood import tie_model
from bayesrank.data import read_comparisons
from bayesrank.datasets import path


@pytest.fixture(scope="module")
def llmfao():
    return read_comparisons(path("llmfao/crowd-comparisons.csv"))


def test_map_equals_ridge_mle_with_half_ties(llmfao):
    """ZeroSumNormal(σ) prior == ridge 1/σ²; fractional half-tie counts are not truncated."""
    sigma = 1.5
    bt = BradleyTerry(llmfao, ties="half", prior_sigma=sigma)
    assert llmfao.aggregate().ties.sum() > 1000  # the data really have ties
    fit = bt.fit("map")
    twin = BradleyTerry(llmfao, ties="half", ridge=1 / sigma**2).fit("mle", ci="fisher")
    np.testing.assert_allclose(fit.score, twin.score, atol=1e-9)
    np.testing.assert_allclose(fit.cov, twin.cov, atol=1e-9)
    assert abs(fit.score.sum()) < 1e-10


def test_davidson_map_matches_numpy_with_weak_tie_prior(llmfao):
    bt = BradleyTerry(llmfao, ties="davidson", prior_sigma=1e3, tie_prior_sigma=1e3)
    fit = bt.fit("laplace", draws=200)
    params, hess, _ = BradleyTerry(llmfao, ties="davidson").mle()
    k = len(fit.players)
    np.testing.assert_allclose(fit.score, params[:k], atol=1e-4)
    assert fit.extra["log_nu"] == pytest.approx(params[k], abs=1e-4)
    cov = constrained_covariance(hess, k, 1)
    np.testing.assert_allclose(np.sqrt(np.diag(fit.cov)), np.sqrt(np.diag(cov)), rtol=1e-3)
    # Laplace draws are centred at the mode with the Laplace covariance
    assert fit.draws.shape == (200, k + 1)
    tree = fit.to_datatree()
    assert set(tree.children) >= {"estimate", "posterior"}


def test_laplace_covariance_is_inverse_hessian_by_finite_differences(llmfao):
    """The Laplace covariance inverts the Hessian of the penalised loss, checked by finite differences."""
    sigma = 2.0
    fit = BradleyTerry(llmfao, ties="half", prior_sigma=sigma).fit("map")
    counts = llmfao.aggregate()
    tm = tie_model("half")
    x0 = fit.score[None]
    eps = 1e-5
    k = len(x0[0])
    from bayesrank.bt.mle import objective

    h_fd = np.zeros((k, k))
    for a in range(k):
        e = np.zeros(k)
        e[a] = eps
        gp = objective(tm, counts, x0 + e, ridge=1 / sigma**2)[1][0]
        gm = objective(tm, counts, x0 - e, ridge=1 / sigma**2)[1][0]
        h_fd[:, a] = (gp - gm) / (2 * eps)
    np.testing.assert_allclose(constrained_covariance(h_fd, k), fit.cov, atol=1e-7)
    # and the MLE path's Newton converged to the same point
    res = newton(tm, counts, ridge=1 / sigma**2)
    np.testing.assert_allclose(res.params[0], fit.score, atol=1e-9)


@pytest.mark.slow
def test_nuts_agrees_with_laplace_on_chatbot_arena():
    """1.67M votes: the posterior is nearly Gaussian, so NUTS means/SDs must match Laplace
    within Monte Carlo error; every draw satisfies the zero-sum constraint; diagnostics surfaced."""
    bt = BradleyTerry(path("arena/chatbotarena_20240814.json"), ties="half")
    lap = bt.fit("laplace", draws=10)
    nuts = bt.fit("nuts", draws=300, tune=300, chains=2, seed=3)
    th = nuts.draws
    assert np.abs(th.sum(axis=1)).max() < 1e-8
    d = nuts.diagnostics
    assert d["divergences"] == 0
    assert d["rhat_max"] < 1.05
    ess = d["ess_bulk_min"]
    lap_sd = np.sqrt(np.diag(lap.cov))
    z = (nuts.score - lap.score) / (lap_sd / np.sqrt(ess))
    assert np.abs(z).max() < 5.0, np.abs(z).max()
    np.testing.assert_allclose(th.std(axis=0, ddof=1), lap_sd, rtol=0.2)
    assert np.median(np.abs(th.std(axis=0, ddof=1) / lap_sd - 1)) < 0.06
    assert 0.0 <= d["ppc_share_outside_95"] < 0.15
    assert d["loo_pareto_k_max"] < 1.0
    tree = nuts.to_datatree()
    assert {"posterior", "log_likelihood", "sample_stats", "estimate"} <= set(tree.children)


def test_half_tie_predictive_draws_compile_without_object_mode():
    """The fractional-binomial observation has a symbolic (PyMC Binomial) generator: predictive
    draws run in every PyTensor backend without Numba's object-mode fallback warning (a Python
    ``random=`` callable triggers it), and draws are whole numbers of wins out of round(n)."""
    import warnings

    import pymc as pm

    from bayesrank.bt import build_bt_model
    from bayesrank.data.aggregate import PairCounts

    counts = PairCounts(np.array(["a", "b", "c"], dtype=object), np.array([0, 0, 1]), np.array([1, 2, 2]),
                        np.array([3.0, 1.0, 2.0]), np.array([1.0, 2.0, 2.0]), np.array([1.0, 0.0, 3.0]))
    model = build_bt_model(counts, ties="half")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with model:
            prior = pm.sample_prior_predictive(200, random_seed=1)
    assert not [w for w in caught if "object mode" in str(w.message)]
    wins = np.asarray(prior["prior_predictive"]["wins"]).reshape(-1, 3)
    n = np.round(counts.total)
    assert np.all(wins == np.round(wins)) and np.all((wins >= 0) & (wins <= n))
    assert np.all(wins.std(axis=0) > 0)
    # the observed half-win counts keep their fractions (w_i + t/2 = 3.5, 1.0, 3.5)
    obs = model.rvs_to_values[model["wins"]]
    assert obs.dtype == "float64"
    np.testing.assert_array_equal(obs.data, [3.5, 1.0, 3.5])
