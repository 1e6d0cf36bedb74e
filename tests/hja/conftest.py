"""Shared, expensive HJA fixtures: NUTS posteriors at ranks 0, 1, 2 on one simulated panel (known truth,
rank 1), sampled once per session (nutpie, the default sampler)."""

import warnings

import pytest

from bayesrank.hja.model import HJA
from bayesrank.hja.simulate import simulate_panel

#: K = 4 judges, N = 6 players, truth rank 1 with a strong residual (singular value 2.5), 1,500 comparisons
#: per judge. Wide priors, so that the posterior is comparable with the Fisher intervals.
PANEL = dict(comparisons_per_judge=1500, seed=8, n_judges=4, n_items=6, rank=1, heterogeneity=2.5)
WIDE = {"sigma_mu": 100.0, "sigma_gamma": 100.0, "sigma_s": 100.0}


@pytest.fixture(scope="session")
def het_panel():
    return simulate_panel(**PANEL)


@pytest.fixture(scope="session")
def nuts_fits(het_panel):
    fits = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # rank 1 (the truth) carries the cross-checks against the Fisher intervals: the longest run;
        # ranks 0 and 2 enter the predictive check and the PSIS-LOO comparison (converged, R-hat ≤ 1.01)
        for r, steps in ((0, 500), (1, 1000), (2, 600)):
            fits[r] = HJA(het_panel.counts, rank=r, seed=0).fit("nuts", draws=steps, tune=steps, chains=2, seed=3, **WIDE)
    return fits
