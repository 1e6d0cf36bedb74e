"""The PSIS check of a Laplace approximation (bayesrank.stats.laplace_psis): the smoothed log weights
and k̂ equal ArviZ's ``psislw`` on the same ratios; k̂ recovers the known tail shape of Gaussian
importance weights (proposal N(0, I), target N(0, s²I): the weights' tail has shape k = 1 − 1/s²)
and flags a proposal narrower than the target; resampling with the weights recovers the target's
moments."""

import numpy as np
import pytest

from bayesrank.stats.laplace_psis import importance_check, khat_threshold, laplace_psis


def _gaussian_ratios(s2, n, d, rng):
    x = rng.standard_normal((n, d))
    return 0.5 * (x * x).sum(axis=1) * (1.0 - 1.0 / s2)  # log N(x; 0, s²I) − log N(x; 0, I) + const


def test_log_weights_and_khat_equal_arviz_psislw():
    from arviz_stats.base.array import array_stats

    rng = np.random.default_rng(3)
    for s2 in (0.7, 1.5, 3.0):
        r = _gaussian_ratios(s2, 3000, 4, rng) + rng.normal(0, 0.01, 3000)
        lw, check = importance_check(r)
        lw_ref, k_ref = array_stats.psislw(-r)  # ArviZ takes the negated log ratios (a log-likelihood)
        np.testing.assert_allclose(lw, lw_ref, rtol=0, atol=1e-10)
        assert check.pareto_k == pytest.approx(float(k_ref), abs=1e-10)
        assert check.ess == pytest.approx(1.0 / np.sum(np.exp(lw_ref) ** 2), rel=1e-10)


@pytest.mark.parametrize("s2, k_true", [(1.25, 0.2), (2.0, 0.5), (4.0, 0.75)])
def test_khat_recovers_the_tail_shape_of_gaussian_weights(s2, k_true):
    rng = np.random.default_rng(20261207)
    ks = np.array([importance_check(_gaussian_ratios(s2, 10_000, 3, rng))[1].pareto_k for _ in range(20)])
    # 20 replications of S = 10,000 (tail of 300 draws; sd of one k̂ ≈ 0.09): the mean within 0.08 of k
    assert abs(ks.mean() - k_true) < 0.08, ks.mean()
    flagged = np.mean(ks > khat_threshold(10_000))
    if k_true > 0.7:
        assert flagged >= 0.6, flagged  # a proposal half as wide as the target is caught
    else:
        assert flagged == 0.0, flagged


def test_resampled_draws_have_the_targets_moments():
    # target N(m, S) in 2-d with a correlated covariance; proposal its Laplace approximation widened
    m = np.array([1.0, -0.5])
    s = np.array([[0.64, 0.3], [0.3, 0.5]])
    prec = np.linalg.inv(s)

    def log_p(x):
        d = x - m
        return -0.5 * np.einsum("ij,jk,ik->i", d, prec, d)

    out, proposal, check = laplace_psis(log_p, np.zeros(2), 1.5 * np.eye(2), n_draws=20_000, seed=5)
    assert check.ok and check.pareto_k < 0.5
    assert out.shape == (20_000, 2) and proposal.shape == (20_000, 2)
    se = np.sqrt(np.diag(s) / check.ess)
    np.testing.assert_array_less(np.abs(out.mean(axis=0) - m), 4 * se)  # 4 MC SEs of the weighted mean
    np.testing.assert_allclose(np.cov(out.T), s, atol=0.05)
    assert abs(proposal.mean(axis=0)).max() < 0.05  # the raw proposal is centred elsewhere


def test_a_proposal_equal_to_the_target_gives_equal_weights():
    lw, check = importance_check(np.full(500, 3.0))
    np.testing.assert_allclose(np.exp(lw), 1 / 500)
    assert check.ok and check.ess == 500


def test_too_few_finite_ratios_is_an_error():
    r = np.full(100, -np.inf)
    r[:5] = 0.0
    with pytest.raises(ValueError, match="only 5 of 100"):
        importance_check(r)
