"""A prior on the unknown pairing of two models' answers, fitted to real paired per-item results, and
the posterior probability of a claim read from margins (correct counts and n) only.

**What the margins do not say.** For models A and B on the same n items with ``x_lo ≤ x_hi`` correct,
the 2×2 table is fixed up to ``m`` = the count of the minority discordant cell (items the weaker model
got right and the stronger wrong), ``0 ≤ m ≤ m_max = min(x_lo, n − x_hi)``
(:mod:`bayesrank.stats.margins`). Were the two models' answers independent, m would be about
``e = n·p_lo·(1 − p_hi)``; their ratio ``r = m/e`` is one minus Cole's coefficient of association
(``cov/cov_max``): r = 0 at the most positive association the margins allow, 1 at independence,
above 1 when the models err on different items.

**The prior.** Across real pairs of models scored on the same items, r is remarkably stable while the
odds ratio and the share ``m/m_max`` of the admissible range are not: on AlpacaEval 2.0 (57 models,
805 instructions, discrete wins against the reference) and on arena-bench-v1 (15 models, 300
questions, GPT-4 grade ≥ 6), median r is 0.48 and 0.47, its 5–95% range 0.19–0.75 and 0.24–0.76, while
the median log odds ratio is 2.9 and 1.6 and the median ``m/m_max`` 0.42 and 0.22. So the prior is on
r, hierarchical: ``r_j ~ Gamma(shape k, scale s)`` across pairs, ``m_j | r_j ~ Poisson(r_j·e_j)``
truncated to ``0 … m_max``; marginally m is negative binomial (``NB(k, 1/(1 + s·e))``) truncated to
the admissible range. ``(k, s)`` are fitted by maximum likelihood to the pairs of both sources
(:func:`fit_prior`; tests/stats/test_discordance.py refits them from the files and checks coverage:
each source's central 90% predictive intervals, from the prior fitted to the other source only,
cover its real m at about 90%).

**The posterior of a claim.** Given the completed table (b = A right B wrong, c = the reverse), the
paired difference is ``p_A − p_B = π10 − π01``; with a Jeffreys Dirichlet(½, ½, ½, ½) prior on the
table's cell probabilities, ``π10/(π10 + π01) ~ Beta(b + ½, c + ½)`` (the other cells integrate
out), so ``P(p_A > p_B | table) = P(Beta(b + ½, c + ½) > ½) = I_½(c + ½, b + ½)``. The pairing is
missing data: ``P(claim | margins) = Σ_m w(m)·P(claim | table(m))`` with ``w`` the prior predictive
of m given the margins (the fitted truncated negative binomial) — the posterior under that
imputation model. ``P(claim)`` at the smallest and the largest discordance are the values at
m = 0 and m = m_max.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the prior fitted by :func:`fit_prior` to the pairs of :data:`SOURCES` (refitted in the tests)
SHAPE, SCALE = 49.89, 0.009897
SOURCES = (
    "AlpacaEval 2.0 (tatsu-lab/alpaca_eval @ cd543a149df8): 57 models × 805 instructions, a win = the "
    "weighted GPT-4-turbo annotator's preference > 1.5 against gpt4_1106_preview (1,596 pairs)",
    "arena-bench-v1 (lmarena/arena-hard-auto @ 4a705dd6963f): 15 models × 300 questions, a pass = "
    "GPT-4 single-answer grade ≥ 6 of 10 (105 pairs)",
)


def pair_table(wide) -> pd.DataFrame:  # noqa: F821
    """Every pair of columns of a 0/1 items × models frame (missing: the pair's shared items only):
    n, x_a, x_b, m (minority discordant count), m_max, e (its value under independence) and r = m/e."""
    import pandas as pd

    cols = list(wide.columns)
    y = wide.to_numpy(dtype=float)
    rows = []
    for i in range(len(cols)):
        for j in range(i + 1, len(cols)):
            ok = ~(np.isnan(y[:, i]) | np.isnan(y[:, j]))
            a, b = y[ok, i], y[ok, j]
            n = int(ok.sum())
            xa, xb = int(a.sum()), int(b.sum())
            n10, n01 = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
            lo, hi = min(xa, xb), max(xa, xb)
            e = n * (lo / n) * (1 - hi / n) if n else 0.0
            rows.append({"a": cols[i], "b": cols[j], "n": n, "x_a": xa, "x_b": xb, "m": min(n10, n01),
                         "m_max": int(min(lo, n - hi)), "e": e, "r": min(n10, n01) / e if e > 0 else np.nan})
    return pd.DataFrame(rows)


def _logpmf(m, e, m_max, shape, scale):
    """log w(m): the negative binomial NB(k, 1/(1 + s·e)) truncated to 0 … m_max."""
    from scipy import stats

    p = 1.0 / (1.0 + scale * np.asarray(e, float))
    log_norm = stats.nbinom.logcdf(m_max, shape, p)
    return stats.nbinom.logpmf(m, shape, p) - log_norm


def fit_prior(pairs) -> tuple[float, float]:
    """Maximum-likelihood (k, s) of the Gamma–Poisson model of ``pairs`` (columns m, e, m_max; pairs
    with m_max = 0 carry no information and are skipped)."""
    from scipy import optimize

    t = pairs[(pairs["m_max"] > 0) & (pairs["e"] > 0)]
    m, e, mm = (t[c].to_numpy(float) for c in ("m", "e", "m_max"))

    def nll(v):
        return -float(np.sum(_logpmf(m, e, mm, np.exp(v[0]), np.exp(v[1]))))

    res = optimize.minimize(nll, x0=np.log([5.0, 0.1]), method="Nelder-Mead",
                            options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 4000})
    return float(np.exp(res.x[0])), float(np.exp(res.x[1]))


@dataclass(frozen=True)
class DiscordancePrior:
    """The prior predictive of the minority discordant count m given two margins (module docstring)."""

    shape: float = SHAPE
    scale: float = SCALE

    @property
    def r_mean(self) -> float:
        return self.shape * self.scale

    def r_interval(self, level: float = 0.9) -> tuple[float, float]:
        from scipy import stats

        a = (1 - level) / 2
        return tuple(float(v) for v in stats.gamma.ppf([a, 1 - a], self.shape, scale=self.scale))

    def weights(self, x_a: int, x_b: int, n: int) -> np.ndarray:
        """w(m), m = 0 … m_max (sums to 1)."""
        lo, hi = min(x_a, x_b), max(x_a, x_b)
        m_max = int(min(lo, n - hi))
        e = n * (lo / n) * (1 - hi / n)
        m = np.arange(m_max + 1)
        if e <= 0:
            return np.r_[1.0, np.zeros(m_max)]
        w = np.exp(_logpmf(m, e, m_max, self.shape, self.scale))
        return w / w.sum()

    def interval(self, x_a: int, x_b: int, n: int, level: float = 0.9) -> tuple[int, int]:
        """Central predictive interval of m (the quantiles of w at (1 ∓ level)/2)."""
        c = np.cumsum(self.weights(x_a, x_b, n))
        a = (1 - level) / 2
        return int(np.searchsorted(c, a - 1e-12)), int(np.searchsorted(c, 1 - a - 1e-12))

    def text(self) -> str:
        lo, hi = self.r_interval(0.9)
        return (f"prior on the pairing: r = m / (n·p_lo·(1 − p_hi)) ~ Gamma(shape {self.shape:.3g}, scale "
                f"{self.scale:.3g}) (mean {self.r_mean:.2f}, 90% of pairs between {lo:.2f} and {hi:.2f}; r = 1 is "
                f"independence, 0 the strongest agreement the margins allow), m | r Poisson, truncated to the "
                f"admissible range; fitted by maximum likelihood to real paired per-item results: "
                + "; ".join(SOURCES))


def p_ahead(b, c) -> np.ndarray:
    """P(p_A > p_B | completed table) = P(Beta(b + ½, c + ½) > ½) = I_½(c + ½, b + ½)."""
    from scipy.special import betainc

    return betainc(np.asarray(c, float) + 0.5, np.asarray(b, float) + 0.5, 0.5)


def claim_probability(x_a: int, x_b: int, n: int, prior: DiscordancePrior | None = None) -> dict:
    """P(p_A > p_B) integrated over the pairing (``probability``), and at the smallest and the largest
    discordance (``probability_bounds``: at m = 0 and m = m_max, in that order)."""
    prior = prior or DiscordancePrior()
    g = x_a - x_b
    lo, hi = min(x_a, x_b), max(x_a, x_b)
    m = np.arange(int(min(lo, n - hi)) + 1)
    b, c = (m + g, m) if g >= 0 else (m, m - g)
    p = p_ahead(b, c)
    w = prior.weights(x_a, x_b, n)
    return {"probability": float(np.clip(w @ p, 0.0, 1.0)),
            "probability_at_discordance_bounds": [float(p[0]), float(p[-1])],
            "prior_discordance_interval": [int(g if g >= 0 else -g) + 2 * v for v in prior.interval(x_a, x_b, n)]}
