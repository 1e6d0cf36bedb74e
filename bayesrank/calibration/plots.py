"""Figures: verbal and token reliability diagrams side by side; gap forest plot across cells."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _binned(c, y, n_bins=10):
    edges = np.linspace(0, 1, n_bins + 1)
    ids = np.searchsorted(edges[1:-1], c)
    n = np.bincount(ids, minlength=n_bins)
    sc = np.bincount(ids, weights=c, minlength=n_bins)
    sy = np.bincount(ids, weights=y, minlength=n_bins)
    m = n > 0
    return sc[m] / n[m], sy[m] / n[m], n[m]


def reliability_diagrams(verbal, token, correct, *, title: str = "", posterior=None, cell: str | None = None,
                         n_bins: int = 10, ax=None):
    """Two panels (verbal | token): binned accuracy vs confidence (marker area ∝ bin size), the
    diagonal, and — if a fitted :class:`~bayesrank.calibration.posterior.GapPosterior` is given —
    per bin the paired model's expected accuracy (posterior mean, 90% band) and the posterior
    predictive 90% interval of the bin's observed accuracy. ``ax``: two axes. Returns the Figure."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig, axes = plt.subplots(1, 2, figsize=(9, 4.2), sharey=True)
    else:
        axes = ax
        fig = axes[0].figure
    y = np.asarray(correct, float)
    for a, sig, c in ((axes[0], "verbal", np.asarray(verbal, float)), (axes[1], "token", np.asarray(token, float))):
        a.plot([0, 1], [0, 1], color="grey", lw=1, ls="--")
        if posterior is not None and cell is not None:
            rel = posterior.reliability(cell, sig, n_bins=n_bins)
            a.fill_between(rel["confidence"], rel["expected_lo"], rel["expected_hi"], color="C0", alpha=0.25, lw=0,
                           label="model accuracy per bin (90%)")
            a.plot(rel["confidence"], rel["expected_mean"], color="C0", lw=1.5)
            mid = rel["expected_mean"]
            a.errorbar(rel["confidence"], mid, yerr=[(mid - rel["rep_lo"]).clip(lower=0), (rel["rep_hi"] - mid).clip(lower=0)],
                       fmt="none", ecolor="C1", elinewidth=3, alpha=0.5, label="posterior predictive (90%)")
        bc, by_, bn = _binned(c, y, n_bins)
        a.scatter(bc, by_, s=20 + 300 * bn / bn.sum(), color="k", zorder=3, label="observed bins")
        a.set_xlim(0, 1)
        a.set_ylim(0, 1)
        a.set_xlabel(f"{sig} confidence")
        a.set_title(f"{title}: {sig}" if title and ax is not None else sig)
    axes[0].set_ylabel("accuracy")
    axes[0].legend(loc="upper left", fontsize=7)
    if title and ax is None:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def gap_forest(gaps: pd.DataFrame, *, label_cols=None, ax=None):
    """Forest plot of g per protocol cell: bootstrap CI (black) and posterior interval (blue).
    ``gaps`` is ``CalibrationReport.table()`` (gap, gap_lower, gap_upper[, posterior_*])."""
    import matplotlib.pyplot as plt

    label_cols = label_cols or [c for c in gaps.columns if c not in ("n", "protocol_missing") and gaps[c].dtype == object
                                and not c.startswith("card_")]
    labels = gaps[label_cols].astype(str).agg(" | ".join, axis=1).tolist()
    k = len(gaps)
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 0.32 * k + 1.2))
    else:
        fig = ax.figure
    ypos = np.arange(k)[::-1]
    ax.axvline(0, color="grey", lw=1, ls="--")
    ax.errorbar(gaps["gap"], ypos + 0.12, xerr=[gaps["gap"] - gaps["gap_lower"], gaps["gap_upper"] - gaps["gap"]], fmt="o",
                color="k", ms=4, label="plug-in, paired bootstrap interval")
    if "posterior_mean" in gaps and gaps["posterior_mean"].notna().any():
        pm_ = gaps["posterior_mean"]
        ax.errorbar(pm_, ypos - 0.12, xerr=[pm_ - gaps["posterior_lower"], gaps["posterior_upper"] - pm_], fmt="s", color="C0",
                    ms=4, label="posterior mean and interval (same functional)")
    ax.set_yticks(ypos)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_xlabel("g = CE(verbal) − CE(token)   (negative: verbal better calibrated)")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig
