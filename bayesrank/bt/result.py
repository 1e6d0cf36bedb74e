"""One result type for every Bradley-Terry fit — every method, every model (plain, position effect,
features, clusters, weights): :class:`LeaderboardFit` (schema ``fit``).

Ranks (vocabulary of docs/glossary.md):

* ``rank``    = 1 + #{b : θ̂_b > θ̂_a}  (position by point score; equal scores share the smaller rank);
* ``rank_ci`` = 1 + #{b : b significantly ahead of a}, where b is significantly ahead of a when the
  pairwise contrast ``θ̂_b − θ̂_a > z · sd(θ̂_b − θ̂_a)`` with ``sd² = V_aa + V_bb − 2 V_ab`` from the
  fit's covariance ``V`` (correlations included) and ``z`` the two-sided normal quantile of
  ``level`` — the package's one rule for "significantly ahead";
* ``rank_ub`` = 1 + #{b : lower_b > upper_a}  (LMArena's "Rank (UB)": marginal intervals do not overlap).

Module-level imports are NumPy/pandas only: an MLE fit must not load PyMC, SciPy's stats or
matplotlib (they are imported inside the methods that need them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
import pandas as pd

from bayesrank.data.rows import PairRows
from bayesrank.protocol import Diagnostics, Result
from bayesrank.stats.ranksets import contrast_sd  # noqa: F401  (defined once, beside the rank sets)

ELO_PER_LOGIT = 400.0 / np.log(10.0)


def two_sided_z(level: float) -> float:
    """Normal quantile ``Φ⁻¹(1/2 + level/2)`` (1.95996… for level 0.95)."""
    return NormalDist().inv_cdf(0.5 + level / 2)


def point_rank(score: np.ndarray) -> np.ndarray:
    """1 + number of players with a strictly larger score (ties share the smaller rank)."""
    s = np.asarray(score, dtype=float)
    return 1 + (s[None, :] > s[:, None]).sum(axis=1)


def significantly_ahead(score: np.ndarray, cov: np.ndarray, level: float = 0.95) -> np.ndarray:
    """Boolean (K, K): ``[a, b]`` is True when b is significantly ahead of a,
    ``θ_b − θ_a > z · sd(θ_b − θ_a)``."""
    s = np.asarray(score, dtype=float)
    diff = s[None, :] - s[:, None]  # [a, b] = θ_b − θ_a
    return diff > two_sided_z(level) * contrast_sd(np.asarray(cov)[: len(s), : len(s)])


def rank_ci(score: np.ndarray, cov: np.ndarray, level: float = 0.95) -> np.ndarray:
    """CI-aware rank: 1 + number of players significantly ahead (pairwise-contrast rule)."""
    return 1 + significantly_ahead(score, cov, level).sum(axis=1)


def rank_ub(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """LMArena's "Rank (UB)": 1 + number of players whose lower bound exceeds this player's upper bound."""
    lower = np.asarray(lower)
    upper = np.asarray(upper)
    return 1 + (lower[None, :] > upper[:, None]).sum(axis=1)


def to_elo(theta: np.ndarray, players=None, anchor: tuple[str, float] | None = None, base: float = 1000.0):
    """Elo display scale: ``base + 400/ln(10) · θ`` (sum-to-zero θ), or shifted so that the
    ``anchor = (player, value)`` sits at ``value``."""
    elo = base + ELO_PER_LOGIT * np.asarray(theta)
    if anchor is not None:
        name, value = anchor
        idx = list(players).index(name)
        elo = elo - elo[..., idx : idx + 1] + value if elo.ndim > 1 else elo - elo[idx] + value
    return elo


@dataclass(frozen=True)
class Contrast:
    """Wald test of ``θ_a − θ_b`` with the fit's covariance (two-sided p-value, interval at ``level``)."""

    player_a: str
    player_b: str
    estimate: float
    se: float
    lower: float
    upper: float
    p_value: float
    level: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class RankedScores:
    """Ranks and significance of scored players, shared by every leaderboard result: needs
    ``players``, ``score``, ``lower``, ``upper``, ``level`` and ``cov`` (θ first, then any other
    parameters). One definition of ``rank``, ``rank_ci`` and ``rank_ub`` (docs/glossary.md)."""

    @property
    def z(self) -> float:
        return two_sided_z(self.level)

    @property
    def theta_cov(self) -> np.ndarray:
        k = len(self.players)
        return np.asarray(self.cov)[:k, :k]

    @property
    def sd(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.theta_cov), 0, None))

    @property
    def rank(self) -> np.ndarray:
        return point_rank(self.score)

    @property
    def rank_ci(self) -> np.ndarray:
        """1 + number of players significantly ahead (pairwise contrasts, covariance of the fit)."""
        return rank_ci(self.score, self.theta_cov, self.level)

    @property
    def rank_ub(self) -> np.ndarray:
        return rank_ub(self.lower, self.upper)


@dataclass(repr=False)  # the short repr of bayesrank.protocol.Result
class LeaderboardFit(RankedScores, Result):
    """Scores on the sum-to-zero logit scale with intervals, from one fit method of one model.

    ``cov`` is the covariance of every parameter ``φ = (θ, α, β, λ)`` used for every contrast:
    Fisher/sandwich/cluster-robust (MLE), inverse negative Hessian (MAP/Laplace), the bootstrap
    replicates' or the posterior draws' covariance. ``draws`` is an (S, P) array of φ for sampling
    methods, ``idata`` the NUTS ``DataTree``, ``ppc`` the posterior predictive check's per-row arrays.

    The coefficient block — ``features``, ``coef``, ``coef_lower``, ``coef_upper`` (β of the
    feature differences) — is empty without features; ``position`` holds the position effect α
    (``{coef, lower, upper}``) when the model has one. When the model is not the plain leaderboard
    (features, a position effect or importance weights), ``plain_score`` is the plain Bradley–Terry
    fit on the same comparisons (no features, no position effect, no weights) and the table shows
    each player's rank change.
    """

    # the columns repr and a notebook show
    _quick_columns = ("player", "score", "lower", "upper", "rank", "rank_ci", "plain_rank", "n_matches")

    schema = "fit"

    method: str
    ties: str
    players: np.ndarray
    score: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    counts: PairRows
    cov: np.ndarray
    diagnostics: Diagnostics
    level: float = 0.95
    interval: str = ""
    n_comparisons: float = 0.0
    n_excluded: int = 0
    exclusions: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    draws: np.ndarray | None = field(default=None, repr=False)
    idata: object | None = field(default=None, repr=False)
    ppc: dict | None = field(default=None, repr=False)
    settings: dict = field(default_factory=dict)
    features: list = field(default_factory=list)
    coef: np.ndarray = field(default_factory=lambda: np.zeros(0))
    coef_lower: np.ndarray = field(default_factory=lambda: np.zeros(0))
    coef_upper: np.ndarray = field(default_factory=lambda: np.zeros(0))
    position: dict | None = None
    plain_score: np.ndarray | None = None
    plain_method: str = "mle"
    transform: dict = field(default_factory=dict)
    n_rows: int = 0

    # ------------------------------------------------------------------ derived (see RankedScores)
    @property
    def rows(self) -> PairRows:
        """The pair rows the fit used (``counts``: the name of the zero-feature case)."""
        return self.counts

    @property
    def n_matches(self) -> np.ndarray:
        return self.counts.matches_per_player()

    @property
    def plain_rank(self) -> np.ndarray | None:
        return None if self.plain_score is None else point_rank(self.plain_score)

    @property
    def rank_change(self) -> np.ndarray | None:
        """``plain_rank − rank``: positive = the player moves up under the model's controls."""
        return None if self.plain_score is None else self.plain_rank - self.rank

    @property
    def coef_sd(self) -> np.ndarray:
        k = len(self.players) + (self.position is not None)
        return np.sqrt(np.clip(np.diag(self.cov)[k:k + len(self.features)], 0, None))

    def significance(self) -> pd.DataFrame:
        """Boolean matrix: row ``player`` a, column ``player_b`` b, True when b is significantly
        ahead of a (``θ_b − θ_a > z·sd(θ_b − θ_a)``). ``rank_ci = 1 + row sums``."""
        names = pd.Index([str(p) for p in self.players])
        m = significantly_ahead(self.score, self.theta_cov, self.level)
        return pd.DataFrame(m, index=names.rename("player"), columns=names.rename("player_b"))

    def contrast(self, a: str, b: str) -> Contrast:
        """``θ_a − θ_b`` with ``se = sd(θ_a − θ_b)`` from the covariance, its interval at ``level``
        and the two-sided Wald p-value ``2(1 − Φ(|est|/se))``."""
        ia, ib = self.counts.index_of(a), self.counts.index_of(b)
        v = self.theta_cov
        est = float(self.score[ia] - self.score[ib])
        se = float(np.sqrt(max(v[ia, ia] + v[ib, ib] - 2 * v[ia, ib], 0.0)))
        p = math.erfc(abs(est) / se / math.sqrt(2)) if se > 0 else float(est == 0)
        return Contrast(str(a), str(b), est, se, est - self.z * se, est + self.z * se, p, self.level)

    # ------------------------------------------------------------------ protocol
    def table(self, scale: str = "logit", anchor: tuple[str, float] | None = None) -> pd.DataFrame:
        """player, score, lower, upper, rank, rank_ci, rank_ub[, plain_score, plain_rank, rank_change],
        n_matches — sorted by score."""
        if scale not in ("logit", "elo"):
            raise ValueError(f"scale must be 'logit' or 'elo', got {scale!r}")
        a, b = 1.0, 0.0
        if scale == "elo":  # affine map θ -> a θ + b, with b set by the base or the anchor
            a = ELO_PER_LOGIT
            b = float(to_elo(self.score, self.players, anchor)[0] - a * self.score[0])
        cols = {
            "player": [str(p) for p in self.players],
            "score": a * self.score + b,
            "lower": a * self.lower + b,
            "upper": a * self.upper + b,
            "rank": self.rank,
            "rank_ci": self.rank_ci,
            "rank_ub": self.rank_ub,
        }
        if self.plain_score is not None:
            cols.update(plain_score=a * self.plain_score + b, plain_rank=self.plain_rank, rank_change=self.rank_change)
        cols["n_matches"] = self.n_matches
        df = pd.DataFrame(cols)
        df.attrs.update(scale=scale, method=self.method, interval=self.interval, level=self.level)
        return df.sort_values(["score", "player"], ascending=[False, True], kind="stable").reset_index(drop=True)

    def style_table(self) -> pd.DataFrame:
        """feature, coef, lower, upper, sd (logit per unit of each feature difference: per SD when
        standardised, the default); empty without features."""
        return pd.DataFrame({"feature": list(self.features), "coef": self.coef, "lower": self.coef_lower,
                             "upper": self.coef_upper, "sd": self.coef_sd})

    def model_description(self) -> str:
        """The model in words: plain, or with its position effect, features, weights and clusters."""
        parts = []
        if self.position is not None:
            parts.append("position effect")
        if self.features:
            parts.append(f"features {', '.join(map(str, self.features))}")
        if self.settings.get("reweight"):
            parts.append("inverse-propensity weights")
        if self.settings.get("cluster"):
            parts.append(f"clusters of {self.settings['cluster']}")
        return "Bradley-Terry" + (f" with {'; '.join(parts)}" if parts else "")

    def significance_rule(self) -> str:
        return (f"b significantly ahead of a: θ_b − θ_a > {self.z:.4g}·sd(θ_b − θ_a), sd from the "
                f"{self.method} covariance ({self.interval}); rank_ci = 1 + #significantly ahead; "
                "rank_ub = 1 + #(lower_b > upper_a)")

    def summary(self) -> str:
        head = (
            f"{self.model_description()} fit: method={self.method}, ties={self.ties}, interval={self.interval} "
            f"({self.level:.0%}), {len(self.players)} players, {self.n_comparisons:g} comparisons, "
            f"{self.n_excluded} excluded"
        )
        lines = [head, self.diagnostics.line()]
        if self.extra:
            lines.append("extra parameters: " + ", ".join(f"{k}={v:.4g}" for k, v in self.extra.items()))
        if self.position is not None:
            p = self.position
            lines.append(f"position effect α (logit for the side listed first): {p['coef']:.4f} "
                         f"[{p['lower']:.4f}, {p['upper']:.4f}]")
        if self.features:
            lines += ["coefficients (logit per unit of the feature difference):",
                      self.style_table().to_string(index=False, float_format=lambda v: f"{v:.4f}")]
        if self.plain_score is not None:
            moved = int(np.sum(self.rank_change != 0))
            lines.append(f"rank_change = plain rank ({self.plain_method}, same comparisons, no features, no position "
                         f"effect, no reweighting) − rank; {moved} of {len(self.players)} players move")
        lines.append(self.table().to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        lines.append(self.significance_rule())
        return "\n".join(lines)

    def to_dict(self) -> dict:
        t = self.table()
        players = []
        for r in t.itertuples(index=False):
            rec = {"player": r.player, "score": float(r.score), "lower": float(r.lower), "upper": float(r.upper),
                   "rank": int(r.rank), "rank_ci": int(r.rank_ci), "rank_ub": int(r.rank_ub)}
            if self.plain_score is not None:
                rec.update(plain_score=float(r.plain_score), plain_rank=int(r.plain_rank), rank_change=int(r.rank_change))
            rec["n_matches"] = float(r.n_matches)
            players.append(rec)
        out = {
            **self._envelope(),
            "method": self.method,
            "ties": self.ties,
            "interval": self.interval,
            "level": float(self.level),
            "scale": "logit, sum-to-zero",
            "model": self.model_description(),
            "significance_rule": self.significance_rule(),
            "n_players": int(len(self.players)),
            "n_comparisons": float(self.n_comparisons),
            "n_rows": int(self.n_rows or self.counts.n_rows),
            "n_excluded": int(self.n_excluded),
            "excluded_by_reason": dict((self.exclusions or {}).get("by_reason", {})),
            "exclusions": self.exclusions or {"total": int(self.n_excluded), "by_reason": {}},
            "extra": {k: float(v) for k, v in self.extra.items()},
            "settings": self.settings,
            "features": [{"feature": f, **self.transform.get(f, {})} for f in self.features],
            "players": players,
            "style": [
                {"feature": str(r.feature), "coef": float(r.coef), "lower": float(r.lower), "upper": float(r.upper)}
                for r in self.style_table().itertuples(index=False)
            ],
        }
        if self.position is not None:
            out["position"] = {k: float(v) for k, v in self.position.items()}
        if self.plain_score is not None:
            out["plain_method"] = self.plain_method
        return out

    def plot(self, ax=None, top: int | None = None, **kwargs):
        """Dot-and-whisker leaderboard: score with its interval per player (best at the top); with a
        plain comparison its scores as crosses."""
        import matplotlib.pyplot as plt

        t = self.table()
        if top:
            t = t.head(top)
        if ax is None:
            _, ax = plt.subplots(figsize=(6.5, max(2.5, 0.22 * len(t) + 1)))
        y = np.arange(len(t))[::-1]
        ax.errorbar(t["score"], y, xerr=[t["score"] - t["lower"], t["upper"] - t["score"]], fmt="o", ms=3.5,
                    capsize=2, lw=1, label=f"{self.model_description()} ({self.interval})", **kwargs)
        if self.plain_score is not None:
            ax.plot(t["plain_score"], y, "x", color="0.4", label="plain BT")
            ax.legend(loc="lower right", fontsize=7)
        ax.set_yticks(y, [f"{p} ({r})" for p, r in zip(t["player"], t["rank_ci"])], fontsize=7)
        ax.axvline(0.0, color="grey", lw=0.5, ls=":")
        ax.set_xlabel("score θ (logit, Σθ = 0)")
        ax.set_title(f"Bradley-Terry {self.method} ({self.interval}, {self.level:.0%}); (rank_ci)", fontsize=9)
        ax.figure.tight_layout()
        return ax.figure

    def to_datatree(self):
        """Labelled results: the NUTS ``DataTree`` (if any) plus an ``estimate`` group with
        score/lower/upper/cov over named dims ``player`` (and ``player_b`` for the covariance;
        ``coef`` over ``feature``); bootstrap and Laplace draws go in ``posterior`` so ArviZ can read them."""
        import xarray as xr

        players = [str(p) for p in self.players]
        k = len(players)
        data = {
            "score": ("player", self.score),
            "lower": ("player", self.lower),
            "upper": ("player", self.upper),
            "rank": ("player", self.rank),
            "rank_ci": ("player", self.rank_ci),
            "rank_ub": ("player", self.rank_ub),
            "cov": (("player", "player_b"), self.theta_cov),
        }
        coords = {"player": players, "player_b": players}
        if self.plain_score is not None:
            data["plain_score"] = ("player", self.plain_score)
        if self.features:
            data.update(coef=("feature", self.coef), coef_lower=("feature", self.coef_lower),
                        coef_upper=("feature", self.coef_upper))
            coords["feature"] = list(self.features)
        est = xr.Dataset(data, coords=coords,
                         attrs={"method": self.method, "ties": self.ties, "interval": self.interval, "level": self.level})
        if self.idata is not None:
            tree = self.idata.copy()
            tree["estimate"] = xr.DataTree(est)
            return tree
        children = {"estimate": xr.DataTree(est)}
        if self.draws is not None:
            post = {"theta": (("chain", "draw", "player"), self.draws[None, :, :k])}
            pcoords = {"chain": [0], "draw": np.arange(self.draws.shape[0]), "player": players}
            if self.features:
                a = k + (self.position is not None)
                post["beta"] = (("chain", "draw", "feature"), self.draws[None, :, a:a + len(self.features)])
                pcoords["feature"] = list(self.features)
            children["posterior"] = xr.DataTree(xr.Dataset(post, coords=pcoords))
        return xr.DataTree.from_dict({f"/{n}": t.dataset for n, t in children.items()})


def compare(*fits: LeaderboardFit) -> pd.DataFrame:
    """Side-by-side scores and interval widths; agreement with the first fit in ``df.attrs``."""
    from bayesrank.stats.kendall import kendall_tau_b

    base = fits[0]
    df = pd.DataFrame({"player": base.players})
    order = pd.Index(base.players)
    agreement = {}
    for f in fits:
        idx = pd.Index(f.players).get_indexer(order)
        name = f.method if f.method not in df.columns else f"{f.method}_{len(df.columns)}"
        df[name] = f.score[idx]
        df[f"{name}_width"] = (f.upper - f.lower)[idx]
        agreement[name] = {
            "max_abs_score_diff": float(np.max(np.abs(f.score[idx] - base.score))),
            "max_abs_width_diff": float(np.max(np.abs((f.upper - f.lower)[idx] - (base.upper - base.lower)))),
            "kendall_tau": kendall_tau_b(f.score[idx], base.score),
        }
    df = df.sort_values(base.method, ascending=False).reset_index(drop=True)
    df.attrs["agreement"] = agreement
    return df
