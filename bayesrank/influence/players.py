"""Player removal: delete every comparison of one player; group Newton step vs exact refit.

Removing player p leaves the others' loss ``L_{−p}(φ_{−p}) = Σ_{r ∌ p} ℓ_r (+ ridge)`` over every
row without p (pair counts, or comparison rows with their features, position effect, clusters and
tie model: the removal is the same model refitted on the rows that remain). From the full fit φ̂
with θ restricted to the others and re-centred (``Σ_{a≠p} θ_a = 0``; α, β, λ kept), one Newton step
on the sum-to-zero space of the remaining K−1 players (the *group Newton step*: all of p's rows
removed at once) predicts the refit:

    φ_{−p} ≈ φ̂_{−p} − Q (QᵀH_{−p}Q)⁻¹ Qᵀ ∇L_{−p}(φ̂_{−p})

where ``∇L_{−p}(φ̂_{−p}) = −(gradient of p's removed rows)`` (the full gradient vanishes at φ̂)
and ``H_{−p}`` = H without p's rows. The exact refit is the model's Newton MLE of those rows.
Reported per player: rank displacement of the others (how many change position relative to the
reference order with p deleted), top-10 membership changes (players entering the top 10 of the
others), and the player's degree (number of comparisons).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.bt.mle import constrained_covariance, objective
from bayesrank.data.rows import PairRows
from bayesrank.errors import NoFiniteEstimateError
from bayesrank.influence.state import BTState


def without_player(counts: PairRows, p: int) -> tuple[PairRows, np.ndarray]:
    """The rows without player ``p`` (the other players re-indexed; features, weights, clusters
    kept) and the kept player indices."""
    keep_players = np.delete(np.arange(counts.n_players), p)
    newidx = np.full(counts.n_players, -1)
    newidx[keep_players] = np.arange(len(keep_players))
    rows = (counts.i != p) & (counts.j != p)
    sub = counts.subset(rows)
    return sub.replace(players=counts.players[keep_players], i=newidx[sub.i], j=newidx[sub.j]), keep_players


def _start(state: BTState, keep: np.ndarray) -> np.ndarray:
    """φ̂ with θ restricted to the kept players and re-centred (the other parameters as fitted)."""
    th = state.theta[keep]
    return np.concatenate([th - th.mean(), state.params[state.n_players:]])


def group_newton_removal(state: BTState, p: int):
    """(φ predicted by one group Newton step, φ start, rows without p) on the other players (sum-to-zero)."""
    sub, keep = without_player(state.counts, p)
    phi0 = _start(state, keep)
    _, g, h = objective(state.model, sub, phi0[None], ridge=state.ridge, position=state.position,
                        beta_ridge=state.beta_ridge)
    step = constrained_covariance(h[0], sub.n_players) @ g[0]
    return phi0 - step, phi0, sub


def _displacement(theta_ref, theta_new, top=10):
    r0 = np.argsort(np.argsort(-theta_ref, kind="stable"), kind="stable")
    r1 = np.argsort(np.argsort(-theta_new, kind="stable"), kind="stable")
    top0 = set(np.flatnonzero(r0 < top))
    top1 = set(np.flatnonzero(r1 < top))
    return int((r0 != r1).sum()), int(np.abs(r0 - r1).max(initial=0)), len(top1 - top0)


def player_removal(state: BTState, exact: bool = True, top: int = 10) -> pd.DataFrame:
    """One row per player: degree, group-Newton and (``exact=True``) exact-refit rank displacement
    of the others, top-``top`` membership changes, and max |Δθ| error of the Newton step (θ only)."""
    rows = []
    deg = state.counts.matches_per_player()
    k1 = state.n_players - 1
    for p in range(state.n_players):
        pred, phi0, sub = group_newton_removal(state, p)
        th0, pred = phi0[:k1], pred[:k1]
        rec = {"player": str(state.players[p]), "rank": int(np.flatnonzero(state.ranking() == p)[0]) + 1,
               "degree": float(deg[p])}
        n_disp, max_shift, top_changes = _displacement(th0, pred, top)
        rec.update(displaced_newton=n_disp, top10_changes_newton=top_changes)
        if exact:
            try:
                th = BTState.fit(sub, ties=state.ties, ridge=state.ridge, start=phi0, position=state.position,
                                 beta_ridge=state.beta_ridge).theta
            except NoFiniteEstimateError:  # the others' comparisons admit no finite MLE
                th = None
            if th is not None:
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
