"""Coverage of 95% intervals on simulated leaderboards with known truth (target 92-98%)."""

import numpy as np
import pytest

from .coverage_sim import all_pairs, bootstrap_coverage, fisher_coverage, simulate_counts, truth


def test_fisher_coverage_binary_small():
    theta = truth(8, spread=0.8, seed=1)
    template = all_pairs(8, 30)
    batch = simulate_counts(theta, template, n_rep=500, seed=2)
    cover, res = fisher_coverage(theta, template, batch, "half")
    assert res.converged.all()
    rate = cover.mean()
    assert 0.92 <= rate <= 0.98, rate
    # the MLE is (nearly) unbiased at this size
    assert np.abs(res.params.mean(axis=0) - theta).max() < 0.05


def test_fisher_coverage_davidson_small():
    theta = truth(6, spread=0.8, seed=3)
    template = all_pairs(6, 40)
    batch = simulate_counts(theta, template, n_rep=400, seed=4, log_nu=-0.5)
    cover, res = fisher_coverage(theta, template, batch, "davidson")
    assert 0.92 <= cover.mean() <= 0.98, cover.mean()
    assert res.params[:, -1].mean() == pytest.approx(-0.5, abs=0.05)  # λ recovered


def test_bootstrap_coverage_small():
    theta = truth(6, spread=0.8, seed=5)
    template = all_pairs(6, 30)
    batch = simulate_counts(theta, template, n_rep=120, seed=6)
    cover = bootstrap_coverage(theta, template, batch, n_boot=200, seed=100)
    assert 0.92 <= cover.mean() <= 0.98, cover.mean()


@pytest.mark.slow
def test_coverage_larger_fisher_and_bootstrap():
    theta = truth(15, spread=1.0, seed=7)
    template = all_pairs(15, 20)
    batch = simulate_counts(theta, template, n_rep=1500, seed=8)
    cover, _ = fisher_coverage(theta, template, batch, "half")
    assert 0.93 <= cover.mean() <= 0.97, cover.mean()
    bcover = bootstrap_coverage(theta, template, batch[:200], n_boot=300, seed=9)
    assert 0.92 <= bcover.mean() <= 0.98, bcover.mean()
