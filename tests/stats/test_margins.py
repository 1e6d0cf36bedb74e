"""Tests of claims read from margins (bayesrank.stats.margins) against independent references:
statsmodels' exact McNemar and proportions_ztest, scipy's binomtest on tables built here, the true
paired p-value of real per-item results, brute-force enumeration, closed forms and simulation."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportions_ztest

from bayesrank.stats.margins import (
    contrast_se_bounds,
    mcnemar_bounds,
    mcnemar_over_pairings,
    regrades_to_lose,
    se_from_interval,
    two_proportion_p,
    z_bounds,
)
from tests.datasets import path as fixture
from tests.tiers import record


def alpaca_wins(complete: bool = True) -> pd.DataFrame:
    """Real paired per-item results: AlpacaEval 2.0 discrete wins (preference > 1.5) of each model
    against the reference on the same 805 instructions (items × models; ``complete``: only the models
    judged on all 805)."""
    d = pd.read_csv(fixture("alpaca_eval/alpaca_eval2_weighted_lengths.csv.gz"))
    w = d.assign(win=(d["preference"] > 1.5).astype(float)).pivot_table(
        index="instruction_idx", columns="generator_2", values="win")
    return w.loc[:, w.notna().all()] if complete else w


def extreme_tables(xa, xb, n):
    """The 2×2 tables [[n11, n10], [n01, n00]] with the fewest and the most discordant items, built
    from the margins directly (not by the package)."""
    out = []
    for n11 in range(0, min(xa, xb) + 1):
        n10, n01 = xa - n11, xb - n11
        n00 = n - n11 - n10 - n01
        if min(n10, n01, n00) >= 0:
            out.append((n10 + n01, np.array([[n11, n10], [n01, n00]])))
    out.sort(key=lambda t: t[0])
    return out[0][1], out[-1][1]


def one_sided(table):
    b, c = int(table[0, 1]), int(table[1, 0])
    return 1.0 if b + c == 0 else stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue


def test_bounds_of_a_real_published_table_equal_independent_mcnemar_and_contain_the_true_p():
    """A held-out table built from real per-item results (AlpacaEval 2.0 win rates and n only):
    p_value_bounds = statsmodels' exact McNemar (two-sided) and scipy's binomtest (one-sided) at the two
    extreme tables, and the true paired p-value of the per-item data lies between them."""
    w = alpaca_wins()
    models = list(w.columns[::6])[:8]
    n = len(w)
    checked = inside = 0
    for a, b in itertools.combinations(models, 2):
        ya, yb = w[a].to_numpy(int), w[b].to_numpy(int)
        xa, xb = int(ya.sum()), int(yb.sum())
        if xa < xb:
            a, b, ya, yb, xa, xb = b, a, yb, ya, xb, xa
        lo_t, hi_t = extreme_tables(xa, xb, n)
        two = mcnemar_bounds(xa, xb, n, 0.95, "two-sided")
        one = mcnemar_bounds(xa, xb, n, 0.95, "one-sided")
        sm = [mcnemar(t, exact=True).pvalue for t in (lo_t, hi_t)]
        assert two["p_value_bounds"] == pytest.approx(sm, rel=1e-9, abs=1e-300)
        assert one["p_value_bounds"] == pytest.approx([one_sided(lo_t), one_sided(hi_t)], rel=1e-9, abs=1e-300)
        assert two["discordance_bounds"] == [int(lo_t[0, 1] + lo_t[1, 0]), int(hi_t[0, 1] + hi_t[1, 0])]
        true = np.array([[np.sum((ya == 1) & (yb == 1)), np.sum((ya == 1) & (yb == 0))],
                         [np.sum((ya == 0) & (yb == 1)), np.sum((ya == 0) & (yb == 0))]])
        p_true = mcnemar(true, exact=True).pvalue
        assert two["p_value_bounds"][0] <= p_true <= two["p_value_bounds"][1]
        assert one["p_value_bounds"][0] <= one_sided(true) <= one["p_value_bounds"][1]
        checked += 1
        inside += two["p_value_bounds"][0] < p_true < two["p_value_bounds"][1]
    assert checked == 28 and inside >= 26  # strictly inside: the real pairing is neither extreme


def test_p_value_grows_with_the_discordance_at_a_fixed_positive_gap():
    """Monotonicity checked exhaustively for n ≤ 40 (every pair of margins), both sidednesses: for a
    claim the counts favour (x_A > x_B) the p-value grows with the discordance, so the bounds are
    attained at the extreme discordances. At a tie or a reversed gap it does not (tie: p = 1 with no
    discordant item, 0.75 with two), which is why the package takes min and max over the whole range."""
    for n in (1, 2, 7, 20, 40):
        for xa in range(n + 1):
            for xb in range(n + 1):
                for sided in ("one-sided", "two-sided"):
                    r = mcnemar_over_pairings(xa, xb, n, sided)
                    p = r["p"]
                    if xa > xb:
                        assert np.all(np.diff(p) >= -1e-15), (xa, xb, n, sided)
                    b = mcnemar_bounds(xa, xb, n, 0.95, sided)
                    assert b["p_value_bounds"] == [p.min(), p.max()]
    assert list(mcnemar_over_pairings(1, 1, 2)["p"]) == [1.0, 0.75]


def test_discordance_to_significance_is_the_last_significant_discordance():
    xa, xb, n = 402, 360, 1319
    r = mcnemar_bounds(xa, xb, n, 0.95, "one-sided")
    d = r["discordance_to_significance"]
    g = xa - xb
    m = (d - g) // 2
    assert stats.binomtest(g + m, d, 0.5, alternative="greater").pvalue < 0.05
    assert stats.binomtest(g + m + 1, d + 2, 0.5, alternative="greater").pvalue >= 0.05
    assert mcnemar_bounds(10, 9, 100)["discordance_to_significance"] is None


@pytest.mark.parametrize("xa,na,xb,nb", [(939, 1319, 930, 1319), (40, 120, 55, 130), (5, 10, 5, 10), (0, 50, 3, 60)])
def test_unpaired_test_equals_statsmodels(xa, na, xb, nb):
    z, p_two = proportions_ztest([xa, xb], [na, nb])
    _, p_larger = proportions_ztest([xa, xb], [na, nb], alternative="larger")
    assert two_proportion_p(xa, na, xb, nb, "one-sided") == pytest.approx(p_larger, rel=1e-9)
    expect_two = p_two if xa / na > xb / nb else 1.0
    assert two_proportion_p(xa, na, xb, nb, "two-sided") == pytest.approx(expect_two, rel=1e-9)


def test_regrades_to_lose_equal_brute_force():
    """Every split of k re-grades enumerated, the bounds recomputed with scipy's binomtest on the
    extreme tables (written here), for small tables."""
    def bounds(xa, xb, n):
        if xa <= xb:
            return 1.0, 1.0
        lo_t, hi_t = extreme_tables(xa, xb, n)
        return one_sided(lo_t), one_sided(hi_t)

    rng = np.random.default_rng(3)
    for _ in range(40):
        n = int(rng.integers(10, 60))
        xa = int(rng.integers(n // 2, n + 1))
        xb = int(rng.integers(0, xa))
        got = regrades_to_lose(xa, xb, n, 0.95, "one-sided")
        for name, which in (("low", 0), ("high", 1)):
            if bounds(xa, xb, n)[which] >= 0.05:
                assert got[name] is None
                continue
            want = next(k for k in range(xa - xb + 1)
                        if any(bounds(xa - j, xb + k - j, n)[which] >= 0.05 for j in range(k + 1)
                               if xa - j >= 0 and xb + k - j <= n))
            assert got[name] == want, (xa, xb, n, name)
        assert got["gap"] == xa - xb


def test_score_table_se_bounds_closed_form_and_simulation():
    """The contrast SE over ρ ∈ [−1, 1] equals √(se_A² + se_B² − 2ρ se_A se_B) at ρ = ±1; simulated
    correlated estimates have their contrast's SD inside the bounds, and the z-test at the upper SE
    bound keeps its size under a tie for every correlation."""
    sa, sb = 4.0, 5.0
    lo, hi = contrast_se_bounds(sa, sb)
    assert (lo, hi) == pytest.approx((math.sqrt(sa**2 + sb**2 - 2 * sa * sb), math.sqrt(sa**2 + sb**2 + 2 * sa * sb)))
    rng = np.random.default_rng(11)
    reps = 4000
    for rho in (-0.9, -0.3, 0.0, 0.5, 0.95):
        cov = [[sa**2, rho * sa * sb], [rho * sa * sb, sb**2]]
        est = rng.multivariate_normal([0, 0], cov, size=reps)
        d = est[:, 0] - est[:, 1]
        assert lo * 0.95 < d.std() < hi * 1.05
        p_high = np.array([z_bounds(x, sa, sb, 0.95, "one-sided")["p_value_bounds"][1] for x in d[:1500]])
        rate = float(np.mean(p_high < 0.05))
        assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 1500)
    assert se_from_interval(1275.0, 1291.0, 0.95) == pytest.approx(16 / (2 * 1.959963985))


def simulate_tie(n, p, rho, reps, rng):
    """Paired 0/1 answers with equal accuracy p and per-item correlation rho (a latent Gaussian
    copula), reduced to the correct counts: the truth is a tie."""
    from scipy.stats import norm

    z = rng.standard_normal((reps, n, 2))
    z[:, :, 1] = rho * z[:, :, 0] + math.sqrt(1 - rho**2) * z[:, :, 1]
    y = z < norm.ppf(p)
    return y[:, :, 0].sum(axis=1), y[:, :, 1].sum(axis=1)


def verdict_rates(n, p, rho, reps, seed):
    from bayesrank.review.table import table_verdict
    from bayesrank.stats.discordance import claim_probability

    rng = np.random.default_rng(seed)
    xa, xb = simulate_tie(n, p, rho, reps, rng)
    supported = undetermined = 0
    for a, b in zip(xa, xb):
        r = mcnemar_bounds(int(a), int(b), n, 0.95, "one-sided")
        low, high = r["p_value_bounds"]
        prob = claim_probability(int(a), int(b), n)["probability"] if high < 0.05 else None
        v = table_verdict(a > b and low < 0.05, a > b and high < 0.05, prob, 0.95, 1.0, 0.01)
        supported += v == "supported"
        undetermined += v == "undetermined by the table"
    return supported / reps, undetermined / reps


@pytest.mark.parametrize("rho", [0.0, 0.6])
def test_size_of_the_table_verdict_short(rho):
    """A pre-specified A>B when the truth is a tie: 'supported' at most 5% (+ 3 MC SEs; 3,000
    replications) — for an independent and a typical (ρ = 0.6) pairing."""
    reps = 3000
    rate, _ = verdict_rates(300, 0.6, rho, reps, seed=1)
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


@pytest.mark.validation
@pytest.mark.parametrize("n,p,rho", [(300, 0.6, 0.0), (300, 0.6, 0.6), (1000, 0.3, 0.3), (1000, 0.8, -0.2),
                                     (200, 0.5, 0.9)])
def test_size_of_the_table_verdict_long(n, p, rho):
    """The long run: 10,000 replications per setting (MC SE 0.22% at 5%: tells 5% from 7%)."""
    reps = 10_000
    rate, undetermined = verdict_rates(n, p, rho, reps, seed=2)
    bound = 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
    record(f"table verdict 'supported' at a tie: n={n}, p={p}, rho={rho}", "validation", reps=reps, rate=rate,
           mc_se=math.sqrt(max(rate * (1 - rate), 1e-12) / reps), bound=f"<= {bound:.4f}", undetermined=undetermined)
    assert rate <= bound
