"""Loss of significance for the paired t test (fractional scores) and the cluster-robust Wald test
(clusters) against exhaustive search: every assignment of re-grades (each unit's scores of one
model set to all 0 / all 1, or both models' — the vertices that suffice, module docstring of
bayesrank.items.significance) and every set of drops, each tested with scipy's ``ttest_rel`` or
statsmodels' cluster-robust OLS (``cov_type="cluster"``), independent of the package's formulas."""

import itertools

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from bayesrank.items.data import ItemScores
from bayesrank.items.perturb import apply_actions
from bayesrank.items.significance import lose_significance_studentized

from .conftest import long_frame

ALPHA = 0.05


def _p(ya, yb, groups, sided):
    """The reference p-value of H1: mean(ya) > mean(yb) (one-sided) or ≠ (two-sided)."""
    d = ya - yb
    if groups is None:
        p = stats.ttest_rel(ya, yb, alternative="greater" if sided == "one" else "two-sided").pvalue
        return 1.0 if np.isnan(p) else p
    z = _cr1_z(d, groups)
    return stats.norm.sf(z) if sided == "one" else 2 * stats.norm.sf(abs(z))


def _cr1_z(d, groups):
    """mean(d) / its CR1 standard error, written out here (checked against statsmodels below)."""
    _, codes = np.unique(groups, return_inverse=True)
    g = codes.max() + 1
    sums = np.bincount(codes, weights=d - d.mean(), minlength=g)
    se = np.sqrt(g / (g - 1) * (sums @ sums)) / len(d)
    return d.mean() / se if se > 0 else np.sign(d.mean()) * np.inf


def _statsmodels_z(d, groups):
    ols = sm.OLS(d, np.ones_like(d)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    return ols.params[0] / ols.bse[0]


def _lost(y, keep, groups, pairs, sided):
    g = None if groups is None else groups[keep]
    return any(y[a, keep].mean() <= y[b, keep].mean() or _p(y[a, keep], y[b, keep], g, sided) >= ALPHA
               for a, b in pairs)


def _brute_regrades(y, units, groups, pairs, sided, max_k):
    """Smallest k: per unit (of the contrasts' models) none, one model set to all 0 / all 1, or two."""
    keep = np.ones(y.shape[1], bool)
    models = sorted({m for p in pairs for m in p})
    options = [()] + [((m, v),) for m in models for v in (0.0, 1.0)] + \
        [((m1, v1), (m2, v2)) for m1, m2 in itertools.combinations(models, 2) for v1 in (0.0, 1.0) for v2 in (0.0, 1.0)]
    for k in range(0, max_k + 1):
        for chosen in itertools.combinations(range(len(units)), min(k, len(units))):
            for combo in itertools.product(options[1:], repeat=len(chosen)):
                if sum(len(o) for o in combo) != k:
                    continue
                z = y.copy()
                for u, o in zip(chosen, combo):
                    for m, v in o:
                        z[m, units[u]] = v
                if _lost(z, keep, groups, pairs, sided):
                    return k
    return None


def _brute_drops(y, units, groups, pairs, sided, max_k):
    for k in range(0, min(max_k, len(units) - 2) + 1):
        for combo in itertools.combinations(range(len(units)), k):
            keep = np.ones(y.shape[1], bool)
            for u in combo:
                keep[units[u]] = False
            if _lost(y, keep, groups, pairs, sided):
                return k
    return None


def _fractional(seed, m, n, gap, noise=0.08):
    """m models' fractional scores on n items: a shared item effect, model j ahead of j + 1 by gap/(m − 1)."""
    rng = np.random.default_rng(seed)
    base = rng.beta(5, 3, n)
    y = np.stack([np.clip(base + gap * ((m - 1) / 2 - j) / max(1, m - 1) + rng.normal(0, noise, n), 0, 1)
                  for j in range(m)])
    return np.round(y, 2)


def _check(d, y, units, groups, pairs, sided, action):
    e = lose_significance_studentized(d, pairs, action, ALPHA, sided)
    if not e["broken"]:  # nothing short of every unit: the exhaustive search agrees
        assert (_brute_regrades if action == "flip" else _brute_drops)(y, units, groups, pairs, sided,
                                                                       2 * len(units)) is None
        return e, None
    assert e["verified"]
    z, keep = apply_actions(d, e["actions"])
    assert _lost(z, keep, groups, pairs, sided)
    brute = (_brute_regrades if action == "flip" else _brute_drops)(y, units, groups, pairs, sided, e["budget"])
    assert e["lower_bound"] is None or e["lower_bound"] <= brute  # the bound is valid
    assert brute <= e["budget"]
    if e["exact"]:
        assert e["budget"] == brute == e["lower_bound"]
    return e, brute


@pytest.mark.parametrize("seed,sided", [(0, "two"), (1, "one"), (2, "two"), (3, "two")])
def test_paired_t_regrades_and_drops_equal_exhaustive_search(seed, sided):
    y = _fractional(seed, 2, 8, 0.6)
    d = ItemScores.from_long(long_frame(y))
    assert not d.binary and _p(y[0], y[1], None, sided) < ALPHA
    units = [np.array([i]) for i in range(8)]
    exact = []
    for action in ("flip", "drop"):
        e, brute = _check(d, y, units, None, [(0, 1)], sided, action)
        assert brute >= 2  # more than one move needed
        exact.append(e["exact"])
    # the witness equals the exhaustive minimum in every case (checked in _check); the relaxation bound
    # meets it except in the one-sided re-grade case of seed 1 (bound 2, minimum 3: reported as such)
    assert exact == ([False, True] if seed == 1 else [True, True])


def test_paired_t_claim_with_several_contrasts():
    """top1 among three models: the claim loses significance when its weakest contrast does (moves on
    any model considered by the exhaustive search)."""
    y = _fractional(5, 3, 6, 0.6)
    d = ItemScores.from_long(long_frame(y))
    pairs = [(0, 1), (0, 2)]
    units = [np.array([i]) for i in range(6)]
    for action in ("flip", "drop"):
        e, brute = _check(d, y, units, None, pairs, "two", action)
        assert e["exact"]


@pytest.mark.parametrize("sizes", ["equal", "unequal"])
def test_cluster_robust_wald_equals_exhaustive_search(sizes):
    rng = np.random.default_rng(7)
    cl = np.repeat(np.arange(7), 3) if sizes == "equal" else np.repeat(np.arange(7), [2, 3, 4, 2, 3, 5, 2])
    n = len(cl)
    base = np.repeat(rng.normal(0.5, 0.1, 7), np.bincount(cl))
    y = (rng.random((2, n)) < np.clip(np.stack([base + 0.4, base - 0.3]), 0, 1)).astype(float)
    names = np.array([f"f{c}" for c in cl])
    d = ItemScores.from_long(long_frame(y, clusters=names), cluster="family")
    assert _p(y[0], y[1], cl, "two") < ALPHA
    assert _cr1_z(y[0] - y[1], cl) == pytest.approx(_statsmodels_z(y[0] - y[1], cl), rel=1e-10)
    units = [np.flatnonzero(cl == c) for c in range(7)]
    for action in ("flip", "drop"):
        e, brute = _check(d, y, units, cl, [(0, 1)], "two", action)
        if brute is None:
            continue
        assert all("cluster" in a for a in e["actions"])
        if sizes == "equal" or action == "flip":
            assert e["lower_bound"] is not None
        else:
            assert e["lower_bound"] is None and not e["exact"]  # stated: witness only


def test_large_fractional_benchmark_is_exact_and_verified():
    """3,000 items: the witness is verified with scipy and meets the relaxation bound."""
    rng = np.random.default_rng(0)
    ya = rng.beta(6, 3, 3000)
    y = np.round(np.stack([ya, np.clip(ya - 0.05 + rng.normal(0, 0.25, 3000), 0, 1)]), 2)
    d = ItemScores.from_long(long_frame(y))
    for action in ("flip", "drop"):
        e = lose_significance_studentized(d, [(0, 1)], action, ALPHA, "two")
        z, keep = apply_actions(d, e["actions"])
        assert e["verified"] and _p(z[0, keep], z[1, keep], None, "two") >= ALPHA
        assert e["exact"] and e["budget"] > 50
        # one move fewer along the witness does not do it
        z, keep = apply_actions(d, e["actions"][:-1])
        assert _p(z[0, keep], z[1, keep], None, "two") < ALPHA


def test_page_cell_says_what_is_known():
    """The page shows an exact minimum as a number, a witness with a lower bound as a range, and a
    witness without a bound as an upper bound."""
    from bayesrank.review.render import perturbation_cell

    base = {"broken": True, "verified": True, "budget": 5, "fraction": 0.05}
    assert perturbation_cell({**base, "exact": True, "lower_bound": 5}).startswith("5 (")
    assert perturbation_cell({**base, "exact": False, "lower_bound": 3}).startswith("3–5 (")
    assert perturbation_cell({**base, "exact": False, "lower_bound": None}).startswith("≤ 5 (")
