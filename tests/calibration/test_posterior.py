"""Gap posterior: known-truth simulation, comparison with the bootstrap, posterior predictive check,
and the model card's snippet."""

import re
from pathlib import Path

import numpy as np
import pytest

from bayesrank.calibration.bootstrap import bootstrap_gap
from bayesrank.calibration.posterior import fit_gap_posterior

pytestmark = pytest.mark.slow
TRUE_GAP = -0.2


@pytest.fixture(scope="module")
def sim():
    rng = np.random.default_rng(42)
    n = 2000
    p = rng.uniform(0.1, 0.75, size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    verbal, token = p, p + 0.2  # verbal perfectly calibrated, token over-confident by exactly 0.2
    post = fit_gap_posterior({"sim": (verbal, token, y)}, draws=300, tune=300, seed=7)
    return verbal, token, y, post


def test_posterior_gap_recovers_truth(sim):
    verbal, token, y, post = sim
    s = post.gap_summary(["ece", "ks", "kde"]).set_index("estimator")
    for est in ("ece", "ks", "kde"):
        # token CE (true 0.2 for every functional) is far from 0, so |.| adds no bias there
        assert s.loc[est, "token_mean"] == pytest.approx(0.2, abs=0.015), est
        # verbal CE (true 0): posterior |.| functionals are biased upwards by posterior noise (~0.02 at n=2000)
        assert 0.0 < s.loc[est, "verbal_mean"] < 0.035, est
        assert s.loc[est, "post_mean"] == pytest.approx(TRUE_GAP, abs=0.035), est
        assert s.loc[est, "post_hi"] < -0.12 and s.loc[est, "p_gap_negative"] == 1.0, est


def test_posterior_vs_bootstrap(sim):
    verbal, token, y, post = sim
    s = post.gap_summary(["ece"]).set_index("estimator").loc["ece"]
    bv, bt, bg = bootstrap_gap("ece", verbal, token, y, n_boot=300, seed=0)
    # both intervals overlap; the plug-in gap is pulled towards 0 by the label-noise bias of the
    # verbal ECE, the posterior functional is not, so the posterior mean is at least as negative
    assert max(bg.lo, s["post_lo"]) < min(bg.hi, s["post_hi"])
    assert s["post_mean"] <= bg.estimate + 0.01
    assert bv.estimate > 0.0  # plug-in ECE of a perfectly calibrated signal is biased upwards


def test_monotone_curve_and_posterior_predictive(sim):
    verbal, token, y, post = sim
    cur = post.curve_on_grid("sim", "token")
    assert np.all(np.diff(cur["mean"].to_numpy()) >= -1e-9)
    rel = post.reliability("sim", "verbal")
    inside = (rel["observed"] >= rel["rep_lo"]) & (rel["observed"] <= rel["rep_hi"])
    assert inside.mean() >= 0.7  # well-specified model: observed bin accuracies inside the 90% PPC band
    # token curve sits 0.2 below the diagonal where data are
    tok = post.reliability("sim", "token")
    assert np.all(tok["curve_mean"] < tok["confidence"] - 0.1)


def test_model_card_snippet_runs():
    card = Path(__file__).resolve().parents[2] / "models" / "calibration.md"
    blocks = re.findall(r"```python\n(.*?)```", card.read_text(), flags=re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, str(card), "exec"), {})
