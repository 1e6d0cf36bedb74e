"""Simulation-based calibration of the HJA PyMC model under NUTS (nutpie; bayesrank.hja.sbc): the ranks of
the true μ, γ, singular values and residual entries U Vᵀ among 99 thinned posterior draws are uniform.

3 judges × 4 players, rank 1, 20 comparisons per (judge, pair) cell, the model's default priors, 2 chains ×
200 draws after 200 tuning steps; per quantity a chi-square test on 10 bins and a dispersion test on the
mean of (u − ½)² (bayesrank.sbc), Bonferroni over both tests and all 20 quantities at family-wise 1%. The
truth is drawn by independent NumPy code, not by PyMC. Power (bayesrank.sbc.power, checked against direct
simulation in tests/test_sbc_generic.py) is stated per tier below; examples/hja_sbc.py runs the same loop
from the command line (docs/hja.md).
"""

import warnings

import numpy as np
import pytest

from bayesrank.hja.sbc import sbc_ranks
from bayesrank.sbc import L_DRAWS, power, uniformity
from tests.tiers import record, tiers

pytestmark = pytest.mark.slow


@tiers(default={"sims": 14, "shift": 2.0, "narrow": 0.28}, validation={"sims": 200, "shift": 0.5, "narrow": 1 / 1.5})
def test_sbc_ranks_uniform_for_hja_nuts(tier):
    """Default tier: 14 simulations catch a posterior whose centre is 2 posterior SDs off (power 0.99
    per quantity) or whose SD is 0.28 of what it should be (0.90) (bayesrank.sbc.power, asserted
    below) — a broken sampler or density, e.g. a missing Jacobian or a wrong prior scale; subtler
    miscalibration is the validation tier's: 200 simulations (the same first 14 and 186 more):
    power 0.97 against a 0.5-SD shift, 0.998 against an SD 1.5× too small."""
    n = tier.sims
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranks, divergences, names = sbc_ranks(n_sims=n, seed=0, draws=200, tune=200)
    assert ranks.shape == (n, len(names)) and ranks.min() >= 0 and ranks.max() <= L_DRAWS
    res = uniformity(ranks, names, alpha=0.01)
    shift_power = power(n, len(names), delta=tier.shift)
    narrow_power = power(n, len(names), c=tier.narrow, test="dispersion")
    record("HJA NUTS SBC (3 judges × 4 players, rank 1)", tier, sims=n, quantities=len(names), min_p=res["min_p"],
           threshold=res["threshold"], uniform=res["uniform"], divergences=divergences,
           power=f"{shift_power:.2f} vs a {tier.shift:.2g}-SD shift, {narrow_power:.2f} vs SD × {tier.narrow:.2g}")
    assert res["uniform"], res["table"]
    # the pooled ranks over all quantities are centred (mean L/2 = 49.5; SE of the mean ≤ 28.9/√n)
    assert abs(ranks.mean() - L_DRAWS / 2) < 3 * 28.9 / np.sqrt(n)
    assert shift_power > 0.9 and narrow_power > 0.9  # the power stated in the docstring
    assert divergences <= 0.01 * n * 400  # < 1% of the post-warm-up transitions
