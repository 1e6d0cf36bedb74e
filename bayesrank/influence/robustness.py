"""Normalised robustness scores of a leaderboard, defined once.

A robustness score is the smallest fraction of the N comparisons whose perturbation of one kind
breaks one property of the fitted leaderboard. Each score names the property, the perturbation
(action type and candidate space) and the direction of the change it counts:

=========  ===========================================================  ==========================
score      property broken (direction)                                  objective of the audit
=========  ===========================================================  ==========================
R_top1     the top-1 player by point estimate changes (attack)          ``TopK(k=1)``, point mode
R_tau      Kendall τ between the perturbed and the reference ranking    ``SmoothTau(threshold=0.9)``
           falls to ≤ 0.9 (attack: the order is scrambled)
R_CI       the total variance ``tr H⁻¹`` (sum of the players' squared   ``CIObjective("ci-trace",
           standard errors) grows by ≥ 50% (attack: uncertainty         mode="inflate", ratio=1.5)``
           inflated); drop and flip only
=========  ===========================================================  ==========================

A constructive audit (``ci-mode reduce``: the variance is *lowered*), a CI-aware or targeted
top-k audit, or a τ audit at another threshold measures something else and is never filed under
these names. ``fraction = budget / N`` of a **verified** greedy audit is an upper bound on the
smallest breaking fraction (certified on small data by ``--certify``: exhaustive refits);
``None`` = not broken within the audit's budget (no bound is claimed).
"""

from __future__ import annotations

import pandas as pd

from bayesrank.influence.objectives import (
    TAU_THRESHOLD,
    CIObjective,
    Objective,
    SmoothTau,
    TopK,
)

R_TOP1, R_TAU, R_CI = "R_top1", "R_tau", "R_CI"
CI_RATIO = 1.5

PROPERTY = {
    R_TOP1: "the top-1 player by point estimate changes",
    R_TAU: f"Kendall tau between the perturbed and the reference ranking falls to <= {TAU_THRESHOLD}",
    R_CI: f"the total variance tr(H^-1) grows by >= {100 * (CI_RATIO - 1):.0f}%",
}
DIRECTION = {R_TOP1: "attack: overturn the leader", R_TAU: "attack: scramble the order",
             R_CI: "attack: inflate the uncertainty"}
PERTURBATION = {
    "drop": "remove existing comparisons",
    "flip": "reverse the outcome of existing comparisons",
    "add": "add comparisons, outcome chosen by the actor (all_outcomes)",
    "add_pairs": "add comparisons won by the currently stronger player (all_pairs)",
    "add_sampled": "add comparisons, outcome drawn from the fitted BT probability (all_outcomes_sampled)",
    "add_weighted": "add fractional expected-outcome comparisons (all_outcomes_weighted)",
}
ACTIONS_OF = {R_TOP1: None, R_TAU: None, R_CI: ("drop", "flip")}  # None: every match action


def canonical_objective(name: str, state) -> Objective:
    """The objective whose verified audit defines score ``name``."""
    if name == R_TOP1:
        return TopK(state, 1)
    if name == R_TAU:
        return SmoothTau(state, threshold=TAU_THRESHOLD)
    if name == R_CI:
        return CIObjective(state, None, mode="inflate", ratio=CI_RATIO)
    raise KeyError(name)


def score_of(objective: Objective) -> str | None:
    """Which robustness score an audit of ``objective`` measures (``None``: none of them)."""
    if isinstance(objective, TopK):
        return R_TOP1 if objective.k == 1 and objective.target is None and objective.mode == "point" else None
    if isinstance(objective, SmoothTau):
        return R_TAU if objective.threshold == TAU_THRESHOLD else None
    if isinstance(objective, CIObjective):
        inflating = objective.mode == "inflate" and objective.target is None and objective.ratio == CI_RATIO
        return R_CI if inflating else None
    return None


def applies(name: str, action: str) -> bool:
    """Score ``name`` is measured by audits of ``action`` (fractions of comparisons: not drop-cluster)."""
    allowed = ACTIONS_OF[name]
    return action not in ("add_weighted", "drop-cluster") if allowed is None else action in allowed


COLUMNS = ["score", "action", "candidate_space", "perturbation", "direction", "property", "fraction", "budget",
           "budget_limit", "n_comparisons", "verified", "bound", "lower_bound"]


def robustness_table(audits) -> pd.DataFrame:
    """One row per (score, action) from ``[(score name, AuditResult)]``: the fraction, its budget,
    what kind of bound it is and, with ``--certify``, the certified lower bound."""
    rows = []
    for name, res in audits:
        ok = res.broken and res.verified
        cert = res.certified or {}
        budget = res.budget if ok else None
        if cert.get("minimum") is not None:
            budget, bound = cert["minimum"], "certified minimum (exhaustive refits)"
        elif ok:
            bound = "upper bound (verified greedy)"
        else:
            bound = "none: not broken within the budget"
        rows.append({
            "score": name, "action": res.action, "candidate_space": res.candidate_space or "",
            "perturbation": PERTURBATION[res.action], "direction": DIRECTION[name], "property": PROPERTY[name],
            "fraction": None if budget is None else budget / res.n_matches, "budget": budget,
            "budget_limit": res.budget_limit, "n_comparisons": res.n_matches, "verified": bool(res.verified),
            "bound": bound, "lower_bound": cert.get("lower_bound"),
        })
    return pd.DataFrame(rows, columns=COLUMNS)
