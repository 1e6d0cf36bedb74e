"""Heterogeneous judge-aware ranking (HJA, spec 02).

``logit p_kij = γ_k(μ_i − μ_j) + U_k·(V_i· − V_j·)ᵀ``: consensus μ, judge sensitivities γ and a rank-r
structured residual U Vᵀ, identified by Condition 1 (see ``models/hja.md``).
"""

from bayesrank.hja.anchor import HJAParams, constraint_violations, reanchor, reanchor_scores
from bayesrank.hja.data import JudgePairCounts, from_comparisons, validate
from bayesrank.hja.model import HJA, HJAFit, select_rank
from bayesrank.hja.simulate import simulate_panel, simulate_truth

__all__ = ["HJA", "HJAFit", "HJAParams", "JudgePairCounts", "from_comparisons", "validate", "select_rank",
           "reanchor", "reanchor_scores", "constraint_violations", "simulate_panel", "simulate_truth"]
