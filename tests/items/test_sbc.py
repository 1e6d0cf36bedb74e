"""Simulation-based calibration of the items kind's NUTS path as the review runs it
(:func:`bayesrank.items.irt.fit_nuts`: Laplace fit, chains started from its draws, the quadrature
grid chosen from its σ range, nutpie on the compiled collapsed density; 150 simulations, 4 models
× 40 items, 6 quantities θ, μ, σ; 2 chains × 150 draws after the default 300 tuning steps): ranks
of the truth among 99 thinned draws uniform by the chi-square and dispersion tests, Bonferroni at
family-wise 1% (bayesrank.sbc). The data are simulated from the uncollapsed story (every item's
difficulty drawn, then its outcomes), so the test also checks that integrating the difficulties
out is right. Power at this size (bayesrank.sbc.power, exact rank law): a posterior 0.5 SDs off is
detected with probability 0.91, one 30% too narrow with 0.96, 20% too narrow with 0.50."""

import pytest

from bayesrank.sbc import power, uniformity

from .sbc import sbc_ranks


@pytest.mark.slow
def test_sbc_ranks_uniform():
    n, draws, chains = 150, 150, 2
    ranks, divergences, _ = sbc_ranks(n_sims=n, seed=3, draws=draws, tune=300, chains=chains)
    assert ranks.shape == (n, 6)
    res = uniformity(ranks, alpha=0.01)
    assert res["uniform"], (res["table"], res["bin_counts"])
    assert divergences <= 0.001 * n * chains * draws  # at most 0.1% of transitions
    assert power(n, 6, delta=0.5) > 0.9 and power(n, 6, c=0.7, test="dispersion") > 0.9  # stated power
