"""The items' ``to_settle`` search: the exact McNemar decision without every exact tail (against
SciPy's binomial test), the bracket-and-bisect search (against the closed-form smallest N of a known
power curve), and the N it returns for one contrast against the exact power of the exact McNemar
test under the bootstrap (a sum over the binomial law of the discordant items, no simulation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from bayesrank.review.claims import Claim
from bayesrank.review.settle import ITEM_REL, _smallest_items, items_to_settle
from bayesrank.stats.paired import mcnemar_exact_many, mcnemar_rejects


@pytest.mark.parametrize("one_sided", [True, False])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_mcnemar_rejects_is_the_exact_test(one_sided, alpha):
    """Counts placed around the critical value for m from 1 to 10⁷ discordant items: the decision
    equals the exact test's (p < α and n10 > n01) at every one of them."""
    rng = np.random.default_rng(1)
    z = stats.norm.isf(alpha if one_sided else alpha / 2)
    m = np.concatenate([rng.integers(1, 60, 20_000), rng.integers(60, 10**7, 20_000)])
    n10 = np.clip(np.rint(m / 2 + np.sqrt(m) / 2 * (z + rng.normal(0, 1.5, m.size))), 0, m)
    n01 = m - n10
    two, one = mcnemar_exact_many(n10, n01)
    want = (n10 > n01) & ((one if one_sided else two) < alpha)
    assert 0.2 < want.mean() < 0.8  # both decisions are exercised
    np.testing.assert_array_equal(mcnemar_rejects(n10, n01, alpha, one_sided), want)
    # SciPy's binomtest on a sample of them, and m = 0
    for i in rng.choice(m.size, 300, replace=False):
        p = stats.binomtest(int(n10[i]), int(m[i]), 0.5, alternative="greater" if one_sided else "two-sided").pvalue
        assert bool(mcnemar_rejects(n10[i:i + 1], n01[i:i + 1], alpha, one_sided)[0]) == (n10[i] > n01[i] and p < alpha)
    assert not mcnemar_rejects(np.array([0.0]), np.array([0.0]), alpha, one_sided)[0]


def _curve(delta):
    return lambda n: float(stats.norm.cdf(delta * math.sqrt(n) - 1.645))


@pytest.mark.parametrize("bias", [1.0, 0.6, 1.5, 0.0])
def test_smallest_items_finds_the_crossing_of_a_known_curve(bias):
    """Power Φ(δ√N − 1.645) crosses 0.8 at N* = ((1.645 + 0.8416)/δ)²; the search, started from a
    limit that is exact, too optimistic, too pessimistic or useless (0 everywhere), returns an N
    with power ≥ 0.8 within 0.5% (+1) of N*, and few evaluations of the (costly) power when the
    limit is right."""
    delta = 0.01
    true_n = math.ceil(((1.645 + stats.norm.ppf(0.8)) / delta) ** 2)
    calls = []

    def power(n):
        calls.append(n)
        return _curve(delta)(n)

    got = _smallest_items(power, _curve(delta * bias), 100, 0.8, 10**7)
    assert power(got) >= 0.8
    assert true_n <= got <= true_n * (1 + ITEM_REL) + 1
    if bias == 1.0:
        assert len(calls) <= 6


def test_smallest_items_none_above_the_cap():
    assert _smallest_items(_curve(1e-4), _curve(1e-4), 10, 0.8, 10**6) is None
    assert _smallest_items(_curve(1e-4), lambda n: 0.0, 10, 0.8, 10**6) is None


def _exact_bootstrap_power(total, p10, p01, alpha):
    """P(the one-sided exact McNemar test rejects) when each of ``total`` items is (1, 0) with p10,
    (0, 1) with p01: M ~ Binomial(total, ψ) discordant, n10 | M ~ Binomial(M, p10/ψ), rejected when
    n10 ≥ k_M, k_M = 1 + the (1 − α) quantile of Binomial(M, ½)."""
    psi = p10 + p01
    m = np.arange(total + 1)
    k = stats.binom.ppf(1 - alpha, m, 0.5) + 1
    return float(np.sum(stats.binom.pmf(m, total, psi) * stats.binom.sf(k - 1, m, p10 / psi)))


def test_one_contrast_n_matches_the_exact_power_of_the_test():
    """400 items, 80 won by A only and 60 by B only: the N returned has exact bootstrap power 0.8
    within the Monte Carlo error of 2,000 simulations (3 SEs), and is within 6% of the smallest N
    with exact power ≥ 0.8 (±3 SEs of the power move N by about ±6% here)."""
    n, n10, n01 = 400, 80, 60
    a = np.zeros(n, dtype=np.int8)
    b = np.zeros(n, dtype=np.int8)
    a[:n10] = 1
    b[n10:n10 + n01] = 1
    a[n10 + n01: n10 + n01 + 150] = b[n10 + n01: n10 + n01 + 150] = 1
    claim = Claim("A>B", "pair", a="A", b="B", selected=False)
    s = items_to_settle(claim, np.vstack([a, b]), [(0, 1)], 0.95)
    assert claim.sided == "one-sided" and s["settleable"]
    total = n + s["additional"]
    p10, p01 = n10 / n, n01 / n
    exact = _exact_bootstrap_power(total, p10, p01, 0.05)
    se = math.sqrt(0.8 * 0.2 / 2000)
    assert abs(exact - 0.8) < 3 * se
    assert abs(s["power"] - exact) < 3 * se
    lo, hi = 500, 4000
    while hi - lo > 1:  # exact power is increasing in N here up to the test's discreteness
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _exact_bootstrap_power(mid, p10, p01, 0.05) >= 0.8 else (mid, hi)
    assert abs(total / hi - 1) < 0.06
