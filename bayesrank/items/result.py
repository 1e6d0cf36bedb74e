"""The items leaderboard as a result on the package's protocol (schema ``items``; ``bayesrank items``).

:func:`analyze_items` gives, for a models × items matrix: each model's mean score with its interval
(Wilson and Jeffreys for 0/1 scores), simultaneous rank confidence sets and tie groups from the
paired covariance of the means, and every pair's paired test (exact McNemar / paired t /
cluster-robust Wald, two-sided) with Holm and Benjamini–Hochberg adjustment over all pairs
(:mod:`bayesrank.items.frequentist`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.items.data import ItemScores
from bayesrank.protocol import Diagnostics, Result


@dataclass(repr=False)  # the short repr of bayesrank.protocol.Result
class ItemsAnalysis(Result):
    """Leaderboard (``table()``), pairwise tests (``pairs``), rank sets and tie groups of per-item results."""

    # the columns repr and a notebook show
    _quick_columns = ("player", "score", "lower", "upper", "rank", "rank_lower", "rank_upper", "tie_group")

    schema = "items"

    data: ItemScores
    leaderboard: pd.DataFrame
    pairs: pd.DataFrame
    level: float
    interval: str
    rank_method: str
    notes: list = field(default_factory=list)

    @property
    def diagnostics(self) -> Diagnostics:
        return Diagnostics.exact("items leaderboard (paired tests, rank sets)")

    def table(self) -> pd.DataFrame:
        return self.leaderboard.copy()

    def summary(self) -> str:
        d = self.data
        alpha = 1 - self.level
        head = [f"{d.n_models} models × {d.n_items:,} items" + (f" of {d.benchmark}" if d.benchmark else "")
                + (f" in {d.n_clusters} clusters" if d.clusters is not None else ""),
                f"  score interval: {self.interval}; rank sets: {self.rank_method}",
                f"  {len(self.pairs)} pairs, test {self.pairs['test'].iloc[0]}; significant at {alpha:g}: Holm "
                f"{int((self.pairs['p_holm'] < alpha).sum())}, unadjusted {int((self.pairs['p_value'] < alpha).sum())}"]
        head += [f"  note: {n}" for n in self.notes]
        with pd.option_context("display.width", 160, "display.max_columns", 20):
            body = self.leaderboard.head(40).to_string(index=False, float_format=lambda v: f"{v:.4g}")
        return "\n".join(head + [body])

    def to_dict(self) -> dict:
        d = self.data
        return {
            **self._envelope(), "level": float(self.level), "interval": self.interval, "rank_sets": self.rank_method,
            "n_models": d.n_models, "n_items": d.n_items, "n_clusters": d.n_clusters, "binary": d.binary,
            "benchmark": d.benchmark, "exclusions": d.exclusions.to_dict(), "notes": list(self.notes),
            "players": self.leaderboard.to_dict(orient="records"),
            "pairs": self.pairs.to_dict(orient="records"),
        }

    def plot(self, ax=None, top: int = 40, **kwargs):
        """Mean score with its interval (bar) and the simultaneous rank set (text), best first."""
        import matplotlib.pyplot as plt

        t = self.leaderboard.head(top)
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 1.0 + 0.22 * len(t)))
        y = np.arange(len(t))
        ax.hlines(y, t["lower"], t["upper"], color="tab:blue", lw=3, alpha=0.6, label=self.interval)
        ax.plot(t["score"], y, "o", color="black", ms=4, label="mean score")
        ax.set_yticks(y, [f"{p}  [{lo}–{hi}]" for p, lo, hi in zip(t["player"], t["rank_lower"], t["rank_upper"])],
                      fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("mean score (rank set in brackets)")
        ax.legend(fontsize=7)
        ax.figure.tight_layout()
        return ax.figure


def analyze_items(data: ItemScores, level: float = 0.95, seed: int = 0, notes=()) -> ItemsAnalysis:
    """Leaderboard, all pairwise paired tests (Holm/BH over the pairs), rank sets and tie groups."""
    from bayesrank.items.frequentist import mean_covariance, model_table, pair_stats, rank_sets
    from bayesrank.stats.ranksets import adjust_pvalues

    means = data.means()
    cov = mean_covariance(data)
    table = model_table(data, level)
    interval = table.attrs["interval"]
    rs, groups = rank_sets(data, level, seed)
    table["rank"] = 1 + (means[None, :] > means[:, None]).sum(axis=1)
    table["rank_lower"], table["rank_upper"] = rs.rank_lower, rs.rank_upper
    table["tie_group"] = groups.loc[table["player"]].to_numpy()
    order = np.argsort(-means, kind="stable")
    table = table.iloc[order].reset_index(drop=True)
    ia, ib = np.triu_indices(len(means), 1)
    ahead = means[ia] >= means[ib]
    a, b = np.where(ahead, ia, ib), np.where(ahead, ib, ia)
    t = pair_stats(data, a, b, level, cov)
    players = np.asarray([str(m) for m in data.models], dtype=object)
    pairs = pd.DataFrame({"player_a": players[a], "player_b": players[b], "diff": t["estimate"], "se": t["se"],
                          "lower": t["lower"], "upper": t["upper"], "test": t["test"], "p_value": t["p_two_sided"]})
    if "n10" in t:
        pairs["n10"], pairs["n01"] = t["n10"].to_numpy(), t["n01"].to_numpy()
    pairs["p_holm"] = adjust_pvalues(pairs["p_value"].to_numpy(), "holm")
    pairs["p_bh"] = adjust_pvalues(pairs["p_value"].to_numpy(), "bh")
    pairs = pairs.sort_values(["p_value", "player_a", "player_b"], kind="stable").reset_index(drop=True)
    return ItemsAnalysis(data, table, pairs, level, interval, rs.method, list(notes))
