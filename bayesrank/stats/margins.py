"""Tests of a claim read from published margins only: two models' correct counts on the same n items,
or two scores with their standard errors, the pairing (covariance) unknown.

**Accuracy tables.** Models A and B answered the same n items, ``x_A`` and ``x_B`` correctly. The
2×2 table of their answers is fixed by the margins up to one free count. With ``b`` = items A got right
and B wrong, ``c`` = the reverse, ``b − c = g = x_A − x_B`` is fixed, and

* ``b ≤ min(x_A, n − x_B)``, ``c ≤ min(x_B, n − x_A)``, both ≥ 0; so the smaller of the two,
  ``m = min(b, c)``, ranges over ``0 … m_max`` with ``m_max = min(x_lo, n − x_hi)`` (``x_lo``,
  ``x_hi`` the smaller and larger count), and the discordance ``D = b + c = |g| + 2m`` over
  ``|g|, |g| + 2, …, |g| + 2·m_max`` (one parity): every such table is a pairing the margins allow.

The exact McNemar test (:func:`bayesrank.stats.paired.mcnemar_exact_many`) is computed at every
admissible D: ``p_value_bounds = [min, max]`` over the range. For a fixed gap the one-sided p
``P(X ≥ b | X ~ Bin(D, ½))`` grows with D (the z-statistic ``g/√D`` shrinks), so the bounds are
attained at the smallest and the largest discordance — checked numerically
(tests/stats/test_margins.py) but not assumed: the minimum and maximum are taken over the whole range.
``discordance_to_significance`` is the largest D up to which every admissible discordance is
significant (null when none is). The unpaired two-proportion z-test (pooled variance, as statsmodels'
``proportions_ztest``) is the answer when the items differ.

**Score tables** (arena-style: score and standard error per model, covariance unknown): the contrast's
standard error ``√(se_A² + se_B² − 2ρ·se_A·se_B)`` lies between ``|se_A − se_B|`` (ρ = 1) and
``se_A + se_B`` (ρ = −1) by Cauchy–Schwarz; the z-test's p-value is bounded at these two extremes
(monotone in the SE). A published interval ``[lower, upper]`` at level L gives
``se = (upper − lower)/(2·z_{(1+L)/2})``.

Directional p-values for the claim A > B: one-sided ``P(X ≥ b)`` (McNemar) or ``Φ(−z)``; two-sided
``min(1, 2·one-sided)`` (1 when the estimate contradicts the claim), as the review's rule.
"""

from __future__ import annotations

import math

import numpy as np

ONE_SIDED, TWO_SIDED = "one-sided", "two-sided"


def discordance_range(x_a: int, x_b: int, n: int) -> tuple[int, int]:
    """(|g|, m_max): the smallest discordance and the largest count of the minority discordant cell."""
    lo, hi = min(x_a, x_b), max(x_a, x_b)
    return abs(x_a - x_b), int(min(lo, n - hi))


def _directional(one: np.ndarray, sided: str) -> np.ndarray:
    return one if sided == ONE_SIDED else np.minimum(1.0, 2.0 * one)


def mcnemar_over_pairings(x_a: int, x_b: int, n: int, sided: str = ONE_SIDED) -> dict:
    """Exact McNemar p-value for the claim A > B at every pairing the margins allow.

    Returns ``discordance`` (D for m = 0 … m_max), ``b``, ``c`` and ``p`` (directional, per D)."""
    from bayesrank.stats.paired import mcnemar_exact_many

    g, m_max = discordance_range(x_a, x_b, n)
    m = np.arange(m_max + 1)
    if x_a >= x_b:
        b, c = m + g, m
    else:
        b, c = m, m + g
    _, one = mcnemar_exact_many(b, c)
    return {"discordance": b + c, "b": b, "c": c, "p": _directional(np.asarray(one, float), sided)}


def mcnemar_bounds(x_a: int, x_b: int, n: int, level: float = 0.95, sided: str = ONE_SIDED) -> dict:
    """``p_value_bounds`` [min, max] over the admissible pairings, the discordances that attain them
    (``discordance_bounds``: the smallest and the largest D), whether the p-value is monotone in D
    (``monotone``), and ``discordance_to_significance`` (the largest D up to which every admissible
    discordance is significant at ``1 − level``; None when the smallest is not)."""
    r = mcnemar_over_pairings(x_a, x_b, n, sided)
    p, d = r["p"], r["discordance"]
    alpha = 1 - level
    ok = p < alpha
    upto = None
    if ok[0]:
        first_bad = np.flatnonzero(~ok)
        upto = int(d[-1] if not len(first_bad) else d[first_bad[0] - 1])
    return {"p_value_bounds": [float(p.min()), float(p.max())],
            "discordance_bounds": [int(d[0]), int(d[-1])],
            "p_at_discordance_bounds": [float(p[0]), float(p[-1])],
            "monotone": bool(np.all(np.diff(p) >= -1e-15)),
            "discordance_to_significance": upto,
            "b_c_at_bounds": [[int(r["b"][0]), int(r["c"][0])], [int(r["b"][-1]), int(r["c"][-1])]]}


def two_proportion_p(x_a: int, n_a: int, x_b: int, n_b: int, sided: str = ONE_SIDED) -> float:
    """Unpaired two-proportion z-test of p_A > p_B with the pooled variance (statsmodels'
    ``proportions_ztest``): ``z = (p̂_A − p̂_B)/√(p̄(1 − p̄)(1/n_A + 1/n_B))``; directional p."""
    from scipy.special import ndtr

    pa, pb = x_a / n_a, x_b / n_b
    pool = (x_a + x_b) / (n_a + n_b)
    var = pool * (1 - pool) * (1 / n_a + 1 / n_b)
    if var <= 0:
        one = 0.5 if pa == pb else (0.0 if pa > pb else 1.0)
    else:
        one = float(ndtr(-(pa - pb) / math.sqrt(var)))
    return float(_directional(np.asarray(one), sided))


def se_from_interval(lower: float, upper: float, level: float = 0.95) -> float:
    """Standard error of a symmetric normal interval [lower, upper] at ``level``."""
    from statistics import NormalDist

    return (upper - lower) / (2 * NormalDist().inv_cdf(0.5 + level / 2))


def contrast_se_bounds(se_a: float, se_b: float) -> tuple[float, float]:
    """[|se_A − se_B|, se_A + se_B]: the contrast's SE over every correlation ρ ∈ [−1, 1]."""
    return abs(se_a - se_b), se_a + se_b


def z_p_value(estimate: float, se: float, sided: str = ONE_SIDED) -> float:
    """Directional p-value of the z-test of ``estimate > 0`` (se = 0: 0 if positive, else 1)."""
    from scipy.special import ndtr

    if se <= 0:
        one = 0.0 if estimate > 0 else 1.0
    else:
        one = float(ndtr(-estimate / se))
    return float(_directional(np.asarray(one), sided))


def z_bounds(estimate: float, se_a: float, se_b: float, level: float = 0.95, sided: str = ONE_SIDED) -> dict:
    """``p_value_bounds`` of the contrast's z-test over the unknown covariance (at the smallest and the
    largest SE), the independence p beside them, and ``se_to_significance``: the largest contrast SE
    at which the claim is still significant (|estimate| / z_crit; None when the estimate is ≤ 0)."""
    from statistics import NormalDist

    lo, hi = contrast_se_bounds(se_a, se_b)
    ps = [z_p_value(estimate, lo, sided), z_p_value(estimate, hi, sided)]
    z = NormalDist().inv_cdf(level if sided == ONE_SIDED else 0.5 + level / 2)
    return {"p_value_bounds": [min(ps), max(ps)], "se_bounds": [lo, hi],
            "p_value_independent": z_p_value(estimate, math.hypot(se_a, se_b), sided),
            "se_to_significance": float(estimate / z) if estimate > 0 else None}


def regrades_to_lose(x_a: int, x_b: int, n: int, level: float = 0.95, sided: str = ONE_SIDED) -> dict:
    """Smallest number of re-graded items after which the claim A > B is no longer significant at the
    lower bound (``low``: at the smallest discordance, so at every pairing: unsupported) and at the upper
    bound (``high``: at the largest discordance, so at some pairing). A re-grade moves A right→wrong
    (x_A − 1) or B wrong→right (x_B + 1); k re-grades with j of the first kind leave the gap g − k and the
    margins (x_A − j, x_B + k − j). The smallest discordance is the gap whatever j; the largest,
    ``g − k + 2·m_max``, is largest for the j that maximises ``m_max = min(x_A − j, x_B + k − j,
    n − x_A + j, n − x_B − k + j)`` (a minimum of two decreasing and two increasing lines in j: at their
    crossing, clipped to [0, k]). Every k from 0 to g + 1 is evaluated (no monotonicity assumed): exact.
    None when the claim is not significant at that bound to begin with; ``gap`` = g (re-grades that
    overturn the estimate: a tie is not A > B)."""
    from bayesrank.stats.paired import mcnemar_exact_many

    alpha = 1 - level
    g = x_a - x_b
    out = {"gap": max(g, 0)}
    if g <= 0:
        return {**out, "low": None, "high": None}
    k = np.arange(g + 1)
    dec = np.minimum(x_a, x_b + k)  # minus j
    inc = np.minimum(n - x_a, n - x_b - k)  # plus j
    best = np.full(len(k), -1, dtype=np.int64)
    centre = (dec - inc) / 2
    for j in (np.floor(centre), np.ceil(centre)):
        j = np.clip(j, 0, k).astype(np.int64)
        best = np.maximum(best, np.minimum(dec - j, inc + j))
    best = np.maximum(best, 0)
    gap = g - k
    for name, m in (("low", np.zeros_like(gap)), ("high", best)):
        _, one = mcnemar_exact_many(gap + m, m)
        p = _directional(np.asarray(one, float), sided)
        if p[0] >= alpha:
            out[name] = None
        else:
            out[name] = int(k[np.argmax(p >= alpha)])  # p = 1 at k = g (a tie): always reached
    return out
