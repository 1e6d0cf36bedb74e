"""The same influence numbers from the PyMC model (MAP + Laplace Hessian from PyTensor, PyTensor
per-match derivatives) and from the NumPy ridge MLE with ridge = 1/σ² (ZeroSumNormal(σ) prior),
and, in the flat-prior limit (σ = 10⁴), from the plain NumPy MLE (no ridge) to 1e-6."""

import numpy as np
import pytest

from bayesrank.data import read_comparisons
from bayesrank.datasets import path
from bayesrank.influence.actions import candidates
from bayesrank.influence.greedy import _state_for
from bayesrank.influence.objectives import CIObjective, PairMargin, SmoothTau, TopK, top1_gap
from bayesrank.influence.state import BTState

SIGMA = 2.0
WIDE_SIGMA = 1e4  # ridge 1e-8: the flat-prior limit


@pytest.fixture(scope="module")
def pair_of_states():
    from bayesrank.influence.pymc_path import state_from_pymc

    counts = read_comparisons(path("sports/nba_games_2023_24_tidy.csv")).aggregate()
    return state_from_pymc(counts, prior_sigma=SIGMA), BTState.fit(counts, ridge=1 / SIGMA**2)


OBJECTIVES = {
    "top1_gap": top1_gap,
    "top3_ci_aware": lambda s: TopK(s, 3, ci_aware=True),
    "tau": lambda s: SmoothTau(s),
    "ci_trace": lambda s: CIObjective(s, None),
    "ci_player": lambda s: CIObjective(s, "Boston Celtics"),
    "pair_ci_aware": lambda s: PairMargin(s, "Denver Nuggets", "Minnesota Timberwolves", ci_aware=True),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["drop", "flip", "add"])
@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_influence_identical_from_pymc_and_numpy(pair_of_states, kind, name):
    ps, ns = pair_of_states
    np.testing.assert_allclose(ps.theta, ns.theta, atol=1e-8)
    np.testing.assert_allclose(ps.hinv, ns.hinv, atol=1e-8)
    ps, ns = _state_for(ps, kind), _state_for(ns, kind)
    make = OBJECTIVES[name]
    for order in ("first", "1sN"):
        a = make(ps).delta(ps, candidates(ps, kind), 1.0, order)
        b = make(ns).delta(ns, candidates(ns, kind), 1.0, order)
        assert np.abs(b).max() > 1e-4  # a non-trivial comparison
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-8)


@pytest.mark.slow
def test_pytensor_derivatives_match_closed_form(pair_of_states):
    ps, ns = pair_of_states
    d = np.linspace(-4, 4, 17)
    for x, y in zip(ps.match_derivatives(d), ns.match_derivatives(d)):
        np.testing.assert_allclose(x, y, atol=1e-12)


@pytest.fixture(scope="module")
def flat_prior_states():
    from bayesrank.influence.pymc_path import state_from_pymc

    counts = read_comparisons(path("sports/nba_games_2023_24_tidy.csv")).aggregate()
    return state_from_pymc(counts, prior_sigma=WIDE_SIGMA), BTState.fit(counts, ridge=0.0)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["drop", "flip", "add"])
def test_flat_prior_limit_equals_numpy_mle(flat_prior_states, kind):
    """Design card, literally: with a very wide ZeroSumNormal prior the MAP is the MLE, the Laplace
    covariance is the Fisher (inverse observed information) covariance, and every PyMC-path
    influence score (first order and 1sN, 6 objectives) equals the NumPy MLE's to 1e-6."""
    ps, ns = flat_prior_states
    assert ns.ridge == 0.0
    np.testing.assert_allclose(ps.theta, ns.theta, rtol=0, atol=1e-6)
    np.testing.assert_allclose(ps.hinv, ns.hinv, rtol=0, atol=1e-6)
    ps, ns = _state_for(ps, kind), _state_for(ns, kind)
    for name, make in OBJECTIVES.items():
        for order in ("first", "1sN"):
            a = make(ps).delta(ps, candidates(ps, kind), 1.0, order)
            b = make(ns).delta(ns, candidates(ns, kind), 1.0, order)
            assert np.abs(b).max() > 1e-4, name  # a non-trivial comparison
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-6, err_msg=f"{name} {order}")
