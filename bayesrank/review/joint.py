"""A statement across claims: which supported claims hold *jointly* at the report's level.

Each claim's test holds its level on its own; six data-chosen claims at 5% each do not hold together
at 5%. Holm's step-down procedure over the claims' p-values (each the p-value of its own test:
one-sided for a claim named in advance, two-sided for a data-selected one) controls the
family-wise error: with probability at least ``level``, *every* claim it rejects for is true,
whatever the dependence between the tests (claims about the same contrast included). A claim holds
jointly when its frequentist test supports it and its Holm-adjusted p-value is below 1 − level.
Claims without a p-value (none among pairwise claims; a grid claim with fewer than three
configurations, confidence claims) are outside the family and say so.
"""

from __future__ import annotations

import numpy as np


def joint_statement(answers, level: float) -> dict:
    """Holm over the answers' frequentist p-values; sets ``answer.extra["joint"]`` on each answer
    and returns the report-level summary ``{method, level, family, holds_jointly, ...}``."""
    from bayesrank.bt.ranks import adjust_pvalues

    family = [a for a in answers if (a.frequentist or {}).get("p_value") is not None]
    members = {id(a) for a in family}
    p = np.array([float(a.frequentist["p_value"]) for a in family])
    adj = adjust_pvalues(p, "holm") if len(p) else p
    holds = []
    for a, q in zip(family, adj):
        ok = bool(a.frequentist.get("supported") and q < 1 - level)
        a.extra["joint"] = {"p_holm": float(q), "holds_jointly": ok}
        if ok:
            holds.append(a.claim.text)
    outside = []
    for a in answers:
        if id(a) not in members:
            a.extra["joint"] = {"p_holm": None, "holds_jointly": None}
            outside.append(a.claim.text)
    text = (f"Holm over the {len(family)} claims' p-values: "
            + (f"{', '.join(holds)} hold jointly at the {level:.0%} level (family-wise error ≤ {1 - level:.0%})"
               if holds else f"no claim holds jointly at the {level:.0%} level")
            + (f"; without a p-value, outside the family: {', '.join(outside)}" if outside else ""))
    return {"method": "Holm", "level": level, "family": len(family), "holds_jointly": holds,
            "outside_family": outside, "text": text}
