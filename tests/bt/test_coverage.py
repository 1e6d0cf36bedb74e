"""Coverage of 95% intervals on simulated leaderboards with known truth.

Each claim is asserted within 3 Monte Carlo standard errors of the nominal 95%, with the SE taken
between datasets (intervals of one dataset are dependent through Σθ = 0), and each test also
asserts that its 3·SE is small enough for the claim to mean something: ≥ 10,000 intervals give
3·SE ≈ 0.65-0.7 pp, so a 93% interval (−2 pp) fails. The bootstrap study is more expensive and
says what it can distinguish (3·SE ≈ 1.2 pp: 95% from 93%, not from 94%).
"""

import numpy as np
import pytest

from .coverage_sim import (
    all_pairs,
    bootstrap_coverage,
    coverage_summary,
    fisher_coverage,
    simulate_counts,
    tie_coverage,
    truth,
)


def _assert_nominal(summary, max_three_se):
    assert 3 * summary["mc_se"] <= max_three_se, summary  # the study can tell 95% from a wrong level
    assert abs(summary["coverage"] - 0.95) <= 3 * summary["mc_se"], summary


def test_fisher_coverage_binary():
    """Binary BT, 8 players, 100 games per pair, 1,300 datasets = 10,400 intervals."""
    theta = truth(8, spread=0.8, seed=1)
    template = all_pairs(8, 100)
    batch = simulate_counts(theta, template, n_rep=1300, seed=2)
    cover, res = fisher_coverage(theta, template, batch, "half")
    assert res.converged.all()
    _assert_nominal(coverage_summary(cover), 0.0075)
    # the MLE is (nearly) unbiased at this size: mean error within 4 SE of 0 for every player
    err = res.params - theta
    assert np.all(np.abs(err.mean(axis=0)) < 4 * err.std(axis=0) / np.sqrt(len(err)))


def test_fisher_coverage_davidson():
    """Davidson data and fit, 6 players, 100 comparisons per pair, 1,800 datasets = 10,800 intervals."""
    theta = truth(6, spread=0.8, seed=3)
    template = all_pairs(6, 100)
    batch = simulate_counts(theta, template, n_rep=1800, seed=4, log_nu=-0.5)
    cover, res = fisher_coverage(theta, template, batch, "davidson")
    assert res.converged.all()
    _assert_nominal(coverage_summary(cover), 0.0075)
    lam = res.params[:, -1]
    assert abs(lam.mean() + 0.5) < 4 * lam.std() / np.sqrt(len(lam))  # λ recovered


@pytest.mark.slow
def test_bootstrap_coverage():
    """Percentile bootstrap (multinomial resampling of comparisons, as LMArena): 500 datasets × 6
    players = 3,000 intervals, 300 resamples each; 3·SE ≈ 1.2 pp."""
    theta = truth(6, spread=0.8, seed=5)
    template = all_pairs(6, 60)
    batch = simulate_counts(theta, template, n_rep=500, seed=6)
    cover = bootstrap_coverage(theta, template, batch, n_boot=300, seed=100)
    _assert_nominal(coverage_summary(cover), 0.013)


#: 8 players, 60 comparisons per pair, Davidson truth with log ν = 0.3: ≈ 35% ties
TIE_SETUP = {"k": 8, "per_pair": 60, "spread": 0.8, "seed": 21, "log_nu": 0.3}


@pytest.mark.slow
def test_interval_coverage_with_many_ties():
    """Issue 12.12: with ~35% ties, the half-win Fisher interval and the half-win posterior
    over-cover (ties are sure half points: Var(y) = p(1 − p) − p_tie/4, below the binomial
    variance they assume), while the sandwich and bootstrap intervals of the half-win MLE and the
    Davidson Fisher and posterior intervals cover at 95%. 1,300 datasets = 10,400 intervals per
    method (bootstrap: 400 datasets = 3,200 intervals)."""
    s = TIE_SETUP
    theta = truth(s["k"], spread=s["spread"], seed=s["seed"])
    rows, share, _ = tie_coverage(theta, all_pairs(s["k"], s["per_pair"]), s["log_nu"], n_rep=1300, seed=22,
                               boot_reps=400, n_boot=200)
    assert 0.30 <= share <= 0.40
    got = {name: coverage_summary(c) for name, c in rows.items()}
    for name in ("sandwich, half-win MLE", "Fisher, Davidson MLE", "Laplace, Davidson posterior"):
        _assert_nominal(got[name], 0.0075)
    _assert_nominal(got["bootstrap percentile, half-win MLE"], 0.013)
    for name in ("Fisher, half-win MLE", "Laplace, half-win posterior"):
        assert got[name]["coverage"] > 0.95 + 3 * got[name]["mc_se"], got[name]  # conservative: too wide
