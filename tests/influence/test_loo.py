"""Bayesian cross-check: PSIS-LOO (NUTS draws, ArviZ) vs influence-function pair drops."""

import pytest


@pytest.mark.slow
def test_psis_loo_agrees_with_influence_drops():
    from bayesrank.data import read_comparisons
    from bayesrank.datasets import path
    from bayesrank.influence.loo import psis_loo_crosscheck

    counts = read_comparisons(path("sports/nba_games_2023_24_tidy.csv")).aggregate()
    table, s = psis_loo_crosscheck(counts, prior_sigma=3.0, draws=1000, tune=500, chains=2, seed=0)
    assert s["n_pairs"] == 435 and len(table) == 435
    assert s["share_pareto_k_below_0.7"] >= 0.95
    # LOO change of the posterior-mean top-1 gap vs the 1sN pair-drop prediction at the MAP
    assert s["pearson"] >= 0.9
    assert 0.8 <= s["slope"] <= 1.25
    assert s["spearman_influential"] >= 0.8
