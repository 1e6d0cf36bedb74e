"""Coverage of the style-controlled BT's Wald intervals in simulation with known truth.

1,200 replications (Monte Carlo SE of a 95% coverage ≈ 0.63%, so 3 SE ≈ 1.9%: enough to tell 95%
from 93%): 6 players, 1,500 battles, two style features, no ties (the model is correct). Each
interval (Fisher and sandwich) for β₀ and for the contrast θ₀ − θ₁ must cover within 3 MC SEs of 0.95.
"""

import numpy as np
import pytest

from bayesrank.bt.mle import covariance, fit_newton
from bayesrank.bt.simulate import simulate_style_battles
from bayesrank.data.aggregate import pair_rows
from bayesrank.data.comparisons import Comparisons

REPS, LEVEL_Z = 1200, 1.959963984540054


@pytest.mark.slow
def test_wald_intervals_cover_at_nominal_level():
    hits = {("fisher", "beta"): 0, ("fisher", "contrast"): 0, ("sandwich", "beta"): 0, ("sandwich", "contrast"): 0}
    rng = np.random.default_rng(20251201)
    theta = rng.normal(0, 0.7, 6)
    theta -= theta.mean()
    for rep in range(REPS):
        frame, _, beta = simulate_style_battles(n_players=6, n_battles=1500, beta=(0.5, -0.2), seed=10_000 + rep,
                                                theta_sd=0.0)
        # same θ in every replication: overwrite the simulator's (θ_sd = 0) outcomes with this θ
        d = pair_rows(Comparisons.from_frame(frame), "s0_a:s0_b,s1_a:s1_b")
        eta = theta[d.i] - theta[d.j] + d.X @ beta
        y = (np.random.default_rng(rep).random(d.n_rows) < 1 / (1 + np.exp(-eta))).astype(float)
        d = d.with_counts(np.column_stack([y, 1 - y, np.zeros(d.n_rows)]))
        params, hess, tm, _ = fit_newton(d, "half")
        for kind in ("fisher", "sandwich"):
            cov = covariance(tm, d, params, hess, kind)
            k = d.n_players
            sd_b = np.sqrt(cov[k, k])
            hits[(kind, "beta")] += abs(params[k] - beta[0]) <= LEVEL_Z * sd_b
            sd_c = np.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])
            hits[(kind, "contrast")] += abs(params[0] - params[1] - (theta[0] - theta[1])) <= LEVEL_Z * sd_c
    se = np.sqrt(0.95 * 0.05 / REPS)
    cover = {key: h / REPS for key, h in hits.items()}
    assert all(abs(c - 0.95) <= 3 * se for c in cover.values()), cover
