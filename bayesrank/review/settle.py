"""What would settle a claim (``to_settle``): for a claim the review does not support, the data to
add that make its own test significant with 80% power if the current estimate were true.

* **pairwise and judges** (:func:`pairwise_to_settle`): the added comparisons and their pairs from
  :func:`bayesrank.bt.design.plan` — the allocation that minimises the claim's binding contrasts'
  variance through the Fisher information of the Bradley–Terry fit, the power of the claim's
  intersection–union Wald test by Monte Carlo on the contrasts' joint normal, the model variance
  scaled to the review's covariance (sandwich with ties); beside it the totals for uniform
  allocation over the claim's own pairs and for allocation in proportion to the existing pair
  counts. Every outcome of the final design (old pairs and new) drawn from the fitted model: the
  design's power, as a sample size formula states it.
* **items** (:func:`items_to_settle`): a benchmark of N items drawn like the existing ones (a
  bootstrap of the item rows: the claimed models' joint per-item scores), the claim's own paired test
  (exact McNemar for 0/1 scores, paired t for fractional) at each candidate N over 2,000 simulated
  benchmarks; the smallest N with power ≥ 0.8 by doubling and bisection; ``additional`` = N − n.

``{settleable: false, why}`` when the claim has no contrast to plan for (the order claim), is false
at the estimate, or its model is one the plan does not cover (style features, a position effect,
clustered items).
"""

from __future__ import annotations

import numpy as np

TARGET_POWER = 0.8
MAX_PLAYERS = 600  # pairwise boards above this are not planned (bayesrank.bt.design's dense solves)
ITEM_SIMULATIONS = 2000
ITEM_CAP = 10**7
CERTAIN = 7.0  # t − z at or above this on the items in hand: the contrast is left out of the simulation


def not_settleable(why: str) -> dict:
    return {"settleable": False, "why": why}


def pairwise_to_settle(claim, fit, pairs, z: float, seed: int = 0, target: float = TARGET_POWER) -> dict:
    """``to_settle`` of a pairwise claim (module docstring): ``fit`` the review's default
    Bradley–Terry fit, ``pairs`` the claim's contrasts (a, b) on it, ``z`` its critical value."""
    from bayesrank.bt.design import Design, plan
    from bayesrank.stats.ranksets import contrast_sd_at

    if claim.kind not in ("pair", "top1", "topk") or pairs is None:
        return not_settleable("the order claim's test is a Kendall τ bound over every pair: no contrast to plan "
                              "comparisons for")
    if getattr(fit, "counts", None) is None or getattr(fit, "features", None) or getattr(fit, "position", None):
        return not_settleable("planned for the plain Bradley–Terry model; this model has style features or a "
                              "position effect")
    if getattr(fit, "ties", "half") not in ("half", "drop"):
        return not_settleable(f"planned for half-win and drop-ties models; this fit's ties are {fit.ties}")
    if len(fit.players) > MAX_PLAYERS:
        return not_settleable(f"not planned for boards of more than {MAX_PLAYERS} players (the plan's dense "
                              f"solves); this one has {len(fit.players):,}")
    pairs = [(int(a), int(b)) for a, b in pairs]
    gamma = np.array([fit.score[a] - fit.score[b] for a, b in pairs])
    if not np.all(gamma > 0):
        return not_settleable("the claim is false (or tied) at the estimate: more data drawn from it would not "
                              "make it significant")
    design = Design.from_fit(fit)
    reported = contrast_sd_at(fit.theta_cov, np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])) ** 2
    model = np.diag(design.contrast_cov(pairs))
    rho = reported / model
    p = plan(design, pairs, gamma, z, rho, target=target, seed=seed)
    if not p.settleable:
        return not_settleable(p.why)
    players = fit.players
    scaled = bool(np.any(np.abs(rho - 1) > 1e-6))
    return {
        "settleable": True,
        "additional": int(p.additional),
        "unit": "comparisons",
        "power": float(p.power),
        "target_power": target,
        "power_now": float(p.power_now),
        "allocation": [{"player_a": str(players[a]), "player_b": str(players[b]), "count": int(n)}
                       for a, b, n in (_ahead_first(x, fit.score) for x in p.allocation)],
        "uniform_additional": p.uniform_additional,
        "proportional_additional": p.proportional_additional,
        "method": ("c-optimal allocation for the claim's contrasts (Fisher information of the Bradley–Terry fit, "
                   "pairwise Frank–Wolfe); power of the claim's intersection–union Wald test by Monte Carlo on "
                   "the contrasts' joint normal, every outcome drawn from the fitted scores"
                   + ("; model variances scaled to the review's covariance" if scaled else "")
                   + (f"; planned for the {p.n_contrasts} contrasts nearest significance of {p.n_uncertain} not yet "
                      f"certain" if p.n_uncertain > p.n_contrasts else "")),
    }


def _ahead_first(row, score):
    a, b, n = row
    return (a, b, n) if score[a] >= score[b] else (b, a, n)


def items_to_settle(claim, scores: np.ndarray, pairs, level: float, seed: int = 0, binary: bool = True,
                    target: float = TARGET_POWER, sims: int = ITEM_SIMULATIONS) -> dict:
    """``to_settle`` of a per-item claim (module docstring): ``scores`` the (models, items) matrix of
    the models the review scored, ``pairs`` the claim's contrasts (a, b) as rows of it; the test is
    exact McNemar for 0/1 scores (``binary``), else the paired t, at the claim's sidedness; the
    intersection–union over contrasts."""
    from bayesrank.review.verdict import ONE_SIDED, critical_z

    if claim.kind not in ("pair", "top1", "topk") or pairs is None:
        return not_settleable("the order claim's test is a bound over every pair: no contrast to plan items for")
    scores = np.asarray(scores, dtype=float)
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    d = scores[a] - scores[b]  # (m, n) per-item differences
    n = d.shape[1]
    if not np.all(d.mean(axis=1) > 0):
        return not_settleable("the claim is false (or tied) at the estimate: more items like these would not "
                              "make it significant")
    alpha = 1 - level
    one = claim.sided == ONE_SIDED
    # contrasts already certain (t − z ≥ 7 on the items in hand; t only grows with more items) are left out
    se = d.std(axis=1, ddof=1) / np.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, d.mean(axis=1) / np.where(se > 0, se, 1.0), np.inf)
    z = critical_z(level, claim.sided)
    live = t - z < CERTAIN
    if not live.any():
        live[int(np.argmin(t))] = True
    patterns, freq = np.unique(d[live].T, axis=0, return_counts=True)
    share = freq / freq.sum()
    chunk = max(1, min(sims, 20_000_000 // max(1, patterns.size)))  # memory: chunk × patterns
    memo: dict = {}

    def power(total: int) -> float:
        if total < 2:
            return 0.0
        if total not in memo:
            rng = np.random.default_rng([seed, total])
            hits = 0
            for start in range(0, sims, chunk):
                counts = rng.multinomial(total, share, size=min(chunk, sims - start))
                hits += int(_item_supported(patterns, counts, binary, one, alpha).sum())
            memo[total] = hits / sims
        return memo[total]

    now = power(n)
    from bayesrank.bt.design import smallest_total

    need = n if now >= target else smallest_total(power, target, ITEM_CAP)
    if need is None:
        return not_settleable(f"more than {ITEM_CAP:,} items would be needed")
    if need < n:  # power ≥ target already at n
        need = n
    return {"settleable": True, "additional": int(need - n), "unit": "items", "power": power(need),
            "target_power": target, "power_now": now,
            "method": (f"bootstrap of the items (the claimed models' joint scores), the claim's "
                       f"{'exact McNemar' if binary else 'paired t'} test on {sims:,} simulated benchmarks per size"
                       f"{', intersection–union over its contrasts' if len(pairs) > 1 else ''}")}


def _item_supported(patterns: np.ndarray, counts: np.ndarray, binary: bool, one_sided: bool,
                    alpha: float) -> np.ndarray:
    """(sims,) whether the claim is supported on resampled benchmarks by the items review's rule:
    every contrast's mean difference > 0 and its p-value < α — exact McNemar
    (:func:`bayesrank.stats.paired.mcnemar_exact_many`) for 0/1 scores, else the paired t.
    ``patterns`` (u, m): the distinct per-item differences of the m contrasts; ``counts`` (sims, u):
    how often each is drawn (a bootstrap of the items is a multinomial over their rows)."""
    from bayesrank.stats.paired import mcnemar_exact_many

    total = int(counts[0].sum())
    s1 = counts @ patterns
    mean = s1 / total
    if binary:
        two, one = mcnemar_exact_many(counts @ (patterns > 0), counts @ (patterns < 0))
        p = one if one_sided else two
    else:
        from scipy import stats

        var = np.clip((counts @ patterns**2 - total * mean**2) / (total - 1), 0.0, None)
        se = np.sqrt(var / total)
        t = np.divide(mean, se, out=np.where(mean > 0, np.inf, np.where(mean < 0, -np.inf, 0.0)), where=se > 1e-15)
        p = stats.t.sf(t, total - 1) if one_sided else 2 * stats.t.sf(np.abs(t), total - 1)
    return np.all((mean > 0) & (p < alpha), axis=1)


def settle_text(to_settle: dict | None, short: bool = False) -> str:
    """The page's cell: '1,622 more comparisons (BOS–OKC 293, …): 80% power' or why not (``short``:
    the terminal's '1,622 more comparisons over 108 pairs')."""
    from bayesrank.review.numbers import count, plural

    if to_settle is None:
        return "–"
    if not to_settle.get("settleable", True):
        return "not settleable (the page says why)" if short else f"not settleable: {to_settle.get('why', '')}"
    unit = to_settle.get("unit", "items")
    power = to_settle.get("power")
    if not to_settle.get("additional"):
        now = to_settle.get("power_now", power)
        return f"no more {unit}: {now:.0%} power already"
    text = f"{count(to_settle['additional'])} more {unit}"
    alloc = to_settle.get("allocation") or []
    if short:
        return text + (f" over {plural(len(alloc), 'pair')}" if alloc else "")
    if alloc:
        top = ", ".join(f"{a['player_a']}–{a['player_b']} {count(a['count'])}" for a in alloc[:3])
        more = f", … {len(alloc)} pairs" if len(alloc) > 3 else ""
        text += f" ({top}{more})"
    if power is not None:
        text += f": {power:.0%} power"
    if to_settle.get("uniform_additional"):
        text += f"; uniform over its pairs {count(to_settle['uniform_additional'])}"
    return text
