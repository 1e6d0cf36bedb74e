"""Simulation-based calibration of the Bradley-Terry PyMC model under NUTS (issue 12.9).

150 simulations per tie model (4 players, 15 comparisons per pair, σ = 1.5, σ_λ = 1), ranks of
the truth among 99 thinned draws; per parameter a chi-square test (10 bins) and a dispersion test
(mean of (u − ½)²), Bonferroni over all of them at family-wise 1% (bayesrank.sbc). What this can
distinguish (per parameter, :func:`bayesrank.sbc.power`, checked against direct simulation in
tests/test_sbc_generic.py): a posterior centred 0.5 posterior SDs off is detected with probability
0.93 (chi-square); a posterior 20% too narrow with 0.54 and 25% too wide with 0.46 (dispersion; Davidson,
5 parameters: 0.92 / 0.52 / 0.43); a 10% scale error hardly at all — that is what the coverage studies
with ≥ 10,000 intervals (test_coverage.py) and the NUTS-vs-Laplace check (test_pymc_references.py)
are for. examples/bt_sbc.py runs 300 simulations per model (power 0.92/0.91, Davidson 0.90/0.90, against 20% too
narrow / 25% too wide, 1.0 against a 0.5-SD shift) and prints the rank histograms (recorded in
docs/bt.md). The sampler is the one `fit("nuts")` and the review use: nutpie on the hand-written
density (bayesrank.bt.density, one cached numba compilation), ≈ 0.1 s per fit.
"""

import pytest

from bayesrank.sbc import power, uniformity

from .sbc import sbc_ranks


@pytest.mark.slow
@pytest.mark.parametrize("ties", ["half", "davidson"])
def test_sbc_ranks_uniform(ties):
    n = 150
    ranks, divergences = sbc_ranks(ties, n_sims=n, seed=12)
    assert ranks.shape == (n, 4 + (ties == "davidson"))
    res = uniformity(ranks, alpha=0.01)
    assert res["uniform"], (res["table"], res["bin_counts"])
    assert divergences <= 0.001 * n * 1000  # at most 0.1% of transitions
    p = ranks.shape[1]
    assert power(n, p, delta=0.5) > 0.9 and power(n, p, c=0.8, test="dispersion") > 0.5  # stated power
