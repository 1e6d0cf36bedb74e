"""Heterogeneous judge-aware ranking (HJA, spec 02).

``logit p_kij = γ_k(μ_i − μ_j) + U_k·(V_i· − V_j·)ᵀ``: consensus μ, judge sensitivities γ and a rank-r
structured residual U Vᵀ, identified by Condition 1 (see ``models/hja.md``). Names load lazily (PEP 562).
"""

from bayesrank._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "HJA": "model", "HJAFit": "model", "select_rank": "model",
    "HJAParams": "anchor", "reanchor": "anchor", "reanchor_scores": "anchor", "constraint_violations": "anchor",
    "JudgePairCounts": "data", "from_comparisons": "data", "validate": "data",
    "simulate_panel": "simulate", "simulate_truth": "simulate",
})
