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
    the posterior curve with its 90% band and the posterior predictive 90% interval of each bin's
    accuracy. Returns the matplotlib Figure."""
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
            cur = posterior.curve_on_grid(cell, sig)
            a.fill_between(cur["confidence"], cur["lo"], cur["hi"], color="C0", alpha=0.2, lw=0, label="posterior curve (90%)")
            a.plot(cur["confidence"], cur["mean"], color="C0", lw=1.5)
            rel = posterior.reliability(cell, sig, n_bins=n_bins)
            a.errorbar(rel["confidence"], rel["rep_median"], yerr=[rel["rep_median"] - rel["rep_lo"], rel["rep_hi"] - rel["rep_median"]],
                       fmt="none", ecolor="C1", elinewidth=3, alpha=0.5, label="posterior predictive (90%)")
        bc, by_, bn = _binned(c, y, n_bins)
        a.scatter(bc, by_, s=20 + 300 * bn / bn.sum(), color="k", zorder=3, label="observed bins")
        a.set_xlim(0, 1)
        a.set_ylim(0, 1)
        a.set_xlabel(f"{sig} confidence")
        a.set_title(sig)
    axes[0].set_ylabel("accuracy")
    axes[0].legend(loc="upper left", fontsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def gap_forest(gaps: pd.DataFrame, *, label_cols=None, ax=None):
    """Forest plot of g per protocol cell: bootstrap CI (black) and posterior interval (blue).
    ``gaps`` is ``CalibrationReport.gaps`` (or any table with gap, gap_lo, gap_hi[, post_*])."""
    import matplotlib.pyplot as plt

    label_cols = label_cols or [c for c in gaps.columns if c not in ("n",) and gaps[c].dtype == object and not c.startswith("card_")]
    labels = gaps[label_cols].astype(str).agg(" | ".join, axis=1).tolist()
    k = len(gaps)
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 0.32 * k + 1.2))
    else:
        fig = ax.figure
    ypos = np.arange(k)[::-1]
    ax.axvline(0, color="grey", lw=1, ls="--")
    ax.errorbar(gaps["gap"], ypos + 0.12, xerr=[gaps["gap"] - gaps["gap_lo"], gaps["gap_hi"] - gaps["gap"]], fmt="o", color="k", ms=4, label="plug-in, bootstrap 95% CI")
    if "post_mean" in gaps and gaps["post_mean"].notna().any():
        ax.errorbar(gaps["post_mean"], ypos - 0.12, xerr=[gaps["post_mean"] - gaps["post_lo"], gaps["post_hi"] - gaps["post_mean"]], fmt="s", color="C0", ms=4, label="posterior mean, 95% interval")
    ax.set_yticks(ypos)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_xlabel("g = CE(verbal) − CE(token)   (negative: verbal better calibrated)")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig
