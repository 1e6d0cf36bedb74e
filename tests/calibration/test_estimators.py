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


@pytest.mark.parametrize("n,seed,kind", DATASETS)
def test_smooth_ece_of_many_resamples_is_relplots_per_resample(n, seed, kind):
    """The bootstrap's batched smooth ECE (all resamples' bisections at once) = relplot on each
    resample (and = the one-at-a-time smooth_ece to rounding, 1e-13)."""
    c, y = _sim(n, seed, kind)
    rng = np.random.default_rng(seed + 1)
    idx = np.stack([rng.integers(0, n, n) for _ in range(12)])
    rows = E.smooth_ece_rows(c[idx], y[idx])
    assert rows == pytest.approx([relplot_smece(c[i], y[i]) for i in idx], abs=1e-6)
    assert rows == pytest.approx([E.smooth_ece(c[i], y[i]) for i in idx], abs=1e-13)


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
        ([0.2, 1.2], [0, 1], "row 1 is 1.2; expected a probability in \\[0, 1\\]"),
        ([0.2, -0.1], [0, 1], "row 1 is -0.1; expected a probability in \\[0, 1\\]"),
        ([0.2, np.nan], [0, 1], "row 1 is nan; expected a finite probability"),
        ([0.2, 0.3], [0, 2], "row 1 is 2; expected binary"),
        ([0.2, 0.3], [0, 0.5], "row 1 is 0.5; expected binary"),
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


# ----------------------------------------------------------------------------- functionals of (c, p, w)
from bayesrank.calibration import functionals as F  # noqa: E402


@pytest.mark.parametrize("n,seed,kind", DATASETS[:2] + DATASETS[3:])
def test_functionals_with_unit_weights_and_binary_labels_are_the_plugin_estimators(n, seed, kind):
    """The posterior reports T(c, p, w); with w = 1 and p = y it must be the plug-in estimate itself,
    and the plug-ins are checked against sklearn / Zhang et al. / Gupta et al. / relplot above."""
    c, y = _sim(n, seed, kind)
    refs = {"ece": sklearn_ece(c, y), "ece_em": sklearn_ece(c, y, 10, "quantile"), "kde": zhang_kde_ece(c, y),
            "smece": relplot_smece(c, y)}
    for name, fn in F.FUNCTIONALS.items():
        got = fn(c, y[None, :])[0]
        assert got == pytest.approx(E.CALIBRATION_ERRORS[name](c, y), abs=1e-12), name
        if name in refs:
            assert got == pytest.approx(refs[name], abs=1e-6), name


@pytest.mark.parametrize("name", ["ece", "ece_em", "ks", "smece"])
def test_integer_weights_equal_replicated_items(name):
    """Weight k on an item = the item repeated k times (the Bayesian-bootstrap weights are a
    continuous version of this): checked against the plug-in on the replicated data."""
    rng = np.random.default_rng(8)
    c, y = _sim(300, 9)
    w = rng.integers(1, 4, size=c.size).astype(float)
    rep_c, rep_y = np.repeat(c, w.astype(int)), np.repeat(y, w.astype(int))
    got = F.FUNCTIONALS[name](c, y[None, :], w[None, :])[0]
    if name == "ece_em":  # the functional keeps the observed sample's quantile edges
        edges = np.percentile(c, np.linspace(0, 100, 11))
        ids = np.searchsorted(edges[1:-1], rep_c)
        want = np.abs(np.bincount(ids, rep_y - rep_c, minlength=10)).sum() / rep_c.size
    else:
        want = E.CALIBRATION_ERRORS[name](rep_c, rep_y)
    assert got == pytest.approx(want, abs=2e-4 if name == "smece" else 1e-12)


def test_functionals_closed_forms_with_probabilities():
    # three confidence levels with expected accuracies: ECE = Σ_b w_b |p_b − c_b|, KS = max |cumsum|
    c = np.array([0.2, 0.2, 0.55, 0.9])
    p = np.array([[0.1, 0.3, 0.55, 0.6]])
    w = np.array([[1.0, 1.0, 2.0, 4.0]])
    # bins (0.1,0.2] holds both 0.2's: |(0.1 − 0.2) + (0.3 − 0.2)| = 0; 0.55: 0; 0.9: 4·0.3
    assert F.ece(c, p, w)[0] == pytest.approx(4 * 0.3 / 8)
    # cumulative Σ w (c − p) at c = 0.2, 0.55, 0.9: 0, 0, 1.2
    assert F.ks(c, p, w)[0] == pytest.approx(1.2 / 8)
    # draws are independent rows
    two = F.ece(c, np.vstack([p, p * 0 + c]), np.vstack([w, w]))
    assert two[0] == pytest.approx(0.15) and two[1] == pytest.approx(0.0)


def test_paired_bootstrap_interval_matches_scipy_paired_percentile_bootstrap():
    """Our paired percentile interval of g against scipy.stats.bootstrap(paired=True,
    method='percentile') on the same data (independent resampling code and random streams):
    equal within Monte Carlo error (quantile SE ≈ 0.06·sd(g) per side at 4,000 resamples)."""
    from scipy.stats import bootstrap

    rng = np.random.default_rng(21)
    n = 600
    p = rng.uniform(0.2, 0.95, size=n)
    y = (rng.uniform(size=n) < p).astype(float)
    verbal = np.round(np.clip(p + rng.normal(0.05, 0.1, n), 0, 1), 1)
    token = np.clip(p + 0.1, 0, 1)
    _, _, ours = bootstrap_gap("ece", verbal, token, y, n_boot=4000, seed=4)
    ref = bootstrap((verbal, token, y), lambda v, t, yy: E.ece(v, yy) - E.ece(t, yy), paired=True, vectorized=False,
                    method="percentile", n_resamples=4000, rng=np.random.default_rng(5))
    sd = float(np.std(ours.draws))
    assert ours.lo == pytest.approx(ref.confidence_interval.low, abs=0.3 * sd)
    assert ours.hi == pytest.approx(ref.confidence_interval.high, abs=0.3 * sd)
    assert float(np.std(ref.bootstrap_distribution)) == pytest.approx(sd, rel=0.1)
