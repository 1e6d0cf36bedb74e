"""Fisher-information CIs on the constraint manifold: coverage over repeated simulations with known truth."""

import warnings

import numpy as np
import pytest
from scipy.special import expit

from bayesrank.hja.model import HJA
from bayesrank.hja.simulate import sample_counts, simulate_truth


def _coverage(n_reps, seed0=0):
    truth, _ = simulate_truth(n_judges=4, n_items=6, rank=1, heterogeneity=1.5, seed=3)
    S = truth.scores
    D = S - truth.mu[None, :]
    hits = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rep in range(seed0, seed0 + n_reps):
            c = sample_counts(truth, 1500, seed=rep)
            f = HJA(c, rank=1, seed=rep).fit(n_starts=1)
            h = []
            for i in range(1, 6):  # consensus contrasts μ_i − μ_0
                ct = f.contrast(i, 0)
                h.append(ct.lower <= truth.mu[i] - truth.mu[0] <= ct.upper)
            jt = f.judge_table()
            h += list((jt.lower <= truth.gamma) & (truth.gamma <= jt.upper))  # sensitivities
            pr = f.probability("judge1", 2, 3)  # a pairwise probability p_kij
            h.append(pr.lower <= expit(S[1, 2] - S[1, 3]) <= pr.upper)
            dv = f.deviations()  # judge deviations D_ki of judge 0
            d0 = dv[dv.judge == "judge0"]
            h += list((d0.lower.to_numpy() <= D[0]) & (D[0] <= d0.upper.to_numpy()))
            hits.append(h)
    return np.array(hits, dtype=float)


def test_fisher_ci_coverage_95_small_study():
    hits = _coverage(120)
    overall = hits.mean()
    assert 0.92 <= overall <= 0.98, overall
    # no quantity is badly off (binomial sd at 120 reps ≈ 0.02)
    assert hits.mean(axis=0).min() >= 0.86, hits.mean(axis=0)


@pytest.mark.slow
def test_fisher_ci_coverage_95_larger_study():
    hits = _coverage(300, seed0=1000)
    assert 0.93 <= hits.mean() <= 0.97, hits.mean()
    assert hits.mean(axis=0).min() >= 0.89, hits.mean(axis=0)
