"""Candidate actions on the fitted state's rows: one :class:`Candidates` for every action and data kind.

An action is "apply this per-comparison change ``delta`` (3,) of row r's counts [i wins, j wins,
tie] ``m`` times" (:func:`apply`). Comparisons in one cell of aggregated counts (``unit=False``)
are exchangeable, so cell rows offer one candidate per (row, outcome) cell; a comparison row
(``unit=True``, possibly with outcome shares and features) offers one candidate per row, acting on
its comparisons with their shares:

- ``drop``   remove one comparison: cells ``delta = −e_o`` (at most the cell count); rows ``−counts_r/f_r``;
- ``flip``   reverse a decided comparison (``y → 1 − y``; ties have no reverse): cells
             ``−e_o + e_{o'}``; rows ``(counts_r[b, a, t] − counts_r)/f_r`` (covariates kept);
- ``drop-cluster`` remove every comparison of one cluster (a prompt, a user): one candidate per
             cluster with comparisons (its member rows, ``delta = −counts``), applied once; the
             audit's budget then counts clusters;
- adds, in the candidate space ``add_space`` — ``"pairs"``: every unordered pair (observed or not;
  on comparison rows a new comparison of equal style, player_a listed first:
  :func:`~bayesrank.influence.state.with_pair_templates`), ``"observed"``: the observed rows (a copy
  of a comparison with its covariates; comparison rows append a new row):
    * ``add``           either outcome, chosen by the actor (``all_outcomes``),
    * ``add_pairs``     outcome fixed by current skill: the stronger player wins (``all_pairs``),
    * ``add_weighted``  outcome weighted by its model probability: ``delta = (p, 1 − p, 0)``, a
                        fractional "expected" comparison (Davidson: its three outcome probabilities
                        (P_i, P_j, P_tie)). Its gradient at the MLE is
                        ``p·(σ(d̂) − 1) + (1 − p)·σ(d̂) = σ(d̂) − p = 0`` (for any likelihood the
                        expected score under the model's own probabilities is 0): θ̂ stays the exact
                        MLE, so it can never move a score or a rank, only the curvature
                        (the constructive action for CIs),
    * ``add_sampled``   outcome drawn from the probability of the reference fit,
                        ``p_r = σ(η̂_r)`` (``θ̂_i − θ̂_j`` plus the row's covariate terms; with
                        Davidson ties the model's three outcome probabilities, ties included): the
                        actor picks the pair (the row), chance picks the outcome (seeded :class:`OutcomeStream`).

A candidate's effect on the fit is summarised per application by its local gradient ``G`` (L,)
and curvature ``C`` (L, L) at φ (:meth:`Candidates.local`; :mod:`bayesrank.influence.state`);
for binary tie models :meth:`Candidates.gc` gives the scalars ``G = Σ_o δ_o s_o``, ``C = Σ_o δ_o c_o``.
A new action is one branch of :func:`candidates` (and of :func:`apply` when it is not a change
of one row's counts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesrank.data.rows import PairRows
from bayesrank.errors import InputError
from bayesrank.influence.state import OUTCOMES, BTState

ACTION_TYPES = ("drop", "flip", "add", "add_weighted", "add_pairs", "add_sampled", "drop-cluster")
ADD_SPACES = {"add": "all_outcomes", "add_weighted": "all_outcomes_weighted", "add_pairs": "all_pairs",
              "add_sampled": "all_outcomes_sampled"}
ADD_SPACE_CHOICES = ("observed", "pairs")


class OutcomeStream:
    """Seeded outcomes of the comparisons an ``add_sampled`` audit adds: the n-th comparison added to
    row r has outcome "i wins" iff ``U_r[n] < p_r``, "tie" iff ``U_r[n] ≥ 1 − t_r``, "j wins" otherwise,
    ``U_r = numpy.random.default_rng([seed, r]).random()`` (one independent stream per row; a prefix
    does not depend on how far it is read). ``p`` is the reference fit's ``σ(η̂_r)`` (R,) for binary
    tie models, or its outcome probabilities (R, 3) = [i wins, j wins, tie] (Davidson: ties are drawn
    with the model's tie probability ``t_r``). Adds on a row consume its stream in order, so
    applying ``m`` comparisons of one cell is allowed only within a run of equal outcomes."""

    MAX_RUN = 1 << 16

    def __init__(self, p: np.ndarray, seed: int = 0):
        p = np.asarray(p, dtype=float)
        self.p = p if p.ndim == 1 else p[:, 0]  # P(i wins)
        self.tie = np.zeros(len(self.p)) if p.ndim == 1 else p[:, 2]
        self.seed = int(seed)
        self._outcomes: dict[int, np.ndarray] = {}

    def outcomes(self, r: int, upto: int) -> np.ndarray:
        """Outcome indices (0 = i wins, 1 = j wins, 2 = tie) of the first ≥ ``upto`` added comparisons of row ``r``."""
        have = self._outcomes.get(r)
        if have is None or len(have) < upto:
            n = max(64, 1 << int(np.ceil(np.log2(max(upto, 1)))))
            u = np.random.default_rng([self.seed, int(r)]).random(n)
            have = np.where(u < self.p[r], 0, 1).astype(np.int8)
            if self.tie[r] > 0:
                have[u >= 1.0 - self.tie[r]] = 2
            self._outcomes[r] = have
        return have

    def wins(self, r: int, upto: int) -> np.ndarray:
        """Booleans "i wins" of the first ≥ ``upto`` added comparisons of row ``r``."""
        return self.outcomes(r, upto) == 0

    def next_run(self, r: int, position: int) -> tuple[int, int]:
        """(outcome index of the next added comparison of row r, the length of its run of equal outcomes)."""
        n = 64
        while True:
            seq = self.outcomes(r, position + n)[position:]
            change = np.flatnonzero(seq != seq[0])
            if len(change) or n >= self.MAX_RUN:
                run = int(change[0]) if len(change) else len(seq)
                return int(seq[0]), run
            n *= 2


@dataclass
class Candidates:
    """Candidate actions: row ``r`` of the state's data, players i, j, per-application ``delta`` (n,3),
    ``available`` applications (inf for adds), the action ``kind``, the cell ``outcome`` acted on
    (the added outcome for adds; the row's majority outcome for comparison rows) and, for
    whole-cluster actions, ``members`` = (indptr, member rows, member deltas (M,3))."""

    kind: str
    r: np.ndarray
    i: np.ndarray
    j: np.ndarray
    delta: np.ndarray
    available: np.ndarray
    outcome: np.ndarray  # index into OUTCOMES of the cell acted on (added outcome for adds)
    members: tuple | None = None
    unit: bool = False  # comparison rows: adds append a row; the log reports the row's share

    def __len__(self) -> int:
        return len(self.r)

    def take(self, idx) -> Candidates:
        idx = np.atleast_1d(np.asarray(idx))
        members = None
        if self.members is not None:
            ptr, rows, deltas = self.members
            parts = [np.arange(ptr[n], ptr[n + 1]) for n in idx]
            sel = np.concatenate(parts) if parts else np.zeros(0, int)
            members = (np.concatenate([[0], np.cumsum([len(p) for p in parts])]).astype(int), rows[sel], deltas[sel])
        return Candidates(self.kind, self.r[idx], self.i[idx], self.j[idx], self.delta[idx], self.available[idx],
                          self.outcome[idx], members, self.unit)

    @property
    def group(self) -> np.ndarray:
        """What one step may act on once (a row, or a cluster)."""
        return self.r

    def member_rows(self, n: int):
        """(rows, deltas (M,3)) of candidate ``n`` (its own row for single-row actions)."""
        if self.members is None:
            return self.r[[n]], self.delta[[n]]
        ptr, rows, deltas = self.members
        return rows[ptr[n]:ptr[n + 1]], deltas[ptr[n]:ptr[n + 1]]

    def local(self, state: BTState, idx=None):
        """(G (n,L), C (n,L,L)) per application at φ̂ (single-row candidates)."""
        sel = np.arange(len(self)) if idx is None else np.atleast_1d(idx)
        s, c = state.local_derivatives(self.r[sel])
        d = self.delta[sel]
        return np.einsum("no,nol->nl", d, s), np.einsum("no,nolk->nlk", d, c)

    def gc(self, state: BTState, theta=None):
        """Binary zero-feature models: scalar (G, C) per application at θ (default θ̂)."""
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
    """How many comparisons of cell (r, o) can be removed (dropped or flipped) while both players keep
    some win and some loss (ties count half): removing more makes an MLE infinite (ridge = 0).
    A necessary condition for a finite MLE; refits still check strong connectivity. No cap with a
    ridge or Firth's penalty (finite however the wins fall)."""
    cell = counts[r, o]
    if state.ridge > 0 or state.penalty is not None:
        return cell
    c = state.counts
    k = state.n_players
    half = 0.0 if state.ties == "drop" else 0.5
    wins = np.bincount(c.i, counts[:, 0] + half * counts[:, 2], k) + np.bincount(c.j, counts[:, 1] + half * counts[:, 2], k)
    losses = np.bincount(c.i, counts[:, 1] + half * counts[:, 2], k) + np.bincount(c.j, counts[:, 0] + half * counts[:, 2], k)
    i, j = c.i[r], c.j[r]
    win_i, loss_j = wins[i], losses[j]  # an i-win removed
    win_j, loss_i = wins[j], losses[i]  # a j-win removed
    per = np.where(o == 0, np.minimum(win_i, loss_j), np.where(o == 1, np.minimum(win_j, loss_i),
                   2 * np.minimum(np.minimum(win_i, loss_i), np.minimum(win_j, loss_j))))
    cap = np.ceil(per - 1e-9) - 1
    return np.maximum(np.minimum(cell, cap), 0.0)


def _cells(kind: str, r: np.ndarray, o: np.ndarray) -> np.ndarray:
    delta = np.zeros((len(r), 3))
    delta[np.arange(len(r)), o] = -1.0 if kind in ("drop", "flip") else 1.0
    if kind == "flip":
        delta[np.arange(len(r)), 1 - o] = 1.0
    return delta


def candidates(state: BTState, kind: str, counts: np.ndarray | None = None, theta=None, keep_finite: bool = True,
               stream: OutcomeStream | None = None, added: np.ndarray | None = None) -> Candidates:
    """All candidate actions of one ``kind`` (see :data:`ACTION_TYPES`) on the current count
    table ``counts`` (default: the state's) at θ (default θ̂; used by ``add_pairs``/``add_weighted``).
    ``add_sampled`` needs the ``stream`` and the number of comparisons already ``added`` per row.
    Adds act on the state's rows: build the state on :func:`~bayesrank.influence.state.complete_pairs`
    for the ``"pairs"`` space (:func:`bayesrank.influence.greedy.state_for`)."""
    if kind not in ACTION_TYPES:
        raise InputError(f"unknown action {kind!r}; expected one of {ACTION_TYPES}")
    c = state.counts
    table = c.counts if counts is None else counts
    th = state.theta if theta is None else theta
    unit = bool(c.unit)
    total = table.sum(axis=1)
    if kind == "drop-cluster":
        if c.cluster is None:
            raise InputError("the drop-cluster action needs clusters (cluster=COLUMN, --cluster COL)")
        live = total > 0
        rows = np.flatnonzero(live)
        order = np.argsort(c.cluster[rows], kind="stable")
        rows = rows[order]
        codes, start = np.unique(c.cluster[rows], return_index=True)
        ptr = np.concatenate([start, [len(rows)]]).astype(int)
        first = rows[start]
        members = (ptr, rows, -table[rows])
        return Candidates(kind, codes.astype(np.int64), c.i[first], c.j[first], np.zeros((len(codes), 3)),
                          np.ones(len(codes)), np.zeros(len(codes), int), members, unit)
    if kind in ("drop", "flip") and unit:
        rows = np.flatnonzero(total > 0)
        f = total[rows]
        y = c.counts[rows] / np.maximum(f, 1e-300)[:, None]
        share = y[:, 0] + 0.5 * y[:, 2]
        if kind == "flip":
            keep = share != 0.5
            rows, f, y, share = rows[keep], f[keep], y[keep], share[keep]
            delta = y[:, [1, 0, 2]] - y
        else:
            delta = -table[rows] / f[:, None]
        o = np.where(share >= 0.5, 0, 1)
        return Candidates(kind, rows, c.i[rows], c.j[rows], delta, f, o, None, unit)
    r_all = np.arange(c.n_rows)
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
        delta = _cells(kind, r, o)
        avail = _keep_finite_cap(state, table, r, o) if keep_finite else table[r, o]
        keep = avail >= 1
        return Candidates(kind, r[keep], c.i[r[keep]], c.j[r[keep]], delta[keep], avail[keep], o[keep], None, unit)
    # adds: every row of the state (the complete pairs, or the observed rows; on comparison rows the
    # rows the state names — one template per pair in the "pairs" space — else the observed ones)
    if unit:
        r_all = state.add_rows if state.add_rows is not None else np.flatnonzero(c.total > 0)
    if kind == "add_sampled":  # the rows the outcome stream was drawn for (not the copies appended since)
        if stream is None:
            raise ValueError("add_sampled candidates need an OutcomeStream")
        r_all = r_all[r_all < len(stream.p)]
    eta = state.eta() if theta is None else th[c.i] - th[c.j]
    p = 1.0 / (1.0 + np.exp(-eta[r_all]))
    n = len(r_all)
    if kind == "add":
        r = np.concatenate([r_all, r_all])
        o = np.concatenate([np.zeros(n, int), np.ones(n, int)])
        delta = _cells(kind, r, o)
    elif kind == "add_pairs":
        r = r_all
        o = np.where(p >= 0.5, 0, 1)
        delta = _cells(kind, r, o)
    elif kind == "add_sampled":
        pos = np.zeros(c.n_rows, int) if added is None else np.rint(added).astype(int)
        runs = [stream.next_run(int(q), int(pos[q])) for q in r_all]
        o = np.array([x for x, _ in runs], dtype=int)
        r = r_all
        delta = _cells(kind, r, o)
        return Candidates(kind, r, c.i[r], c.j[r], delta, np.array([m for _, m in runs], dtype=float), o, None, unit)
    else:  # add_weighted: the model's expected outcome, ties included under Davidson (its score is 0 at φ̂)
        r = r_all
        o = np.where(p >= 0.5, 0, 1)
        delta = (state.model.outcome_probs(eta[r_all], state.params[-1:]) if state.n_extra
                 else np.column_stack([p, 1 - p, np.zeros_like(p)]))
    return Candidates(kind, r, c.i[r], c.j[r], delta, np.full(len(r), np.inf), o, None, unit)


def apply_table(table: np.ndarray, cand: Candidates, idx: int, m: float) -> np.ndarray:
    """New count table (same rows) with candidate ``idx`` applied ``m`` times."""
    out = table.copy()
    if cand.members is not None:
        rows, _ = cand.member_rows(idx)
        out[rows] = 0.0
        return out
    out[cand.r[idx]] += m * cand.delta[idx]
    np.maximum(out, 0.0, out=out)  # rounding of share arithmetic: a row emptied is exactly empty
    return out


def apply(data, cand: Candidates, idx: int, m: float):
    """The data after ``m`` applications of candidate ``idx``: a count table (same rows) for a table,
    else :class:`PairRows` — adds on comparison rows append the comparison (same pair, covariates,
    weight; a cluster of its own), every other action changes the counts of existing rows."""
    if not isinstance(data, PairRows):
        return apply_table(data, cand, idx, m)
    n = int(cand.r[idx])
    if cand.unit and cand.kind.startswith("add"):
        return data.append(data.i[n], data.j[n], m * cand.delta[idx], data.X[n],
                           data.weight[n] if data.weighted else None)
    if cand.unit and cand.kind == "flip":  # m of the row's f comparisons reversed: a row of their own
        c = data.counts
        f = float(c[n].sum())
        counts = c.copy()
        if m >= f:
            counts[n] = c[n, [1, 0, 2]]
            return data.with_counts(counts)
        counts[n] *= (f - m) / f
        return data.with_counts(counts).append(data.i[n], data.j[n], c[n, [1, 0, 2]] * (m / f), data.X[n],
                                               data.weight[n] if data.weighted else None)
    return data.with_counts(apply_table(data.counts, cand, idx, m))


def apply_batch(data, cand: Candidates, batch):
    """The data after a step's ``[(candidate, m), ...]`` (distinct rows; appended rows go to the end,
    so the row indices of the others are unchanged)."""
    for idx, m in batch:
        data = apply(data, cand, idx, m)
    return data
