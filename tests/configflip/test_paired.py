"""Paired per-item tests of "A>B" claims equal statsmodels / scipy; intervals behave at 0% and 100%;
cluster-robust intervals cover in simulation where the iid ones do not."""

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_confint

from bayesrank.configflip.grid import EvalGrid
from bayesrank.configflip.paired import (
    cluster_se,
    detectable_effect,
    holm,
    jeffreys_interval,
    mcnemar_exact,
    paired_comparison,
    paired_tests,
    parse_claim,
    wilson_interval,
)
from bayesrank.configflip.simulate import simulate_grid
from bayesrank.errors import InputError


@pytest.mark.parametrize("n10, n01", [(7, 1), (0, 0), (0, 5), (13, 13), (40, 22), (3, 0)])
def test_exact_mcnemar_equals_statsmodels_and_scipy(n10, n01):
    two, one = mcnemar_exact(n10, n01)
    table = np.array([[30, n10], [n01, 25]])
    assert two == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-14)
    if n10 + n01:
        assert two == pytest.approx(stats.binomtest(n10, n10 + n01, 0.5).pvalue, abs=1e-14)
        assert one == pytest.approx(stats.binomtest(n10, n10 + n01, 0.5, alternative="greater").pvalue, abs=1e-14)


def test_paired_and_cluster_standard_errors_equal_statsmodels_ols():
    rng = np.random.default_rng(4)
    ya, yb = (rng.random(300) < 0.7).astype(float), (rng.random(300) < 0.6).astype(float)
    groups = rng.integers(0, 23, 300)
    d = ya - yb
    ols = sm.OLS(d, np.ones((300, 1)))
    r = paired_comparison(ya, yb, groups, n_boot=200)
    assert r["se"] == pytest.approx(float(ols.fit().bse[0]), rel=1e-12)
    ref = ols.fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert r["se_cluster"] == pytest.approx(float(ref.bse[0]), rel=1e-12)
    assert cluster_se(d, groups)[1] == 23
    z = stats.norm.ppf(0.975)
    assert r["diff_wald"] == pytest.approx([d.mean() - z * ref.bse[0], d.mean() + z * ref.bse[0]], rel=1e-12)
    assert r["p_value"] == pytest.approx(float(ref.pvalues[0]), rel=1e-10) and r["test"] == "cluster-robust Wald"


@pytest.mark.parametrize("n", [1, 10, 57])
def test_wilson_and_jeffreys_equal_statsmodels_and_stay_sensible_at_0_and_100_percent(n):
    for x in range(n + 1):
        assert wilson_interval(x, n) == pytest.approx(proportion_confint(x, n, 0.05, "wilson"), abs=1e-12)
        lo, hi = jeffreys_interval(x, n)
        ref_lo, ref_hi = proportion_confint(x, n, 0.05, "jeffreys")
        # interior: statsmodels' equal-tailed Beta(x+1/2, n-x+1/2) quantiles; boundaries: the interval must
        # contain the observed 0% / 100% (statsmodels' plain quantiles exclude it)
        assert lo == pytest.approx(0.0 if x == 0 else ref_lo, abs=1e-12)
        assert hi == pytest.approx(1.0 if x == n else ref_hi, abs=1e-12)
        assert lo <= x / n <= hi
    assert jeffreys_interval(0, n)[1] < 1 and jeffreys_interval(n, n)[0] > 0


def test_minimum_detectable_effect_and_items_needed_equal_statsmodels_power():
    rng = np.random.default_rng(7)
    ya, yb = (rng.random(400) < 0.72).astype(float), (rng.random(400) < 0.66).astype(float)
    r = paired_comparison(ya, yb, n_boot=100, power=0.8)
    sigma = r["se"] * np.sqrt(400)
    pw = NormalIndPower()
    assert pw.power(effect_size=r["mde"] / sigma, nobs1=400, alpha=0.05, ratio=0) == pytest.approx(0.8, abs=1e-9)
    need = pw.solve_power(effect_size=0.03 / sigma, alpha=0.05, power=0.8, ratio=0)
    r2 = paired_comparison(ya, yb, n_boot=100, power=0.8, effect=0.03)
    assert r2["items_needed"] == int(np.ceil(need - 1e-9))
    assert detectable_effect(0.0) != detectable_effect(0.0)  # NaN without variation


def test_holm_equals_statsmodels():
    p = np.array([0.01, 0.04, 0.03, 0.2, 0.001, 0.04])
    assert holm(p) == pytest.approx(multipletests(p, method="holm")[1], abs=1e-15)


def test_paired_bootstrap_agrees_with_scipy_bootstrap_within_monte_carlo_error():
    rng = np.random.default_rng(2)
    ya, yb = (rng.random(250) < 0.55).astype(float), (rng.random(250) < 0.5).astype(float)
    r = paired_comparison(ya, yb, n_boot=20000, seed=3)
    ref = stats.bootstrap((ya - yb,), np.mean, n_resamples=20000, method="percentile", random_state=5)
    # MC sd of a 2.5% quantile with 20,000 resamples ~0.02 se; two independent runs: tolerance 0.12 se (> 4 sd)
    tol = 0.12 * r["se"]
    assert r["diff_bootstrap"][0] == pytest.approx(ref.confidence_interval.low, abs=tol)
    assert r["diff_bootstrap"][1] == pytest.approx(ref.confidence_interval.high, abs=tol)


@pytest.mark.slow
def test_cluster_robust_interval_covers_where_the_iid_interval_does_not():
    """Items in 60 clusters of 10 share a cluster effect that moves A up and B down (the A-B difference
    varies by cluster); the population difference is 0.05. The cluster-robust Wald interval covers it at
    95% within 3 Monte Carlo SEs over 1,000 replications; the iid paired interval undercovers."""
    rng = np.random.default_rng(11)
    reps, g, m = 1000, 60, 10
    hit_c = hit_i = 0
    z = stats.norm.ppf(0.975)
    for _ in range(reps):
        shift = np.repeat(rng.normal(0, 0.08, g), m)          # |shift| < 0.3 keeps p inside (0, 1)
        pa, pb = 0.675 + shift, 0.625 - shift
        assert pa.max() < 1 and pb.min() > 0
        ya, yb = (rng.random(g * m) < pa).astype(float), (rng.random(g * m) < pb).astype(float)
        r = paired_comparison(ya, yb, np.repeat(np.arange(g), m), n_boot=1)
        lo, hi = r["diff_wald"]
        hit_c += lo <= 0.05 <= hi
        hit_i += r["diff"] - z * r["se"] <= 0.05 <= r["diff"] + z * r["se"]
    mc = np.sqrt(0.95 * 0.05 / reps)
    assert abs(hit_c / reps - 0.95) < 3 * mc
    assert hit_i / reps < 0.95 - 3 * mc


def claim_grid():
    grid, truth = simulate_grid({"A": 0.6, "B": 0.0, "C": 0.55}, {"template": ["t1", "t2", "t3"]}, n_items=300,
                                per_item=True, seed=8, interaction={("C", "template", "t3"): -1.2})
    return grid, truth


def test_paired_tests_on_a_grid_match_the_direct_computation_and_the_truth():
    grid, truth = claim_grid()
    res = paired_tests(grid, ["A>B", "C>B"], n_boot=500, seed=1)
    rows = res.table()
    assert set(rows["claim"]) == {"A>B", "C>B"}
    it = grid.items
    for r in rows.itertuples():
        cfg = dict(part.split("=") for part in r.config.split("|"))
        sel = it[(it.template == cfg["template"])]
        ya = sel[sel.model == r.player_a].set_index("item").correct.sort_index()  # items in sorted id order
        yb = sel[sel.model == r.player_b].set_index("item").correct.reindex(ya.index)
        direct = paired_comparison(ya.to_numpy(), yb.to_numpy(), n_boot=500, seed=1)
        assert r.diff == pytest.approx(direct["diff"]) and r.p_value == pytest.approx(direct["p_value"])
        assert r.diff_bootstrap == pytest.approx(direct["diff_bootstrap"])
    ab = rows[rows.claim == "A>B"]
    assert ab["significant"].all() and (ab["direction"] == "a").all()     # true logit gap 0.6 on 300 items
    claims = res.claims().set_index("claim")
    assert claims.loc["A>B", "holds_everywhere"] and not claims.loc["A>B", "reversal_supported"]
    # C beats B except in t3 where the interaction reverses it (true eta gap 0.55 - 1.2 < 0)
    cb = rows[rows.claim == "C>B"].set_index("config")
    assert cb.loc["template=t3", "direction"] == "b" and cb.loc["template=t1", "direction"] == "a"
    assert cb["p_holm"].to_numpy() == pytest.approx(multipletests(cb["p_value"], method="holm")[1])


def test_paired_result_follows_the_protocol(tmp_path):
    import json

    grid, _ = claim_grid()
    res = paired_tests(grid, "A>C", n_boot=200)
    text = res.to_json(tmp_path / "p.json")                      # validated against configflip_paired
    data = json.loads(text)
    assert data["schema"] == "configflip_paired" and data["diagnostics"]["kind"] == "exact"
    assert len(data["tests"]) == 3 and data["claims"][0]["player_a"] == "A"
    assert "A>C" in res.summary()
    assert res.plot() is not None


def test_bad_claims_and_missing_items_are_input_errors():
    grid, _ = claim_grid()
    for bad in ("A", ">B", "A>>"):
        with pytest.raises(InputError, match="expected 'A>B'"):
            parse_claim(bad)
    with pytest.raises(InputError, match=r"unknown player\(s\) \['Z'\]"):
        paired_tests(grid, "A>Z")
    scores = EvalGrid.from_scores(grid.data.drop(columns=["n_items", "n_correct"]), axes=["template"])
    with pytest.raises(InputError, match="per-item correctness"):
        paired_tests(scores, "A>B")
    with pytest.raises(InputError, match="cluster column"):
        paired_tests(grid, "A>B", cluster="passage")


def test_claim_evidence_orients_flips_posterior_and_paired_tests_as_claimed():
    from bayesrank.configflip.analysis import analyze

    grid, _ = claim_grid()
    res = analyze(grid, posterior="mle", claims=["B>C"], paired_kwargs={"n_boot": 200})
    ev = res.claim_evidence("B", "C", "sim")
    pairs = res.results["sim"].pairs.set_index(["player_a", "player_b"])
    bc = pairs.loc[("B", "C")]                                   # stored as B vs C: same orientation
    assert (ev["n_a_wins"], ev["n_b_wins"]) == (bc.n_plus, bc.n_minus)
    rev = res.claim_evidence("C", "B", "sim")                    # the reverse claim swaps counts and witnesses
    assert (rev["n_a_wins"], rev["n_b_wins"]) == (bc.n_minus, bc.n_plus)
    assert rev["witness_a_wins"] == bc.witness_b_wins and rev["witness_b_wins"] == bc.witness_a_wins
    w = grid.wide("sim")
    for cfg, p in rev["p_a_greater"].items():                    # P(C > B | c) from the closed-form twin
        assert (p > 0.5) == (w.loc[cfg, "C"] > w.loc[cfg, "B"])
        assert p == pytest.approx(1 - ev["p_a_greater"][cfg])
    assert ev["paired"]["summary"]["claim"] == "B>C" and len(ev["paired"]["tests"]) == 3
    assert rev["paired"] is None                                 # C>B was not tested
