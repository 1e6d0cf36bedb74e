"""Rank confidence sets with a coverage guarantee (Mogstad, Romano, Shaikh & Wilhelm 2024, the
``csranks`` method), from any estimate θ̂ of K players' scores and its covariance Σ — Bradley–Terry
scores, or mean benchmark scores with the paired item-level covariance.

With ``sd_ab = sd(θ̂_a − θ̂_b)`` (correlation included) and the ``level``-quantile ``c`` of
``max_{(a,b) ∈ I} ((Z_a − Z_b) / sd_ab)`` over the ordered pairs I, where Z is a draw of the
estimation error θ̂ − θ (``N(0, Σ)`` by Monte Carlo — the parametric bootstrap — or centred bootstrap
replicates θ* − θ̂ — the nonparametric bootstrap)::

    rank_lower(a) = 1 + #{b : θ̂_b − θ̂_a > c·sd_ab}       (players significantly ahead)
    rank_upper(a) = K − #{b : θ̂_a − θ̂_b > c·sd_ab}       (players significantly behind)

*Simultaneous*: I = all K(K−1) ordered pairs, so ``P(|θ̂_a − θ̂_b − (θ_a − θ_b)| ≤ c·sd_ab for all
pairs) → level``; on that event no pair is ordered wrongly with significance, hence
``P(every true rank lies in its set) ≥ level`` (asymptotically). *Marginal* (one player a):
I = the 2(K−1) ordered pairs containing a, and ``P(rank(a) ∈ set(a)) ≥ level``. With ``stepdown``
(the default, as csranks) rejected pairs are removed from I and c is recomputed until nothing more
is rejected (Romano–Wolf); the sets only shrink and the guarantee is kept.

**Tie groups** (:func:`tie_groups`): walking down the point order, a new group starts at the first
player the current group's leader is simultaneously significantly ahead of; within a group no
member is separated from its leader at the simultaneous level.

Also: Holm and Benjamini–Hochberg adjustment of p-values (:func:`adjust_pvalues`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesrank.errors import InputError

ADJUSTMENTS = ("holm", "bh")


def contrast_sd(cov: np.ndarray) -> np.ndarray:
    """(K, K) matrix ``sd(θ_b − θ_a) = sqrt(V_aa + V_bb − 2 V_ab)``, exactly symmetric (``V_ab + V_ba``
    in place of ``2 V_ab``: equal for a symmetric covariance, and a covariance that is symmetric only
    up to rounding gives sd_ab = sd_ba to the last bit)."""
    cov = np.asarray(cov, dtype=float)
    v = np.diag(cov)
    return np.sqrt(np.clip(v[:, None] + v[None, :] - (cov + cov.T), 0.0, None))


def contrast_sd_at(cov: np.ndarray, a, b) -> np.ndarray:
    """``contrast_sd(cov)[a, b]`` for the index arrays ``a``, ``b`` alone (the same arithmetic)."""
    cov = np.asarray(cov, dtype=float)
    a, b = np.asarray(a), np.asarray(b)
    return np.sqrt(np.clip(cov[a, a] + cov[b, b] - (cov[a, b] + cov[b, a]), 0.0, None))


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise InputError(f"level must be in (0, 1), got {level}")


def gaussian_errors(cov, n_sim: int, seed: int, df: float | None = None) -> np.ndarray:
    """(n_sim, K) draws of the estimation error from ``N(0, Σ)`` (the parametric bootstrap), or with
    ``df`` from the multivariate t with ``df`` degrees of freedom (``Z / sqrt(χ²_df / df)``: the
    small-sample reference of a cluster-robust covariance estimated from G clusters, df = G − 1)."""
    from bayesrank.stats.gaussian import sum_to_zero_normal

    c = np.asarray(cov, dtype=float)
    rng = np.random.default_rng(seed)
    z = sum_to_zero_normal(0.0, c, n_sim, rng)  # NumPy's eigh route below 1,000 players
    if df is not None:
        z /= np.sqrt(rng.chisquare(df, size=(len(z), 1)) / df)
    return z


COMPILED_ABOVE = 1000  # players from which the pair loops are compiled (stats.pair_kernels)


def max_t(errors: np.ndarray, sd: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Per error draw, ``max_{(a,b) ∈ pairs} (Z_a − Z_b) / sd_ab`` over the ordered pairs in the
    (K, K) boolean mask ``pairs``; −inf where the mask is empty."""
    return max_t_argmax(errors, sd, pairs)[0]


def max_t_argmax(errors: np.ndarray, sd: np.ndarray, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`max_t` and, per draw, the flat index ``a·K + b`` of a pair attaining it (−1 where the
    mask is empty); from 1,000 players on by the compiled pair loop of
    :mod:`bayesrank.stats.pair_kernels` (the same numbers up to the last bit), else blocked NumPy
    (:func:`_max_t_blocked`)."""
    if sd.shape[0] >= COMPILED_ABOVE and len(errors):  # numba is imported only here
        from bayesrank.stats.pair_kernels import max_t_argmax as compiled

        return compiled(errors, sd, pairs)
    return _max_t_blocked(errors, sd, pairs)


def _max_t_blocked(errors: np.ndarray, sd: np.ndarray, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`max_t` and, per draw, the flat index ``a·K + b`` of a pair attaining it (−1 where the
    mask is empty). A pair active in both directions is computed once, as ``|Z_a − Z_b| / sd_ab``
    (``t_ba = −t_ab`` exactly), which halves the work of the full mask; one block per leading player
    ``a`` on the transposed draws (contiguous rows: memory (K − 1) × S per block). On an exact tie
    between two pairs the one reached first is returned (measure zero for continuous draws)."""
    k = sd.shape[0]
    et = np.ascontiguousarray(np.asarray(errors, dtype=float).T)
    n = et.shape[1]
    out = np.full(n, -np.inf)
    arg = np.full(n, -1)
    cols = np.arange(n)
    pairs = np.asarray(pairs, dtype=bool)
    both = pairs & pairs.T
    upper = np.triu(both, 1)  # {a, b} active both ways: once, at a < b
    single = pairs & ~both  # active one way only
    buf = np.empty((k, n))  # one work array for every block (no allocation per block)
    for a in np.flatnonzero(upper.any(axis=1) | single.any(axis=1)):
        for b, symmetric in ((np.flatnonzero(upper[a]), True), (np.flatnonzero(single[a]), False)):
            if not b.size:
                continue
            t = buf[: b.size]
            if b[-1] - b[0] == b.size - 1:  # a contiguous range of players (the full mask): a view, no gather
                np.subtract(et[a][None, :], et[b[0] : b[-1] + 1], out=t)
            else:
                np.take(et, b, axis=0, out=t)
                np.subtract(et[a][None, :], t, out=t)
            if symmetric:
                np.abs(t, out=t)
            t /= sd[a, b][:, None]
            j = t.argmax(axis=0)
            tm = t[j, cols]
            better = tm > out
            out[better] = tm[better]
            jb, cb = b[j[better]], cols[better]
            if symmetric:  # the direction attaining |t|: (a, b) if Z_a ≥ Z_b, else (b, a)
                ahead = et[a, cb] >= et[jb, cb]
                arg[better] = np.where(ahead, a * k + jb, jb * k + a)
            else:
                arg[better] = a * k + jb
    return out, arg


def _stepdown(score, sd, errors, pairs, level, stepdown) -> tuple[np.ndarray, list[float]]:
    """Rejections R[a, b] = "a significantly ahead of b" and the critical value of each step.

    Each step's critical value is the ``level``-quantile of the max-t over the pairs still active.
    Removing rejected pairs can only lower a draw's max, and only for draws whose maximising pair
    was removed: those draws alone are recomputed (the same numbers as recomputing every draw)."""
    diff = score[:, None] - score[None, :]
    active = pairs.copy()
    rejected = np.zeros_like(pairs)
    crits = []
    m, arg = max_t_argmax(errors, sd, active)
    while active.any():
        c = float(np.quantile(m, level))
        crits.append(c)
        new = active & (diff > c * sd)
        if not new.any():
            break
        rejected |= new
        active &= ~new
        if not stepdown:
            break
        stale = (arg >= 0) & new.ravel()[np.maximum(arg, 0)]
        if stale.any():
            m[stale], arg[stale] = max_t_argmax(errors[stale], sd, active)
    return rejected, crits


@dataclass(frozen=True)
class RankSets:
    """Confidence sets ``[rank_lower, rank_upper]`` for the ranks, with how they were built."""

    players: np.ndarray
    rank_lower: np.ndarray
    rank_upper: np.ndarray
    kind: str  # "simultaneous" | "marginal"
    critical: str  # "gaussian" | "bootstrap"
    level: float
    stepdown: bool
    n_errors: int
    critical_values: tuple  # simultaneous: per step; marginal: first-step value per player
    significant: np.ndarray | None = None  # simultaneous: (K, K) "a ahead of b" rejections

    @property
    def method(self) -> str:
        src = ("Gaussian N(0, Σ) Monte Carlo" if self.critical == "gaussian" else "nonparametric bootstrap"
               if self.critical == "bootstrap" else f"{self.critical} Monte Carlo")
        step = "stepdown" if self.stepdown else "single-step"
        return f"{self.kind} {self.level:.0%} rank confidence set (max-|t| over pairwise contrasts, {src}, {step})"

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"rank_lower": self.rank_lower, "rank_upper": self.rank_upper},
                            index=pd.Index([str(p) for p in self.players], name="player"))


def rank_confidence_sets(
    score, cov, players=None, level: float = 0.95, *, simultaneous: bool = True, errors=None,
    n_sim: int = 10_000, seed: int = 0, stepdown: bool = True, indices=None, df: float | None = None,
) -> RankSets:
    """Rank confidence sets from simultaneous intervals on pairwise contrasts (module docstring).

    ``errors``: (S, K) draws of θ̂ − θ (e.g. bootstrap replicates minus the point estimate); when
    None, ``n_sim`` draws from ``N(0, cov)`` with ``seed``. ``simultaneous=False`` gives each
    player's marginal set (only for the player positions in ``indices`` when given; the others get
    the trivial set [1, K] and a NaN critical value)."""
    _check_level(level)
    th = np.asarray(score, dtype=float)
    k = len(th)
    if k < 2:
        raise InputError("rank confidence sets need at least 2 players")
    players = np.asarray(players if players is not None else np.arange(k).astype(str), dtype=object)
    c = None if cov is None else np.asarray(cov, dtype=float)[:k, :k]
    if errors is None:
        if c is None:
            raise InputError("rank confidence sets need the covariance of the scores or error draws")
        z = gaussian_errors(c, n_sim, seed, df)
        critical = "gaussian" if df is None else f"multivariate t ({df:g} df)"
    else:
        z = np.asarray(errors, dtype=float)[:, :k]
        critical = "bootstrap"
        if c is None:
            c = np.cov(z.T)
    sd = contrast_sd(c)
    if not (sd + np.eye(k) > 0).all():
        raise InputError("two players have a contrast with zero variance: the covariance is degenerate")
    off = ~np.eye(k, dtype=bool)
    if simultaneous:
        rej, crits = _stepdown(th, sd, z, off, level, stepdown)
        lower = 1 + rej.sum(axis=0)  # rej[b, a]: b significantly ahead of a
        upper = k - rej.sum(axis=1)
        return RankSets(players, lower, upper, "simultaneous", critical, level, stepdown, len(z), tuple(crits), rej)
    lower = np.ones(k, dtype=int)
    upper = np.full(k, k, dtype=int)
    first = [float("nan")] * k
    for a in range(k) if indices is None else np.atleast_1d(indices):
        pairs = np.zeros((k, k), dtype=bool)
        pairs[a, :] = off[a]
        pairs[:, a] = off[:, a]
        rej, crits = _stepdown(th, sd, z, pairs, level, stepdown)
        lower[a] = 1 + rej[:, a].sum()
        upper[a] = k - rej[a, :].sum()
        first[a] = crits[0]
    return RankSets(players, lower, upper, "marginal", critical, level, stepdown, len(z), tuple(first))


def adjust_pvalues(p, method: str) -> np.ndarray:
    """Holm (``"holm"``, family-wise error) or Benjamini–Hochberg (``"bh"``, false discovery rate)
    adjusted p-values. Sorted p_(1) ≤ … ≤ p_(m): Holm ``max_{j≤i} (m−j+1) p_(j)``, BH
    ``min_{j≥i} m p_(j) / j``, both capped at 1."""
    p = np.asarray(p, dtype=float)
    m = p.size
    if method not in ADJUSTMENTS:
        raise InputError(f"adjustment must be one of {ADJUSTMENTS}, got {method!r}")
    if m == 0:
        return p.copy()
    order = np.argsort(p)
    ps = p[order]
    if method == "holm":
        adj = np.maximum.accumulate(ps * np.arange(m, 0, -1))
    else:
        adj = np.minimum.accumulate((ps / (np.arange(1, m + 1) / m))[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def tie_groups(score, significant, players=None) -> pd.Series:
    """Tie groups from simultaneous rejections ``significant[a, b]`` = "a significantly ahead of b"
    (:attr:`RankSets.significant`): walking down the order of ``score`` (best first; ties by index), a
    new group (1, 2, …) starts at the first player the current group's leader is significantly ahead
    of. Indexed by player."""
    s = np.asarray(score, dtype=float)
    sig = np.asarray(significant, dtype=bool)
    names = [str(p) for p in (players if players is not None else range(len(s)))]
    order = np.lexsort((np.arange(len(s)), -s))
    groups = np.zeros(len(s), dtype=int)
    group, leader = 0, None
    for i in order:
        if leader is None or sig[leader, i]:
            group, leader = group + 1, i
        groups[i] = group
    return pd.Series(groups, index=pd.Index(names, name="player"), name="tie_group")
