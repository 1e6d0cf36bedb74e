"""The hand-written Bradley–Terry log posterior (bayesrank.bt.density) against the PyMC model it
stands for: PyMC's compiled log-density and gradient in the same value coordinates, at random
points, for every tie family and model term (position effect, features, weights, zero rows)."""

from __future__ import annotations

import numpy as np
import pytest

from bayesrank.bt.density import BTDensity, zerosum_theta
from bayesrank.bt.pymc_model import build_bt_model
from bayesrank.data.rows import PairRows
from tests.reference_mode import REFERENCE_MODE


def rows(seed, ordered=False, n_features=0, weighted=False):
    rng = np.random.default_rng(seed)
    k = 6
    i, j = np.triu_indices(k, 1)
    if ordered:
        i, j = np.concatenate([i, j]), np.concatenate([j, i])
    counts = rng.integers(0, 12, size=(len(i), 3)).astype(float)
    counts[2] = 0.0  # a row without comparisons
    X = rng.normal(size=(len(i), n_features)) if n_features else None
    w = rng.uniform(0.5, 2.0, len(i)) if weighted else None
    return PairRows([f"p{q}" for q in range(k)], i, j, counts=counts, X=X, weight=w, ordered=ordered)


CASES = [("half", {}), ("drop", {}), ("davidson", {}), ("half", {"ordered": True}),
         ("davidson", {"ordered": True, "n_features": 2}), ("half", {"n_features": 2, "weighted": True})]


@pytest.mark.parametrize("ties,kw", CASES)
def test_logp_and_gradient_equal_the_pymc_model(ties, kw):
    r = rows(3, **kw)
    position = bool(kw.get("ordered"))
    model = build_bt_model(r, ties, 1.7, 0.8, position=position, beta_sigma=0.6)
    dens = BTDensity(r, ties, 1.7, 0.8, 0.6, position)
    logp = model.compile_logp(mode=REFERENCE_MODE)  # tests/reference_mode.py
    dlogp = model.compile_dlogp(mode=REFERENCE_MODE)
    names = [v.name for v in model.value_vars]
    point = model.initial_point()
    sizes = [int(np.asarray(point[n]).size) for n in names]
    assert sum(sizes) == dens.ndim
    import pytensor

    theta_expr = next(v for v in model.unobserved_value_vars if v.name == "theta")
    theta_of = pytensor.function([model.rvs_to_values[model["theta"]]], theta_expr, on_unused_input="ignore", mode=REFERENCE_MODE)
    rng = np.random.default_rng(7)
    values = []
    for _ in range(5):
        x = rng.normal(0, 1.5, dens.ndim)
        parts, o = {}, 0
        for n, s in zip(names, sizes):
            parts[n] = x[o : o + s].reshape(np.shape(point[n]))
            o += s
        lp, g = dens.logp_grad(x)
        np.testing.assert_allclose(g, dlogp(parts), rtol=1e-10, atol=1e-9)
        values.append((lp, float(logp(parts))))
        # the stored θ is PyMC's back-transform
        np.testing.assert_allclose(dens.expand(x)["theta"], theta_of(parts["theta_zerosum__"]), atol=1e-12)
    ours, pymc = np.array(values).T
    np.testing.assert_allclose(ours - ours[0], pymc - pymc[0], rtol=1e-10, atol=1e-8)  # equal up to a constant


def test_zerosum_map_is_an_isometry_onto_sum_zero():
    z = np.random.default_rng(0).normal(size=(4, 9))
    th = zerosum_theta(z)
    np.testing.assert_allclose(th.sum(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(th, axis=1), np.linalg.norm(z, axis=1), rtol=1e-12)


@pytest.mark.parametrize("ties", ["half", "davidson"])
def test_pointwise_loglik_equals_pymc_compute_log_likelihood(ties):
    import pymc as pm

    r = rows(5)
    model = build_bt_model(r, ties, 1.7, 0.8)
    dens = BTDensity(r, ties, 1.7, 0.8, 1.0, False)
    rng = np.random.default_rng(1)
    params = np.column_stack([zerosum_theta(rng.normal(size=(3, 5)))] + ([rng.normal(size=(3, 1))] if ties == "davidson" else []))
    import arviz as az
    import xarray as xr

    post = {"theta": xr.DataArray(params[None, :, :6], dims=("chain", "draw", "player"),
                                  coords={"player": [str(p) for p in r.players]})}
    if ties == "davidson":
        post["log_nu"] = xr.DataArray(params[None, :, 6], dims=("chain", "draw"))
    dt = az.from_dict({"posterior": {k: v.values for k, v in post.items()}},
                      dims={"theta": ["player"]}, coords={"player": [str(p) for p in r.players]})
    ll = pm.compute_log_likelihood(dt, model=model, progressbar=False, compile_kwargs={"mode": REFERENCE_MODE})
    name = "outcomes" if ties == "davidson" else "wins"
    ref = np.asarray(ll["log_likelihood"][name]).reshape(3, -1)
    np.testing.assert_allclose(dens.pointwise_loglik(params), ref, rtol=1e-10, atol=1e-10)


def test_density_nuts_adds_the_log_likelihood_only_for_loo():
    """The density sampler writes the draws' pointwise log-likelihood (``log_likelihood`` group, one
    entry per pair, equal to the density's own at the draws) when PSIS-LOO needs it, not with ``loo=False``."""
    from bayesrank.bt import BradleyTerry

    bt = BradleyTerry(rows(7), ties="half")
    with_loo = bt.fit("nuts", draws=60, tune=100, chains=2, seed=3)
    without = bt.fit("nuts", draws=60, tune=100, chains=2, seed=3, loo=False, ppc=False)
    assert "log_likelihood" in with_loo.idata.children and "log_likelihood" not in without.idata.children
    assert "loo" in with_loo.diagnostics.extra and "loo" not in without.diagnostics.extra
    np.testing.assert_array_equal(with_loo.draws, without.draws)  # the same seeded chains


@pytest.mark.parametrize("ties", ["half", "davidson"])
def test_predictive_check_drawn_beside_psis_loo_equals_the_one_drawn_alone(ties):
    """With PSIS-LOO the predictive check's replicates are drawn in a thread while LOO runs: its arrays
    and summary equal those of the check drawn alone (loo=False) and of predictive_check called on the
    fit's draws directly (its own seeded generator)."""
    from bayesrank.bt import BradleyTerry, density

    bt = BradleyTerry(rows(7), ties=ties)
    both = bt.fit("nuts", draws=60, tune=100, chains=2, seed=3)
    alone = bt.fit("nuts", draws=60, tune=100, chains=2, seed=3, loo=False)
    assert "loo" in both.diagnostics.extra and both.diagnostics.extra["ppc"] == alone.diagnostics.extra["ppc"]
    dens = density.BTDensity(bt.rows, ties, bt.prior_sigma, bt.tie_prior_sigma, bt.beta_sigma, bt.position)
    direct = density.predictive_check(dens, both.draws, 2, seed=3)
    for key, value in direct.items():
        np.testing.assert_array_equal(both.ppc[key], value)
        np.testing.assert_array_equal(alone.ppc[key], value)
