"""Paired gap posterior: its likelihood against an independent construction, pairing, the same
functional as the plug-in, coverage with a known population gap (side by side with the paired
bootstrap), protocol surface (JSON schema, diagnostics, plots), and the model card's snippet."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from bayesrank.calibration.gap import analyze
from bayesrank.calibration.posterior import ALPHA_SD, build_paired_model
from bayesrank.calibration.records import from_frame
from bayesrank.protocol import validate
from tests.reference_mode import REFERENCE_MODE
from tests.tiers import record, tiers

FULL = dict(provenance="self_generated", scored_answer="generated", readout="T1", context="bare")


def _logit(c):
    c = np.clip(c, 1e-4, 1 - 1e-4)
    return np.log(c / (1 - c))


def test_likelihood_equals_an_independent_item_level_design():
    """logp differences of the PyMC model (aggregated Binomial rows, cumulative-slope assembly)
    equal an item-level Bernoulli likelihood built from an explicit ramp design matrix plus the
    Normal priors (scipy), at random parameter points."""
    rng = np.random.default_rng(0)
    cells = {}
    for name, n in (("a", 300), ("b", 200)):
        v = rng.choice([0.5, 0.7, 0.9, 1.0], size=n)
        t = rng.uniform(0.01, 0.999, size=n)
        cells[name] = (v, t, (rng.uniform(size=n) < 0.6).astype(float))
    cells["const"] = (np.full(50, 0.8), rng.uniform(size=50), (rng.uniform(size=50) < 0.5).astype(float))
    model, parsed, lay = build_paired_model(cells, n_knots=4)
    logp = model.compile_logp(mode=REFERENCE_MODE)  # tests/reference_mode.py

    def independent(alpha, z):
        # slope = 1/2 + sd·z, sd = 1.5·max(w, 1)/w: the change over a segment has sd 1.5·max(w, 1)
        widths = np.concatenate([np.diff(c.knots[s]) for c in parsed for s in ("verbal", "token")])
        slope = 0.5 + 1.5 * np.maximum(widths, 1) / widths * z
        total, k = 0.0, 0
        for ci, cell in enumerate(parsed):
            eta = np.full(cell.n, alpha[ci])
            for sig in ("verbal", "token"):
                kn = cell.knots[sig]
                x = _logit(cell.confidence(sig))
                for j in range(kn.size - 1):
                    eta += slope[k] * np.clip(x - kn[j], 0.0, kn[j + 1] - kn[j])
                    k += 1
            # log p = −log(1 + e^−η), log(1 − p) = −log(1 + e^η), in a form stable for large |η|
            total += np.sum(np.where(cell.correct == 1, -np.logaddexp(0, -eta), -np.logaddexp(0, eta)))
        mu = [(c.knots["verbal"][0] + c.knots["token"][0]) / 2 for c in parsed]
        return total + norm.logpdf(alpha, mu, ALPHA_SD).sum() + norm.logpdf(z).sum()

    # knots: verbal levels are knots (4 levels -> 3 segments); token: 4 quantiles + the 9 ECE bin
    # edges 0.1..0.9 inside its range; const: none
    assert [c.knots["verbal"].size for c in parsed] == [4, 4, 1]
    for c in parsed:
        x = _logit(c.token)
        want = np.unique(np.r_[np.quantile(x, np.linspace(0, 1, 4)), _logit(np.arange(1, 10) / 10)])
        assert np.allclose(c.knots["token"], want[(want >= x.min()) & (want <= x.max())])
    points = [{"alpha": rng.normal(0, 1, 3), "slope_z": rng.normal(0, 1, lay.widths.size)} for _ in range(3)]
    ours = [logp(p) for p in points]
    ref = [independent(p["alpha"], p["slope_z"]) for p in points]
    assert np.allclose(np.diff(ours), np.diff(ref), atol=1e-8)


def test_padded_model_has_the_same_log_density():
    """The simulation studies' model (data containers, padded with empty rows to one row per item so
    that one compiled model serves every replication) has the log density of the plain model —
    checked against an item-level design in the test above — at random points, to rounding."""
    rng = np.random.default_rng(3)
    n = 250
    v = rng.choice([0.5, 0.7, 0.9, 1.0], size=n)
    t = rng.choice(np.linspace(0.05, 0.95, 12), size=n)  # repeated pairs: far fewer distinct rows than items
    cells = {"a": (v, t, (rng.uniform(size=n) < 0.6).astype(float))}
    plain, _, lay = build_paired_model(cells, n_knots=4)
    padded, _, lay_p = build_paired_model(cells, n_knots=4, data_containers=True, pad_rows=n)
    assert lay.trials.size < n and lay_p.trials.size == n and lay_p.trials[lay.trials.size:].sum() == 0
    lp, lp_pad = plain.compile_logp(mode=REFERENCE_MODE), padded.compile_logp(mode=REFERENCE_MODE)
    for _ in range(3):
        point = {"alpha": rng.normal(0, 1, 1), "slope_z": rng.normal(0, 1, lay.widths.size)}
        assert lp_pad(point) == pytest.approx(lp(point), rel=1e-12, abs=1e-9)


# ----------------------------------------------------------------------------- one fitted report
@pytest.fixture(scope="module")
def report():
    """Two groups: 'same' has token == verbal (g must be exactly 0 in every draw: both readouts use
    the same draw of P(correct) and the same item weights), 'over' has an over-confident token."""
    rng = np.random.default_rng(1)
    n = 400
    p = rng.uniform(0.3, 0.9, size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    verbal = np.round(p, 1)
    df = pd.concat([pd.DataFrame({"model": "same", "correct": y, "verbal": verbal, "token": verbal}),
                    pd.DataFrame({"model": "over", "correct": y, "verbal": verbal, "token": np.clip(p + 0.2, 0, 1)})])
    rec = from_frame(df, correct_col="correct", verbal_col="verbal", token_col="token", protocol=FULL)
    return analyze(rec, by=["model"], estimators=("ece", "ks", "smece"), scores=("brier",), n_boot=100, seed=3,
                   posterior_kwargs={"draws": 300, "tune": 300})


@pytest.mark.slow
def test_pairing_identical_readouts_give_zero_gap_in_every_draw(report):
    tab = report.table().set_index(["model", "estimator"])
    for est in ("ece", "ks", "smece"):
        g = report.posterior.gap_draws("same", est)
        assert np.all(g == 0.0), est
        assert tab.loc[("same", est), "posterior_lower"] == tab.loc[("same", est), "posterior_upper"] == 0.0
        assert tab.loc[("same", est), "gap_lower"] == tab.loc[("same", est), "gap_upper"] == 0.0  # paired bootstrap too


@pytest.mark.slow
def test_posterior_rows_carry_the_plugin_functional(report):
    """The posterior row of estimator E is E's own formula on (c, P(correct), weights): a draw with
    p = y and unit weights reproduces the plug-in (shown for the fitted cell's data)."""
    from bayesrank.calibration.functionals import FUNCTIONALS

    post = report.posterior
    cell = post.cell("over")
    tab = report.table().set_index(["model", "estimator"])
    for est in ("ece", "ks", "smece"):
        plug = tab.loc[("over", est), "gap"]
        as_draw = FUNCTIONALS[est](cell.verbal, cell.correct[None]) - FUNCTIONALS[est](cell.token, cell.correct[None])
        assert as_draw[0] == pytest.approx(plug, abs=1e-12)
        # token over-confident by 0.2 where not clipped (true gap about -0.15), verbal = rounded truth
        assert tab.loc[("over", est), "posterior_upper"] < 0 and tab.loc[("over", est), "p_gap_negative"] == 1.0


@pytest.mark.slow
def test_report_protocol_json_diagnostics_and_plots(report, tmp_path):
    import matplotlib.pyplot as plt

    d = json.loads(report.to_json(tmp_path / "r.json"))
    validate(d, "calibration")
    diag = d["diagnostics"]
    parts = diag["extra"]["parts"]
    assert diag["kind"] == "composite" and set(parts) == {"plug-in", "bootstrap", "posterior"}
    assert parts["posterior"]["kind"] == "sampler"
    assert {"rhat_max", "ess_bulk_min", "ess_tail_min", "divergences"} <= set(parts["posterior"])
    assert parts["bootstrap"]["n_replicates"] == 100 * (3 * 2 + 1 * 2 * 2)
    assert diag["converged"] == (parts["posterior"]["converged"] and parts["bootstrap"]["converged"])
    assert d["posterior"]["item_weights"] == "bayesian_bootstrap" and len(d["posterior"]["posterior_predictive_check"]) == 4
    same = next(g for g in d["gaps"] if g["cell"] == "same" and g["estimator"] == "ece")
    assert same["posterior"]["functional"].startswith("ece on (c, P(correct)")
    # reliability table: per bin the observed accuracy is the plain mean of y, n sums to the items
    rel = report.posterior.reliability("over", "verbal")
    cell = report.posterior.cell("over")
    assert rel["n"].sum() == cell.n
    ids = np.searchsorted(np.linspace(0, 1, 11)[1:-1], cell.verbal)
    assert rel["observed"].tolist() == pytest.approx([cell.correct[ids == b].mean() for b in rel["bin"]])
    fig = report.plot()
    assert len(fig.axes) == 4  # 2 groups x (verbal | token)
    plt.close(fig)
    assert "model accuracy per bin (90%)" in [t.get_text() for t in report.plot(group="over").axes[0].get_legend().get_texts()]
    plt.close("all")
    assert "calibration gap g = CE(verbal) - CE(token)" in report.summary()


# ----------------------------------------------------------------------------- coverage, known truth
@pytest.mark.slow
@tiers(default={"reps": 30}, validation={"reps": 250})
def test_coverage_against_population_gap_within_three_mc_se(tier):
    """The simulation of bayesrank.calibration.coverage, n = 400 items per replication: posterior and
    paired-bootstrap 95% intervals of the ECE and KS gaps against the POPULATION gap (functional on
    2·10⁶ items, labels = probabilities), with the study's sampler settings (2 × 1000 draws after 500
    low-rank-adapted tuning steps; at least 90% of the fits converge). Asserted: coverage within 3
    Monte Carlo SEs of 0.95. Default tier: 30 replications (band ±0.12) — catches intervals half as
    wide as they should be (coverage ~0.7; checked once by shrinking every interval about its midpoint
    by 0.5: the test fails), not a 10% error. Validation tier: 250 replications (band ±0.041, MC SE
    0.014)."""
    from bayesrank.calibration.coverage import Truth, coverage_table, run_coverage

    truth = Truth()
    res = run_coverage(tier.reps, n_items=400, truth=truth, estimators=("ece", "ks"), n_boot=300, draws=1000, tune=500,
                       seed=2024, true_gaps=truth.population_gaps(("ece", "ks"), n_population=2_000_000))
    tab = coverage_table(res).set_index("estimator")
    band = 3 * np.sqrt(0.95 * 0.05 / tier.reps)
    for est in ("ece", "ks"):
        for kind in ("posterior", "bootstrap"):
            record(f"calibration gap coverage: {est}, {kind} interval", tier, reps=tier.reps,
                   rate=tab.loc[est, f"{kind}_coverage"], mc_se=tab.loc[est, "mc_se_at_nominal"], bound=f"0.95 ± {band:.3f}")
    for est in ("ece", "ks"):
        assert tab.loc[est, "replications"] == tier.reps
        assert abs(tab.loc[est, "posterior_coverage"] - 0.95) <= band, tab
        assert abs(tab.loc[est, "bootstrap_coverage"] - 0.95) <= band, tab
    assert res["converged"].mean() >= 0.9


def test_population_gap_is_the_functional_of_the_truth():
    """Population gap of the simulation: the ECE functional with labels = p on 2·10⁶ items equals
    the plug-in ECE on 4·10⁶ items with Bernoulli labels, to Monte Carlo error (independent draws)."""
    from bayesrank.calibration.coverage import Truth
    from bayesrank.calibration.estimators import ece

    truth = Truth()
    pop = truth.population_gaps(("ece",), n_population=2_000_000, seed=1)["ece"]
    v, t, y, _ = truth.simulate(4_000_000, np.random.default_rng(2))
    assert ece(v, y) - ece(t, y) == pytest.approx(pop, abs=2e-3)


@pytest.mark.slow
def test_model_card_snippet_runs():
    card = Path(__file__).resolve().parents[2] / "models" / "calibration.md"
    blocks = re.findall(r"```python\n(.*?)```", card.read_text(), flags=re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, str(card), "exec"), {})
