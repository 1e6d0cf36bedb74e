"""Result of a style-controlled Bradley–Terry fit: :class:`StyleFit` (the package's result protocol)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.bt.result import RankedScores, point_rank
from bayesrank.protocol import Diagnostics, Result


@dataclass
class StyleFit(RankedScores, Result):
    """Style-adjusted scores (sum-to-zero logit scale) with intervals, style coefficients, and the
    plain Bradley–Terry fit on the same battles (no style features, no reweighting: the default
    leaderboard) for each player's rank change.

    ``cov`` is the covariance of ``(θ, β)``; ``draws`` (S, K+p) for bootstrap/Laplace/NUTS;
    ``plain_score`` the plain fit (same battles and ties; no features, no importance weights).
    """

    schema = "style_fit"

    method: str
    ties: str
    players: np.ndarray
    score: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    features: list
    coef: np.ndarray
    coef_lower: np.ndarray
    coef_upper: np.ndarray
    cov: np.ndarray
    plain_score: np.ndarray
    diagnostics: Diagnostics
    n_matches: np.ndarray
    level: float = 0.95
    interval: str = ""
    plain_method: str = "mle"
    n_comparisons: float = 0.0
    n_rows: int = 0
    n_excluded: int = 0
    exclusions: dict = field(default_factory=dict)
    transform: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    draws: np.ndarray | None = field(default=None, repr=False)
    idata: object | None = field(default=None, repr=False)

    # ------------------------------------------------------------------ derived (rank, rank_ci, rank_ub: RankedScores)
    def significance_rule(self) -> str:
        return (f"b significantly ahead of a: θ_b − θ_a > {self.z:.4g}·sd(θ_b − θ_a), sd from the "
                f"{self.method} covariance ({self.interval}) of the battle-level fit; rank_ci = 1 + "
                "#significantly ahead; rank_ub = 1 + #(lower_b > upper_a)")

    @property
    def plain_rank(self) -> np.ndarray:
        return point_rank(self.plain_score)

    @property
    def rank_change(self) -> np.ndarray:
        """``plain_rank − rank``: positive = the player moves up under style control."""
        return self.plain_rank - self.rank

    @property
    def coef_sd(self) -> np.ndarray:
        k = len(self.players)
        return np.sqrt(np.clip(np.diag(self.cov)[k:], 0, None))

    # ------------------------------------------------------------------ protocol
    def table(self) -> pd.DataFrame:
        """player, score, lower, upper, rank, rank_ci, rank_ub, plain_score, plain_rank, rank_change, n_matches."""
        df = pd.DataFrame({
            "player": self.players, "score": self.score, "lower": self.lower, "upper": self.upper,
            "rank": self.rank, "rank_ci": self.rank_ci, "rank_ub": self.rank_ub, "plain_score": self.plain_score,
            "plain_rank": self.plain_rank, "rank_change": self.rank_change, "n_matches": self.n_matches,
        })
        return df.sort_values(["score", "player"], ascending=[False, True], kind="stable").reset_index(drop=True)

    def style_table(self) -> pd.DataFrame:
        """feature, coef, lower, upper, sd (logit per standardised unit of the feature difference)."""
        return pd.DataFrame({"feature": self.features, "coef": self.coef, "lower": self.coef_lower,
                             "upper": self.coef_upper, "sd": self.coef_sd})

    def summary(self) -> str:
        moved = int(np.sum(self.rank_change != 0))
        lines = [
            f"Style-controlled Bradley-Terry: method={self.method}, ties={self.ties}, interval={self.interval} "
            f"({self.level:.0%}), {len(self.players)} players, {self.n_comparisons:g} battles in {self.n_rows} rows, "
            f"{self.n_excluded} excluded",
            self.diagnostics.line(),
            "style coefficients (logit per SD of the feature difference):",
            self.style_table().to_string(index=False, float_format=lambda v: f"{v:.4f}"),
            f"rank_change = plain rank ({self.plain_method}, same battles, no style features, no reweighting) − rank; "
            f"{moved} of {len(self.players)} players move",
            self.table().to_string(index=False, float_format=lambda v: f"{v:.3f}"),
        ]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        t = self.table()
        return {
            **self._envelope(),
            "method": self.method,
            "ties": self.ties,
            "interval": self.interval,
            "level": self.level,
            "scale": "logit, sum-to-zero",
            "significance_rule": self.significance_rule(),
            "n_players": len(self.players),
            "extra": {},
            "plain_method": self.plain_method,
            "n_comparisons": self.n_comparisons,
            "n_rows": int(self.n_rows),
            "n_excluded": int(self.n_excluded),
            "excluded_by_reason": dict(dict(self.exclusions).get("by_reason", {})),
            "exclusions": dict(self.exclusions),
            "settings": dict(self.settings),
            "features": [{"feature": f, **self.transform.get(f, {})} for f in self.features],
            "players": [
                {"player": str(r.player), "score": float(r.score), "lower": float(r.lower), "upper": float(r.upper),
                 "rank": int(r.rank), "rank_ci": int(r.rank_ci), "rank_ub": int(r.rank_ub),
                 "plain_score": float(r.plain_score),
                 "plain_rank": int(r.plain_rank), "rank_change": int(r.rank_change), "n_matches": float(r.n_matches)}
                for r in t.itertuples(index=False)
            ],
            "style": [
                {"feature": str(r.feature), "coef": float(r.coef), "lower": float(r.lower), "upper": float(r.upper)}
                for r in self.style_table().itertuples(index=False)
            ],
        }

    def plot(self, ax=None, top: int | None = 30, **kwargs):
        """Style-controlled scores with intervals (dots) next to the plain scores (crosses)."""
        import matplotlib.pyplot as plt

        t = self.table().head(top) if top else self.table()
        if ax is None:
            fig, ax = plt.subplots(figsize=(7, 0.25 * len(t) + 1.5))
        else:
            fig = ax.figure
        y = np.arange(len(t))[::-1]
        ax.errorbar(t["score"], y, xerr=[t["score"] - t["lower"], t["upper"] - t["score"]], fmt="o", ms=4,
                    label=f"style-controlled ({self.interval})")
        ax.plot(t["plain_score"], y, "x", color="0.4", label="plain BT")
        ax.set_yticks(y, t["player"])
        ax.set_xlabel("score (logit, sum-to-zero)")
        ax.legend(loc="lower right", fontsize=8)
        return fig

    def to_datatree(self):
        """Labelled estimates (dims ``player``, ``feature``); draws as a ``posterior`` group."""
        import xarray as xr

        players = [str(p) for p in self.players]
        k = len(players)
        est = xr.Dataset(
            {"score": ("player", self.score), "lower": ("player", self.lower), "upper": ("player", self.upper),
             "rank": ("player", self.rank), "plain_score": ("player", self.plain_score),
             "coef": ("feature", self.coef), "coef_lower": ("feature", self.coef_lower),
             "coef_upper": ("feature", self.coef_upper)},
            coords={"player": players, "feature": list(self.features)},
            attrs={"method": self.method, "ties": self.ties, "interval": self.interval, "level": self.level},
        )
        if self.idata is not None:
            tree = self.idata.copy()
            tree["estimate"] = xr.DataTree(est)
            return tree
        groups = {"/estimate": est}
        if self.draws is not None:
            groups["/posterior"] = xr.Dataset(
                {"theta": (("chain", "draw", "player"), self.draws[None, :, :k]),
                 "beta": (("chain", "draw", "feature"), self.draws[None, :, k:])},
                coords={"chain": [0], "draw": np.arange(self.draws.shape[0]), "player": players,
                        "feature": list(self.features)})
        return xr.DataTree.from_dict(groups)
