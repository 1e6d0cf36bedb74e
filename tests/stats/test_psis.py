"""Vectorised PSIS-LOO (bayesrank.stats.psis) against ArviZ 1's ``loo`` on the same draws: elpd, SE,
p_loo, every Pareto k, pointwise elpd and log weights — on a real NUTS posterior of the arena's
3,460 pairs (some with k > 0.7, so the Pareto-smoothed tails matter) and on few draws (the
⌊S/5⌋-tail branch); bayesrank.bt.api.loo_summary reports the same numbers."""

import warnings

import numpy as np
import pytest

from bayesrank.stats import psis
from bayesrank.stats.convergence import stacked
from tests.stats.conftest import tree


def compare(dt, ll_name):
    import arviz as az

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = az.loo(dt, pointwise=True)
    ll = np.asarray(dt["log_likelihood"][ll_name].transpose("chain", "draw", ...))
    c, d = ll.shape[:2]
    post = dt["posterior"]
    got = psis.psis_loo(ll.reshape(c * d, -1), psis.relative_eff(stacked(post, list(post.data_vars))))
    assert got.elpd == pytest.approx(float(ref.elpd), rel=1e-12)
    assert got.se == pytest.approx(float(ref.se), rel=1e-10)
    assert got.p_loo == pytest.approx(float(ref.p), rel=1e-10)
    k_ref = np.asarray(ref.pareto_k).ravel()
    np.testing.assert_array_equal(np.isnan(got.pareto_k), np.isnan(k_ref))
    np.testing.assert_allclose(got.pareto_k, k_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.elpd_i, np.asarray(ref.elpd_i).ravel(), rtol=0, atol=1e-10)
    lw_ref = np.asarray(ref.log_weights.transpose("chain", "draw", ...)).reshape(c * d, -1)
    # NUTS repeats a draw when it rejects: equal log-likelihoods in a column, whose smoothed tail weights
    # may be assigned in another order (the same multiset of weights; elpd_i above is unchanged)
    np.testing.assert_allclose(np.sort(got.log_weights, axis=0), np.sort(lw_ref, axis=0), rtol=0, atol=1e-10)
    flat = ll.reshape(c * d, -1)
    srt = np.sort(flat, axis=0)
    dup = np.zeros_like(srt, dtype=bool)
    dup[1:] |= srt[1:] == srt[:-1]
    dup[:-1] |= srt[1:] == srt[:-1]
    tied = np.array([np.isin(flat[:, q], srt[dup[:, q], q]) for q in range(flat.shape[1])]).T
    np.testing.assert_allclose(got.log_weights[~tied], lw_ref[~tied], rtol=0, atol=1e-10)
    return got


def test_arena_pairs_match_arviz(arena_draws):
    dt, _ = arena_draws
    got = compare(dt, "outcomes")
    assert got.pareto_k.shape == (3460,)
    assert (got.pareto_k > 0.7).any() and (got.pareto_k < 0.5).any()  # both smoothed regimes exercised


def test_few_draws_short_tail(arena_draws):
    """S = 2 × 60 draws: S·r_eff ≤ 225, so the tail is ⌊S/5⌋ draws."""
    dt, _ = arena_draws
    few = dt.isel(draw=slice(0, 60))
    assert psis.tail_length(120, 1.0) == 24
    compare(few, "outcomes")


def test_synthetic_heavy_tails():
    """Log-likelihoods with a few extreme draws (k near or above 1) and an exact duplicate column."""
    rng = np.random.default_rng(3)
    ll = rng.normal(-1.0, 0.3, size=(2, 400, 12))
    ll[:, :, 3] -= rng.standard_exponential((2, 400)) ** 2 * 3
    ll[:, :, 7] = ll[:, :, 6]
    ll[0, :3, 9] = -40.0
    x = rng.normal(size=(4, 2, 400))
    compare(tree(x, ll), "y")


def test_loo_summary_uses_it(arena_draws):
    from bayesrank.bt.api import loo_summary

    dt, _ = arena_draws
    with pytest.warns(UserWarning, match="^Estimated shape parameter of Pareto distribution is greater than 0.67"):
        s = loo_summary(dt)
    got = compare(dt, "outcomes")
    assert s["elpd"] == got.elpd and s["n_pareto_k_gt_0.7"] == int((got.pareto_k > 0.7).sum())


def test_loo_summary_counts_an_unestimable_pareto_k_as_unreliable():
    """A pair whose largest importance ratios are tied (the tail's first quartile is its minimum)
    has no Pareto k estimate (NaN, as ArviZ): the summary warns and counts it with the k > 0.7 pairs
    instead of dropping it."""
    from bayesrank.bt.api import loo_summary
    from bayesrank.stats.psis import psis_loo, tail_length

    rng = np.random.default_rng(0)
    s = 800
    ll = rng.normal(-1.0, 0.3, size=(s, 4))
    m = tail_length(s, 1.0)
    col = np.full(s, -3.0)  # −log-likelihood: its m + 1 largest values, half of the tail tied at its minimum
    col[:m + 1] = np.concatenate([[-2.6], np.full(m // 2, -2.5), np.linspace(-2.4, -1.0, m - m // 2)])
    ll[:, 2] = -col
    k = psis_loo(ll, 1.0).pareto_k
    assert np.isnan(k[2]) and np.all(k[[0, 1, 3]] < 0.5)
    with pytest.warns(UserWarning, match="Pareto"):
        summary = loo_summary(tree(rng.normal(size=(1, 1, s)), ll[None]))
    assert summary["n_pareto_k_gt_0.7"] == 1
