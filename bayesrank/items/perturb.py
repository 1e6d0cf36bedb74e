"""Perturbations of per-item results: re-grades and item drops, exact minima for mean-score claims.

A mean-score claim needs contrasts ``ȳ_a − ȳ_b > 0`` (``A>B``: one; ``top1``: the leader against
every other model; ``topk:K``: every member against every non-member). It is **overturned** when some
contrast reaches ``ȳ_a ≤ ȳ_b``.

* **re-grade** (``flip``): one model's score on one item is changed (to any value in [0, 1]). For the
  contrast (a, b) on N shared items, re-grading a on item i can lower ``N(ȳ_a − ȳ_b)`` by at most
  ``y_ai`` (a's score to 0), re-grading b by at most ``1 − y_bi`` (b's to 1); each re-grade acts
  alone and additively, so the smallest number that overturns the contrast is the smallest k whose
  k largest capacities sum to at least ``D = Σ_i (y_ai − y_bi)`` (a sort; for 0/1 scores k = D, the
  difference of the two models' correct counts).
* **drop**: an item is removed for every model. The contrast is overturned when the remaining
  ``Σ_{i∉S} d_i ≤ 0`` (``d_i = y_ai − y_bi``; the denominator N − |S| does not change the sign), so the
  smallest S takes the largest ``d_i`` first (for 0/1 scores |S| = n10 − n01).
* A claim with several contrasts is overturned as soon as one is, and re-grades or drops that
  overturn contrast (a, b) number at least that contrast's minimum: the claim's minimum is the
  minimum over its contrasts (the **binding** contrast attains it). Exact, not a search bound.
* With clusters, the units are whole clusters: a re-grade sets one model's scores on every item of a
  cluster, a drop removes a cluster (capacities are the cluster sums; the same sort is exact).

**Loss of significance** (0/1 scores, no clusters: the exact McNemar test of the contrast): each
re-grade either removes one discordant item won by a (n10 − 1) or adds one won by b (n01 + 1, from a
concordant item); the smallest number of re-grades (drops: removals of n10 items) after which some
contrast's p-value reaches α is found by enumerating the splits, exact.

Every witness is verified by applying it to the scores and recomputing the claim
(:func:`apply_actions`, :func:`claim_broken`).
"""

from __future__ import annotations

import numpy as np

from bayesrank.items.data import ItemScores

TOL = 1e-12


# ---------------------------------------------------------------------------------- units
def _units(data: ItemScores):
    """(codes (N,) → unit, labels of the units, what a unit is) — items, or clusters when clustered."""
    codes = data.cluster_codes
    if codes is None:
        return np.arange(data.n_items), [str(i) for i in data.items], "item"
    labels = [str(c) for c in dict.fromkeys(data.clusters)]
    return codes, labels, "cluster"


def _unit_sums(values: np.ndarray, codes: np.ndarray, n_units: int) -> np.ndarray:
    return np.bincount(codes, weights=values, minlength=n_units)


def _smallest_k(capacity: np.ndarray, need: float) -> tuple[int | None, np.ndarray]:
    """Smallest k whose k largest capacities sum to ≥ need, and their indices (None: impossible)."""
    if need <= TOL:
        return 0, np.array([], dtype=int)
    order = np.argsort(-capacity, kind="stable")
    cum = np.cumsum(capacity[order])
    hit = np.flatnonzero(cum >= need - TOL)
    if not hit.size:
        return None, order
    k = int(hit[0]) + 1
    return k, order[:k]


# ---------------------------------------------------------------------------------- one contrast
def pair_regrades(data: ItemScores, a: int, b: int) -> tuple[int | None, list[dict]]:
    """Smallest re-grades overturning ȳ_a > ȳ_b, and the re-grades (model, unit, from → to)."""
    codes, labels, unit = _units(data)
    g = len(labels)
    ya, yb = data.scores[a], data.scores[b]
    cap = np.concatenate([_unit_sums(ya, codes, g), _unit_sums(1 - yb, codes, g)])
    need = float((ya - yb).sum())
    k, chosen = _smallest_k(cap, need)
    if k is None:
        return None, []
    acts = []
    for c in chosen:
        who, u = (a, c) if c < g else (b, c - g)
        acts.append({"kind": "flip", "model": str(data.models[who]), unit: labels[u], "to": 0.0 if who == a else 1.0})
    return k, acts


def pair_drops(data: ItemScores, a: int, b: int) -> tuple[int | None, list[dict]]:
    """Smallest drops (items, or clusters) overturning ȳ_a > ȳ_b; None when only dropping every unit would."""
    codes, labels, unit = _units(data)
    g = len(labels)
    d = _unit_sums(data.scores[a] - data.scores[b], codes, g)
    need = float(d.sum())
    k, chosen = _smallest_k(np.clip(d, 0, None), need)
    if k is None or k >= g:
        return None, []
    return k, [{"kind": "drop", unit: labels[u]} for u in chosen]


# ---------------------------------------------------------------------------------- significance (McNemar)
def _mcnemar_p(n10, n01, sided: str) -> np.ndarray:
    from bayesrank.stats.paired import mcnemar_exact_many

    two, one = mcnemar_exact_many(n10, n01)
    return two if sided == "two" else one


def _first_reaching(p_at, hi: np.ndarray, alpha: float) -> np.ndarray:
    """Per entry, the smallest t in [0, hi] with ``p_at(t) ≥ α`` for p nondecreasing in t (bisection,
    vectorised); −1 where even t = hi does not reach α."""
    hi = np.asarray(hi, dtype=np.int64)
    ok_hi = p_at(hi) >= alpha
    lo = np.zeros_like(hi)
    top = hi.copy()
    done = p_at(lo) >= alpha
    top[done] = 0
    while True:
        open_ = (top - lo > 1) & ok_hi & ~done
        if not open_.any():
            break
        mid = (lo + top) // 2
        reach = p_at(mid) >= alpha
        top = np.where(open_ & reach, mid, top)
        lo = np.where(open_ & ~reach, mid, lo)
    out = np.where(done, 0, np.where(ok_hi, top, -1))
    return out


def significance_moves_many(n10, n01, n_concordant, alpha: float, sided: str, action: str):
    """Vectorised over contrasts: the smallest number of moves (re-grades; drops) after which the exact
    McNemar test no longer rejects at α, and its split (j removals of items a won, l items b wins).

    Every move lowers n10 − n01 by exactly one. Drops can only remove an item a won (j moves: p of
    (n10 − j, n01) grows with j). Re-grades can also turn a concordant item into one b won
    (n01 + 1): after t moves the difference is the same whatever the split, and for a fixed
    difference the p-value grows with the number of discordant items (a symmetric random walk is
    more likely to be at or beyond ±Δ after more steps), so the best split takes l = min(t, c) such
    moves first; along that path p grows with t (either move raises it) — for the two-sided test
    until the difference reaches 0, where p = 1 — so bisection finds the first t. Returns (total,
    j, l) arrays; total −1 where no such move exists."""
    n10 = np.asarray(n10, dtype=np.int64)
    n01 = np.asarray(n01, dtype=np.int64)
    c = np.asarray(n_concordant, dtype=np.int64)
    # the two-sided p-value grows only until n10 − n01 reaches 0 (p = 1 there), then falls again
    cap = np.maximum(n10 - n01, 0) if sided == "two" else None
    if action == "drop":
        hi = n10 if cap is None else np.minimum(n10, cap)
        t = _first_reaching(lambda j: _mcnemar_p(n10 - j, n01, sided), hi, alpha)
        return t, np.where(t >= 0, t, 0), np.zeros_like(t)

    def split(t):
        l_ = np.minimum(t, c)
        return t - l_, l_

    def p_at(t):
        j, l_ = split(t)
        return _mcnemar_p(n10 - j, n01 + l_, sided)

    t = _first_reaching(p_at, n10 + c if cap is None else np.minimum(n10 + c, cap), alpha)
    j, l_ = split(np.maximum(t, 0))
    return t, j, l_


def significance_moves(n10: int, n01: int, n_concordant: int, alpha: float, sided: str,
                       action: str) -> tuple[int | None, int, int]:
    """One contrast of :func:`significance_moves_many`: (total or None, j, l)."""
    t, j, l_ = significance_moves_many([n10], [n01], [n_concordant], alpha, sided, action)
    return (None, 0, 0) if t[0] < 0 else (int(t[0]), int(j[0]), int(l_[0]))


def pair_significance(data: ItemScores, a: int, b: int, alpha: float, sided: str,
                      action: str) -> tuple[int | None, list[dict]]:
    """Smallest re-grades / drops after which the exact McNemar test of ȳ_a > ȳ_b no longer rejects."""
    ya, yb = data.scores[a], data.scores[b]
    win = np.flatnonzero((ya == 1) & (yb == 0))
    conc = np.flatnonzero(ya == yb)
    n01 = int(((ya == 0) & (yb == 1)).sum())
    total, j, l_ = significance_moves(len(win), n01, len(conc), alpha, sided, action)
    if total is None:
        return None, []
    items = data.items
    if action == "drop":
        return total, [{"kind": "drop", "item": str(items[i])} for i in win[:j]]
    acts = [{"kind": "flip", "model": str(data.models[a]), "item": str(items[i]), "to": 0.0} for i in win[:j]]
    for i in conc[:l_]:  # a concordant item becomes won by b: a's 1 → 0, or b's 0 → 1
        acts.append({"kind": "flip", "model": str(data.models[a]), "item": str(items[i]), "to": 0.0} if ya[i] == 1
                    else {"kind": "flip", "model": str(data.models[b]), "item": str(items[i]), "to": 1.0})
    return total, acts


# ---------------------------------------------------------------------------------- verification
def apply_actions(data: ItemScores, actions: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """(scores, kept-item mask) after the actions: re-grades set a model's score on an item (or every
    item of a cluster); drops remove an item (or a cluster's items) for every model."""
    y = data.scores.copy()
    keep = np.ones(data.n_items, dtype=bool)
    item_pos = {str(i): k for k, i in enumerate(data.items)}
    cl = None if data.clusters is None else np.asarray([str(c) for c in data.clusters])
    for act in actions:
        cols = [item_pos[act["item"]]] if "item" in act else np.flatnonzero(cl == act["cluster"])
        if act["kind"] == "drop":
            keep[cols] = False
        else:
            y[data.index(act["model"]), cols] = act["to"]
    return y, keep


def claim_broken(scores: np.ndarray, keep: np.ndarray, pairs) -> bool:
    """Some contrast (a, b) of the claim has mean_a ≤ mean_b on the kept items."""
    m = scores[:, keep].mean(axis=1)
    return any(m[a] <= m[b] + TOL for a, b in pairs)


# ---------------------------------------------------------------------------------- claim answers
def _binary_minima(data: ItemScores, pairs, action: str) -> np.ndarray | None:
    """Per-contrast minima in closed form for 0/1 scores without clusters (None otherwise): re-grades
    = S_a − S_b, drops = n10 − n01 (NaN where only dropping every item would do)."""
    if not data.binary or data.clusters is not None:
        return None
    y = data.scores
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    s = y.sum(axis=1)
    if action == "flip":
        return s[a] - s[b]
    wins = data.wins()
    k = wins[a, b] - wins[b, a]
    return np.where(k >= data.n_items, np.nan, k)


def overturn(data: ItemScores, pairs, action: str) -> dict:
    """The claim's smallest overturning re-grades (``flip``) or drops (``drop``), verified. The
    witness is built for the binding contrast (the first attaining the minimum)."""
    codes, labels, unit = _units(data)
    find = pair_regrades if action == "flip" else pair_drops
    quick = _binary_minima(data, pairs, action)
    if quick is not None:
        if np.isnan(quick).all():
            return _entry(data, None, pairs, action, unit, len(labels), significance=None)
        order = [int(np.nanargmin(quick))]
    else:
        order = range(len(pairs))
    best = None
    for w in order:
        a, b = pairs[w]
        k, acts = find(data, a, b)
        if k is not None and (best is None or k < best[0]):
            best = (k, acts, (a, b))
    return _entry(data, best, pairs, action, unit, len(labels), significance=None)


def lose_significance(data: ItemScores, pairs, action: str, alpha: float, sided: str) -> dict:
    """The smallest re-grades / drops after which the claim's intersection–union McNemar test no
    longer rejects at α (some contrast's p ≥ α); 0/1 scores without clusters only."""
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    wins = data.wins()
    n10, n01 = wins[a, b], wins[b, a]
    t, _, _ = significance_moves_many(n10, n01, data.n_items - n10 - n01, alpha, sided, action)
    best = None
    if (t >= 0).any():
        w = int(np.argmin(np.where(t >= 0, t, np.iinfo(np.int64).max)))
        k, acts = pair_significance(data, int(a[w]), int(b[w]), alpha, sided, action)
        best = (k, acts, (int(a[w]), int(b[w])))
    return _entry(data, best, pairs, action, "item", data.n_items, significance=(alpha, sided))


def _entry(data, best, pairs, action, unit, n_units, significance) -> dict:
    what = f"{unit}s scored by the claim's models" + (" (clusters)" if unit == "cluster" else "")
    relative = {"what": what, "n": int(n_units)}
    verb = "re-grade" if action == "flip" else "drop"
    if best is None:
        return {"broken": False, "budget": None, "fraction": None, "verified": False, "actions": [],
                "reason": f"no {verb} of fewer than all {n_units} {unit}s "
                          + ("removes the significance" if significance else "overturns the claim") + " (exact)",
                "budget_limit": n_units, "exact": True, "relative_to": relative}
    k, acts, (a, b) = best
    y, keep = apply_actions(data, acts)
    if significance is None:
        verified = claim_broken(y, keep, pairs)
    else:
        verified = _significance_lost(y[:, keep], pairs, *significance)
    goal = "loses its significance" if significance else "is overturned"
    noun = (f"{unit} score(s)" if action == "flip" else f"{unit}(s)")
    return {"broken": True, "budget": int(k), "fraction": k / n_units, "verified": bool(verified), "actions": acts,
            "what": f"{'re-grading' if action == 'flip' else 'dropping'} {k:,} {noun}",
            "reason": f"the claim {goal} after {k} {verb}(s) of {unit}s (exact minimum; binding contrast "
                      f"{data.models[a]} − {data.models[b]}); verified by recomputing the scores",
            "budget_limit": n_units, "exact": True, "relative_to": relative,
            "binding": f"{data.models[a]} − {data.models[b]}"}


def _significance_lost(y: np.ndarray, pairs, alpha: float, sided: str) -> bool:
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    n10 = ((y[a] == 1) & (y[b] == 0)).sum(axis=1)
    n01 = ((y[a] == 0) & (y[b] == 1)).sum(axis=1)
    return bool((_mcnemar_p(n10, n01, sided) >= alpha).any())
