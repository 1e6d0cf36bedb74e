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
  benchmarks. The search for the smallest N with power ≥ 0.8 starts where the bootstrap's normal
  limit (the sums of the resampled items ≈ N m + √N Σ^{1/2} ε, the same test applied) crosses 0.8,
  brackets the crossing with the exact bootstrap (steps of 2%, widening) and bisects it to 0.5%
  of N (:data:`ITEM_REL`: below the Monte Carlo error of the power, ±0.9 points at 2,000
  simulations, which moves N by about 2%); ``additional`` = N − n, N's power by the bootstrap.

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
ITEM_REL = 0.005  # the items' N is bisected until the bracket is this close (relative), or one item
ITEM_STEP = 1.02  # first step of the bracket around the normal limit's N (then 1.02², 1.02⁴, ...)
EXACT_FLOAT32 = 2**24  # counts and their 0/1-weighted sums below this are exact in float32 (BLAS at twice the speed)
ITEM_CELLS = 4_000_000  # simulated benchmarks × distinct item rows per block (memory ~ 8 × this bytes)


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
    scores = np.asarray(scores)
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    n = scores.shape[1]
    mean, sd = _difference_moments(scores, a, b)
    if not np.all(mean > 0):
        return not_settleable("the claim is false (or tied) at the estimate: more items like these would not "
                              "make it significant")
    alpha = 1 - level
    one = claim.sided == ONE_SIDED
    # contrasts already certain (t − z ≥ 7 on the items in hand; t only grows with more items) are left out
    se = sd / np.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, mean / np.where(se > 0, se, 1.0), np.inf)
    z = critical_z(level, claim.sided)
    live = t - z < CERTAIN
    if not live.any():
        live[int(np.argmin(t))] = True
    d = scores[a[live]].astype(float) - scores[b[live]]  # (live contrasts, n) per-item differences
    patterns, freq = np.unique(d.T, axis=0, return_counts=True)
    share = freq / freq.sum()
    chunk = max(1, min(sims, ITEM_CELLS // len(patterns)))
    memo: dict = {}

    def power(total: int) -> float:
        """The bootstrap's power at ``total`` items (a multinomial over the distinct item rows)."""
        if total < 2:
            return 0.0
        if total not in memo:
            rng = np.random.default_rng([seed, total])
            hits = 0
            for start in range(0, sims, chunk):
                counts = rng.multinomial(total, share, size=min(chunk, sims - start))
                counts = counts.astype(np.float32 if total < EXACT_FLOAT32 else float)  # sums exact either way
                hits += int(_item_supported(patterns, counts, binary, one, alpha).sum())
            memo[total] = hits / sims
        return memo[total]

    now = power(n)
    if now >= target:
        need = n
    else:
        limit = _normal_limit(patterns, share, binary, one, alpha, sims, seed)
        need = _smallest_items(power, limit, n, target, ITEM_CAP)
    if need is None:
        return not_settleable(f"more than {ITEM_CAP:,} items would be needed")
    return {"settleable": True, "additional": int(need - n), "unit": "items", "power": power(need),
            "target_power": target, "power_now": now,
            "method": (f"bootstrap of the items (the claimed models' joint scores), the claim's "
                       f"{'exact McNemar' if binary else 'paired t'} test on {sims:,} simulated benchmarks per size"
                       f" (the smallest size to {ITEM_REL:.1%}, searched from the bootstrap's normal limit)"
                       f"{', intersection–union over its contrasts' if len(pairs) > 1 else ''}")}


def _difference_moments(scores: np.ndarray, a: np.ndarray, b: np.ndarray, block: int = 256):
    """Mean and SD (ddof 1) over items of each contrast's per-item difference ``scores[a] − scores[b]``,
    ``block`` contrasts at a time (a top-5 claim over 2,000 models has 9,975 contrasts)."""
    mean, sd = np.empty(len(a)), np.empty(len(a))
    for s in range(0, len(a), block):
        d = scores[a[s:s + block]].astype(float) - scores[b[s:s + block]]
        mean[s:s + block] = d.mean(axis=1)
        sd[s:s + block] = d.std(axis=1, ddof=1)
    return mean, sd


def _item_supported(patterns: np.ndarray, counts: np.ndarray, binary: bool, one_sided: bool,
                    alpha: float) -> np.ndarray:
    """(sims,) whether the claim is supported on resampled benchmarks by the items review's rule
    (:func:`_holds`). ``patterns`` (u, m): the distinct per-item differences of the m contrasts;
    ``counts`` (sims, u, float): how often each is drawn (a bootstrap of the items is a multinomial
    over their rows)."""
    total = int(round(float(counts[0].sum())))
    first, second = ((patterns > 0).astype(counts.dtype), (patterns < 0).astype(counts.dtype)) if binary else (
        patterns, patterns**2)
    return _holds(total, counts @ first, counts @ second, binary, one_sided, alpha)


def _holds(total: int, first, second, binary: bool, one_sided: bool, alpha: float) -> np.ndarray:
    """(sims,) every contrast's mean difference > 0 and its p-value < α on benchmarks of ``total``
    items from two sums per contrast (sims, m): for 0/1 scores the discordant counts n10, n01 (exact
    McNemar on counts rounded to integers, :func:`bayesrank.stats.paired.mcnemar_rejects`); else the
    sums of d and d² (the paired t)."""
    if binary:
        from bayesrank.stats.paired import mcnemar_rejects

        n10, n01 = np.rint(np.clip(first, 0, total)), np.rint(np.clip(second, 0, total))
        return np.all((n10 > n01) & mcnemar_rejects(n10, n01, alpha, one_sided), axis=1)
    from scipy import stats

    mean = first / total
    var = np.clip((second - total * mean**2) / (total - 1), 0.0, None)
    se = np.sqrt(var / total)
    t = np.divide(mean, se, out=np.where(mean > 0, np.inf, np.where(mean < 0, -np.inf, 0.0)), where=se > 1e-15)
    p = stats.t.sf(t, total - 1) if one_sided else 2 * stats.t.sf(np.abs(t), total - 1)
    return np.all((mean > 0) & (p < alpha), axis=1)


def _normal_limit(patterns: np.ndarray, share: np.ndarray, binary: bool, one_sided: bool, alpha: float,
                  sims: int, seed: int):
    """``N ↦`` the power at N items under the bootstrap's normal limit: the sums over N resampled items
    of w = (1[d > 0], 1[d < 0]) (0/1 scores) or (d, d²) are ≈ N m + √N A with m = E[w] and
    A = Σᵢ √shareᵢ (wᵢ − m) εᵢ, ε ~ N(0, 1) per distinct item row, drawn once (the same A at every N:
    a smooth curve to search on); the claim's own test (:func:`_holds`) on them."""
    w = np.concatenate([patterns > 0, patterns < 0] if binary else [patterns, patterns**2], axis=1).astype(float)
    mean = share @ w
    rng = np.random.default_rng([seed, 1])
    a = np.zeros((sims, w.shape[1]))
    block = max(1, ITEM_CELLS // sims)
    for start in range(0, len(w), block):
        rows = slice(start, start + block)
        a += rng.standard_normal((sims, len(w[rows]))) @ ((w[rows] - mean) * np.sqrt(share[rows])[:, None])
    m = patterns.shape[1]

    def power(total: int) -> float:
        if total < 2:
            return 0.0
        s = total * mean + np.sqrt(total) * a
        return float(_holds(total, s[:, :m], s[:, m:], binary, one_sided, alpha).mean())

    return power


def _smallest_items(power, limit, n: int, target: float, cap: int) -> int | None:
    """The smallest total N > n (to :data:`ITEM_REL`) with the bootstrap's ``power(N) ≥ target``
    (``power(n) < target``): from the normal ``limit``'s smallest N, a bracket by the bootstrap
    (steps ×1.02, ×1.02², … away from it), then bisection; None when ``power(cap) < target``."""
    from bayesrank.bt.design import smallest_total

    guess = smallest_total(limit, target, cap, start=n)
    if guess is None:
        if power(cap) < target:
            return None
        guess = cap
    guess = max(guess, n + 1)
    lo, hi, step = n, guess, ITEM_STEP
    if power(guess) >= target:
        while True:  # down from the guess
            c = max(n, int(np.floor(hi / step)))
            if c <= lo:
                break
            if power(c) >= target:
                hi, step = c, step**2
            else:
                lo = c
                break
    else:
        lo = guess
        while True:  # up from the guess
            c = min(cap, int(np.ceil(lo * step)))
            if power(c) >= target:
                hi = c
                break
            if c >= cap:
                return None
            lo, step = c, step**2
    while hi - lo > 1 and hi > lo * (1 + ITEM_REL):
        mid = (lo + hi) // 2
        if power(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


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
