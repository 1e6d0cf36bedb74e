"""Influence tables: every candidate action of a type, scored for one objective.

``influence_table(state, objective, kind)`` returns one row per (pair, outcome) cell with the
per-match first-order influence (``−∇fᵀH⁻¹g_n`` times the weight change, chain rule) and the
one-step-Newton prediction, plus the cell count. Cells are exchangeable, so the score of a cell is
the score of each of its matches.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.influence.actions import candidates
from bayesrank.influence.greedy import state_for as _state_for
from bayesrank.influence.objectives import Objective
from bayesrank.influence.state import BTState


def influence_table(state: BTState, objective: Objective, kind: str = "drop", one_step: bool = True) -> pd.DataFrame:
    st = _state_for(state, kind)
    cand = candidates(st, kind, keep_finite=False)
    df = cand.frame(st.players)
    if kind.startswith("add"):
        df["cell_count"] = 0.0
    else:
        df["cell_count"] = st.counts.total[cand.r] if st.counts.unit else st.counts.counts[cand.r, cand.outcome]
    df["first_order"] = objective.delta(st, cand, 1.0, "first")
    if one_step:
        df["one_step_newton"] = objective.delta(st, cand, 1.0, "1sN")
    if st.fast:
        a = st.leverage_base(cand.i, cand.j)
        _, c, _ = st.derivatives(cand.i, cand.j)
        df["leverage"] = c[:, 0] * a  # h_n = c(d) x_nᵀH⁻¹x_n of one match of the pair
    else:  # tr(C A) of one comparison of the row (its curvature times J_rᵀH⁻¹J_r)
        _, c = st.local_derivatives(cand.r)
        cc = np.einsum("no,nolk->nlk", np.abs(cand.delta), c)
        df["leverage"] = np.einsum("nlk,nkl->n", cc, st.leverage(cand.r))
    return df.sort_values("one_step_newton" if one_step else "first_order", kind="stable").reset_index(drop=True)


def all_cell_influence(state: BTState, objective: Objective) -> np.ndarray:
    """First-order per-match influence of dropping a match of every cell, (R,3) (0 where empty):
    the benchmark quantity (one H⁻¹ product and O(R) work)."""
    c = state.counts
    grad = objective.gradient(state.theta, state.hinv)
    if not state.fast:  # rows with covariates / Davidson: s_o (L,) against J_rᵀH⁻¹∇f
        from bayesrank.influence.objectives import _pad

        rows = np.arange(c.n_rows)
        s, _ = state.local_derivatives(rows)
        jd = state.j_dot(rows, state.hinv @ _pad(grad, state.n_params))
        return np.where(c.counts > 0, (s * jd[:, None, :]).sum(axis=2), 0.0)
    s, _, _ = state.derivatives(c.i, c.j)
    u = state.hinv @ grad
    b = u[c.i] - u[c.j]
    return np.where(c.counts > 0, s * b[:, None], 0.0)  # Δf = +s·xᵀH⁻¹∇f for w: 1 → 0


def action_set_prediction(state: BTState, new_table: np.ndarray, order: str = "1sN") -> np.ndarray:
    """Predicted θ after replacing the count table by ``new_table`` (any set of actions at once).

    ``"first"``: sum of first-order influences, ``θ̂ − H⁻¹ ∇L_new(θ̂)`` with the *old* Hessian
    (the weight changes enter linearly); ``"1sN"``: one Newton step on the perturbed loss,
    ``θ̂ − H_new(θ̂)⁻¹ ∇L_new(θ̂)`` with the perturbed Hessian (sum-to-zero space)."""
    from bayesrank.bt.likelihood import tie_model
    from bayesrank.bt.mle import constrained_covariance, objective

    _, g, h = objective(tie_model(state.ties), state.counts, state.theta[None], np.asarray(new_table)[None], state.ridge)
    hinv = state.hinv if order == "first" else constrained_covariance(h[0], state.n_players)
    return state.theta - hinv @ g[0]
