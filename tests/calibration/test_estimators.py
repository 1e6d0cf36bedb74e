"""Estimators against reference packages (to 1e-6) and closed forms."""

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score

from bayesrank.calibration import estimators as E
from bayesrank.calibration.bootstrap import bootstrap_estimator, bootstrap_gap
from bayesrank.errors import InputError

from .references import gupta_ks, relplot_smece, sklearn_ece, zhang_kde_ece


def _sim(n, seed, kind="square"):
    rng = np.random.default_rng(seed)
    if kind == "discrete":
        c = rng.choice([0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], size=n)
        y = (rng.uniform(size=n) < 0.7).astype(float)
    else:
        c = rng.uniform(size=n)
        y = (rng.uniform(size=n) < c**2).astype(float)
    return c, y


DATASETS = [(60, 1, "square"), (2500, 2, "square"), (40000, 3, "square"), (3000, 4, "discrete")]


@pytest.mark.parametrize("n,seed,kind", DATASETS)
def test_binned_ece_matches_sklearn_calibration_curve(n, seed, kind):
    c, y = _sim(n, seed, kind)
    assert E.ece(c, y) == pytest.approx(sklearn_ece(c, y, 10, "uniform"), abs=1e-9)
    assert E.ece(c, y, n_bins=15) == pytest.approx(sklearn_ece(c, y, 15, "uniform"), abs=1e-9)
    assert E.ece_equal_mass(c, y) == pytest.approx(sklearn_ece(c, y, 10, "quantile"), abs=1e-9)


@pytest.mark.parametrize("n,seed,kind", DATASETS)
def test_kde_ece_matches_zhang_et_al_with_kdepy(n, seed, kind):
    c, y = _sim(n, seed, kind)
    assert E.kde_ece(c, y) == pytest.approx(zhang_kde_ece(c, y), abs=1e-6)


@pytest.mark.parametrize("n,seed,kind", DATASETS)
def test_smooth_ece_matches_relplot(n, seed, kind):
    import relplot

    c, y = _sim(n, seed, kind)
    assert E.smooth_ece(c, y) == pytest.approx(relplot_smece(c, y), abs=1e-6)
    assert E.smooth_ece(c, y, sigma=0.05) == pytest.approx(relplot.smECE_sigma(c, y, 0.05), abs=1e-9)


@pytest.mark.parametrize("n,seed", [(60, 1), (2500, 2), (40000, 3)])
def test_ks_matches_gupta_on_distinct_confidences(n, seed):
    c, y = _sim(n, seed)
    assert np.unique(c).size == n
    assert E.ks_error(c, y) == pytest.approx(gupta_ks(c, y), abs=1e-12)


def test_ks_is_order_invariant_under_ties_where_gupta_is_not():
    # four items at c=0.5, two right: Σ(c - y) over the tie block is 0 -> KS = 0 whatever the order;
    # the published argsort version reads partial sums inside the tie, so its answer depends on the order.
    c = np.full(4, 0.5)
    y1, y2 = np.array([1.0, 1.0, 0.0, 0.0]), np.array([1.0, 0.0, 1.0, 0.0])
    assert E.ks_error(c, y1) == 0.0 and E.ks_error(c, y2) == 0.0
    assert gupta_ks(c, y1) == pytest.approx(0.25) and gupta_ks(c, y2) == pytest.approx(0.125)


@pytest.mark.parametrize("n,seed,kind", DATASETS)
def test_scores_match_sklearn(n, seed, kind):
    c, y = _sim(n, seed, kind)
    inner = np.clip(c, 1e-6, 1 - 1e-6)
    assert E.brier(c, y) == pytest.approx(brier_score_loss(y, c), abs=1e-12)
    assert E.nll(inner, y) == pytest.approx(log_loss(y, inner), abs=1e-9)
    assert E.auroc(c, y) == pytest.approx(roc_auc_score(y, c), abs=1e-12)


def test_perfect_calibration_gives_near_zero():
    rng = np.random.default_rng(11)
    n = 200_000
    c = rng.uniform(size=n)
    y = (rng.uniform(size=n) < c).astype(float)
    for name in E.CALIBRATION_ERRORS:
        assert E.estimate(name, c, y) < 0.01, name


def test_known_miscalibration_one_sixth():
    # c ~ U(0,1), P(y=1|c) = c^2: true L1 calibration error ∫(c - c^2)dc = 1/6; since c > c^2 everywhere
    # binned ECE and KS (= Σ_{c≤1}(c - c^2)) have the same limit.
    rng = np.random.default_rng(12)
    n = 400_000
    c = rng.uniform(size=n)
    y = (rng.uniform(size=n) < c**2).astype(float)
    for name in ("ece", "ece_em", "ks", "kde", "smece"):
        assert E.estimate(name, c, y) == pytest.approx(1 / 6, abs=0.006), name


def test_constant_confidence_closed_forms():
    c = np.full(1000, 0.8)
    y = np.r_[np.ones(600), np.zeros(400)]
    assert E.ece(c, y) == pytest.approx(0.2, abs=1e-12)
    assert E.ece_equal_mass(c, y) == pytest.approx(0.2, abs=1e-12)
    assert E.ks_error(c, y) == pytest.approx(0.2, abs=1e-12)
    assert E.brier(c, y) == pytest.approx(0.6 * 0.04 + 0.4 * 0.64, abs=1e-12)
    assert E.nll(c, y) == pytest.approx(-(0.6 * np.log(0.8) + 0.4 * np.log(0.2)), abs=1e-12)
    assert np.isnan(E.auroc(c, np.ones(1000)))
    assert E.auroc(c, y) == 0.5


@pytest.mark.parametrize(
    "c,y,match",
    [
        ([0.2, 1.2], [0, 1], "outside|in \\[0, 1\\]"),
        ([0.2, -0.1], [0, 1], "in \\[0, 1\\]"),
        ([0.2, np.nan], [0, 1], "finite"),
        ([0.2, 0.3], [0, 2], "binary"),
        ([0.2, 0.3], [0, 0.5], "binary"),
        ([], [], "empty"),
        ([0.2, 0.3], [1], "equal lengths"),
    ],
)
def test_bad_inputs_raise_clear_errors(c, y, match):
    for name in E.ESTIMATORS:
        with pytest.raises(InputError, match=match):
            E.estimate(name, c, y)


def test_unknown_estimator():
    with pytest.raises(InputError, match="unknown estimator"):
        E.estimate("mce", [0.5], [1])


def test_bootstrap_ci_and_paired_gap():
    rng = np.random.default_rng(5)
    n = 800
    c = rng.uniform(size=n)
    y = (rng.uniform(size=n) < c).astype(float)
    tok = np.clip(c + 0.25, 0, 1)  # overconfident by ~0.25 where not clipped
    b1 = bootstrap_estimator("ece", c, y, n_boot=200, seed=1)
    b2 = bootstrap_estimator("ece", c, y, n_boot=200, seed=1)
    assert np.array_equal(b1.draws, b2.draws)  # explicit seed -> reproducible
    assert b1.lo <= b1.estimate <= b1.hi
    bv, bt, bg = bootstrap_gap("ece", c, tok, y, n_boot=200, seed=3)
    assert np.allclose(bg.draws, bv.draws - bt.draws)
    assert bg.estimate == pytest.approx(E.ece(c, y) - E.ece(tok, y))
    assert bg.hi < 0  # verbal (perfect) beats the shifted token signal, decisively
