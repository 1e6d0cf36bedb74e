"""Baselines for an honest comparison with the influence audit.

- :func:`exact_deltas` — brute force: refit exactly for every candidate (ground truth of the
  per-candidate objective change; the reference for the first-order and 1sN predictions).
- :func:`exact_greedy_audit` — greedy where each step refits every candidate (ground-truth greedy
  on small data; the influence audit should need no more actions).
- :func:`exhaustive_minimum` — every multiset of up to ``max_size`` matches, each refitted: the
  certified smallest number of actions that breaks the property (or a certified lower bound), the
  reference for the greedy R scores (which are upper bounds) on small data.
- :func:`random_audit` — apply random candidate matches until the property breaks.
- :func:`rigging_audit` — vote rigging in the style of Min et al. (2025) "omni-rigging": new
  battles arrive on pairs drawn with the arena's observed pair frequencies and the rigger sets the
  outcome. ``"target_only"``: only battles involving the target are rigged (target wins / loses)
  and others are skipped; ``"bt_diff"``: every battle is rigged with the outcome whose exact BT
  refit moves the target's margin most (the paper's BT-difference heuristic).
- :func:`active_sampling` — "Arena Active"-style uncertainty sampling for CI reduction: add the
  comparison (expected BT outcome) on the pair with the largest ``Var(θ_a − θ_b)``, ignoring the
  target; the constructive influence audit picks pairs by their effect on the target's variance.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.bt.likelihood import tie_model
from bayesrank.bt.mle import objective as bt_objective
from bayesrank.influence.actions import Candidates, apply, candidates
from bayesrank.influence.greedy import _state_for
from bayesrank.influence.objectives import Objective, TopK
from bayesrank.influence.state import BTState, chord_refit, refit, refit_one


def exact_deltas(state: BTState, objective, cand: Candidates, m: float = 1.0, method: str = "chord",
                 chunk: int = 500):
    """Objective change after an exact refit for each candidate applied ``m`` times (NaN where the
    perturbed data have no finite MLE). ``method="chord"`` solves each refit by the chord iteration
    (:func:`chord_refit`, to 1e-12, falling back to batched Newton); ``"newton"`` uses batched Newton.
    ``objective`` may be a list: the refits are shared and a list of arrays is returned."""
    objectives = list(objective) if isinstance(objective, (list, tuple)) else [objective]
    with_hinv = any(o.uses_hinv for o in objectives)
    base = state.counts.counts
    f0 = [o.value(state.theta, state.hinv) for o in objectives]
    out = [np.full(len(cand), np.nan) for _ in objectives]
    model = tie_model(state.ties)
    for lo in range(0, len(cand), chunk):
        sub = cand.take(np.arange(lo, min(len(cand), lo + chunk)))
        tables = np.stack([apply(base, sub, n, m) for n in range(len(sub))])
        if method == "chord":
            _, dc = sub.gc(state)
            rf = chord_refit(state, tables, sub.r, m * dc)
            thetas, ok = rf.theta, rf.ok.copy()
            if (~ok).any():
                bad = np.flatnonzero(~ok)
                rf2 = refit(state, tables[bad])
                thetas[bad], ok[bad] = rf2.theta, rf2.ok
            hinvs = None
            if with_hinv:
                hinvs = np.full((len(sub), state.n_players, state.n_players), np.nan)
                idx = np.flatnonzero(ok)
                if len(idx):  # Q(QᵀHQ)⁻¹Qᵀ = (H + 11ᵀ/K)⁻¹ − 11ᵀ/(K(1 + ridge)): 1 is an eigenvector of H
                    k = state.n_players
                    _, _, h = bt_objective(model, state.counts, thetas[idx], tables[idx], state.ridge)
                    hinvs[idx] = np.linalg.inv(h + 1.0 / k) - 1.0 / (k * (1.0 + state.ridge))
        else:
            rf = refit(state, tables, with_hinv=with_hinv)
            thetas, ok, hinvs = rf.theta, rf.ok, rf.hinv
        for n in np.flatnonzero(ok):
            for o, f, res in zip(objectives, f0, out):
                res[lo + n] = o.value(thetas[n], None if hinvs is None else hinvs[n]) - f
    return out if isinstance(objective, (list, tuple)) else out[0]


def exact_greedy_audit(state: BTState, objective: Objective, kind: str, budget: int, max_candidates: int | None = None) -> dict:
    """Greedy with one match per step chosen by exact refits of every candidate (brute force)."""
    st = _state_for(state, kind)
    table = st.counts.counts.copy()
    n_refits = 0
    for used in range(1, budget + 1):
        cand = candidates(st, kind, counts=table)
        if max_candidates is not None and len(cand) > max_candidates:
            cand = cand.take(np.argsort(objective.delta(st, cand, 1.0, "1sN"))[:max_candidates])
        tables = np.stack([apply(table, cand, n, 1.0) for n in range(len(cand))])
        if objective.uses_hinv:
            rf = refit(st, tables, with_hinv=True)
            thetas, ok = rf.theta, rf.ok
            vals = np.array([objective.value(rf.theta[n], rf.hinv[n]) if ok[n] else np.inf for n in range(len(cand))])
        else:  # exact refits by the chord iteration (Newton fallback), see exact_deltas
            _, dc = cand.gc(st)
            rf = chord_refit(st, tables, cand.r, dc)
            thetas, ok = rf.theta, rf.ok.copy()
            if (~ok).any():
                bad = np.flatnonzero(~ok)
                rf2 = refit(st, tables[bad])
                thetas[bad], ok[bad] = rf2.theta, rf2.ok
            vals = np.where(ok, objective.values(np.nan_to_num(thetas).T), np.inf)
        n_refits += len(cand)
        best = int(np.argmin(vals))
        table = tables[best]
        one = refit_one(st, table)
        st = BTState(st.counts.with_counts(table), st.ties, st.ridge, one.theta, one.hessian, one.hinv, penalty=st.penalty)
        if objective.broken_at(st):  # the objective's own covariance on the exact refit
            return {"broken": True, "budget": used, "n_refits": n_refits}
    return {"broken": False, "budget": None, "n_refits": n_refits}


def exhaustive_minimum(state: BTState, objective: Objective, kind: str, max_size: int, max_sets: int = 200_000,
                       chunk: int = 4096) -> dict:
    """Smallest number of matches whose action (``kind``) breaks ``objective``, by exact refits of
    every multiset of candidates of size 1, 2, …, ``max_size`` (cells are exchangeable, so a
    multiset with multiplicities ≤ the cells' available matches is one distinct action set). On
    comparison rows a candidate is a row (its comparisons, with their covariates; an add copies
    it), for ``drop-cluster`` a whole cluster (sizes then count clusters). A set is applied to the
    count table (an add or a partial flip changes the row's counts rather than appending a row:
    the loss is linear in the counts, so θ̂ and ``H⁻¹`` — all the check uses — are the same).

    Returns ``{"budget": s, "actions": [(cell index, m), …], "n_sets", "n_no_finite_mle"}`` with the
    first breaking set of the smallest size, or ``budget=None`` and ``lower_bound = max_size + 1``
    (certified: no set of ≤ ``max_size`` matches breaks it). Sets whose data have no finite MLE
    are counted in ``n_no_finite_mle`` and never count as breaks.
    """
    from itertools import combinations_with_replacement
    from math import comb

    from bayesrank.errors import InputError

    if getattr(objective, "significance", False) and state.covariance_kind(objective.covariance) != "fisher":
        raise InputError("exhaustive certification checks breaks with H^-1 only; the significance mode here uses the "
                         f"{state.covariance_kind(objective.covariance)} covariance (half-win ties, outcome shares, "
                         "weights or clusters: use --ties drop, or data without them)")

    st = _state_for(state, kind)
    cand = candidates(st, kind, keep_finite=False)
    n = len(cand)
    total = sum(comb(n + s - 1, s) for s in range(1, max_size + 1))
    if total > max_sets:
        raise InputError(f"exhaustive search over {n} cells up to size {max_size} needs {total:,} refits "
                         f"(> max_sets={max_sets:,}); use a smaller max_size or dataset")
    base = st.counts.counts
    avail = np.asarray(cand.available, dtype=float)
    n_sets = n_bad = 0
    for size in range(1, max_size + 1):
        sets = np.array(list(combinations_with_replacement(range(n), size)), dtype=np.int64).reshape(-1, size)
        mult = np.zeros((len(sets), n))
        np.add.at(mult, (np.repeat(np.arange(len(sets)), size), sets.ravel()), 1.0)
        feasible = (mult <= avail).all(axis=1)  # no cell used more often than it has matches
        sets, mult = sets[feasible], mult[feasible]
        for lo in range(0, len(sets), chunk):
            mm = mult[lo : lo + chunk]
            tables = np.repeat(base[None], len(mm), axis=0)
            for c in np.flatnonzero(mm.any(axis=0)):  # a cell, a comparison row, or a cluster's rows
                rows, deltas = cand.member_rows(c)
                tables[:, rows] += mm[:, c, None, None] * deltas[None]
            rf = refit(st, tables, with_hinv=objective.uses_hinv)
            n_sets += len(mm)
            n_bad += int((~rf.ok).sum())
            for q in np.flatnonzero(rf.ok):
                if objective.broken(rf.theta[q], None if rf.hinv is None else rf.hinv[q]):
                    cells, m = np.unique(sets[lo + q], return_counts=True)
                    return {"budget": size, "actions": [(int(c), int(k)) for c, k in zip(cells, m)],
                            "n_sets": n_sets, "n_no_finite_mle": n_bad, "candidates": cand}
    return {"budget": None, "lower_bound": max_size + 1, "n_sets": n_sets, "n_no_finite_mle": n_bad, "candidates": cand}


def random_audit(state: BTState, objective: Objective, kind: str, budget: int, seed: int = 0, step: int = 1) -> dict:
    """Random candidate matches (each drawn with probability ∝ its cell count) until broken."""
    rng = np.random.default_rng(seed)
    st = _state_for(state, kind)
    table = st.counts.counts.copy()
    used = 0
    while used < budget:
        cand = candidates(st, kind, counts=table)
        if len(cand) == 0:
            break
        w = np.where(np.isfinite(cand.available), cand.available, 1.0)
        idx = rng.choice(len(cand), p=w / w.sum())
        m = float(min(step, cand.available[idx], budget - used))
        new = apply(table, cand, idx, m)
        rf = refit_one(st, new)
        if not rf.ok:
            continue
        table, used = new, used + m
        st = BTState(st.counts.with_counts(table), st.ties, st.ridge, rf.theta, rf.hessian, rf.hinv, penalty=st.penalty)
        if objective.broken_at(st):  # the objective's own covariance on the exact refit
            return {"broken": True, "budget": int(used), "seed": seed}
    return {"broken": False, "budget": None, "seed": seed}


def rigging_audit(state: BTState, objective: TopK, budget: int, variant: str = "bt_diff", seed: int = 0) -> dict:
    """Omni-rigging-style baseline for a targeted :class:`TopK` objective (promote or demote)."""
    if objective.target is None:
        raise ValueError("rigging needs a targeted objective (--target, --goal)")
    rng = np.random.default_rng(seed)
    t = objective.target
    st = _state_for(state, "add")
    c = st.counts
    freq = c.counts.sum(axis=1)
    freq = freq / freq.sum()
    table = c.counts.copy()
    votes = battles = 0
    good = 0 if objective.goal == "promote" else 1  # target wins (promote) / loses (demote)
    while votes < budget and battles < 50 * budget:
        r = rng.choice(c.n_pairs, p=freq)
        battles += 1
        if variant == "target_only":
            if t not in (c.i[r], c.j[r]):
                continue
            o = good if c.i[r] == t else 1 - good
            new = table.copy()
            new[r, o] += 1
        else:
            opts = []
            for o in (0, 1):
                tb = table.copy()
                tb[r, o] += 1
                opts.append(tb)
            rf = refit(st, np.stack(opts), with_hinv=False)
            vals = [objective.value(rf.theta[n]) if rf.ok[n] else np.inf for n in range(2)]
            new = opts[int(np.argmin(vals))]
        rf = refit_one(st, new, with_hinv=False)
        table = new
        votes += 1
        st = BTState(st.counts.with_counts(table), st.ties, st.ridge, rf.theta, st.hessian, st.hinv, penalty=st.penalty)
        if objective.broken(st.theta):
            return {"variant": variant, "broken": True, "budget": votes, "battles_seen": battles}
    return {"variant": variant, "broken": False, "budget": None, "battles_seen": battles}


def active_sampling(state: BTState, target: str, budget: int, step: int = 1) -> pd.DataFrame:
    """Variance of the target after adding ``budget`` expected-outcome comparisons on the pairs of
    largest ``Var(θ_a − θ_b)`` (uncertainty sampling), one step at a time with exact refits."""
    st = _state_for(state, "add_weighted")
    t = st.counts.index_of(target)
    table = st.counts.counts.copy()
    rows = [{"budget": 0, "variance": float(st.hinv[t, t])}]
    used = 0
    while used < budget:
        cand = candidates(st, "add_weighted", counts=table)
        var = st.leverage_base(cand.i, cand.j)
        best = int(np.argmax(var))
        table = apply(table, cand, best, step)
        rf = refit_one(st, table)
        st = BTState(st.counts.with_counts(table), st.ties, st.ridge, rf.theta, rf.hessian, rf.hinv, penalty=st.penalty)
        used += step
        rows.append({"budget": used, "variance": float(st.hinv[t, t])})
    return pd.DataFrame(rows)


def certify_budget(state: BTState, objective: Objective, result, max_size: int) -> dict:
    """Exhaustive check below a greedy audit's budget: ``{"minimum": m | None, "lower_bound": l, ...}``.

    If the greedy broke the objective with B matches, every action set of up to min(max_size, B − 1)
    matches is refitted: a breaking set gives the certified minimum; none → the greedy budget is
    the certified minimum when B − 1 ≤ max_size, else ``max_size + 1`` is a certified lower bound.
    """
    from bayesrank.errors import InputError

    if max_size < 1:
        raise InputError(f"--certify needs a size ≥ 1, got {max_size}")
    greedy = result.budget if (result.broken and result.verified) else None
    size = max_size if greedy is None else min(max_size, greedy - 1)
    if size < 1:  # one action broke it: nothing smaller exists
        return {"max_size": max_size, "minimum": greedy, "lower_bound": greedy, "n_sets": 0, "n_no_finite_mle": 0}
    e = exhaustive_minimum(state, objective, result.action, size)
    if e["budget"] is not None:
        return {"max_size": max_size, "minimum": e["budget"], "lower_bound": e["budget"], "n_sets": e["n_sets"],
                "n_no_finite_mle": e["n_no_finite_mle"]}
    minimum = greedy if greedy is not None and greedy == size + 1 else None
    return {"max_size": max_size, "minimum": minimum, "lower_bound": size + 1, "n_sets": e["n_sets"],
            "n_no_finite_mle": e["n_no_finite_mle"]}
