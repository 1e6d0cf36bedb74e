"""The PyMC Bradley-Terry model against its frequentist twin (exact) and NUTS against Laplace."""

import numpy as np
import pytest

from bayesrank.bt import BradleyTerry
from bayesrank.bt.likelihood import tie_model
from bayesrank.bt.mle import constrained_covariance, newton
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


@pytest.mark.parametrize("ties", ["half", pytest.param("drop", marks=pytest.mark.slow), "davidson"])
def test_flat_prior_limit_map_is_mle_and_laplace_is_fisher(llmfao, ties):
    """The design card's claim in its flat-prior limit (issue 12.8): with a very wide prior
    (σ = σ_λ = 1e4, i.e. a ridge of 1e-8) the PyMC MAP equals the unpenalised NumPy MLE and the
    Laplace intervals equal the Fisher (observed-information) intervals, to 1e-6."""
    flat = BradleyTerry(llmfao, ties=ties, prior_sigma=1e4, tie_prior_sigma=1e4)
    lap = flat.fit("laplace", draws=200, seed=0)
    mle = BradleyTerry(llmfao, ties=ties).fit("mle", ci="fisher")
    assert lap.ties == mle.ties == ties and lap.diagnostics.converged and mle.diagnostics.converged
    np.testing.assert_allclose(lap.score, mle.score, atol=1e-6, rtol=0)
    np.testing.assert_allclose(lap.lower, mle.lower, atol=1e-6, rtol=0)
    np.testing.assert_allclose(lap.upper, mle.upper, atol=1e-6, rtol=0)
    np.testing.assert_allclose(lap.cov, mle.cov, atol=1e-6, rtol=0)  # includes log ν for Davidson
    if ties == "davidson":
        assert lap.extra["log_nu"] == pytest.approx(mle.extra["log_nu"], abs=1e-6)
    # the tolerance discriminates: the default prior (σ = 3, MAP = ridge-1/9 MLE) moves scores by far more
    shrunk = BradleyTerry(llmfao, ties=ties, ridge=1 / 9).fit("mle", ci="fisher")
    assert np.abs(shrunk.score - mle.score).max() > 1e-3
    assert lap.draws.shape == (200, len(lap.players) + (ties == "davidson"))
    assert set(lap.to_datatree().children) >= {"estimate", "posterior"}


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
def test_nuts_diagnostics_on_chatbot_arena():
    """NUTS diagnostics on the 1.67M-vote arena are the protocol's (R-hat, ESS, divergences over θ,
    PPC and PSIS-LOO in ``extra``); the agreement of NUTS with Laplace is checked with the right
    Monte Carlo errors in test_pymc_references.py::test_nuts_agrees_with_laplace_on_arena."""
    bt = BradleyTerry(path("arena/chatbotarena_20240814.json"), ties="half")
    nuts = bt.fit("nuts", draws=300, tune=300, chains=2, seed=3)
    d = nuts.diagnostics
    # the protocol's sampler diagnostics over theta, recomputed here with ArviZ
    import arviz as az

    assert d.kind == "sampler" and d.chains == 2 and d.draws == 300
    assert d.rhat_max == pytest.approx(float(np.asarray(az.rhat(nuts.idata, var_names=["theta"])["theta"]).max()))
    assert d.ess_bulk_min == pytest.approx(float(np.asarray(az.ess(nuts.idata, var_names=["theta"])["theta"]).min()))
    assert d.divergences == int(np.asarray(nuts.idata.sample_stats["diverging"]).sum())
    assert d.converged == (d.rhat_max <= 1.01 and d.ess_bulk_min >= 200 and d.ess_tail_min >= 200 and d.divergences == 0)
    # PPC: the binomial model fits the pair win rates (the share of pairs outside their central
    # 95% replicated interval is ~5% under a correct model; half ties make it smaller)
    assert d.extra["ppc"]["n_pairs"] == int((bt.counts.total > 0).sum())
    assert d.extra["ppc"]["share_outside_95"] < 0.10
    assert d.extra["loo"]["pareto_k_max"] < 1.0
    tree = nuts.to_datatree()
    assert {"posterior", "log_likelihood", "sample_stats", "estimate"} <= set(tree.children)
    nuts.to_json()  # validated against the fit schema


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
