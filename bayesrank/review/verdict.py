"""The verdict rule, stated once and printed in every report.

**Levels.** A claim named in advance with its direction (a user's ``--claim A>B``) is tested
one-sided at the report's level L: its contrast must exceed ``Φ⁻¹(L)·sd`` and its posterior
probability must be at least L. A claim read off the data (``top1``, ``topk:K`` and ``order``: the
leader, the top set and the order are the fitted ones; the default adjacent pairs, whose direction
is the fitted one) is tested two-sided: ``Φ⁻¹((1 + L)/2)·sd`` and a posterior probability of at
least ``(1 + L)/2``. Either way a false claim is supported with probability at most 1 − L: the
data-selected claim could have been made in either direction, so each direction gets (1 − L)/2.
The two thresholds are the same level, so the frequentist and the Bayesian answers can disagree
only where they really differ (at the flat-prior limit the Laplace posterior probability of a
contrast is ``Φ(est/sd)``: the two decisions coincide).

**Verdicts**, in this order:

* ``unsupported`` — the frequentist test does not support the claim at its level;
* ``not converged`` — the posterior behind the Bayesian answer failed its convergence checks
  (R-hat, ESS, divergences), also after a re-run with more tuning: no verdict is issued on it;
* ``unsupported`` — the posterior probability is below its threshold;
* ``fragile`` — supported, but the greedy influence audit found a perturbation of fewer than
  ``fragile_below`` of the claim's evidence (``relative_to``: the effective number of comparisons
  informing its binding contrast, :mod:`bayesrank.review.evidence`) that overturns its point
  estimate, confirmed by an exact refit;
* ``not searched`` — supported and no witness found, but some action's search stopped short of
  ``fragile_below`` of the claim's evidence (a ``--budget`` below it): the range where the claim
  would be fragile was not searched;
* ``supported`` — otherwise: none found by the greedy audit within a budget that covers the range.

A claim read from a published table (``--kind table``, :mod:`bayesrank.review.table`) has one more
verdict, ``undetermined by the table``: significant at some pairings of the models' answers the
table allows and not at others (at the lower bound of the p-value only).

A greedy budget is an upper bound on the smallest overturning perturbation: "fragile" is never
claimed without a verified witness, and "supported" means the greedy audit found none within B.
"""

from __future__ import annotations

from statistics import NormalDist

UNDETERMINED = "undetermined by the table"  # a published table: significant at some pairings it allows, not all
VERDICTS = ("supported", "fragile", "not searched", "unsupported", "not converged", UNDETERMINED)
ONE_SIDED, TWO_SIDED = "one-sided", "two-sided"


def critical_z(level: float, sided: str) -> float:
    """``Φ⁻¹(level)`` one-sided, ``Φ⁻¹((1 + level)/2)`` two-sided."""
    return NormalDist().inv_cdf(level if sided == ONE_SIDED else 0.5 + level / 2)


def probability_threshold(level: float, sided: str) -> float:
    """The posterior probability a claim needs: ``level`` one-sided, ``(1 + level)/2`` two-sided."""
    return level if sided == ONE_SIDED else 0.5 + level / 2


def p_value(t, sided: str):
    """Directional p-value of ``t = est/sd`` for the claim ``est > 0``: ``Φ(−t)`` one-sided,
    ``min(1, 2Φ(−t))`` two-sided (1 when the estimate contradicts a two-sided claim)."""
    import numpy as np
    from scipy.special import ndtr

    p = ndtr(-np.asarray(t, dtype=float))
    return p if sided == ONE_SIDED else np.minimum(1.0, 2 * p)


def rule_text(level: float, fragile_below: float) -> str:
    one, two = critical_z(level, ONE_SIDED), critical_z(level, TWO_SIDED)
    return (f"supported: the frequentist test supports the claim at the {level:.0%} level — one-sided "
            f"(z = {one:.3f}) for a claim named in advance (--claim A>B), two-sided (z = {two:.3f}) for a claim "
            f"read off the data (top1, topk:K, order, the default adjacent pairs); a ranking claim needs every "
            f"contrast it names to be significant (intersection–union test), the order claim a Kendall τ bound "
            f"above 0.9 from the simultaneous contrast intervals — AND its posterior probability reaches the same "
            f"level ({probability_threshold(level, ONE_SIDED):.3g} one-sided, "
            f"{probability_threshold(level, TWO_SIDED):.3g} two-sided) AND no drop, flip or add of fewer than "
            f"{fragile_below:.2%} of the claim's evidence (relative_to: the effective number of comparisons "
            f"informing its binding contrast; of clusters, counting the clusters a perturbation touches, with "
            f"--cluster) that overturns its point estimate was found by the greedy audit "
            f"within B (B ≥ {fragile_below:.2%} of that evidence; with clusters, B comparisons ≥ those of that many "
            f"clusters). fragile: supported, but the greedy audit found "
            f"such a perturbation (its size is an upper bound on the smallest one; confirmed by an exact refit). "
            f"not searched: supported and none found, but B fell short of {fragile_below:.2%} of the claim's "
            f"evidence (a smaller --budget), so that range was not searched. unsupported: the frequentist or the "
            f"Bayesian answer does not support it. not converged: the posterior behind the Bayesian answer failed "
            f"its convergence checks, also after a re-run with more tuning.")


def verdict(frequentist_supported: bool, probability: float | None, threshold: float,
            smallest_fraction: float | None, fragile_below: float, searched: bool = True,
            converged: bool = True) -> str:
    """Apply the rule above (``probability`` None: no Bayesian answer, the frequentist one decides;
    ``searched``: every audit covered ``fragile_below`` of the claim's evidence; ``converged``:
    the posterior passed its checks)."""
    if not frequentist_supported:
        return "unsupported"
    if not converged:
        return "not converged"
    if probability is not None and not probability >= threshold:
        return "unsupported"
    if smallest_fraction is not None and smallest_fraction < fragile_below:
        return "fragile"
    return "supported" if searched else "not searched"
