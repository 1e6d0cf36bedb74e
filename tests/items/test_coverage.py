"""Rank confidence sets from per-item results cover the true ranks at the stated level (simulation with
known truth: Rasch data, items drawn afresh from a normal population each replication; the true rank
of a model is that of its expected score on the population, which is the order of θ).

Least-favourable case (every model equal: every true rank is 1, coverage = P(no pair separated)):
coverage within 3 Monte Carlo SEs of 95%, two-sided, over 4,000 leaderboards in the validation tier
(±1.0 points) and 1,000 in the default suite (±2.1 points: the equal-model cases fail sets built from contrast SDs 20%
too small, checked once by scaling the item-level scores' SEs). With real differences the guarantee
is one-sided (≥ 95%)."""

import numpy as np
import pytest
from scipy.special import expit

from bayesrank.items.data import ItemScores
from bayesrank.items.frequentist import rank_sets
from tests.tiers import record, tiers

TIERS = tiers(default={"reps": 1000}, validation={"reps": 4000})


def _coverage(theta, n_items, seed, n_rep, cluster_size=None):
    rng = np.random.default_rng(seed)
    m = len(theta)
    true_rank = 1 + (theta[None, :] > theta[:, None]).sum(axis=1)
    models = np.array([f"m{i}" for i in range(m)], dtype=object)
    items = np.array([str(i) for i in range(n_items)], dtype=object)
    hits = 0
    for r in range(n_rep):
        if cluster_size:
            g = n_items // cluster_size
            b = np.repeat(rng.normal(-0.5, 1.0, g), cluster_size) + rng.normal(0, 0.6, n_items)
            clusters = np.repeat([str(k) for k in range(g)], cluster_size)
        else:
            b = rng.normal(-0.5, 1.2, n_items)
            clusters = None
        y = (rng.random((m, n_items)) < expit(theta[:, None] - b[None, :])).astype(float)
        d = ItemScores(models, items, y, np.ones_like(y, dtype=np.int64), successes=y.astype(np.int64),
                       clusters=clusters, cluster_name=None if clusters is None else "cluster")
        rs, _ = rank_sets(d, 0.95, seed=r, n_sim=2000)
        hits += bool(((rs.rank_lower <= true_rank) & (true_rank <= rs.rank_upper)).all())
    cov = hits / n_rep
    se = np.sqrt(0.95 * 0.05 / n_rep)
    return cov, se


@pytest.mark.slow
@TIERS
def test_equal_models_cover_at_the_level(tier):
    cov, se = _coverage(np.zeros(6), 300, seed=0, n_rep=tier.reps)
    record("items rank sets, 6 equal models: all true ranks covered", tier, reps=tier.reps, rate=cov, mc_se=se,
           bound=f"0.95 ± {3 * se:.3f}")
    assert abs(cov - 0.95) <= 3 * se, cov


@pytest.mark.slow
@TIERS
def test_clustered_equal_models_cover_at_the_level(tier):
    cov, se = _coverage(np.zeros(5), 400, seed=1, n_rep=tier.reps, cluster_size=5)
    record("items rank sets, 5 equal models, clustered items: all true ranks covered", tier, reps=tier.reps,
           rate=cov, mc_se=se, bound=f"0.95 ± {3 * se:.3f}")
    assert abs(cov - 0.95) <= 3 * se, cov


@pytest.mark.slow
@TIERS
def test_spread_models_cover_at_least_the_level(tier):
    cov, se = _coverage(np.array([0.6, 0.6, 0.3, 0.0, -0.4, -0.4]), 300, seed=2, n_rep=tier.reps)
    record("items rank sets, spread models: all true ranks covered", tier, reps=tier.reps, rate=cov, mc_se=se,
           bound=f">= {0.95 - 3 * se:.3f}")
    assert cov >= 0.95 - 3 * se, cov
