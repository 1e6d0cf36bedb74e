"""Candidate actions on aggregated counts.

Matches in one (pair, outcome) cell are exchangeable, so an action is "apply this per-match
change to the cell table of pair r, m times". A candidate carries the per-match change ``delta``
(3,) of the cell counts [i wins, j wins, tie] and how many times it may be applied:

- ``drop``   remove one match of a cell: ``delta = −e_o``, at most the cell count;
- ``flip``   reverse a decided match (``y → 1 − y``) = drop of the original plus add of the flipped
             match: ``delta = −e_o + e_{o'}`` for o = i wins ↔ j wins (ties have no reverse);
- ``add``    a new match on any pair (observed or not), candidate spaces
    * ``all_pairs``             outcome fixed by current skill: the stronger player wins,
    * ``all_outcomes_weighted`` outcome weighted by its BT probability: ``delta = (p, 1 − p, 0)``,
                                a fractional "expected" match. Its gradient at the MLE is
                                ``p·(σ(d̂) − 1) + (1 − p)·σ(d̂) = σ(d̂) − p = 0``: θ̂ stays the exact
                                MLE, so it can never move a score or a rank, only the curvature
                                (the constructive action for CIs),
    * ``all_outcomes_sampled``  (``add_sampled``) outcome drawn from the BT probability of the
                                reference fit, ``p_r = σ(θ̂_i − θ̂_j)``: the actor picks the pair,
                                chance picks the winner (seeded :class:`OutcomeStream`),
    * ``all_outcomes``          either outcome, chosen by the actor.

A candidate's effect on the fit is summarised by two numbers per application, at θ:
``G = Σ_o δ_o s_o(d_r)`` (gradient weight along ``x_r``) and ``C = Σ_o δ_o c_o(d_r)`` (curvature).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesrank.errors import InputError
from bayesrank.influence.state import OUTCOMES, BTState

ACTION_TYPES = ("drop", "flip", "add", "add_weighted", "add_pairs", "add_sampled")
ADD_SPACES = {"add": "all_outcomes", "add_weighted": "all_outcomes_weighted", "add_pairs": "all_pairs",
              "add_sampled": "all_outcomes_sampled"}


class OutcomeStream:
    """Seeded outcomes of the matches an ``add_sampled`` audit adds: the n-th added match of pair
    row r is won by player i iff ``U_r[n] < p_r``, ``U_r = numpy.random.default_rng([seed, r]).random()``
    (one independent stream per pair; a prefix does not depend on how far it is read) and
    ``p_r = σ(θ̂_i − θ̂_j)`` of the reference fit. Adds on a pair consume its stream in order, so
    applying ``m`` matches of one cell is allowed only within a run of equal outcomes."""

    MAX_RUN = 1 << 16

    def __init__(self, p: np.ndarray, seed: int = 0):
        self.p = np.asarray(p, dtype=float)
        self.seed = int(seed)
        self._wins: dict[int, np.ndarray] = {}

    def wins(self, r: int, upto: int) -> np.ndarray:
        """Booleans "i wins" of the first ≥ ``upto`` added matches of pair row ``r``."""
        have = self._wins.get(r)
        if have is None or len(have) < upto:
            n = max(64, 1 << int(np.ceil(np.log2(max(upto, 1)))))
            have = np.random.default_rng([self.seed, int(r)]).random(n) < self.p[r]
            self._wins[r] = have
        return have

    def next_run(self, r: int, position: int) -> tuple[int, int]:
        """(outcome index of the next added match of pair r: 0 = i wins, 1 = j wins, run length)."""
        n = 64
        while True:
            w = self.wins(r, position + n)
            seq = w[position:]
            change = np.flatnonzero(seq != seq[0])
            if len(change) or n >= self.MAX_RUN:
                run = int(change[0]) if len(change) else len(seq)
                return (0 if seq[0] else 1), run
            n *= 2


@dataclass
class Candidates:
    """Candidate actions: pair row ``r`` of the state's counts, players i<j, per-match ``delta`` (n,3),
    ``available`` applications (inf for adds), the action ``kind`` and the source cell ``outcome``."""

    kind: str
    r: np.ndarray
    i: np.ndarray
    j: np.ndarray
    delta: np.ndarray
    available: np.ndarray
    outcome: np.ndarray  # index into OUTCOMES of the cell acted on (added outcome for adds)

    def __len__(self) -> int:
        return len(self.r)

    def take(self, idx) -> "Candidates":
        idx = np.asarray(idx)
        return Candidates(self.kind, self.r[idx], self.i[idx], self.j[idx], self.delta[idx], self.available[idx], self.outcome[idx])

    def gc(self, state: BTState, theta=None):
        """(G, C) per application at θ (default θ̂)."""
        th = state.theta if theta is None else theta
        s, c, _ = state.match_derivatives(th[self.i] - th[self.j])
        return (self.delta * s).sum(axis=1), (self.delta * c).sum(axis=1)

    def frame(self, players) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "kind": self.kind,
                "player_a": np.asarray(players)[self.i],
                "player_b": np.asarray(players)[self.j],
                "outcome": np.asarray(OUTCOMES)[self.outcome],
                "available": self.available,
            }
        )


def _keep_finite_cap(state: BTState, counts: np.ndarray, r, o) -> np.ndarray:
    """How many matches of cell (r, o) can be removed (dropped or flipped) while both players keep
    some win and some loss (half-ties count half): removing more makes an MLE infinite (ridge = 0).
    A necessary condition for a finite MLE; refits still check strong connectivity. No cap with a
    ridge or Firth's penalty (finite however the wins fall)."""
    cell = counts[r, o]
    if state.ridge > 0 or state.penalty is not None:
        return cell
    c = state.counts
    k = state.n_players
    half = 0.5 if state.ties == "half" else 0.0
    wins = np.bincount(c.i, counts[:, 0] + half * counts[:, 2], k) + np.bincount(c.j, counts[:, 1] + half * counts[:, 2], k)
    losses = np.bincount(c.i, counts[:, 1] + half * counts[:, 2], k) + np.bincount(c.j, counts[:, 0] + half * counts[:, 2], k)
    i, j = c.i[r], c.j[r]
    win_i, loss_j = wins[i], losses[j]  # an i-win removed
    win_j, loss_i = wins[j], losses[i]  # a j-win removed
    per = np.where(o == 0, np.minimum(win_i, loss_j), np.where(o == 1, np.minimum(win_j, loss_i),
                   2 * np.minimum(np.minimum(win_i, loss_i), np.minimum(win_j, loss_j))))
    cap = np.ceil(per - 1e-9) - 1
    return np.maximum(np.minimum(cell, cap), 0.0)


def candidates(state: BTState, kind: str, counts: np.ndarray | None = None, theta=None, keep_finite: bool = True,
               stream: OutcomeStream | None = None, added: np.ndarray | None = None) -> Candidates:
    """All candidate actions of one ``kind`` (see :data:`ACTION_TYPES`) on the current count
    table ``counts`` (default: the state's) at θ (default θ̂; used by ``add_pairs``/``add_weighted``).
    ``add_sampled`` needs the ``stream`` and the number of matches already ``added`` per pair row."""
    if kind not in ACTION_TYPES:
        raise InputError(f"unknown action {kind!r}; expected one of {ACTION_TYPES}")
    c = state.counts
    table = c.counts if counts is None else counts
    th = state.theta if theta is None else theta
    r_all = np.arange(c.n_pairs)
    if kind in ("drop", "flip"):
        outs = (0, 1, 2) if kind == "drop" else (0, 1)
        if kind == "drop" and state.ties == "drop":
            outs = (0, 1)
        rs, os_ = [], []
        for o in outs:
            has = table[:, o] > 0
            rs.append(r_all[has])
            os_.append(np.full(int(has.sum()), o))
        r = np.concatenate(rs)
        o = np.concatenate(os_)
        delta = np.zeros((len(r), 3))
        delta[np.arange(len(r)), o] = -1.0
        if kind == "flip":
            delta[np.arange(len(r)), 1 - o] = 1.0
        avail = _keep_finite_cap(state, table, r, o) if keep_finite else table[r, o]
        keep = avail >= 1
        return Candidates(kind, r[keep], c.i[r[keep]], c.j[r[keep]], delta[keep], avail[keep], o[keep])
    # adds: every pair row of the state's counts (use complete_pairs for unobserved pairs)
    p = 1.0 / (1.0 + np.exp(-(th[c.i] - th[c.j])))
    if kind == "add":
        r = np.concatenate([r_all, r_all])
        o = np.concatenate([np.zeros(c.n_pairs, int), np.ones(c.n_pairs, int)])
        delta = np.zeros((len(r), 3))
        delta[np.arange(len(r)), o] = 1.0
    elif kind == "add_pairs":
        r = r_all
        o = np.where(p >= 0.5, 0, 1)
        delta = np.zeros((len(r), 3))
        delta[np.arange(len(r)), o] = 1.0
    elif kind == "add_sampled":
        if stream is None:
            raise ValueError("add_sampled candidates need an OutcomeStream")
        pos = np.zeros(c.n_pairs, int) if added is None else np.rint(added).astype(int)
        runs = [stream.next_run(int(q), int(pos[q])) for q in r_all]
        o = np.array([x for x, _ in runs], dtype=int)
        r = r_all
        delta = np.zeros((len(r), 3))
        delta[np.arange(len(r)), o] = 1.0
        return Candidates(kind, r, c.i[r], c.j[r], delta, np.array([n for _, n in runs], dtype=float), o)
    else:  # add_weighted
        r = r_all
        o = np.where(p >= 0.5, 0, 1)
        delta = np.column_stack([p, 1 - p, np.zeros_like(p)])
    return Candidates(kind, r, c.i[r], c.j[r], delta, np.full(len(r), np.inf), o)


def apply(table: np.ndarray, cand: Candidates, idx: int, m: float) -> np.ndarray:
    """New count table with candidate ``idx`` applied ``m`` times."""
    out = table.copy()
    out[cand.r[idx]] += m * cand.delta[idx]
    return out
