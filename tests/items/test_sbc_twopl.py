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


@pytest.mark.slow
def test_sbc_twopl_three_models_ranks_uniform():
    """The default suite's SBC of the 2PL path: 3 models × 30 items (at most 2³ response patterns, so
    each fit is cheap), 150 simulations, 2 chains × 200 draws after 200 tuning steps, ranks among 31
    draws thinned from 400 (every 12th: the fits' bulk ESS is ~50–250 of 400, so the kept draws are
    close to independent, which the 99 of the long run above were not), chi-square on 8 bins and
    dispersion, Bonferroni at family-wise 1%. Power here: 0.92 against a 0.5-SD shift, 0.94 against a
    posterior 30% too narrow."""
    n, draws, chains, keep, bins = 150, 200, 2, 31, 8
    ranks, divergences, _ = sbc_ranks(n_sims=n, seed=11, m=3, n=30, draws=draws, tune=200, chains=chains,
                                      twopl=True, n_keep=keep)
    assert ranks.shape == (n, 5)
    res = uniformity(ranks, alpha=0.01, n_draws=keep, bins=bins)
    print(res["table"], f"divergences {divergences}", sep="\n")  # shown with pytest -s
    assert res["uniform"], (res["table"], res["bin_counts"])
    assert divergences <= 0.001 * n * chains * draws
    assert power(n, 5, delta=0.5, n_draws=keep, bins=bins) > 0.9
    assert power(n, 5, c=0.7, test="dispersion", n_draws=keep, bins=bins) > 0.9
