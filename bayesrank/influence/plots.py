"""Figures of an audit: influence distribution, objective vs budget (predicted and refit),
player-removal displacement vs degree."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd


def plot_influence_distribution(state, objective, ax=None):
    """Histogram of per-match first-order drop influence on ``objective`` over all matches."""
    from bayesrank.influence.scores import all_cell_influence

    infl = all_cell_influence(state, objective)
    counts = state.counts.counts
    mask = counts > 0
    ax = ax or plt.subplots(figsize=(6, 4))[1]
    ax.hist(infl[mask], bins=60, weights=counts[mask], color="tab:blue")
    ax.set_yscale("log")
    ax.set_xlabel(f"change of {objective.name} when one match is dropped (first order)")
    ax.set_ylabel("matches")
    return ax


def plot_budget_curves(audits: dict, ax=None):
    """Objective value vs actions used, per action (``{action: AuditResult}``): 1sN prediction
    before each step and exact refit after."""
    ax = ax or plt.subplots(figsize=(6, 4))[1]
    for action, res in audits.items():
        curve = res.curve if isinstance(res.curve, pd.DataFrame) else pd.DataFrame(res.curve)
        line = ax.plot(curve["budget"], curve["refit"], marker="o", ms=3, label=f"{action} (refit)")[0]
        ax.plot(curve["budget"], curve["predicted"], ls="--", color=line.get_color(), label=f"{action} (1sN predicted)")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xlabel("actions (matches)")
    ax.set_ylabel("objective (break below 0)")
    ax.legend(fontsize=7)
    return ax


def plot_player_removal(table: pd.DataFrame, ax=None):
    ax = ax or plt.subplots(figsize=(6, 4))[1]
    t = table.dropna(subset=["displaced"])
    ax.scatter(t["degree"], t["displaced"], s=12, label="exact refit")
    ax.scatter(t["degree"], t["displaced_newton"], s=12, marker="x", label="group Newton")
    top = t.sort_values("displaced", ascending=False).head(3)
    for _, row in top.iterrows():
        ax.annotate(str(row["player"])[:20], (row["degree"], row["displaced"]), fontsize=7)
    ax.set_xlabel("degree (matches of the removed player)")
    ax.set_ylabel("players whose rank changes")
    ax.legend(fontsize=7)
    return ax


def save_audit_plots(report, outdir) -> list[Path]:
    """Write the figures of an :class:`~bayesrank.influence.result.AuditReport` to ``outdir``."""
    outdir = Path(outdir)
    paths = []
    figures = [("influence_distribution.png", lambda ax: plot_influence_distribution(report.state, report.influence_objective(), ax)),
               ("objective_vs_budget.png", lambda ax: plot_budget_curves(report.audits, ax))]
    if report.player_removal is not None:
        figures.append(("player_removal.png", lambda ax: plot_player_removal(report.player_removal, ax)))
    for name, draw in figures:
        fig, ax = plt.subplots(figsize=(6, 4))
        draw(ax)
        fig.tight_layout()
        paths.append(outdir / name)
        from bayesrank.outputs import save_figure

        try:
            save_figure(fig, paths[-1], dpi=110)
        finally:
            plt.close(fig)
    return paths
