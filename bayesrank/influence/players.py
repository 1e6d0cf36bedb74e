"""Player removal: delete every match of one player; group Newton step vs exact refit.

Removing player p leaves the others' loss ``L_{−p}(θ_{−p}) = Σ_{r ∌ p} ℓ_r (+ ridge)``. From the
full fit θ̂ restricted to the others and re-centred (``Σ_{a≠p} θ_a = 0``), one Newton step on the
sum-to-zero space of the remaining K−1 players (the *group Newton step*: all of p's matches removed
at once) predicts the refit:

    θ_{−p} ≈ θ̂_{−p} − Q (QᵀH_{−p}Q)⁻¹ Qᵀ ∇L_{−p}(θ̂_{−p})

where ``∇L_{−p}(θ̂_{−p}) = −(gradient of p's removed pairs)`` (the full gradient vanishes at θ̂)
and ``H_{−p}`` = H without p's pairs. Reported per player: rank displacement of the others (how
many change position relative to the reference order with p deleted), top-10 membership changes
(players entering the top 10 of the others), and the player's degree (number of matches).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.bt.likelihood import tie_model
from bayesrank.bt.mle import constraint_basis, newton, objective
from bayesrank.data.aggregate import PairCounts, comparison_graph
from bayesrank.influence.state import BTState


def without_player(counts: PairCounts, p: int) -> tuple[PairCounts, np.ndarray]:
    """Counts of the other players (re-indexed) and the kept player indices."""
    keep_players = np.delete(np.arange(counts.n_players), p)
    newidx = np.full(counts.n_players, -1)
    newidx[keep_players] = np.arange(len(keep_players))
    rows = (counts.i != p) & (counts.j != p)
    sub = PairCounts(counts.players[keep_players], newidx[counts.i[rows]], newidx[counts.j[rows]],
                     counts.wins_i[rows], counts.wins_j[rows], counts.ties[rows])
    return sub, keep_players


def group_newton_removal(state: BTState, p: int):
    """(θ predicted by one group Newton step, θ start) on the other players (sum-to-zero)."""
    sub, keep = without_player(state.counts, p)
    model = tie_model(state.ties)
    th0 = state.theta[keep] - state.theta[keep].mean()
    _, g, h = objective(model, sub, th0[None], ridge=state.ridge)
    q = constraint_basis(sub.n_players)
    step = q @ np.linalg.solve(q.T @ h[0] @ q, q.T @ g[0])
    return th0 - step, th0, sub


def _displacement(theta_ref, theta_new, top=10):
    r0 = np.argsort(np.argsort(-theta_ref, kind="stable"), kind="stable")
    r1 = np.argsort(np.argsort(-theta_new, kind="stable"), kind="stable")
    top0 = set(np.flatnonzero(r0 < top))
    top1 = set(np.flatnonzero(r1 < top))
    return int((r0 != r1).sum()), int(np.abs(r0 - r1).max(initial=0)), len(top1 - top0)


def player_removal(state: BTState, exact: bool = True, top: int = 10) -> pd.DataFrame:
    """One row per player: degree, group-Newton and (``exact=True``) exact-refit rank displacement
    of the others, top-``top`` membership changes, and max |Δθ| error of the Newton step."""
    rows = []
    deg = state.counts.matches_per_player()
    model = tie_model(state.ties)
    for p in range(state.n_players):
        pred, th0, sub = group_newton_removal(state, p)
        rec = {"player": str(state.players[p]), "rank": int(np.flatnonzero(state.ranking() == p)[0]) + 1,
               "degree": float(deg[p])}
        n_disp, max_shift, top_changes = _displacement(th0, pred, top)
        rec.update(displaced_newton=n_disp, top10_changes_newton=top_changes)
        if exact:
            finite = state.ridge > 0 or comparison_graph(sub, ties=state.ties).finite_mle
            if finite:
                res = newton(model, sub, start=th0, ridge=state.ridge, tol=1e-11)
                th = res.params[0]
                n_disp, max_shift, top_changes = _displacement(th0, th, top)
                rec.update(displaced=n_disp, max_rank_shift=max_shift, top10_changes=top_changes,
                           max_abs_error_newton=float(np.abs(pred - th).max()),
                           max_abs_change=float(np.abs(th - th0).max()), finite_mle=True)
            else:
                rec.update(displaced=np.nan, max_rank_shift=np.nan, top10_changes=np.nan,
                           max_abs_error_newton=np.nan, max_abs_change=np.nan, finite_mle=False)
        rows.append(rec)
    return pd.DataFrame(rows)


def degree_relation(table: pd.DataFrame, column: str = "displaced") -> dict:
    """Spearman correlation of player degree with the displacement it causes when removed."""
    t = table.dropna(subset=[column])
    from scipy.stats import spearmanr  # here, not at import: the audits that never call this skip scipy.stats

    rho = spearmanr(t["degree"], t[column]).statistic if len(t) > 2 else np.nan
    return {"spearman_degree_vs_" + column: float(rho), "n_players": int(len(t))}
