"""Spec 00: leaderboard perturbation audit (influence scores, one-step Newton, verified greedy audits).

``bayesrank.influence.audit(data, objective="top1", actions=("drop", "flip", "add"), ...)`` returns
an :class:`AuditReport` (the package's result protocol). Names are imported lazily (PEP 562).
"""

from bayesrank._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "audit": "api", "parse_actions": "api", "load_state": "api",
    "AuditReport": "result", "AuditResult": "greedy", "greedy_audit": "greedy",
    "BTState": "state", "parse_objective": "objectives", "TopK": "objectives", "PairMargin": "objectives",
    "SmoothTau": "objectives", "CIObjective": "objectives", "robustness_table": "robustness",
})
