"""Simulation-based calibration of the 2PL option as the review runs it
(``bayesrank.items.irt.fit_nuts(twopl=True)``: Laplace fit, chains started from its draws, nutpie on
the collapsed 2PL density with (a_i, b_i) integrated out per response pattern). 3 models × 30
items (at most 2³ response patterns, so each fit is cheap), 2 chains × 200 draws after 200 tuning
steps, 5 quantities θ, μ, σ. The data are simulated item by item from the uncollapsed 2PL story
(b_i ~ N(μ, σ), log a_i ~ N(0, 0.5²) on ±4 SDs, then the outcomes), so the test also checks the
integration over both item parameters. Ranks of the truth among 31 draws thinned from 400 (every
12th: the fits' bulk ESS is ~50–250 of 400, so the kept draws are close to independent), chi-square
on 8 bins and dispersion, Bonferroni at family-wise 1% (bayesrank.sbc)."""

import pytest

from bayesrank.sbc import power, uniformity
from tests.tiers import record, tiers

from .sbc import sbc_ranks

KEEP, BINS, DRAWS, CHAINS = 31, 8, 200, 2


@pytest.mark.slow
@tiers(default={"sims": 14, "shift": 2.0, "narrow": 0.28}, validation={"sims": 150, "shift": 0.5, "narrow": 0.7})
def test_sbc_twopl_three_models_ranks_uniform(tier):
    """Default tier: 14 simulations (~30 s) catch a posterior whose centre is 2 posterior SDs off
    (power 0.99) or whose SD is 0.28 of what it should be (0.92) (bayesrank.sbc.power, asserted
    below); a subtler miscalibration is the validation tier's: 150 simulations (the same first 14
    and 136 more): power 0.92 against a 0.5-SD shift and 0.94 against a posterior 30% too narrow."""
    ranks, divergences, _ = sbc_ranks(n_sims=tier.sims, seed=11, m=3, n=30, draws=DRAWS, tune=DRAWS, chains=CHAINS,
                                      twopl=True, n_keep=KEEP)
    assert ranks.shape == (tier.sims, 5)
    res = uniformity(ranks, alpha=0.01, n_draws=KEEP, bins=BINS)
    shift_power = power(tier.sims, 5, delta=tier.shift, n_draws=KEEP, bins=BINS)
    narrow_power = power(tier.sims, 5, c=tier.narrow, test="dispersion", n_draws=KEEP, bins=BINS)
    record("items 2PL SBC (3 models × 30 items)", tier, sims=tier.sims, quantities=5, min_p=res["min_p"],
           threshold=res["threshold"], uniform=res["uniform"], divergences=divergences,
           power=f"{shift_power:.2f} vs a {tier.shift}-SD shift, {narrow_power:.2f} vs SD × {tier.narrow}")
    assert res["uniform"], (res["table"], res["bin_counts"])
    assert divergences <= 0.001 * tier.sims * CHAINS * DRAWS  # at most 0.1% of transitions
    assert shift_power > 0.9 and narrow_power > 0.9  # the power stated in the docstring
