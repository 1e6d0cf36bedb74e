"""Posterior flip probabilities separate configuration-driven reversals from item-sampling noise.

Simulation with known truth (bayesrank.configflip.simulate): a grid with NO configuration effect but
item noise has raw rho_flip > 0, and the hierarchical posterior must not claim a reversal; a grid with
a true model x template reversal must be detected, with the credible verdicts matching the truth.
"""

import numpy as np
import pytest

from bayesrank.configflip.metrics import pairwise_flips
from bayesrank.configflip.posterior import FlipPosterior
from bayesrank.configflip.simulate import simulate_grid
from tests.reference_mode import REFERENCE_MODE

AXES = {"template": ["minimal", "role", "detailed", "cot"], "decoding": ["greedy", "t0.7"]}
FIT = dict(draws=1000, tune=1000, chains=2, random_seed=1)


def null_grid():
    return simulate_grid({"A": 0.08, "B": 0.0, "C": -0.5}, AXES, n_items=400, per_item=False, seed=1)


def reversal_grid():
    return simulate_grid({"A": 0.15, "B": 0.0, "C": -0.5}, AXES, n_items=400, per_item=False, seed=11,
                         interaction={("A", "template", "cot"): -0.6, ("A", "template", "detailed"): -0.5})


def test_raw_rho_flip_is_often_positive_without_any_configuration_effect():
    raw = [pairwise_flips(simulate_grid({"A": 0.08, "B": 0.0, "C": -0.5}, AXES, n_items=400, per_item=False,
                                        seed=s)[0], "sim").rho_flip.iloc[0] for s in range(6)]
    assert sum(r > 0 for r in raw) >= 4          # item-sampling noise alone flips A vs B


def test_no_pooling_twin_matches_normal_closed_form():
    g, _ = null_grid()
    res = FlipPosterior(g).fit(method="mle", draws=2000, chains=1)
    pg = res.p_greater()
    w = g.wide("sim")
    n = 400
    c = w.index[0]
    pa, pb = w.loc[c, "A"], w.loc[c, "B"]
    va, vb = [(p * n + 0.5) / (n + 1) for p in (pa, pb)]
    z = (pa - pb) / np.sqrt(va * (1 - va) / n + vb * (1 - vb) / n)
    from scipy.stats import norm
    got = pg[(pg.player_a == "A") & (pg.player_b == "B") & (pg.config == c)].p_a_greater.iloc[0]
    assert got == pytest.approx(norm.cdf(z), abs=1e-12)


@pytest.fixture(scope="module")
def fits():
    out = {}
    for name, make in (("null", null_grid), ("reversal", reversal_grid)):
        g, truth = make()
        res = FlipPosterior(g).fit(**FIT)
        assert res.diagnostics.converged, res.diagnostics.messages   # verdicts below come from a converged fit
        out[name] = (g, truth, res)
    return out


@pytest.mark.slow
def test_null_grid_posterior_claims_no_reversal(fits):
    g, truth, res = fits["null"]
    raw = pairwise_flips(g, "sim").set_index(["player_a", "player_b"]).rho_flip
    ps = res.pair_summary().set_index(["player_a", "player_b"])
    assert raw[("A", "B")] > 0.2                                  # the raw statistic sees flips ...
    assert not ps.claims_reversal.any()                           # ... the posterior claims none
    assert ps.loc[("A", "B"), "rho_flip_mean"] < raw[("A", "B")]
    assert ps.loc[("A", "C"), "rho_flip_mean"] < 0.02 and ps.loc[("A", "C"), "n_configs_a_credibly_better"] == 8


@pytest.mark.slow
def test_true_reversal_is_detected_with_correct_configurations(fits):
    g, truth, res = fits["reversal"]
    ps = res.pair_summary().set_index(["player_a", "player_b"])
    assert ps.loc[("A", "B"), "claims_reversal"] and ps.loc[("A", "B"), "p_rho_flip_positive"] > 0.95
    pg = res.p_greater()
    ab = pg[(pg.player_a == "A") & (pg.player_b == "B")].set_index("config").p_a_greater
    true_sign = (truth["A"] - truth["B"]) > 0
    credible = (ab >= 0.95) | (ab <= 0.05)
    assert credible.sum() >= 4
    assert ((ab[credible] >= 0.95) == true_sign[credible]).all()  # no credible verdict contradicts the truth
    # true rho_flip = 4/8 = 0.5 lies in the 94% interval
    assert ps.loc[("A", "B"), "rho_flip_lo94"] <= 0.5 <= ps.loc[("A", "B"), "rho_flip_hi94"]
    orders = res.orderings().set_index("ordering")
    assert orders.loc["A > B > C", "p_reachable"] > 0.9 and orders.loc["B > A > C", "p_reachable"] > 0.9


@pytest.mark.slow
def test_flip_probabilities_are_calibrated_on_both_simulations(fits):
    """Cheap calibration check over the two simulated grids (48 pair x configuration cells): the
    posterior's Brier score against the true sign beats the raw sign's, and every cell it calls
    with P >= 0.9 either way is right. (The fuller multi-repeat calibration is in
    benchmarks/bench_configflip.py.)"""
    p_all, truth_all, raw_all = [], [], []
    for _g, truth, res in fits.values():
        pg = res.p_greater()
        for r in pg.itertuples():
            p_all.append(r.p_a_greater)
            truth_all.append(float(truth.loc[r.config, r.player_a] > truth.loc[r.config, r.player_b]))
            raw_all.append(float(r.observed_diff > 0))
    p, t, raw = map(np.asarray, (p_all, truth_all, raw_all))
    assert np.mean((p - t) ** 2) < np.mean((raw - t) ** 2)
    confident = (p >= 0.9) | (p <= 0.1)
    assert confident.sum() >= 30 and ((p[confident] >= 0.9) == (t[confident] == 1)).all()


@pytest.mark.slow
def test_dense_item_cube_has_the_same_log_density_as_the_indexed_likelihood():
    g, _ = simulate_grid({"A": 0.4, "B": 0.0}, {"template": ["t1", "t2"]}, n_items=10, per_item=True, seed=3)
    dense, indexed = FlipPosterior(g).build(), FlipPosterior(g, dense_items=False).build()
    rng = np.random.default_rng(0)
    point = {k: v + rng.normal(0, 0.3, np.shape(v)) for k, v in dense.initial_point().items()}
    assert dense.compile_logp(mode=REFERENCE_MODE)(point) == pytest.approx(indexed.compile_logp(mode=REFERENCE_MODE)(point), rel=1e-12)
    assert "y_loglik" in dense.named_vars and "y" in indexed.named_vars


@pytest.mark.slow
def test_sampler_diagnostics_are_reported_and_equal_arviz(fits):
    import arviz as az

    _, _, res = fits["reversal"]
    d, idata = res.diagnostics, res.idata
    names = res.spec.diagnostic_vars()
    from bayesrank.configflip.posterior import resolve_sampler

    assert d.kind == "sampler" and d.method.startswith(f"NUTS ({resolve_sampler('auto')}")  # nutpie when installed
    rhat = max(float(np.max(az.rhat(idata, var_names=[v])[v])) for v in names)
    ess_bulk = min(float(np.min(az.ess(idata, var_names=[v], method="bulk")[v])) for v in names)
    ess_tail = min(float(np.min(az.ess(idata, var_names=[v], method="tail")[v])) for v in names)
    div = int(idata["sample_stats"]["diverging"].sum())
    assert (d.rhat_max, d.ess_bulk_min, d.ess_tail_min, d.divergences) == \
        (pytest.approx(rhat), pytest.approx(ess_bulk), pytest.approx(ess_tail), div)
    assert d.converged == (rhat <= 1.01 and min(ess_bulk, ess_tail) >= 200 and div == 0)
    assert res.to_dict()["diagnostics"]["rhat_max"] == pytest.approx(rhat)


@pytest.mark.slow
def test_short_run_is_flagged_not_converged_in_result_cli_and_json(tmp_path, capsys):
    import json

    from bayesrank.cli import main
    from bayesrank.protocol import validate

    g, _ = null_grid()
    path = tmp_path / "grid.csv"
    g.data.to_csv(path, index=False)
    out = tmp_path / "r.json"
    rc = main(["configflip", str(path), "--axes", "template,decoding", "--n-items-col", "n_items",
               "--posterior", "nuts", "--draws", "15", "--tune", "15", "--json", str(out)])
    assert rc == 0                                   # a failed check warns, it does not fail the command
    text = capsys.readouterr().out
    assert "warning:" in text and "NOT converged" in text and "min bulk ESS" in text
    res = json.loads(out.read_text())
    validate(res, "configflip")
    post = res["benchmarks"]["sim"]["posterior"]["diagnostics"]
    assert post["kind"] == "sampler" and not post["converged"] and post["draws"] == 15 and post["chains"] == 2
    assert post["ess_bulk_min"] < 200 and not res["diagnostics"]["converged"]


@pytest.mark.slow
def test_pymc_sampler_choice_is_pymc_nuts_not_pymcs_automatic_nutpie():
    """PyMC 6 picks nutpie by itself when installed; nuts_sampler="pymc" must really run PyMC's NUTS
    (its sample_stats carry tree_depth; nutpie's call it depth). The 20 steps run in PyTensor's Python
    VM (the sampler's identity is checked here, not its numbers: no numba compilation)."""
    import pytensor

    g, _ = simulate_grid({"A": 0.3, "B": 0.0}, {"template": ["t1", "t2"]}, n_items=50, per_item=False, seed=2)
    with pytensor.config.change_flags(mode="FAST_COMPILE"):
        res = FlipPosterior(g).fit(draws=10, tune=10, nuts_sampler="pymc", cores=1)
    assert res.diagnostics.method == "NUTS (pymc)" and "tree_depth" in res.idata["sample_stats"]
