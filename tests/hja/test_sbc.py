"""Simulation-based calibration of the HJA PyMC model under NUTS (nutpie; bayesrank.hja.sbc): the ranks of
the true μ, γ, singular values and residual entries U Vᵀ among 99 thinned posterior draws are uniform.

50 simulations (3 judges × 4 players, rank 1, 20 comparisons per (judge, pair) cell, the model's default
priors), chi-square on 10 bins per quantity, Bonferroni at family-wise 1%. The truth is drawn by
independent NumPy code, not by PyMC. Power at 50 simulations (bayesrank.hja.sbc.power): a posterior
whose centre is 1 SD off is detected per quantity with probability > 0.99, one whose SD is 1.5× too small
only with 0.14 — examples/hja_sbc.py runs 200 simulations (power 0.98 and 0.99 for an SD 1.5× too small
or a centre 0.5 SD off; docs/hja.md).
"""

import warnings

import numpy as np
import pytest

from bayesrank.hja.sbc import L_DRAWS, power, sbc_ranks, uniformity

pytestmark = pytest.mark.slow

N_SIMS = 50


def test_sbc_ranks_uniform_for_hja_nuts():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranks, divergences, names = sbc_ranks(n_sims=N_SIMS, seed=0, draws=200, tune=200)
    assert ranks.shape == (N_SIMS, len(names)) and ranks.min() >= 0 and ranks.max() <= L_DRAWS
    res = uniformity(ranks, names, alpha=0.01)
    assert res["uniform"], res["table"].sort_values("p_value").head()
    # the pooled ranks over all quantities are centred (mean L/2 = 49.5; SE of the mean ≤ 28.9/√50 ≈ 4.1)
    assert abs(ranks.mean() - L_DRAWS / 2) < 3 * 28.9 / np.sqrt(N_SIMS)
    # what this test can detect at 60 simulations
    assert power(N_SIMS, len(names), delta=1.0) > 0.99
    assert divergences <= 0.01 * N_SIMS * 400  # < 1% of the 20,000 post-warm-up transitions
