"""One result type for every Bradley-Terry fit method: :class:`LeaderboardFit`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr
from scipy.stats import kendalltau

from bayesrank.data.aggregate import PairCounts
from bayesrank.report import to_jsonable

ELO_PER_LOGIT = 400.0 / np.log(10.0)


def ci_aware_rank(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Rank = 1 + number of players whose lower bound exceeds this player's upper bound."""
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


@dataclass
class LeaderboardFit:
    """Scores on the sum-to-zero logit scale with intervals, from one fit method.

    ``cov`` is the covariance of θ (Fisher/sandwich/Laplace/bootstrap/posterior), ``draws`` an
    (S, K) array for sampling methods, ``idata`` the NUTS ``DataTree``.
    """

    method: str
    ties: str
    players: np.ndarray
    score: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    counts: PairCounts
    cov: np.ndarray | None = None
    level: float = 0.95
    interval: str = ""
    n_comparisons: float = 0.0
    n_excluded: int = 0
    exclusions: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    draws: np.ndarray | None = None
    idata: object | None = None
    diagnostics: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)

    # ------------------------------------------------------------------ derived
    @property
    def sd(self) -> np.ndarray:
        if self.cov is not None:
            return np.sqrt(np.clip(np.diag(self.cov)[: len(self.players)], 0, None))
        return (self.upper - self.lower) / (2 * 1.959963984540054)

    @property
    def rank(self) -> np.ndarray:
        return ci_aware_rank(self.lower, self.upper)

    def table(self, scale: str = "logit", anchor: tuple[str, float] | None = None) -> pd.DataFrame:
        """player, score, lower, upper, rank (CI-aware), n_matches — sorted by score."""
        if scale not in ("logit", "elo"):
            raise ValueError(f"scale must be 'logit' or 'elo', got {scale!r}")
        a, b = 1.0, 0.0
        if scale == "elo":  # affine map θ -> a θ + b, with b set by the base or the anchor
            a = ELO_PER_LOGIT
            b = float(to_elo(self.score, self.players, anchor)[0] - a * self.score[0])
        df = pd.DataFrame(
            {
                "player": self.players,
                "score": a * self.score + b,
                "lower": a * self.lower + b,
                "upper": a * self.upper + b,
                "rank": self.rank,
                "n_matches": self.counts.matches_per_player(),
            }
        )
        return df.sort_values(["score", "player"], ascending=[False, True], kind="stable").reset_index(drop=True)

    def summary(self) -> str:
        head = (
            f"Bradley-Terry fit: method={self.method}, ties={self.ties}, interval={self.interval} "
            f"({self.level:.0%}), {len(self.players)} players, {self.n_comparisons:g} comparisons, "
            f"{self.n_excluded} excluded"
        )
        lines = [head]
        if self.extra:
            lines.append("extra parameters: " + ", ".join(f"{k}={v:.4g}" for k, v in self.extra.items()))
        if self.diagnostics:
            simple = {k: v for k, v in self.diagnostics.items() if isinstance(v, (int, float, str, bool))}
            if simple:
                lines.append("diagnostics: " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in simple.items()))
        lines.append(self.table().to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        return "\n".join(lines)

    __str__ = summary

    def to_dict(self) -> dict:
        t = self.table()
        return {
            "method": self.method,
            "ties": self.ties,
            "interval": self.interval,
            "level": self.level,
            "scale": "logit, sum-to-zero",
            "n_comparisons": self.n_comparisons,
            "n_excluded": self.n_excluded,
            "exclusions": self.exclusions,
            "extra": self.extra,
            "diagnostics": {k: v for k, v in self.diagnostics.items() if not isinstance(v, (np.ndarray, dict))},
            "settings": self.settings,
            "players": [
                {
                    "name": str(r.player), "score": r.score, "lower": r.lower, "upper": r.upper,
                    "rank": int(r.rank), "n_matches": r.n_matches,
                }
                for r in t.itertuples(index=False)
            ],
        }

    def to_json(self, path: str | Path | None = None) -> str:
        text = json.dumps(to_jsonable(self.to_dict()), indent=2)
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text)
        return text

    def to_datatree(self) -> xr.DataTree:
        """Labelled results: the NUTS ``DataTree`` (if any) plus an ``estimate`` group with
        score/lower/upper/cov over named dims ``player`` (and ``player_b`` for the covariance);
        bootstrap and Laplace draws go in ``posterior`` so ArviZ can read them."""
        players = [str(p) for p in self.players]
        k = len(players)
        est = xr.Dataset(
            {
                "score": ("player", self.score),
                "lower": ("player", self.lower),
                "upper": ("player", self.upper),
                "rank": ("player", self.rank),
            },
            coords={"player": players},
            attrs={"method": self.method, "ties": self.ties, "interval": self.interval, "level": self.level},
        )
        if self.cov is not None:
            est["cov"] = (("player", "player_b"), self.cov[:k, :k])
            est = est.assign_coords(player_b=players)
        if self.idata is not None:
            tree = self.idata.copy()
            tree["estimate"] = xr.DataTree(est)
            return tree
        children = {"estimate": xr.DataTree(est)}
        if self.draws is not None:
            post = xr.Dataset(
                {"theta": (("chain", "draw", "player"), self.draws[None, :, :k])},
                coords={"chain": [0], "draw": np.arange(self.draws.shape[0]), "player": players},
            )
            children["posterior"] = xr.DataTree(post)
        return xr.DataTree.from_dict({f"/{n}": t.dataset for n, t in children.items()})


def compare(*fits: LeaderboardFit) -> pd.DataFrame:
    """Side-by-side scores and interval widths; agreement with the first fit in ``df.attrs``."""
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
            "kendall_tau": float(kendalltau(f.score[idx], base.score).statistic),
        }
    df = df.sort_values(base.method, ascending=False).reset_index(drop=True)
    df.attrs["agreement"] = agreement
    return df
