"""The verdict rule, stated once and printed in every report.

A claim is

* ``unsupported`` when the frequentist answer does not support it at the report's level (for
  ranking claims: some contrast the claim needs is not significant by the pairwise-contrast rule,
  an intersection–union test) **or** the posterior probability of the claim is below the level;
* ``fragile`` when it is supported, but a verified perturbation of fewer than ``fragile_below`` of
  the comparisons (dropping, flipping or adding them; found by the greedy influence audit and
  confirmed by an exact refit) overturns it;
* ``supported`` otherwise.

A greedy audit's budget is an upper bound on the smallest overturning perturbation, so "fragile"
is never claimed without a verified witness, and "supported" means no witness below the threshold
was found.
"""

from __future__ import annotations

VERDICTS = ("supported", "fragile", "unsupported")


def rule_text(level: float, fragile_below: float) -> str:
    return (f"supported: the frequentist test supports the claim at the {level:.0%} level (every contrast it needs "
            f"is significant by the pairwise-contrast rule) AND its posterior probability is at least {level:.2f} "
            f"AND no verified perturbation of fewer than {fragile_below:.2%} of the comparisons (drop, flip or add) "
            f"overturns its point estimate (e.g. another player becomes #1). fragile: statistically supported, but "
            f"such a perturbation exists (found by the greedy influence audit, so its size is an upper bound on the "
            f"smallest one, and confirmed by an exact refit). unsupported: the frequentist or the Bayesian answer "
            f"does not support it.")


def verdict(frequentist_supported: bool, probability: float | None, level: float,
            smallest_fraction: float | None, fragile_below: float) -> str:
    """Apply the rule above (``probability`` None: no Bayesian answer, the frequentist one decides)."""
    if not frequentist_supported or (probability is not None and not probability >= level):
        return "unsupported"
    if smallest_fraction is not None and smallest_fraction < fragile_below:
        return "fragile"
    return "supported"
