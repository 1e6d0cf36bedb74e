"""Loss of significance for the studentised paired tests: the smallest number of re-grades / drops
after which the paired t test (fractional scores) or the cluster-robust Wald test (clusters) of a
claim no longer rejects.

Both tests have one form. With units u (items, or clusters of ν_u items; n = Σ ν_u, G units) and
``D_u = Σ_{i∈u} (y_ai − y_bi)``, ``S = Σ D_u``::

    stat = S / √(γ W),   W = Σ_u (D_u − ν_u S/n)²,   γ = G/(G − 1)

(paired t: ν = 1, G − 1 degrees of freedom; CR1 Wald: normal reference). The claim's test rejects
iff stat > c (the sided critical value), so its significance is **lost** iff ``S ≤ 0`` or
``f = A·W − S² ≥ 0`` with ``A = c²γ``. The still-significant set {S > c√(γW)} is a convex cone in D,
so a set of moved units that can leave it can do so at a vertex of its reachable box: a re-grade
moves one unit to an endpoint (a's scores all 0 or all 1, or b's), two re-grades of one unit to ±ν_u.

**Lower bound.** ``f = A‖D‖² + (S, R) M (S, R)ᵀ`` with ``R = Σ ν_u D_u`` and a 2 × 2 M
(eigenvalues λ₋ < 0 ≤ λ₊; λ₊ = 0 when every unit has the same size). For any u,
``λ₋q² ≤ λ₋(2uq − u²)`` (q = the λ₋ direction of (S, R)), which makes the bound separable over units;
``λ₊p²`` is bounded by the largest p² that k moves can reach. The largest sum of k units' gains
(concave envelope of each unit's best one- and two-move gains) then bounds f after any k moves
from above: where the bound is negative for every k < K on some u (a grid of u), no fewer than K moves
lose significance — or overturn the claim (S ≤ 0), whose exact minimum
(:func:`bayesrank.items.perturb.overturn`) enters the bound. Drops change G, n and c with k; the
bound is computed per k for units of equal size (items; equal clusters) and not at all for unequal
clusters (the witness alone, stated).

**Witness.** For each u of the grid the units are moved in the order of their gains, the statistic
recomputed exactly along that path; the first k at which significance is lost, minimised over u
(and the overturning witness), is applied to the scores and the test recomputed (verification). The
answer is exact when the bound meets the witness; otherwise both are reported.
"""

from __future__ import annotations

import numpy as np

from bayesrank.items.data import ItemScores

N_GRID = 129  # values of u (the tangent point) for the bound and the witness paths
PRUNE_GRID = 9  # coarse grid first: a contrast whose coarse bound is above the best witness is skipped


def critical_value(test: str, n_units: int, alpha: float, sided: str) -> float:
    """c with p < α ⇔ stat > c: the t quantile on G − 1 df (paired t) or the normal (Wald)."""
    from scipy import stats

    q = 1 - alpha if sided == "one" else 1 - alpha / 2
    return float(stats.t.ppf(q, n_units - 1) if test == "t" else stats.norm.ppf(q))


def statistic(s, r, q, n, p2, g):
    """stat = S/√(γW) from S = ΣD, R = ΣνD, Q = ΣD², n = Σν, P = Σν², G (arrays broadcast)."""
    w = q - 2 * s * r / n + s * s * p2 / (n * n)
    w = np.maximum(w, 0.0)
    den = np.sqrt(g / (g - 1) * w)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, s / np.where(den > 0, den, 1.0), np.where(s > 0, np.inf, -np.inf))


def test_p(ya: np.ndarray, yb: np.ndarray, codes: np.ndarray | None, sided: str) -> float:
    """p-value of the claim's contrast on (already perturbed) scores: paired t (scipy ``ttest_rel``)
    without clusters, CR1 Wald (:func:`bayesrank.stats.paired.cluster_se`) with them."""
    from scipy import stats

    from bayesrank.stats.paired import cluster_se

    d = ya - yb
    if codes is None:
        res = stats.ttest_rel(ya, yb, alternative="greater" if sided == "one" else "two-sided")
        p = float(res.pvalue)
        return 1.0 if np.isnan(p) else p
    se, _ = cluster_se(d, codes)
    z = d.mean() / se if se > 0 else (np.inf if d.mean() > 0 else -np.inf if d.mean() < 0 else 0.0)
    return float(stats.norm.sf(z) if sided == "one" else 2 * stats.norm.sf(abs(z)))


def _lost(stat, s, c):
    return (s <= 1e-12) | (stat <= c)


# ---------------------------------------------------------------------------------- re-grades
def _regrade_options(a_sum, b_sum, nu):
    """Reachable D per unit: one re-grade (a → 0, a → all ν, b → 0, b → all ν) and two (±ν).
    (values (G, 4), values2 (G, 2), and for each value who is re-graded to what)."""
    one = np.stack([-b_sum, nu - b_sum, a_sum, a_sum - nu], axis=1)
    two = np.stack([-nu, nu], axis=1)
    return one, two


def _envelope(g1, g2):
    """Per unit, the two unit-cost increments of the concave envelope of (0, g1, g2) (g1, g2 ≥ 0)."""
    concave = g1 >= g2 / 2
    i1 = np.where(concave, g1, g2 / 2)
    i2 = np.where(concave, g2 - g1, g2 / 2)
    return i1, i2


def _regrade_search(dv, nu, a_sum, b_sum, c, k_cap, grid):
    """(lower bound, witness k, witness [(unit, value)]) for re-grades of one contrast; k ≤ k_cap."""
    n, g = float(nu.sum()), len(dv)
    p2 = float(nu @ nu)
    big_a = c * c * g / (g - 1)
    # f = A Q + (S, T) M (S, T)ᵀ with T = Σ (ν_u − P/n) D_u, which is 0 when every unit has one size
    tw = nu - p2 / n
    m00 = -(big_a * p2 / n**2 + 1)
    if np.abs(tw).max() <= 1e-12 * max(1.0, nu.max()):
        lm, lp, em, ep = m00, 0.0, np.array([1.0, 0.0]), np.array([0.0, 1.0])
    else:
        lam, vec = np.linalg.eigh(np.array([[m00, -big_a / n], [-big_a / n, 0.0]]))
        lm, lp, em, ep = lam[0], lam[1], vec[:, 0], vec[:, 1]
    s0, r0, q0 = dv.sum(), nu @ dv, dv @ dv
    t0 = tw @ dv
    qm0 = em @ (s0, t0)
    pp0 = ep @ (s0, t0)
    one, two = _regrade_options(a_sum, b_sum, nu)
    dq_dir_m = em[0] + em[1] * tw  # Δq per unit ΔD
    dq_dir_p = ep[0] + ep[1] * tw
    ks = np.arange(k_cap + 1)
    # λ₊ p²: the largest |p| k moves reach (separable: each unit's largest shift either way, envelope)
    use_p = lp > 0
    if use_p:
        shift1 = (one - dv[:, None]) * dq_dir_p[:, None]
        shift2 = (two - dv[:, None]) * dq_dir_p[:, None]
        ranges = []
        for sign in (1.0, -1.0):
            i1, i2 = _envelope(np.maximum(0, (sign * shift1).max(axis=1)), np.maximum(0, (sign * shift2).max(axis=1)))
            inc = np.sort(np.concatenate([i1, i2]))[::-1][:k_cap]
            ranges.append(pp0 + sign * np.concatenate([[0.0], np.cumsum(inc)]))
        hi_p, lo_p = ranges[0], ranges[1]
        pmax2 = np.maximum(hi_p**2, lo_p**2)
        pmax2 = np.concatenate([pmax2, np.full(len(ks) - len(pmax2), pmax2[-1])])
    else:
        pmax2 = np.zeros(len(ks))
    # the tangent points: q after the moves lies in q0 ± (the largest Δq of k_cap moves)
    # (any u gives a valid bound; the best is q after the optimal moves, between 0 and q0 when the moves
    # shrink S towards 0: a fine grid there, a coarse one over every q that k_cap moves can reach)
    span = np.abs(dq_dir_m).max() * 2 * np.max(nu) * max(k_cap, 1)
    us = np.unique(np.concatenate([np.linspace(-0.05 * qm0, 1.05 * qm0, grid),
                                   np.linspace(qm0 - span, qm0 + span, max(3, grid // 8))]))
    best_bound = np.full(len(ks), np.inf)
    wit = (None, None)
    for u in us:
        gain1 = big_a * (one**2 - dv[:, None] ** 2) + 2 * lm * u * dq_dir_m[:, None] * (one - dv[:, None])
        gain2 = big_a * (two**2 - dv[:, None] ** 2) + 2 * lm * u * dq_dir_m[:, None] * (two - dv[:, None])
        o1, o2 = gain1.argmax(axis=1), gain2.argmax(axis=1)
        g1 = np.maximum(0, gain1[np.arange(g), o1])
        g2 = np.maximum(g1, gain2[np.arange(g), o2])
        i1, i2 = _envelope(g1, g2)
        inc = np.concatenate([i1, i2])
        order = np.argsort(-inc, kind="stable")[:k_cap]
        top = np.concatenate([[0.0], np.cumsum(inc[order])])
        top = np.concatenate([top, np.full(len(ks) - len(top), top[-1])])
        bound = big_a * q0 + lm * (2 * u * qm0 - u * u) + top + lp * pmax2 if use_p else \
            big_a * q0 + lm * (2 * u * qm0 - u * u) + top
        best_bound = np.minimum(best_bound, bound)
        # the witness path in this order: realised values after each increment
        unit = np.concatenate([np.arange(g), np.arange(g)])[order]
        second = order >= g
        val = np.where(second, two[unit, o2[unit]], one[unit, o1[unit]])
        useful = inc[order] > 0
        if not useful.any():
            continue
        # the stable sort lists a unit's first increment before its second (i1 ≥ i2, or equal halves)
        prev = np.where(second, one[unit, o1[unit]], dv[unit])
        ds = val - prev
        s_k = s0 + np.cumsum(ds)
        r_k = r0 + np.cumsum(ds * nu[unit])
        q_k = q0 + np.cumsum(val**2 - prev**2)
        stat = statistic(s_k, r_k, q_k, n, p2, g)
        hit = np.flatnonzero(_lost(stat, s_k, c) & useful)
        if hit.size and (wit[0] is None or hit[0] + 1 < wit[0]):
            k = int(hit[0]) + 1
            final = {}
            for j in range(k):
                final[int(unit[j])] = float(val[j])
            wit = (k, final)
    feasible = np.flatnonzero(best_bound >= 0)
    lower = int(feasible[0]) if feasible.size else k_cap + 1
    return lower, wit[0], wit[1]


# ---------------------------------------------------------------------------------- drops
def _drop_search(dv, nu, test, alpha, sided, k_cap, grid, equal, greedy=True):
    """(lower bound or None, witness k, witness [units]) for drops of one contrast; k ≤ k_cap."""
    n, g = float(nu.sum()), len(dv)
    p2 = float(nu @ nu)
    s0, r0, q0 = dv.sum(), nu @ dv, dv @ dv
    asked, k_cap = k_cap, min(k_cap, g - 2)  # at least two units stay (the test needs them)
    ks = np.arange(k_cap + 1)
    gk = g - ks
    cs = np.array([critical_value(test, int(x), alpha, sided) for x in gk])
    big_a = cs**2 * gk / (gk - 1)
    kk = big_a / gk + 1  # f_k = A_k Q' − K_k S'² (equal units)
    ratio = big_a / kk
    top_w = max(s0, 0.0) * float(np.max(1.0 / ratio)) * 1.05
    ws = np.linspace(0.0, top_w, grid) if top_w > 0 else np.array([0.0])
    best_bound = np.full(len(ks), np.inf)
    wit = (None, None)
    for w in ws:
        gain = -dv**2 + 2 * w * dv
        order = np.argsort(-gain, kind="stable")[:k_cap]
        top = np.concatenate([[0.0], np.cumsum(gain[order])])
        if equal:
            bound = q0 - 2 * w * s0 + ratio * w * w + top
            best_bound = np.minimum(best_bound, bound)
        s_k = s0 - np.concatenate([[0.0], np.cumsum(dv[order])])
        r_k = r0 - np.concatenate([[0.0], np.cumsum(dv[order] * nu[order])])
        q_k = q0 - np.concatenate([[0.0], np.cumsum(dv[order] ** 2)])
        n_k = n - np.concatenate([[0.0], np.cumsum(nu[order])])
        p_k = p2 - np.concatenate([[0.0], np.cumsum(nu[order] ** 2)])
        stat = statistic(s_k, r_k, q_k, n_k, p_k, gk)
        hit = np.flatnonzero(_lost(stat, s_k, cs)[1:])
        if hit.size and (wit[0] is None or hit[0] + 1 < wit[0]):
            k = int(hit[0]) + 1
            wit = (k, [int(x) for x in order[:k]])
    k_g, units_g = _greedy_drops(dv, nu, test, alpha, sided, k_cap if wit[0] is None else wit[0] - 1) \
        if greedy else (None, None)
    if k_g is not None and (wit[0] is None or k_g < wit[0]):
        wit = (k_g, units_g)
    if not equal:
        return None, wit[0], wit[1]
    feasible = np.flatnonzero(best_bound >= 0)
    return (int(feasible[0]) if feasible.size else asked + 1), wit[0], wit[1]


def _greedy_drops(dv, nu, test, alpha, sided, k_cap):
    """Drop one unit at a time, each time the one leaving the smallest statistic (every candidate
    evaluated exactly); (first k that loses significance or None, the units)."""
    s, r, q, n, p2 = dv.sum(), nu @ dv, dv @ dv, float(nu.sum()), float(nu @ nu)
    alive = np.ones(len(dv), dtype=bool)
    out = []
    for k in range(1, k_cap + 1):
        g = len(dv) - k
        if g < 2:
            return None, None
        stat = statistic(s - dv, r - nu * dv, q - dv**2, n - nu, p2 - nu**2, g)
        stat = np.where(alive, stat, np.inf)
        j = int(np.argmin(stat))
        s, r, q, n, p2 = s - dv[j], r - nu[j] * dv[j], q - dv[j] ** 2, n - nu[j], p2 - nu[j] ** 2
        alive[j] = False
        out.append(j)
        if _lost(stat[j], s, critical_value(test, g, alpha, sided)):
            return k, out
    return None, None


# ---------------------------------------------------------------------------------- claims
def lose_significance_studentized(data: ItemScores, pairs, action: str, alpha: float, sided: str,
                                  p_values=None) -> dict:
    """The smallest re-grades (``flip``) / drops after which the claim's paired t or cluster-robust
    Wald test no longer rejects at α (some contrast's p ≥ α, or some contrast ≤ 0): the verified
    witness and, where computable, the lower bound (module docstring); ``exact`` when they meet.
    ``p_values``: the contrasts' current p-values (the weakest is searched first)."""
    from bayesrank.items.perturb import _entry, _units, overturn

    codes, labels, unit = _units(data)
    g = len(labels)
    nu = np.bincount(codes, minlength=g).astype(float)
    equal = bool(np.all(nu == nu[0]))
    test = "t" if data.clusters is None else "wald"
    y = data.scores
    ov = overturn(data, pairs, action)  # S ≤ 0 loses significance too: its exact minimum bounds
    k_ov = ov["budget"] if ov.get("broken") else None
    order = np.argsort(-np.asarray(p_values)) if p_values is not None else np.arange(len(pairs))
    best = (k_ov, None, None) if k_ov is not None else (None, None, None)  # (k, contrast, witness)
    cap = k_ov if k_ov is not None else g
    lower = k_ov if k_ov is not None else g
    conclusive = True  # every contrast's bound rules out any k up to its search cap
    for w in order:
        a, b = pairs[int(w)]
        dv = np.bincount(codes, weights=y[a] - y[b], minlength=g)
        stat0 = statistic(dv.sum(), nu @ dv, dv @ dv, nu.sum(), nu @ nu, g)
        if _lost(stat0, dv.sum(), critical_value(test, g, alpha, sided)):  # not significant to begin with
            best, lower = (0, (a, b), {} if action == "flip" else []), 0
            break
        k_cap = best[0] if best[0] is not None else cap
        if action == "flip":
            a_sum = np.bincount(codes, weights=y[a], minlength=g)
            b_sum = np.bincount(codes, weights=y[b], minlength=g)
            coarse = _regrade_search(dv, nu, a_sum, b_sum, critical_value(test, g, alpha, sided), k_cap, PRUNE_GRID)
            if coarse[0] > k_cap and coarse[1] is None:
                continue  # its bound rules out every k up to the cap
            lo, k, wit = _regrade_search(dv, nu, a_sum, b_sum, critical_value(test, g, alpha, sided), k_cap, N_GRID)
        else:
            if equal:
                coarse = _drop_search(dv, nu, test, alpha, sided, k_cap, PRUNE_GRID, equal, greedy=False)
                if coarse[0] > k_cap and coarse[1] is None:
                    continue  # its bound rules out every k up to the cap
            lo, k, wit = _drop_search(dv, nu, test, alpha, sided, k_cap, N_GRID, equal)
        lower = min(lower, lo if lo is not None else 0)
        conclusive &= lo is not None and lo > k_cap
        if k is not None and (best[0] is None or k < best[0]):
            best = (k, (a, b), wit)
    k, contrast, wit = best
    if k is None:
        entry = _entry(data, None, pairs, action, unit, g, significance=(alpha, sided))
        if not conclusive:  # the search found nothing, and the bound does not rule it out
            why = ("no lower bound for drops of clusters of unequal size" if action == "drop" and not equal else
                   f"the relaxation bound does not rule out {lower} or more")
            entry["exact"] = False
            entry["lower_bound"] = None if action == "drop" and not equal else int(lower)
            entry["reason"] = (f"no {'re-grade' if action == 'flip' else 'drop'} set found that removes the "
                               f"significance (searched up to {g} {unit}s; not proven: {why})")
        return entry
    if contrast is None:  # the overturning witness is the smallest
        acts, contrast = ov["actions"], _binding(ov, data)
    else:
        a, b = contrast
        if action == "flip":
            acts = _regrade_actions(data, a, b, wit, labels, unit, codes, nu)
        else:
            acts = [{"kind": "drop", unit: labels[u]} for u in wit]
        k = len(acts)
    z, keep = _apply(data, acts)
    entry = _entry(data, (k, acts, contrast), pairs, action, unit, g, significance=None)
    kept_codes = None if data.clusters is None else codes[keep]
    entry["verified"] = bool(any(test_p(z[a_, keep], z[b_, keep], kept_codes, sided) >= alpha
                                 or z[a_, keep].mean() <= z[b_, keep].mean() for a_, b_ in pairs))
    entry["exact"] = bool(lower >= k)  # a valid bound never exceeds the minimum, so lower ≤ k: equal
    entry["lower_bound"] = int(lower) if (action == "flip" or equal) else None
    verb = "re-grade" if action == "flip" else "drop"
    what = "paired t" if test == "t" else "cluster-robust Wald"
    bound = ("exact minimum: the relaxation bound meets the witness" if entry["exact"] else
             f"at most {k} (verified witness); at least {lower} (relaxation bound)" if entry["lower_bound"] is not None
             else f"at most {k} (verified witness; no lower bound for drops of clusters of unequal size)")
    entry["reason"] = (f"the claim's {what} test loses its significance after {k} {verb}(s) of {unit}s ({bound}; "
                       f"binding contrast {entry['binding']}); verified by recomputing the test")
    return entry


def _binding(ov, data):
    a, b = ov["binding"].split(" − ")
    return data.index(a), data.index(b)


def _apply(data, acts):
    from bayesrank.items.perturb import apply_actions

    return apply_actions(data, acts)


def _regrade_actions(data, a, b, final, labels, unit, codes, nu):
    """Re-grades realising each unit's final D: one model set to all 0 / all ν, or both (±ν)."""
    y = data.scores
    acts = []
    ma, mb = str(data.models[a]), str(data.models[b])
    for u, v in sorted(final.items()):
        cols = codes == u
        a_sum, b_sum = y[a, cols].sum(), y[b, cols].sum()
        opts = [(-b_sum, [(ma, 0.0)]), (nu[u] - b_sum, [(ma, 1.0)]), (a_sum, [(mb, 0.0)]),
                (a_sum - nu[u], [(mb, 1.0)]), (-nu[u], [(ma, 0.0), (mb, 1.0)]), (nu[u], [(ma, 1.0), (mb, 0.0)])]
        _, moves = min(opts, key=lambda o: (abs(o[0] - v), len(o[1])))
        for model, to in moves:
            acts.append({"kind": "flip", "model": model, unit: labels[u], "to": to})
    return acts
