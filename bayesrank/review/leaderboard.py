"""The pairwise report's evidence sections: leaderboard with intervals and rank ranges, the rank
spread and pairwise-probability figures, the method-agreement table with NUTS diagnostics."""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.review.report import Section

TOP_FIGURE = 30
TOP_HEATMAP = 12


def leaderboard_table(fits: dict, level: float, seed: int) -> tuple[pd.DataFrame, str]:
    """player, score, lower, upper, rank, rank_ci, rank_ub, rank_lower, rank_upper, n_matches (default fit),
    with the simultaneous rank confidence sets of ``bayesrank.bt.ranks``; and the rank-set method."""
    from bayesrank.bt.ranks import analyze_ranks

    default = fits["default"]
    table = default.table()
    ranks = analyze_ranks(default, level=level, seed=seed)
    rt = ranks.table().set_index("player")
    table["rank_lower"] = rt.loc[table["player"], "rank_lower"].to_numpy()
    table["rank_upper"] = rt.loc[table["player"], "rank_upper"].to_numpy()
    return table, ranks


def rank_spread_draw(table: pd.DataFrame, top: int = TOP_FIGURE):
    """Dot-and-whisker: score with interval (left axis) for the top players, rank range in the label."""
    t = table.head(top).iloc[::-1]

    def draw(ax):
        y = np.arange(len(t))
        ax.errorbar(t["score"], y, xerr=[t["score"] - t["lower"], t["upper"] - t["score"]], fmt="o", ms=3,
                    color="#0969da", ecolor="#8c959f", capsize=2)
        ax.set_yticks(y, [f"{p}  [{lo}–{hi}]" for p, lo, hi in zip(t["player"], t["rank_lower"], t["rank_upper"])],
                      fontsize=7)
        ax.set_xlabel("score θ (logit, sum-to-zero) with interval; [rank range]")
        ax.grid(axis="x", alpha=0.3)

    return draw, (8, max(3, 0.22 * len(t) + 1))


def heatmap_draw(default_fit, players: list[str]):
    """P(row beats column) = expit(θ_row − θ_col) for the top players."""
    idx = [list(map(str, default_fit.players)).index(p) for p in players]
    th = default_fit.score[idx]
    p = 1 / (1 + np.exp(-(th[:, None] - th[None, :])))
    np.fill_diagonal(p, np.nan)

    def draw(ax):
        im = ax.imshow(p, vmin=0, vmax=1, cmap="RdBu_r")
        ax.set_xticks(range(len(players)), players, rotation=60, ha="right", fontsize=7)
        ax.set_yticks(range(len(players)), players, fontsize=7)
        for i in range(len(players)):
            for j in range(len(players)):
                if i != j:
                    ax.text(j, i, f"{p[i, j]:.2f}", ha="center", va="center", fontsize=6)
        ax.figure.colorbar(im, ax=ax, shrink=0.8, label="P(row beats column)")

    n = len(players)
    return draw, (1.0 + 0.55 * n, 0.5 + 0.5 * n)


def agreement_table(fits: dict) -> pd.DataFrame:
    """Each method against MLE/default: max score and interval-width differences and Kendall τ."""
    from bayesrank.bt import compare

    order = [k for k in ("default", "fisher", "sandwich", "bootstrap", "map", "laplace", "nuts") if k in fits]
    agreement = compare(*(fits[k] for k in order)).attrs["agreement"]
    rows = []
    for key, (name, v) in zip(order, agreement.items()):
        rows.append({"method": key, "interval": fits[key].interval, **v,
                     "converged": fits[key].diagnostics.converged})
    return pd.DataFrame(rows)


def sections(fits: dict, comps, level: float, seed: int, graph_advice: str) -> tuple[list[Section], pd.DataFrame]:
    default = fits["default"]
    table, ranks = leaderboard_table(fits, level, seed)
    top = list(table["player"].head(TOP_HEATMAP))
    lb = Section("leaderboard", "Leaderboard",
                 text=[f"{len(table)} players; scores on the sum-to-zero logit scale with {default.interval} "
                       f"{level:.0%} intervals (ties: {default.ties}). rank = position by score; rank_ci = 1 + players "
                       f"significantly ahead (pairwise contrast); rank_ub = LMArena's marginal-overlap rule; "
                       f"[rank_lower, rank_upper] = {ranks.methods()['rank_lower/rank_upper']}."],
                 tables=[("leaderboard (top 60)", table)],
                 figures=[("rank spread: score with interval, simultaneous rank range in brackets",
                           *rank_spread_draw(table)),
                          (f"pairwise P(row beats column) for the top {len(top)}", *heatmap_draw(default, top))],
                 data={"interval": default.interval, "rank_methods": ranks.methods()})
    agr = agreement_table(fits)
    text = ["Each method's scores and interval widths against the default MLE fit (all players)."]
    data = {"agreement": agr.to_dict(orient="records")}
    nuts = fits.get("nuts")
    if nuts is not None:
        d = nuts.diagnostics
        text.append(f"NUTS: {d.line()}.")
        extra = d.extra
        if "ppc_share_outside_95" in extra:
            text.append(f"Posterior predictive check: {extra['ppc_share_outside_95']:.1%} of pairs outside their 95% "
                        f"replicated win-rate interval; PSIS-LOO elpd {extra.get('loo_elpd', float('nan')):.1f} "
                        f"(max Pareto k {extra.get('loo_pareto_k_max', float('nan')):.2f}).")
        data["nuts_diagnostics"] = d.to_dict()
    methods = Section("methods", "How the fit methods agree", text=text, tables=[("method agreement", agr)], data=data)
    counts = default.counts
    ties = float(counts.ties.sum()) if hasattr(counts, "ties") else float("nan")
    data_section = Section("data", "Data", text=[
        f"{default.n_comparisons:,.0f} comparisons among {len(default.players)} players in {counts.n_pairs:,} pairs; "
        f"{ties / max(default.n_comparisons, 1):.1%} ties; {default.n_excluded} rows excluded.",
        f"Comparison graph: {graph_advice}"], data={"n_comparisons": default.n_comparisons,
                                                    "n_players": len(default.players), "n_pairs": counts.n_pairs})
    return [lb, methods, data_section], table, ranks
