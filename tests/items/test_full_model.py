"""The uncollapsed Rasch model (``bayesrank.items.irt.build_full_model``: every item difficulty b_i
sampled, PyMC's NUTS) has the same posterior of (θ, μ, σ) as the collapsed model's production path
(``fit_nuts``: b_i integrated out by quadrature, nutpie on the compiled density) on a small
benchmark: means within 4 Monte Carlo standard errors of each other, SDs within 4 standard errors
of an SD — the two share no code but the priors' values."""

import numpy as np
import pytest

from bayesrank.items import irt
from bayesrank.items.data import ItemScores

from .conftest import long_frame, rasch_matrix


def _nuts(model, seed, draws=1000, tune=1000):
    import pymc as pm

    with model:
        return pm.sample(draws=draws, tune=tune, chains=4, cores=2, random_seed=seed, progressbar=False,
                         nuts_sampler="pymc", target_accept=0.9, compute_convergence_checks=False)


def _moments(x):
    """Per quantity: mean, SD, and their Monte Carlo standard errors from draws (chain, draw, …): the
    mean's SD/√ESS, the SD's √(Var((x − m)²)/ESS₂)/(2·SD) with ESS₂ the effective size of (x − m)²
    (no normality assumed: σ's posterior is skewed)."""
    import arviz as az

    m, sd = x.mean(axis=(0, 1)), x.std(axis=(0, 1))
    sq = (x - m) ** 2
    ess, ess2 = np.atleast_1d(az.ess(x)), np.atleast_1d(az.ess(sq))
    return m, sd, sd / np.sqrt(ess), np.sqrt(sq.reshape(-1, *sq.shape[2:]).var(axis=0) / ess2) / (2 * sd)


def assert_same_posterior(collapsed, full, names=("theta", "mu", "sigma")):
    """Means and SDs of each quantity within 4 Monte Carlo SEs of each other (:func:`_moments`); the
    full model's NUTS with at most 0.1% divergent transitions (its hierarchical σ occasionally gives one
    or two in 8,000, run to run)."""
    for name in names:
        c = np.asarray(collapsed["posterior"][name].values)  # (chain, draw, ...)
        f = np.asarray(full["posterior"][name].values)
        (mc, sc, ec, e2c), (mf, sf, ef, e2f) = _moments(c), _moments(f)
        assert np.all(np.abs(mc - mf) < 4 * np.hypot(ec, ef)), (name, mc, mf, ec, ef)
        assert np.all(np.abs(sc - sf) < 4 * np.hypot(e2c, e2f)), (name, sc, sf, e2c, e2f)
    div = full["sample_stats"]["diverging"]
    assert int(div.sum()) <= 0.001 * div.size  # the reference's NUTS: at most 0.1% divergent transitions


@pytest.mark.slow
def test_collapsed_and_full_rasch_posteriors_agree():
    d = ItemScores.from_long(long_frame(rasch_matrix(4, 40, seed=21, spread=0.8, sigma=1.2)))
    col = irt.fit_nuts(d, seed=1, draws=2000, loo=False)
    full = _nuts(irt.build_full_model(d), seed=2, draws=2000, tune=1000)
    assert_same_posterior(col.idata, full)
