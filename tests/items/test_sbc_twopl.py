"""Simulation-based calibration of the 2PL option as the review runs it
(``bayesrank.items.irt.fit_nuts(twopl=True)``: Laplace fit, chains started from its draws, nutpie on
the collapsed 2PL density with (a_i, b_i) integrated out per response pattern; 150 simulations,
4 models × 30 items, 6 quantities θ, μ, σ; 2 chains × 300 draws after 300 tuning steps). The data
are simulated item by item from the uncollapsed 2PL story (b_i ~ N(μ, σ), log a_i ~ N(0, 0.5²) on
±4 SDs, then the outcomes), so the test also checks the integration over both item parameters.
Ranks of the truth among 99 thinned draws uniform by the chi-square and dispersion tests,
Bonferroni at family-wise 1% (bayesrank.sbc). Power at this size (bayesrank.sbc.power, exact rank
law): a posterior 0.5 SDs off is detected with probability 0.91, one 30% too narrow with 0.96."""

import pytest

from bayesrank.sbc import power, uniformity

from .sbc import sbc_ranks


@pytest.mark.slow
@pytest.mark.validation  # ~15 min of NUTS and a narrow pass: not in the default suite (BAYESRANK_VALIDATION=1)
def test_sbc_twopl_ranks_uniform():
    n, draws, chains = 150, 300, 2
    ranks, divergences, _ = sbc_ranks(n_sims=n, seed=5, n=30, draws=draws, tune=300, chains=chains, twopl=True)
    assert ranks.shape == (n, 6)
    res = uniformity(ranks, alpha=0.01)
    assert res["uniform"], (res["table"], res["bin_counts"])
    assert divergences <= 0.001 * n * chains * draws  # at most 0.1% of transitions
    assert power(n, 6, delta=0.5) > 0.9 and power(n, 6, c=0.7, test="dispersion") > 0.9  # stated power
