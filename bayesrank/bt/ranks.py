"""Rank distributions, rank confidence sets with a coverage guarantee, and pairwise probabilities.

Three kinds of rank uncertainty for a leaderboard with scores θ (sum-to-zero logit scale):

**Distributions from draws** (posterior NUTS/Laplace draws, or bootstrap replicates). In draw s the
rank of a is ``1 + #{b : θ_b^s > θ_a^s}`` (1 = best, ties share the smaller rank). Counting gives
P(rank = r), P(rank ≤ k), P(a is #1), equal-tailed quantile ranges of the rank and the probability
of each top-k *set*. These describe the spread of the draws; they carry no frequentist coverage
guarantee (bootstrap rank intervals are inconsistent near ties, Hall & Miller 2009).

**Confidence sets** (Mogstad, Romano, Shaikh & Wilhelm 2024, the ``csranks`` method): simultaneous
and marginal rank sets from θ̂ and its covariance, with the Romano–Wolf step-down; the construction
and its guarantee are stated once, in :mod:`bayesrank.stats.ranksets`.

**Pairwise** probabilities: ``P(a beats b) = expit(θ_a − θ_b)`` with the interval
``expit(θ̂_a − θ̂_b ± z·sd_ab)`` (Wald on the logit scale, mapped), ``P(θ_a > θ_b)`` from draws, and
two-sided contrast p-values ``2 Φ(−|θ̂_a − θ̂_b| / sd_ab)`` adjusted over all pairs with Holm (family-
wise error) and Benjamini–Hochberg (false discovery rate); *tiers* group players whose difference
from the tier's leader is not significant after adjustment.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from bayesrank.bt.result import contrast_sd, point_rank, two_sided_z
from bayesrank.errors import InputError
from bayesrank.protocol import Diagnostics, Result
from bayesrank.stats.ranksets import (  # noqa: F401  (shared rank-set machinery, re-exported)
    ADJUSTMENTS,
    RankSets,
    _check_level,
    _stepdown,
    adjust_pvalues,
    gaussian_errors,
    max_t,
    max_t_argmax,
    rank_confidence_sets,
    tie_groups,
)

DEFAULT_TOP_K = (3, 10)


# ====================================================================== rank distributions from draws
def _as_draws(draws, players=None) -> np.ndarray:
    d = np.asarray(draws, dtype=float)
    if d.ndim != 2 or d.shape[0] < 1 or d.shape[1] < 2:
        raise InputError(f"draws must be a (draws, players) array with at least 2 players, got shape {d.shape}")
    if players is not None and len(players) != d.shape[1]:
        raise InputError(f"{len(players)} player names for draws with {d.shape[1]} columns")
    if not np.isfinite(d).all():
        raise InputError(f"draws contain {int((~np.isfinite(d)).sum())} non-finite values")
    return d


def rank_matrix(draws) -> np.ndarray:
    """(S, K) integer ranks per draw: ``1 + #{b : θ_b > θ_a}`` (1 = best; ties share the smaller rank)."""
    d = _as_draws(draws)
    s, k = d.shape
    order = np.argsort(-d, axis=1, kind="stable")
    sorted_vals = np.take_along_axis(d, order, axis=1)
    pos = np.arange(1, k + 1)[None, :].repeat(s, axis=0)
    # a value tied with its predecessor takes the predecessor's rank ("min" ranking)
    tied = np.zeros_like(sorted_vals, dtype=bool)
    tied[:, 1:] = sorted_vals[:, 1:] == sorted_vals[:, :-1]
    pos = np.where(tied, 0, pos)
    pos = np.maximum.accumulate(pos, axis=1)
    ranks = np.empty_like(pos)
    np.put_along_axis(ranks, order, pos, axis=1)
    return ranks


def rank_probabilities(draws, players) -> pd.DataFrame:
    """P(rank = r) for every player (rows, labelled ``player``) and rank r = 1..K (columns, ``rank``).

    Rows sum to 1; the cumulative sum along a row is P(rank ≤ k)."""
    d = _as_draws(draws, players)
    r = rank_matrix(d)
    k = d.shape[1]
    counts = np.zeros((k, k))
    for j in range(k):
        counts[j] = np.bincount(r[:, j] - 1, minlength=k)
    df = pd.DataFrame(counts / d.shape[0], index=pd.Index([str(p) for p in players], name="player"),
                      columns=pd.RangeIndex(1, k + 1, name="rank"))
    return df


def prob_rank_at_most(rank_probs: pd.DataFrame, k: int) -> pd.Series:
    """P(rank ≤ k) per player from :func:`rank_probabilities`."""
    return rank_probs.loc[:, : int(k)].sum(axis=1).rename(f"p_rank_le_{int(k)}")


def rank_quantile_intervals(draws, players, level: float = 0.95) -> pd.DataFrame:
    """Equal-tailed ``level`` range of each player's rank over the draws: lower = the smallest r with
    P(rank ≤ r) ≥ (1−level)/2, upper = the smallest r with P(rank ≤ r) ≥ (1+level)/2, so the range
    holds at least ``level`` of the draws."""
    d = _as_draws(draws, players)
    _check_level(level)
    r = rank_matrix(d)
    a = (1 - level) / 2
    lo, hi = np.quantile(r, [a, 1 - a], axis=0, method="inverted_cdf")
    return pd.DataFrame({"rank_lower": lo.astype(int), "rank_upper": hi.astype(int)},
                        index=pd.Index([str(p) for p in players], name="player"))


def top_k_sets(draws, players, k: int, n: int | None = 10) -> pd.DataFrame:
    """The most probable top-k *sets* (order inside the set ignored): columns ``players`` (tuple,
    best first by mean draw) and ``probability`` = share of draws whose k best players are that set."""
    d = _as_draws(draws, players)
    s, kk = d.shape
    if not 1 <= k < kk:
        raise InputError(f"top-k set size must be between 1 and {kk - 1}, got {k}")
    # ties at the k-th place: a stable argsort on -θ picks the lower index (measure zero for continuous draws)
    top = np.sort(np.argsort(-d, axis=1, kind="stable")[:, :k], axis=1)
    sets, counts = np.unique(top, axis=0, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    if n is not None:
        order = order[:n]
    mean = d.mean(axis=0)
    names = np.asarray([str(p) for p in players], dtype=object)
    rows = []
    for i in order:
        members = sets[i][np.argsort(-mean[sets[i]], kind="stable")]
        rows.append({"players": tuple(names[members]), "probability": counts[i] / s})
    return pd.DataFrame(rows, columns=["players", "probability"])


def prob_ahead(draws, players) -> pd.DataFrame:
    """``P(θ_a > θ_b)`` over the draws (index ``player_a``, columns ``player_b``; diagonal 0)."""
    d = _as_draws(draws, players)
    k = d.shape[1]
    out = np.empty((k, k))
    for a in range(k):
        out[a] = (d[:, [a]] > d).mean(axis=0)
    names = [str(p) for p in players]
    return pd.DataFrame(out, index=pd.Index(names, name="player_a"), columns=pd.Index(names, name="player_b"))


# ====================================================================== rank confidence sets
# (moved to bayesrank.stats.ranksets, shared with the per-item benchmark kind; re-exported here)


def _select(fit, players):
    names = np.asarray([str(p) for p in fit.players], dtype=object)
    k = len(names)
    if players is None:
        idx = np.arange(k)
    else:
        lookup = {n: i for i, n in enumerate(names)}
        missing = [str(p) for p in players if str(p) not in lookup]
        if missing:
            raise InputError(f"unknown player(s) {missing[:5]}; the fit has {k} players")
        idx = np.array([lookup[str(p)] for p in players])
        if len(set(idx)) != len(idx):
            raise InputError("players must not repeat")
    score = np.asarray(fit.score, dtype=float)
    idx = idx[np.lexsort((names[idx], -score[idx]))]  # best first, ties by name
    return idx, names


def _fit_cov(fit) -> np.ndarray:
    k = len(fit.players)
    if fit.cov is not None:
        return np.asarray(fit.cov, dtype=float)[:k, :k]
    if fit.draws is not None:
        return np.cov(np.asarray(fit.draws, dtype=float)[:, :k].T)
    raise InputError(f"the {fit.method} fit has neither a covariance nor draws")


def pairwise_table(fit, players=None, level: float | None = None, draws=None, ahead: bool = True) -> pd.DataFrame:
    """One row per unordered pair (``player_a`` ahead of ``player_b`` by score), the family being all
    pairs of ``players`` (default: every player): ``diff`` = θ̂_a − θ̂_b, ``sd``, ``z``, ``p_value``
    (two-sided), ``p_holm``, ``p_bh``, ``p_win`` = expit(diff) with ``p_win_lower``/``p_win_upper``
    (Wald at ``level`` on the logit scale), and ``p_ahead`` = P(θ_a > θ_b) over the draws (fit's draws
    unless ``draws`` given; NaN if none, or with ``ahead=False``: K(K−1)/2 × draws comparisons, most
    of the table's time on a board of thousands)."""
    from scipy.special import expit, ndtr  # ndtr(−x) is scipy.stats.norm.sf(x), without importing scipy.stats

    level = fit.level if level is None else level
    _check_level(level)
    idx, names = _select(fit, players)
    if len(idx) < 2:
        raise InputError("a pairwise table needs at least 2 players")
    th = np.asarray(fit.score, dtype=float)
    sd_all = contrast_sd(_fit_cov(fit))
    ia, ib = np.triu_indices(len(idx), 1)
    a, b = idx[ia], idx[ib]
    diff = th[a] - th[b]
    sd = sd_all[a, b]
    zval = diff / sd
    p = 2 * ndtr(-np.abs(zval))
    zq = two_sided_z(level)
    d = None if not ahead else fit.draws if draws is None else draws
    if d is not None and len(idx) >= LARGE_BOARD:  # the compiled pair loop (same counts)
        from bayesrank.stats.pair_kernels import ahead_share

        ahead = ahead_share(np.asarray(d, dtype=float)[:, : len(names)][:, idx])
    elif d is not None:  # one leading player at a time against the players after it (no (S, pairs) gather)
        d = np.asarray(d, dtype=float)[:, : len(names)][:, idx]
        ahead = np.concatenate([np.count_nonzero(d[:, i : i + 1] > d[:, i + 1 :], axis=0)
                                for i in range(len(idx) - 1)]) / len(d)
    else:
        ahead = np.full(len(a), np.nan)
    return pd.DataFrame({
        "player_a": names[a], "player_b": names[b], "diff": diff, "sd": sd, "z": zval, "p_value": p,
        "p_holm": adjust_pvalues(p, "holm"), "p_bh": adjust_pvalues(p, "bh"),
        "p_win": expit(diff), "p_win_lower": expit(diff - zq * sd), "p_win_upper": expit(diff + zq * sd),
        "p_ahead": ahead,
    })


def pairwise_matrix(fit, players=None, level: float | None = None, value: str = "p_win") -> pd.DataFrame:
    """Square matrix of P(row player beats column player) = expit(θ_a − θ_b) (``value="p_win"``),
    or of ``p_win_lower``/``p_win_upper``/``p_ahead``/``p_holm``/``p_bh``/``p_value``; rows and
    columns ordered by score (``player_a`` × ``player_b``), diagonal NaN."""
    tab = pairwise_table(fit, players, level)
    if value not in tab.columns or value in ("player_a", "player_b"):
        raise InputError(f"value must be one of {list(tab.columns[2:])}, got {value!r}")
    idx, names = _select(fit, players)
    order = list(names[idx])
    m = pd.DataFrame(np.nan, index=pd.Index(order, name="player_a"), columns=pd.Index(order, name="player_b"))
    v = tab[value].to_numpy()
    mirrored = {"p_win": 1 - v, "p_win_lower": 1 - tab["p_win_upper"].to_numpy(),
                "p_win_upper": 1 - tab["p_win_lower"].to_numpy(), "p_ahead": 1 - v}.get(value, v)
    pos = {n: i for i, n in enumerate(order)}
    ra = tab["player_a"].map(pos).to_numpy()
    rb = tab["player_b"].map(pos).to_numpy()
    arr = m.to_numpy(copy=True)
    arr[ra, rb] = v
    arr[rb, ra] = mirrored
    return pd.DataFrame(arr, index=m.index, columns=m.columns)


def significance_tiers(pairs: pd.DataFrame, order, alpha: float, adjust: str = "holm") -> pd.Series:
    """Tiers from a :func:`pairwise_table`: walking down ``order`` (best first), a new tier starts
    at the first player significantly behind the current tier's leader (adjusted p < ``alpha``).
    Every member of a tier is not significantly different from its leader."""
    col = {"holm": "p_holm", "bh": "p_bh"}[adjust]
    order = [str(p) for p in order]
    index = pd.Index(order)

    def positions(col):  # the distinct names looked up once (K names for K(K−1)/2 rows)
        codes, uniques = pd.factorize(pairs[col])
        return np.where(codes >= 0, index.get_indexer(uniques)[codes], -1)

    ia, ib = positions("player_a"), positions("player_b")
    known = (ia >= 0) & (ib >= 0)
    sig = np.zeros((len(order), len(order)), dtype=bool)  # sig[a, b]: a significantly ahead of b
    sig[ia[known], ib[known]] = pairs[col].to_numpy()[known] < alpha
    tiers = np.zeros(len(order), dtype=int)
    tier, leader = 0, None
    for i in range(len(order)):
        if leader is None or sig[leader, i]:
            tier, leader = tier + 1, i
        tiers[i] = tier
    return pd.Series(tiers, index=pd.Index(order, name="player"), name=f"tier_{adjust}")


def plot_pairwise(fit, players=None, top: int = 15, level: float | None = None, ax=None):
    """Heatmap of P(row beats column) for ``players`` (default: the ``top`` players by score);
    cells marked * are significant after Holm at 1 − level, the family being the shown players' pairs."""
    import matplotlib.pyplot as plt

    if players is None:
        order = np.argsort(-np.asarray(fit.score), kind="stable")[:top]
        players = [str(fit.players[i]) for i in order]
    level = fit.level if level is None else level
    mat = pairwise_matrix(fit, players, level)
    holm = pairwise_matrix(fit, players, level, value="p_holm")
    n = len(mat)
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.0 + 0.5 * n, 0.8 + 0.45 * n))
    else:
        fig = ax.figure
    vals = mat.to_numpy()
    spread = max(float(np.nanmax(np.abs(vals - 0.5))), 0.01)  # colour scale centred at 1/2
    im = ax.imshow(vals, cmap="RdBu_r", vmin=0.5 - spread, vmax=0.5 + spread)
    ax.set_xticks(range(n), mat.columns, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(n), mat.index, fontsize=7)
    for i in range(n):
        for j in range(n):
            if i != j:
                star = "*" if holm.iat[i, j] < 1 - level else ""
                ax.text(j, i, f"{mat.iat[i, j]:.2f}{star}", ha="center", va="center", fontsize=5)
    ax.set_xlabel("player_b")
    ax.set_ylabel("player_a")
    ax.set_title(f"P(player_a beats player_b); * Holm-significant at {1 - level:g}\n"
                 f"(family: the {n * (n - 1) // 2} pairs of these {n} players)", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.04)
    fig.tight_layout()
    return fig


# ====================================================================== the result object
def fit_diagnostics(fit) -> Diagnostics:
    """The fit's :class:`Diagnostics`; an object without them (scores from elsewhere) gets an
    ``exact`` record that says so in its method name."""
    d = getattr(fit, "diagnostics", None)
    if isinstance(d, Diagnostics):
        return d
    return Diagnostics.exact(f"rank analysis of a {getattr(fit, 'method', 'given')} fit without recorded diagnostics")


@dataclass(repr=False)  # the short repr of bayesrank.protocol.Result
class RankAnalysis(Result):
    """Rank point estimates, confidence sets, rank distributions and significance tiers of one fit."""

    # the columns repr and a notebook show
    _quick_columns = ("player", "score", "rank", "rank_lower", "rank_upper", "p_top1", "tier_holm")

    schema = "ranks"

    players: np.ndarray
    score: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    level: float
    fit_level: float
    fit_method: str
    interval: str
    simultaneous: RankSets
    marginal: RankSets | None  # None: not computed (``analyze_ranks(marginal=False)``)
    rank_probs: pd.DataFrame
    draw_intervals: pd.DataFrame
    draws_source: str
    n_draws: int
    top_k: tuple
    top_sets: dict
    pair_table: pd.DataFrame | None  # None: computed on first use of :attr:`pairs` by ``pair_table_of``
    diagnostics: Diagnostics
    settings: dict = field(default_factory=dict)
    exclusions: dict = field(default_factory=dict)  # the fit's rows excluded: {total, by_reason}
    pair_table_of: Any = field(default=None, repr=False, compare=False)

    @property
    def pairs(self) -> pd.DataFrame:
        """The :func:`pairwise_table` of every pair (K(K−1)/2 rows: computed when first read — the
        tiers, the JSON and the summary read it; the review's leaderboard does not)."""
        if self.pair_table is None:
            self.pair_table = self.pair_table_of()
        return self.pair_table

    @property
    def rank(self) -> np.ndarray:
        """Point rank by score: 1 + number of strictly higher scores."""
        return point_rank(self.score)

    def top_k_confidence_set(self, k: int) -> list[str]:
        """Players that may be among the true top k at confidence ``level``: ``{a : rank_lower(a) ≤ k}``
        from the simultaneous sets (csranks' ``cstaubest``). On the event that every true rank is in
        its set, each true top-k player has ``rank_lower ≤ rank ≤ k``, so the true top-k set is
        contained in this set with probability ≥ level. Best score first."""
        if not 1 <= int(k) <= len(self.players):
            raise InputError(f"k must be between 1 and {len(self.players)}, got {k}")
        order = np.lexsort((self.players.astype(str), -self.score))
        return [str(self.players[i]) for i in order if self.simultaneous.rank_lower[i] <= int(k)]

    def tiers(self, adjust: str = "holm") -> pd.Series:
        order = [str(self.players[i]) for i in np.lexsort((self.players.astype(str), -self.score))]
        return significance_tiers(self.pairs, order, 1 - self.level, adjust)

    def table(self, tiers: bool = True) -> pd.DataFrame:
        """player, score, lower, upper, rank, rank_lower/rank_upper (simultaneous set), marginal_rank_*
        (when computed), draws_rank_* (quantile range over the draws), p_top1, p_rank_le_k, tier_holm,
        tier_bh (not with ``tiers=False``: they need the pairwise table); by score.
        ``df.attrs["methods"]`` names the method of each rank range."""
        names = [str(p) for p in self.players]
        marginal = {} if self.marginal is None else {
            "marginal_rank_lower": self.marginal.rank_lower, "marginal_rank_upper": self.marginal.rank_upper}
        df = pd.DataFrame({
            "player": names, "score": self.score, "lower": self.lower, "upper": self.upper, "rank": self.rank,
            "rank_lower": self.simultaneous.rank_lower, "rank_upper": self.simultaneous.rank_upper, **marginal,
            "draws_rank_lower": self.draw_intervals.loc[names, "rank_lower"].to_numpy(),
            "draws_rank_upper": self.draw_intervals.loc[names, "rank_upper"].to_numpy(),
            "p_top1": self.rank_probs.loc[names, 1].to_numpy(),
        })
        for k in self.top_k:
            df[f"p_rank_le_{k}"] = prob_rank_at_most(self.rank_probs, k).loc[names].to_numpy()
        for adj in ADJUSTMENTS if tiers else ():
            df[f"tier_{adj}"] = self.tiers(adj).loc[names].to_numpy()
        df = df.sort_values(["score", "player"], ascending=[False, True], kind="stable").reset_index(drop=True)
        df.attrs["methods"] = self.methods()
        return df

    def methods(self) -> dict:
        return {
            "lower/upper": f"{self.interval} interval of the score at the fit's level {self.fit_level:.0%}",
            "rank": "position by point score (ties share the smaller rank)",
            "rank_lower/rank_upper": self.simultaneous.method,
            **({} if self.marginal is None else {"marginal_rank_lower/marginal_rank_upper": self.marginal.method}),
            "draws_rank_lower/draws_rank_upper": f"equal-tailed {self.level:.0%} quantile range of the rank over "
                                                 f"{self.n_draws} {self.draws_source} (no coverage guarantee)",
            "p_top1/p_rank_le_k": f"share of {self.n_draws} {self.draws_source}",
            "tier_holm/tier_bh": f"tiers: not significantly behind the tier leader, pairwise z-tests adjusted "
                                 f"with Holm / Benjamini-Hochberg at {1 - self.level:g}",
        }

    def findings(self) -> list[str]:
        """One line each: critical values, most probable top-k sets, top-k confidence sets, counts of
        significant pairs (shared by :meth:`summary` and the CLI)."""
        s = self.simultaneous
        alpha = 1 - self.level
        lines = [f"simultaneous critical value(s): {', '.join(f'{c:.3f}' for c in s.critical_values)} "
                 f"({s.critical}, {s.n_errors} error draws)"]
        for k, sets in self.top_sets.items():
            if len(sets):
                best = sets.iloc[0]
                lines.append(f"most probable top-{k} set (P = {best['probability']:.3f}): {', '.join(best['players'])}")
        for k in (1, *self.top_k):
            cs = self.top_k_confidence_set(k)
            lines.append(f"may be in the true top {k} ({self.level:.0%} simultaneous): {len(cs)} players"
                         + (f": {', '.join(cs)}" if len(cs) <= 12 else ""))
        n = {col: int((self.pairs[col] < alpha).sum()) for col in ("p_holm", "p_bh", "p_value")}
        lines.append(f"{len(self.pairs)} pairs; significant at {alpha:g}: Holm {n['p_holm']}, "
                     f"Benjamini-Hochberg {n['p_bh']}, unadjusted {n['p_value']}")
        return lines

    def summary(self, top: int | None = 20) -> str:
        t = self.table()
        head = [f"Rank analysis of a {self.fit_method} Bradley-Terry fit: {len(self.players)} players, "
                f"level {self.level:.0%}; {self.n_draws} {self.draws_source}"]
        head += [f"  {name}: {method}" for name, method in self.methods().items()]
        head += [f"  {line}" for line in self.findings()]
        shown = t if top is None else t.head(top)
        body = shown.to_string(index=False, float_format=lambda v: f"{v:.3f}")
        more = [f"... {len(t) - top} more players"] if top is not None and len(t) > top else []
        return "\n".join(head + [body] + more)

    def to_dict(self) -> dict:
        t = self.table()
        s = self.simultaneous
        return {
            **self._envelope(),
            "fit_method": self.fit_method,
            "interval": self.interval,
            "fit_level": float(self.fit_level),
            "level": float(self.level),
            "n_players": len(self.players),
            "rank_sets": {
                kind: {"method": rs.method, "kind": rs.kind, "critical": rs.critical, "stepdown": bool(rs.stepdown),
                       "n_errors": int(rs.n_errors), "critical_values": [float(c) for c in rs.critical_values]}
                for kind, rs in (("simultaneous", s), ("marginal", self.marginal)) if rs is not None
            },
            "draws": {"source": self.draws_source, "n_draws": int(self.n_draws)},
            "top_k": [int(k) for k in self.top_k],
            "players": [
                {
                    "player": r["player"], "score": float(r["score"]), "lower": float(r["lower"]),
                    "upper": float(r["upper"]), "rank": int(r["rank"]),
                    "rank_lower": int(r["rank_lower"]), "rank_upper": int(r["rank_upper"]),
                    **({} if self.marginal is None else {
                        "marginal_rank_lower": int(r["marginal_rank_lower"]),
                        "marginal_rank_upper": int(r["marginal_rank_upper"])}),
                    "draws_rank_lower": int(r["draws_rank_lower"]), "draws_rank_upper": int(r["draws_rank_upper"]),
                    "p_top1": float(r["p_top1"]),
                    "p_rank_le": {str(k): float(r[f"p_rank_le_{k}"]) for k in self.top_k},
                    "tier_holm": int(r["tier_holm"]), "tier_bh": int(r["tier_bh"]),
                }
                for _, r in t.iterrows()
            ],
            "top_sets": [
                {"k": int(k), "sets": [{"players": list(p), "probability": float(q)}
                                       for p, q in zip(sets["players"], sets["probability"])]}
                for k, sets in self.top_sets.items()
            ],
            "top_k_confidence_sets": [{"k": int(k), "players": self.top_k_confidence_set(k)} for k in (1, *self.top_k)],
            "pairwise": {
                "n_pairs": len(self.pairs),
                "alpha": float(1 - self.level),
                "n_significant": {
                    "unadjusted": int((self.pairs["p_value"] < 1 - self.level).sum()),
                    "holm": int((self.pairs["p_holm"] < 1 - self.level).sum()),
                    "bh": int((self.pairs["p_bh"] < 1 - self.level).sum()),
                },
            },
            "settings": self.settings,
            "n_excluded": int(self.exclusions.get("total", 0)),
            "excluded_by_reason": dict(self.exclusions.get("by_reason", {})),
        }

    def plot(self, ax=None, top: int | None = 40, **kwargs):
        """Rank spread: point rank (dot), simultaneous set (thick bar), draws' quantile range (thin
        line), for the ``top`` players by score."""
        import matplotlib.pyplot as plt

        t = self.table(tiers=False)
        if top is not None:
            t = t.head(top)
        n = len(t)
        if ax is None:
            fig, ax = plt.subplots(figsize=(7, 1.0 + 0.22 * n))
        else:
            fig = ax.figure
        y = np.arange(n)
        ax.hlines(y, t["rank_lower"] - 0.3, t["rank_upper"] + 0.3, color="tab:blue", lw=5, alpha=0.35,
                  label=f"simultaneous {self.level:.0%} set")
        ax.hlines(y + 0.2, t["draws_rank_lower"], t["draws_rank_upper"], color="tab:orange", lw=1.5,
                  label=f"{self.level:.0%} range over {self.draws_source}")
        ax.plot(t["rank"], y, "o", color="black", ms=4, label="rank (point score)")
        ax.set_yticks(y, t["player"], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("rank (1 = best)")
        ax.set_title(f"Rank spread ({self.fit_method} fit)")
        ax.legend(fontsize=7, loc="upper right")
        fig.tight_layout()
        return fig


def _draws_for(fit, draws, n_draws, seed):
    k = len(fit.players)
    if draws is not None:
        return _as_draws(np.asarray(draws)[:, :k], fit.players), "given draws"
    if fit.draws is not None:
        label = {"nuts": "NUTS posterior draws", "laplace": "Laplace posterior draws",
                 "bootstrap": "bootstrap replicates"}.get(fit.method, f"{fit.method} draws")
        return _as_draws(np.asarray(fit.draws)[:, :k], fit.players), label
    z = gaussian_errors(_fit_cov(fit), n_draws, seed + 1)
    return np.asarray(fit.score)[None, :] + z, "Gaussian N(θ̂, Σ) draws"


#: Gaussian draws behind the simultaneous critical value: 10,000, or 1,000 (csranks's default number of
#: replications) from 1,000 players on, where every draw costs K(K−1)/2 contrasts (4.5 million at 3,000)
N_SIM, N_SIM_LARGE, LARGE_BOARD = 10_000, 1_000, 1000


def default_n_sim(k: int) -> int:
    """The number of N(0, Σ) draws for the max-t critical value of a board of ``k`` players."""
    return N_SIM if k < LARGE_BOARD else N_SIM_LARGE


def analyze_ranks(
    fit, level: float | None = None, draws=None, *, critical: str = "auto", stepdown: bool = True,
    n_sim: int | None = None, n_draws: int = 4000, seed: int = 0, top_k=DEFAULT_TOP_K, n_top_sets: int = 5, marginal: bool = True,
    pairs_ahead: bool = True,
) -> RankAnalysis:
    """Everything about ranks for one :class:`~bayesrank.bt.result.LeaderboardFit`.

    ``critical``: ``"gaussian"`` (``n_sim`` draws from N(0, Σ) with Σ = ``fit.cov``; default
    :func:`default_n_sim`), ``"bootstrap"``
    (the fit's bootstrap replicates minus θ̂; needs a bootstrap fit) or ``"auto"`` (bootstrap for a
    bootstrap fit, else gaussian). ``draws`` for the rank distributions: given, else the fit's draws
    (posterior or bootstrap), else ``n_draws`` Gaussian draws around θ̂. ``level`` defaults to the
    fit's; the fit's ``lower``/``upper`` stay at the fit's level (``fit_level`` in the output).
    ``marginal=False`` skips the marginal rank sets (one stepdown per player: most of the time on a
    large leaderboard; the review's page shows the simultaneous sets only). ``pairs_ahead=False`` leaves
    the pairwise table's ``p_ahead`` NaN (:func:`pairwise_table`; the review shows no P(ahead))."""
    level = float(fit.level if level is None else level)
    _check_level(level)
    if critical not in ("auto", "gaussian", "bootstrap"):
        raise InputError(f"critical must be 'auto', 'gaussian' or 'bootstrap', got {critical!r}")
    k = len(fit.players)
    n_sim = default_n_sim(k) if n_sim is None else n_sim
    players = np.asarray([str(p) for p in fit.players], dtype=object)
    top_k = tuple(sorted({int(x) for x in top_k if 1 <= int(x) < k}))
    if critical == "auto":
        critical = "bootstrap" if fit.method == "bootstrap" and fit.draws is not None else "gaussian"
    if critical == "bootstrap":
        if fit.method != "bootstrap" or fit.draws is None:
            raise InputError(f"critical='bootstrap' needs a bootstrap fit (got method {fit.method!r})")
        errors = np.asarray(fit.draws, dtype=float)[:, :k] - np.asarray(fit.score)[None, :]
    else:
        errors = None
    cov = _fit_cov(fit)
    score = np.asarray(fit.score, dtype=float)
    kw = dict(level=level, errors=errors, n_sim=n_sim, seed=seed, stepdown=stepdown)
    simul = rank_confidence_sets(score, cov, players, simultaneous=True, **kw)
    marg = rank_confidence_sets(score, cov, players, simultaneous=False, **kw) if marginal else None
    d, source = _draws_for(fit, draws, n_draws, seed)
    probs = rank_probabilities(d, players)
    intervals = rank_quantile_intervals(d, players, level)
    top_sets = {kk: top_k_sets(d, players, kk, n_top_sets) for kk in top_k}

    def pairs():
        return pairwise_table(fit, None, level, draws=d, ahead=pairs_ahead)
    diag = fit_diagnostics(fit)
    diag = dataclasses.replace(diag, extra={**diag.extra, "rank_sets": f"{simul.critical} critical values from "
                                                                       f"{simul.n_errors} error draws"})
    return RankAnalysis(
        players=players, score=score, lower=np.asarray(fit.lower, dtype=float), upper=np.asarray(fit.upper, dtype=float),
        level=level, fit_level=float(fit.level), fit_method=fit.method, interval=fit.interval,
        simultaneous=simul, marginal=marg,
        rank_probs=probs, draw_intervals=intervals, draws_source=source, n_draws=len(d), top_k=top_k,
        top_sets=top_sets, pair_table=None, pair_table_of=pairs, diagnostics=diag,
        settings={"critical": critical, "stepdown": stepdown, "n_sim": n_sim, "n_draws": int(len(d)), "seed": seed},
        exclusions=dict(getattr(fit, "exclusions", None) or {}),
    )
