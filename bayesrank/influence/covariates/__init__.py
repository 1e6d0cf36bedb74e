"""Perturbation audits of the style-controlled (covariate-adjusted) Bradley–Terry model.

``style_audit(StyleState.fit(rows), kind, objective=...)`` (comparison rows, ``bayesrank.data.pair_rows``) returns a :class:`StyleAudit`
(the package's result protocol). Modules: :mod:`.state` (the fitted model, row-level actions and
their 1sN predictions), :mod:`.objectives` (top-k and pair gaps, Kendall τ, CI width),
:mod:`.audit` (the verified greedy audit). Names are imported lazily (PEP 562).
"""

from bayesrank._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "StyleState": "state", "Candidates": "state", "candidates": "state", "predicted_params": "state",
    "apply": "state", "newton_point_covariance": "state",
    "StyleObjective": "objectives", "TopKGap": "objectives", "PairGap": "objectives", "StyleTau": "objectives",
    "StyleVariance": "objectives", "style_objective": "objectives",
    "StyleAudit": "audit", "style_audit": "audit", "row_influence": "audit",
    "StyleAuditReport": "report", "audit_report": "report", "load_style_state": "report",
})
