"""Simulation-based calibration of the HJA PyMC model under NUTS (nutpie; bayesrank.hja.sbc): the ranks of
the true μ, γ, singular values and residual entries U Vᵀ among 99 thinned posterior draws are uniform.

60 simulations (3 judges × 4 players, rank 1, 20 comparisons per (judge, pair) cell, the model's default
priors); per quantity a chi-square test on 10 bins and a dispersion test on the mean of (u − ½)²
(bayesrank.sbc), Bonferroni over both tests and all 20 quantities at family-wise 1%. The truth is drawn by
independent NumPy code, not by PyMC. Power at 60 simulations (bayesrank.sbc.power, checked against direct
simulation in tests/test_sbc_generic.py): a posterior whose centre is 1 SD off is detected per quantity
with probability 0.99 (chi-square), one whose SD is 1.5× too small with 0.57 (dispersion) — examples/hja_sbc.py
runs 200 simulations (docs/hja.md).
"""

import warnings

import numpy as np
import pytest

from bayesrank.hja.sbc import sbc_ranks
from bayesrank.sbc import L_DRAWS, power, uniformity

pytestmark = pytest.mark.slow

N_SIMS = 60


def test_sbc_ranks_uniform_for_hja_nuts():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranks, divergences, names = sbc_ranks(n_sims=N_SIMS, seed=0, draws=200, tune=200)
    assert ranks.shape == (N_SIMS, len(names)) and ranks.min() >= 0 and ranks.max() <= L_DRAWS
    res = uniformity(ranks, names, alpha=0.01)
    assert res["uniform"], res["table"]
    # the pooled ranks over all quantities are centred (mean L/2 = 49.5; SE of the mean ≤ 28.9/√60 ≈ 3.7)
    assert abs(ranks.mean() - L_DRAWS / 2) < 3 * 28.9 / np.sqrt(N_SIMS)
    # what this test can detect at 60 simulations
    assert power(N_SIMS, len(names), delta=1.0) > 0.99
    assert power(N_SIMS, len(names), c=1 / 1.5, test="dispersion") > 0.5
    assert divergences <= 0.01 * N_SIMS * 400  # < 1% of the 24,000 post-warm-up transitions
