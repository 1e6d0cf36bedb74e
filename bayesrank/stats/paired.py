"""Paired per-item statistics shared by every room that compares two players on the same items.

Both players answered the same items, so the comparison is paired: with ``d_i = y_Ai − y_Bi`` (item i's
score difference), ``diff = mean(d) = acc_A − acc_B``:

- **exact McNemar** (binary items): among the discordant items, ``n10`` = A right and B wrong,
  ``n01`` = the reverse; under H0 ``n10 ~ Binomial(n10 + n01, 1/2)``. Two-sided p =
  ``min(1, 2·P(X ≤ min(n10, n01)))`` (= statsmodels ``mcnemar(exact=True)`` = scipy ``binomtest``);
  one-sided p for the claim A > B = ``P(X ≥ n10)``.
- **paired standard error** ``se = sd(d)/√n`` (ddof 1; = OLS of d on a constant) and, when items are
  grouped (``cluster``: passages, source documents, templates of one question), the
  **cluster-robust** (CR1, Liang–Zeger) ``se² = G/(G−1)·Σ_g (Σ_{i∈g}(d_i − d̄))² / n²``
  (= statsmodels OLS ``cov_type="cluster"``); a Wald interval ``diff ± z·se`` and p-value, or for
  fractional scores without clusters the paired t test (``fractional_test="t"``: ``t = diff/se`` on
  n − 1 degrees of freedom, = scipy ``ttest_rel``).
- **paired bootstrap**: percentile interval of ``diff`` over ``n_boot`` resamples of items (of whole
  clusters when grouped), seeded.
- **per-player accuracy intervals** that stay sensible at 0% and 100%: Wilson (score) and Jeffreys
  (Beta(x + ½, n − x + ½) quantiles, with lower = 0 at x = 0 and upper = 1 at x = n, the boundary
  convention of Brown, Cai & DasGupta 2001, so the interval contains the observed 0% or 100%).
- **minimum detectable effect** at the test level and ``power`` for the two-sided z test with this
  design's standard error (``σ = se·√n``): the δ with ``Φ(δ/se − z) + Φ(−δ/se − z) = power``; and the
  **items needed** to detect ``effect`` (default: the observed |diff|) with that power,
  ``n·(MDE/|effect|)²`` rounded up (power depends on δ√n/σ only).
- **Holm** step-down adjustment and the **intersection–union** p-value of a claim that needs every
  one of several contrasts (the maximum of their p-values: the claim is rejected at α iff every
  contrast is).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from bayesrank.errors import InputError


# ---------------------------------------------------------------------------------------- intervals
def wilson_interval(x: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion x/n."""
    from scipy import stats

    z = stats.norm.ppf(0.5 + level / 2)
    p = x / n
    den = 1 + z**2 / n
    centre = (p + z**2 / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def jeffreys_interval(x: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Equal-tailed Jeffreys interval; lower = 0 at x = 0 and upper = 1 at x = n (Brown et al. 2001)."""
    from scipy import stats

    a = (1 - level) / 2
    lo = 0.0 if x == 0 else float(stats.beta.ppf(a, x + 0.5, n - x + 0.5))
    hi = 1.0 if x == n else float(stats.beta.ppf(1 - a, x + 0.5, n - x + 0.5))
    return lo, hi


def wilson_many(x, n: int, level: float = 0.95) -> np.ndarray:
    """:func:`wilson_interval` for an array of counts ``x`` out of ``n``: (len(x), 2)."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = np.asarray(x, dtype=float) / n
    den = 1 + z**2 / n
    centre = (p + z**2 / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / den
    return np.column_stack([np.maximum(0.0, centre - half), np.minimum(1.0, centre + half)])


def jeffreys_many(x, n: int, level: float = 0.95) -> np.ndarray:
    """:func:`jeffreys_interval` for an array of counts ``x`` out of ``n``: (len(x), 2)."""
    from scipy.special import betaincinv

    x = np.asarray(x, dtype=float)
    a = (1 - level) / 2
    lo = np.where(x == 0, 0.0, betaincinv(x + 0.5, n - x + 0.5, a))
    hi = np.where(x == n, 1.0, betaincinv(x + 0.5, n - x + 0.5, 1 - a))
    return np.column_stack([lo, hi])


# ---------------------------------------------------------------------------------------- tests
def mcnemar_exact(n10: int, n01: int) -> tuple[float, float]:
    """(two-sided p, one-sided p for n10 > n01) of the exact McNemar test."""
    from scipy import stats

    m = n10 + n01
    if m == 0:
        return 1.0, 1.0
    two = min(1.0, 2.0 * float(stats.binom.cdf(min(n10, n01), m, 0.5)))
    one = float(stats.binom.sf(n10 - 1, m, 0.5))
    return two, one


def mcnemar_exact_many(n10, n01) -> tuple[np.ndarray, np.ndarray]:
    """:func:`mcnemar_exact` element-wise over arrays of discordant counts (any shape)."""
    from scipy import stats

    n10 = np.asarray(n10, dtype=np.int64)
    n01 = np.asarray(n01, dtype=np.int64)
    m = n10 + n01
    two = np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(n10, n01), m, 0.5))
    one = stats.binom.sf(n10 - 1, m, 0.5)
    empty = m == 0
    return np.where(empty, 1.0, two), np.where(empty, 1.0, one)


def mcnemar_rejects(n10, n01, alpha: float, one_sided: bool) -> np.ndarray:
    """Element-wise whether :func:`mcnemar_exact_many`'s p-value for "A solves more" is below α and
    n10 > n01, without the exact tail where the normal approximation already decides: with m = n10 +
    n01 and X ~ Binomial(m, ½), the one-sided p = P(X ≤ n01) (symmetry) and the two-sided p = 2 P(X ≤
    n01), i.e. p < α ⇔ P(X ≤ n01) < q, q = α or α/2. By the Berry–Esseen bound (constant 0.4748,
    Shevtsova 2011; ρ/σ³ = 1 for a fair coin) |P(X ≤ n01) − Φ(−z)| ≤ B = 0.4748/√m with
    z = (n10 − n01)/√m, so Φ(−z) + B < q decides "reject" and Φ(−z) − B ≥ q "keep"; the others get
    SciPy's exact binomial CDF, as :func:`mcnemar_exact_many` does."""
    from scipy import stats
    from scipy.special import ndtr

    n10 = np.asarray(n10, dtype=float)
    n01 = np.asarray(n01, dtype=float)
    m = n10 + n01
    q = alpha if one_sided else alpha / 2
    ahead = (n10 > n01) & (m > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.where(m > 0, np.sqrt(m), 1.0)
        approx = ndtr(-(n10 - n01) / root)
        bound = 0.4748 / root
    out = ahead & (approx + bound < q)
    near = ahead & ~out & (approx - bound < q)
    if near.any():
        out[near] = stats.binom.cdf(n01[near], m[near], 0.5) < q
    return out


def intersection_union(p_values) -> float:
    """p-value of a claim that needs every one of several contrasts (an intersection–union test,
    Berger 1982): the largest of their p-values — the claim is rejected at α iff each one is, and
    the test keeps its size without a multiplicity correction."""
    p = np.asarray(p_values, dtype=float)
    if p.size == 0:
        raise ValueError("an intersection–union test needs at least one contrast")
    return float(p.max())


def cluster_se(d: np.ndarray, clusters: np.ndarray) -> tuple[float, int]:
    """CR1 cluster-robust standard error of mean(d) (statsmodels' OLS ``cov_type="cluster"``)."""
    n = len(d)
    codes, uniq = pd.factorize(clusters)
    g = len(uniq)
    if g < 2:
        raise InputError("cluster-robust standard errors need at least two clusters")
    sums = np.bincount(codes, weights=d - d.mean(), minlength=g)
    var = (g / (g - 1)) * float(sums @ sums) / n**2  # statsmodels' (n-1)/(n-k) factor is 1 for k = 1
    return math.sqrt(var), g


def detectable_effect(se: float, level: float = 0.95, power: float = 0.8) -> float:
    """δ with two-sided z-test power ``Φ(δ/se − z) + Φ(−δ/se − z) = power`` (z = quantile of ``level``)."""
    from scipy import optimize, stats

    if not se > 0:
        return float("nan")
    z = stats.norm.ppf(0.5 + level / 2)

    def gap(t):
        return stats.norm.cdf(t - z) + stats.norm.cdf(-t - z) - power

    t = optimize.brentq(gap, 0.0, z + stats.norm.ppf(power) + 10.0, xtol=1e-12)
    return float(t * se)


def _resamples(rng, n: int, n_boot: int, max_cells: int = 2_000_000):
    """Index arrays of bootstrap resamples (with replacement from range(n)) in chunks of at most
    ``max_cells`` indices, so memory stays bounded on large benchmarks."""
    step = max(1, max_cells // max(n, 1))
    for start in range(0, n_boot, step):
        yield rng.integers(0, n, size=(min(step, n_boot - start), n))


def paired_comparison(ya: np.ndarray, yb: np.ndarray, clusters: np.ndarray | None = None, *, level: float = 0.95,
                      power: float = 0.8, effect: float | None = None, n_boot: int = 2000, seed: int = 0,
                      fractional_test: str = "wald") -> dict:
    """Every paired statistic of one comparison (see module docstring); ``ya``/``yb`` aligned by item.
    ``fractional_test``: the test of fractional scores without clusters, ``"wald"`` (normal) or ``"t"``
    (paired t on n − 1 degrees of freedom)."""
    from scipy import stats

    ya, yb = np.asarray(ya, float), np.asarray(yb, float)
    n = len(ya)
    if n < 2:
        raise InputError(f"a paired comparison needs at least two items scored by both players (got {n})")
    d = ya - yb
    binary = bool(np.isin(ya, (0.0, 1.0)).all() and np.isin(yb, (0.0, 1.0)).all())
    diff = float(d.mean())
    z = stats.norm.ppf(0.5 + level / 2)
    out = {"n_items": n, "acc_a": float(ya.mean()), "acc_b": float(yb.mean()), "diff": diff, "binary": binary}
    for tag, y in (("a", ya), ("b", yb)):
        if binary:
            x = int(y.sum())
            out[f"acc_{tag}_wilson"] = list(wilson_interval(x, n, level))
            out[f"acc_{tag}_jeffreys"] = list(jeffreys_interval(x, n, level))
        else:
            out[f"acc_{tag}_wilson"] = out[f"acc_{tag}_jeffreys"] = None
    if binary:
        n10, n01 = int(((ya == 1) & (yb == 0)).sum()), int(((ya == 0) & (yb == 1)).sum())
        p2, p1 = mcnemar_exact(n10, n01)
        out.update(n10=n10, n01=n01, mcnemar_p=p2, mcnemar_p_one_sided=p1)
    else:
        out.update(n10=None, n01=None, mcnemar_p=None, mcnemar_p_one_sided=None)
    se_iid = float(d.std(ddof=1) / math.sqrt(n))
    out["se"] = se_iid
    se = se_iid
    rng = np.random.default_rng(seed)
    if clusters is not None:
        se_c, g = cluster_se(d, np.asarray(clusters))
        out.update(se_cluster=se_c, n_clusters=g)
        se = se_c
        codes, _ = pd.factorize(np.asarray(clusters))
        sums, sizes = np.bincount(codes, weights=d, minlength=g), np.bincount(codes, minlength=g)
        boot = np.concatenate([(sums[p].sum(axis=1) / sizes[p].sum(axis=1)) for p in _resamples(rng, g, n_boot)])
    else:
        out.update(se_cluster=None, n_clusters=None)
        boot = np.concatenate([d[p].mean(axis=1) for p in _resamples(rng, n, n_boot)])
    a = (1 - level) / 2
    out["diff_wald"] = [diff - z * se, diff + z * se]
    out["diff_bootstrap"] = [float(np.quantile(boot, a)), float(np.quantile(boot, 1 - a))]
    p_wald = float(2 * stats.norm.sf(abs(diff) / se)) if se > 0 else (1.0 if diff == 0 else 0.0)
    if clusters is not None:
        out.update(test="cluster-robust Wald", p_value=p_wald)
    elif binary:
        out.update(test="exact McNemar", p_value=out["mcnemar_p"])
    elif fractional_test == "t":
        p_t = float(2 * stats.t.sf(abs(diff) / se, n - 1)) if se > 0 else (1.0 if diff == 0 else 0.0)
        out.update(test="paired t", p_value=p_t)
    else:
        out.update(test="Wald (paired)", p_value=p_wald)
    mde = detectable_effect(se, level, power)
    target = abs(diff) if effect is None else abs(effect)
    out["mde"] = mde
    out["effect_for_power"] = target
    out["items_needed"] = int(math.ceil(n * (mde / target) ** 2)) if target > 0 and np.isfinite(mde) else None
    return out


def holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (= statsmodels ``multipletests(method="holm")``)."""
    p = np.asarray(p, float)
    order = np.argsort(p, kind="stable")
    m = len(p)
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out
