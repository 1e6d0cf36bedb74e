"""Baselines for HJA: pooled Bradley–Terry (``bayesrank.bt``) and sensitivity-only JA-Ranking.

- pooled BT: one score vector θ for all judges, ``logit p_kij = θ_i − θ_j`` (Newton MLE of
  :func:`bayesrank.bt.mle.fit_newton` on the judge-pooled counts, half ties);
- JA-Ranking: ``logit p_kij = γ_k(μ_i − μ_j)``, i.e. HJA with rank 0 (same constrained MLE, Σγ = K).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from bayesrank.hja.data import JudgePairCounts
from bayesrank.hja.mle import fit_constrained_mle, linear_predictor


def pooled_bt(counts: JudgePairCounts, ridge: float = 0.0) -> np.ndarray:
    """Pooled Bradley–Terry scores θ (sum-to-zero logit scale) over ``counts.items``."""
    from bayesrank.bt.mle import fit_newton

    params, _, _, _ = fit_newton(counts.pooled(), ties="half", ridge=ridge)
    return params[: counts.n_items]


def pooled_bt_proba(theta: np.ndarray, counts: JudgePairCounts) -> np.ndarray:
    return expit(theta[counts.i] - theta[counts.j])


def ja_ranking(counts: JudgePairCounts, seed: int = 0):
    """JA-Ranking = HJA rank 0: returns identified :class:`~bayesrank.hja.anchor.HJAParams`."""
    return fit_constrained_mle(counts, 0, n_starts=1, seed=seed, warn=False).best.params


def ja_proba(params, counts: JudgePairCounts) -> np.ndarray:
    return expit(linear_predictor(counts, params))
