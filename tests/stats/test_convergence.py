"""R-hat and bulk/tail/mean ESS of bayesrank.stats.convergence against ArviZ 1 (arviz_stats) on the
same draws: a real NUTS posterior (arena, 130 parameters), chains that disagree (R-hat well above
1.01), an autocorrelated AR(1) chain, a constant and a NaN parameter."""

import numpy as np
import pytest

from bayesrank.stats import convergence as C
from tests.stats.conftest import tree


def arviz_values(x):
    import arviz as az

    dt = tree(x)
    return {m: np.asarray(f(dt)["v"]) for m, f in {
        "rhat": lambda d: az.rhat(d),
        "bulk": lambda d: az.ess(d, method="bulk"),
        "tail": lambda d: az.ess(d, method="tail"),
        "mean": lambda d: az.ess(d, method="mean")}.items()}


def ours(x):
    return {"rhat": C.rhat(x), "bulk": C.ess_bulk(x), "tail": C.ess_tail(x), "mean": C.ess_mean(x)}


def assert_same(x):
    ref, got = arviz_values(x), ours(x)
    for m in ref:
        np.testing.assert_array_equal(np.isnan(got[m]), np.isnan(ref[m]), err_msg=m)
        np.testing.assert_allclose(got[m], ref[m], rtol=1e-10, atol=0, equal_nan=True, err_msg=m)
    return got


def test_real_nuts_posterior(arena_draws):
    dt, names = arena_draws
    x = C.stacked(dt["posterior"], names)
    assert x.shape == (130, 2, 500)
    got = assert_same(x)
    assert got["rhat"].max() < 1.05 and got["bulk"].min() > 100


def test_disagreeing_and_autocorrelated_chains():
    rng = np.random.default_rng(5)
    p, m, n = 6, 4, 301  # odd draws: the middle draw of each chain is left out of the split chains
    x = rng.normal(size=(p, m, n))
    x[0] += np.arange(m)[:, None] * 0.5  # chains centred apart
    x[1, :, n // 2:] += 1.0  # a trend within each chain
    e = rng.normal(size=(m, n))
    for t in range(1, n):  # AR(1), ρ = 0.9
        e[:, t] = 0.9 * e[:, t - 1] + e[:, t]
    x[2] = e
    x[3] = np.round(x[3])  # many ties in the ranks
    got = assert_same(x)
    assert got["rhat"][0] > 1.1 and got["rhat"][1] > 1.1 and got["bulk"][2] < 0.2 * m * n


def test_constant_and_nan_parameters():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 2, 40))
    x[1] = 0.7
    x[2, 1, 5] = np.nan
    got = ours(x)
    ref = arviz_values(x)
    for m in ("bulk", "tail", "mean"):
        np.testing.assert_allclose(got[m], ref[m], rtol=1e-10, equal_nan=True)
    assert np.isnan(got["rhat"][2]) and np.isnan(ref["rhat"][2])
    assert np.isnan(got["bulk"][2]) and got["mean"][1] == 80


def test_diagnostics_sampler_uses_them(arena_draws):
    import arviz as az

    from bayesrank.protocol import Diagnostics

    dt, names = arena_draws
    d = Diagnostics.sampler("nuts", dt, var_names=names)

    def worst(ds, fn):
        return fn(np.concatenate([np.asarray(ds[v]).ravel() for v in names]))

    assert d.rhat_max == pytest.approx(worst(az.rhat(dt, var_names=names), np.max), rel=1e-12)
    assert d.ess_bulk_min == pytest.approx(worst(az.ess(dt, var_names=names, method="bulk"), np.min), rel=1e-12)
    assert d.ess_tail_min == pytest.approx(worst(az.ess(dt, var_names=names, method="tail"), np.min), rel=1e-12)


def test_average_ranks_equal_scipy():
    from scipy.stats import rankdata

    rng = np.random.default_rng(4)
    x = np.round(rng.normal(size=(5, 300)), 1)  # many ties
    x[2] = 1.0
    np.testing.assert_array_equal(C.average_ranks(x), rankdata(x, method="average", axis=-1))
