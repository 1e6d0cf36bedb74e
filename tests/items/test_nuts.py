"""The production NUTS path (nutpie on the compiled collapsed density, :func:`bayesrank.items.irt.fit_nuts`):
its quadrature-grid guard, and convergence at the issue's scale (100 models × 10,000 items) checked by
the sampler's diagnostics and against the Laplace approximation, which at that size is accurate
(the posterior of 101 parameters from 10,000 items is close to Gaussian)."""

from dataclasses import replace

import numpy as np
import pytest
from scipy.special import expit

from bayesrank.items import irt
from bayesrank.items.data import ItemScores

from .conftest import long_frame, rasch_matrix


def test_draws_outside_the_grid_range_rerun_on_the_default_grid():
    """A Laplace fit claiming a σ range far too narrow gives a grid accurate only up to ~σ̂; the
    chains' σ draws leave it and fit_nuts re-runs them on the default grid (and says so)."""
    d = ItemScores.from_long(long_frame(rasch_matrix(4, 60, seed=11, sigma=1.5)))
    st = irt.sufficient(d)
    lap = irt.fit_laplace(st)
    m = d.n_models
    cov = lap.extra["cov"].copy()
    cov[m, :] *= 1e-3
    cov[:, m] *= 1e-3
    narrow = replace(lap, extra={**lap.extra, "cov": cov})
    assert irt.nuts_grid(st, narrow).sigma_max < 1.01 * lap.extra["sigma_mode"]
    fit = irt.fit_nuts(d, laplace=narrow, stats=st, draws=200, tune=200, chains=2, loo=False, seed=1)
    assert fit.extra["regrid"]["sigma_max_drawn"] > fit.extra["regrid"]["grid_sigma_max"]
    assert fit.extra["grid"]["sigma_max"] >= fit.sigma.max()


@pytest.mark.slow
def test_converges_at_100_models_by_10000_items():
    rng = np.random.default_rng(20)
    m, n = 100, 10_000
    theta = np.linspace(1.5, -1.5, m)
    y = (rng.random((m, n)) < expit(theta[:, None] - rng.normal(-0.5, 1.5, n)[None, :])).astype(float)
    d = ItemScores(np.array([f"m{i}" for i in range(m)], dtype=object), np.array([str(i) for i in range(n)],
                   dtype=object), y, np.ones_like(y, dtype=np.int64), successes=y.astype(np.int64))
    st = irt.sufficient(d)
    lap = irt.fit_laplace(st)
    fit = irt.fit_nuts(d, stats=st, laplace=lap, loo=False, seed=2)
    dg = fit.diagnostics
    assert dg.converged and dg.divergences == 0, dg.line()
    assert dg.to_dict()["rhat_max"] <= 1.01
    sd = fit.draws.std(axis=0)
    # posterior means within 0.15 SD of the Laplace mean (Monte Carlo error ≈ 0.02 SD with ESS ≥ 2,000), SDs within 10%
    assert np.max(np.abs(fit.draws.mean(axis=0) - lap.draws.mean(axis=0)) / sd) < 0.15
    np.testing.assert_allclose(sd, lap.draws.std(axis=0), rtol=0.1)
    # the truth within 4 posterior SDs for all 100 models (false alarm 0.6% when right; a wrong likelihood
    # at this size is many SDs off)
    t = theta - theta.mean()
    assert np.all(np.abs(fit.draws.mean(axis=0) - t) < 4 * sd)
