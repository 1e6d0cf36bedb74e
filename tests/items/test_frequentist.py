"""Frequentist answers against independent references: statsmodels' exact McNemar and scipy's
binomtest (the top-1 claim's intersection–union p), scipy's paired t test, statsmodels' cluster-robust
OLS, statsmodels' Wilson/Jeffreys intervals."""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from bayesrank.items.data import ItemScores
from bayesrank.items.frequentist import mean_covariance, model_table, pair_stats
from bayesrank.review.api import review

from .conftest import long_frame, rasch_matrix


def _mcnemar_statsmodels(ya, yb):
    table = [[int(((ya == 1) & (yb == 1)).sum()), int(((ya == 1) & (yb == 0)).sum())],
             [int(((ya == 0) & (yb == 1)).sum()), int(((ya == 0) & (yb == 0)).sum())]]
    return mcnemar(table, exact=True).pvalue


def test_top1_p_is_the_intersection_union_maximum_of_exact_mcnemar(tmp_path):
    y = rasch_matrix(6, 400, seed=4, spread=0.6)
    p = tmp_path / "long.csv"
    long_frame(y).to_csv(p, index=False)
    rep = review(p, claims=["top1"], fast=True)
    means = y.mean(axis=1)
    lead = int(np.argmax(means))
    ps = [_mcnemar_statsmodels(y[lead], y[b]) for b in range(6) if b != lead]
    scipy_ps = [stats.binomtest(int(((y[lead] == 1) & (y[b] == 0)).sum()),
                                int((y[lead] != y[b]).sum()), 0.5).pvalue for b in range(6) if b != lead]
    f = rep.claims[0].frequentist
    assert f["p_value"] == pytest.approx(max(ps), rel=1e-12)
    assert f["p_value"] == pytest.approx(max(scipy_ps), rel=1e-12)
    assert f["supported"] == (max(ps) < 0.05) and f["sided"] == "two-sided"
    worst = [b for b in range(6) if b != lead][int(np.argmax(ps))]
    assert f["contrast"] == f"llm{lead} − llm{worst}"  # the binding contrast is the one whose p is shown
    rep.to_json(tmp_path / "r.json")  # schema-validated


def test_prespecified_pair_is_one_sided():
    y = rasch_matrix(3, 300, seed=5, spread=0.3)
    d = ItemScores.from_long(long_frame(y))
    t = pair_stats(d, [0], [1])
    n10, n01 = int(((y[0] == 1) & (y[1] == 0)).sum()), int(((y[0] == 0) & (y[1] == 1)).sum())
    assert t["p_one_sided"].iloc[0] == pytest.approx(stats.binomtest(n10, n10 + n01, 0.5, alternative="greater").pvalue)
    assert t["p_two_sided"].iloc[0] == pytest.approx(_mcnemar_statsmodels(y[0], y[1]))


def test_fractional_scores_use_the_paired_t_test():
    rng = np.random.default_rng(2)
    y = np.clip(rasch_matrix(3, 80, seed=2) * 0.7 + rng.uniform(0, 0.3, (3, 80)), 0, 1)
    d = ItemScores.from_long(long_frame(y))
    t = pair_stats(d, [0, 1], [1, 2])
    for k, (a, b) in enumerate(((0, 1), (1, 2))):
        ref = stats.ttest_rel(y[a], y[b])
        assert t["test"].iloc[k] == "paired t"
        assert t["p_two_sided"].iloc[k] == pytest.approx(ref.pvalue, rel=1e-10)
        assert t["p_one_sided"].iloc[k] == pytest.approx(stats.ttest_rel(y[a], y[b], alternative="greater").pvalue,
                                                         rel=1e-10)


def test_clustered_contrasts_and_covariance_equal_statsmodels_cluster_ols():
    import statsmodels.api as sm

    y = rasch_matrix(4, 120, seed=7)
    fam = np.repeat([f"f{g}" for g in range(15)], 8)
    d = ItemScores.from_long(long_frame(y, clusters=fam), cluster="family")
    v = mean_covariance(d)
    codes = d.cluster_codes
    t = pair_stats(d, [0, 2], [1, 3], cov=v)
    for k, (a, b) in enumerate(((0, 1), (2, 3))):
        diff = y[a] - y[b]
        ols = sm.OLS(diff, np.ones_like(diff)).fit(cov_type="cluster", cov_kwds={"groups": codes})
        assert t["estimate"].iloc[k] == pytest.approx(ols.params[0], abs=1e-14)
        assert t["se"].iloc[k] == pytest.approx(ols.bse[0], rel=1e-10)
        assert t["p_two_sided"].iloc[k] == pytest.approx(ols.pvalues[0], rel=1e-8)
    # each model's own mean: the same cluster-robust OLS on its scores
    for m in range(4):
        ols = sm.OLS(y[m], np.ones(120)).fit(cov_type="cluster", cov_kwds={"groups": codes})
        assert np.sqrt(v[m, m]) == pytest.approx(ols.bse[0], rel=1e-10)


def test_unclustered_covariance_is_the_paired_variance():
    y = rasch_matrix(5, 200, seed=8)
    d = ItemScores.from_long(long_frame(y))
    v = mean_covariance(d)
    np.testing.assert_allclose(v, np.cov(y) / 200, rtol=1e-12)


def test_wilson_and_jeffreys_equal_statsmodels():
    y = rasch_matrix(4, 90, seed=9)
    d = ItemScores.from_long(long_frame(y))
    t = model_table(d, 0.95)
    for m in range(4):
        x = int(y[m].sum())
        assert (t["wilson_lower"].iloc[m], t["wilson_upper"].iloc[m]) == pytest.approx(
            proportion_confint(x, 90, 0.05, method="wilson"), rel=1e-12)
        jl, ju = proportion_confint(x, 90, 0.05, method="jeffreys")
        assert (t["jeffreys_lower"].iloc[m], t["jeffreys_upper"].iloc[m]) == pytest.approx((jl, ju), rel=1e-10)


def test_effective_units_counts_the_informative_items():
    from bayesrank.items.frequentist import effective_units

    y = np.zeros((2, 100))
    y[0, :10] = 1  # 10 items won by model 0, 90 concordant
    n, what = effective_units(ItemScores.from_long(long_frame(y)), 0, 1)
    # by hand: d̄ = 0.1; shares 0.81 (10 items) and 0.01 (90 items)
    assert n == pytest.approx((10 * 0.81 + 90 * 0.01) ** 2 / (10 * 0.81**2 + 90 * 0.01**2))
    assert 10 < n < 13  # ≈ the 10 discordant items (the 90 concordant ones add 0.01 each to the variance)
    z = np.vstack([np.tile([1.0, 0.0], 50), np.tile([0.0, 1.0], 50)])  # every item informs equally
    assert effective_units(ItemScores.from_long(long_frame(z)), 0, 1)[0] == pytest.approx(100)
