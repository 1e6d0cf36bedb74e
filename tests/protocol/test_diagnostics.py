"""The one meaning of `converged` (bayesrank.protocol.Diagnostics) and the shared JSON schemas."""

import numpy as np
import pytest
import xarray as xr
from jsonschema import ValidationError

from bayesrank.protocol import Diagnostics, schema, validate


def _tree(draws, diverging=None):
    chains, n = draws.shape[:2]
    post = xr.Dataset({"theta": (("chain", "draw", "player"), draws)},
                      coords={"chain": np.arange(chains), "draw": np.arange(n), "player": ["a", "b"]})
    div = np.zeros((chains, n), bool) if diverging is None else diverging
    stats = xr.Dataset({"diverging": (("chain", "draw"), div)}, coords={"chain": np.arange(chains), "draw": np.arange(n)})
    return xr.DataTree.from_dict({"/posterior": post, "/sample_stats": stats})


def test_iid_chains_converge_and_ess_is_near_the_number_of_draws():
    rng = np.random.default_rng(1)
    d = Diagnostics.sampler("nuts", _tree(rng.standard_normal((4, 1000, 2))))
    assert d.converged and d.messages == ()
    assert d.rhat_max < 1.01
    # independent draws: ESS ≈ 4000 (sampling variability of the estimate is a few percent)
    assert 3400 < d.ess_bulk_min <= 4600 and 3000 < d.ess_tail_min <= 4600
    assert d.ess_min_required == 400 and d.chains == 4 and d.draws == 1000
    validate(d.to_dict(), "diagnostics")


def test_a_shifted_chain_a_divergence_or_a_single_chain_fail():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 500, 2))
    x[0] += 3.0  # one chain stuck elsewhere
    d = Diagnostics.sampler("nuts", _tree(x))
    assert not d.converged and d.rhat_max > 1.1 and any("R-hat" in m for m in d.messages)
    div = np.zeros((4, 500), bool)
    div[2, 7] = True
    d2 = Diagnostics.sampler("nuts", _tree(rng.standard_normal((4, 500, 2)), div))
    assert d2.divergences == 1 and not d2.converged and d2.messages == ("nuts: 1 divergent transitions",)
    d3 = Diagnostics.sampler("nuts", _tree(rng.standard_normal((1, 2000, 2))))
    assert not d3.converged and any("2 chains" in m for m in d3.messages)


def test_non_finite_draws_fail_and_a_constant_parameter_does_not():
    """A parameter with a NaN draw has no R-hat; it must not be left out of the verdict (the other
    parameter alone looks converged). A constant parameter (zero variance, R-hat undefined) is not a
    failure by itself."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 1000, 2))
    x[1, 10, 1] = np.nan
    d = Diagnostics.sampler("nuts", _tree(x))
    assert not d.converged and any("non-finite draws" in m and "theta" in m for m in d.messages)
    validate(d.to_dict(), "diagnostics")
    x = rng.standard_normal((4, 1000, 2))
    x[:, :, 1] = 0.25
    d = Diagnostics.sampler("nuts", _tree(x))
    assert d.converged and d.messages == ()


def test_autocorrelated_chains_have_low_ess():
    rng = np.random.default_rng(3)
    e = rng.standard_normal((4, 1000, 2))
    x = np.zeros_like(e)
    for t in range(1, 1000):  # AR(1) with phi = 0.95: ESS ≈ n (1 − phi)/(1 + phi) ≈ 4000/39 ≈ 103
        x[:, t] = 0.95 * x[:, t - 1] + e[:, t]
    d = Diagnostics.sampler("nuts", _tree(x))
    assert d.ess_bulk_min < 250 and not d.converged


def test_optimizer_rule_needs_success_and_small_gradient():
    ok = Diagnostics.optimizer("newton", True, 1e-9, iterations=7)
    assert ok.converged and ok.kind == "optimizer"
    assert not Diagnostics.optimizer("newton", True, 1e-3).converged
    assert not Diagnostics.optimizer("lbfgs", False, 1e-12, status="ABNORMAL_TERMINATION").converged
    assert not Diagnostics.optimizer("newton", True, float("nan")).converged
    validate(ok.to_dict(), "diagnostics")


def test_resampling_counts_failed_replicates_and_combine():
    point = Diagnostics.optimizer("newton", True, 1e-10)
    b = Diagnostics.resampling("bootstrap", point, 200, 3, "excluded")
    assert not b.converged and b.n_failed == 3 and "3 of 200" in b.messages[0]
    assert Diagnostics.resampling("bootstrap", point, 200, 0, "excluded").converged
    both = Diagnostics.combine("grid", {"x": point, "y": b})
    assert not both.converged and both.messages == ("y: " + b.messages[0],) and both.kind == "composite"
    assert set(both.extra["parts"]) == {"x", "y"}
    validate(both.to_dict(), "diagnostics")
    assert Diagnostics.exact("anova").converged


def test_schema_rejects_incomplete_diagnostics():
    bad = Diagnostics.optimizer("newton", True, 1e-10).to_dict()
    del bad["gradient_norm"]
    with pytest.raises(ValidationError):
        validate(bad, "diagnostics")
    with pytest.raises(ValidationError):
        validate({"schema": "x", "bayesrank_version": "0", "diagnostics": {"kind": "sampler", "method": "nuts",
                  "converged": True, "messages": []}}, "envelope")
    assert schema("envelope")["required"] == ["schema", "bayesrank_version", "diagnostics"]
