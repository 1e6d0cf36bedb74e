"""Judge diagnostics: judge×item affinity (e.g. family self-preference) and the (γ, residual) plot."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from bayesrank.errors import InputError
from bayesrank.hja.fisher import deviation_gradient


def affinity(fit, item_group: dict, judge_group: dict, part: str = "residual") -> pd.DataFrame:
    """Self-preference of each judge for items of its own group (e.g. model family).

    For judge k with group g: ``A_k = mean_{i∈g} X_ki − mean_{i∉g} X_ki`` with ``X`` = the structured
    residual ``R_ki = U_k·V_i·`` (``part="residual"``, default: the affinity a rescaling γ_k of the
    consensus cannot explain) or the full deviation ``D_ki = S_ki − μ_i = (γ_k − 1)μ_i + R_ki``
    (``part="deviation"``: also counts a sharp judge's larger spread around top-ranked families). ``A_k``
    is linear in X, so its delta-method SE follows from Cov(θ). Positive = the judge rates its own family
    higher than the consensus does, relative to the other items. Judges without a group, or whose group
    has no items, are skipped. NUTS fits use posterior draws.
    """
    if part not in ("residual", "deviation"):
        raise InputError(f"part must be 'residual' or 'deviation', got {part!r}")
    resid = part == "residual"
    K, N = fit.counts.n_judges, fit.counts.n_items
    base = 0.0 if resid else fit.params.gamma[:, None] * fit.params.mu[None, :] - fit.params.mu[None, :]
    D = (base + fit.params.U @ fit.params.V.T).ravel()
    rows = []
    G = deviation_gradient(fit.params, residual_only=resid) if fit.draws is None else None
    for k, judge in enumerate(fit.judges):
        g = judge_group.get(str(judge))
        if g is None:
            continue
        own = np.array([item_group.get(str(it)) == g for it in fit.items])
        if own.sum() == 0 or (~own).sum() == 0:
            continue
        w = np.zeros((K, N))
        w[k, own] = 1.0 / own.sum()
        w[k, ~own] = -1.0 / (~own).sum()
        w = w.ravel()
        if fit.draws is None:
            est = float(w @ D)
            grad = w @ G
            se = float(np.sqrt(grad @ fit.cov @ grad))
            lo, hi = est - fit.z * se, est + fit.z * se
        else:
            d = fit.draws
            Rd = np.einsum("skc,sic->ski", d["U"], d["V"])
            if not resid:
                Rd = Rd + np.einsum("sk,si->ski", d["gamma"] - 1.0, d["mu"])
            a = Rd.reshape(len(Rd), -1) @ w
            est, se = float(a.mean()), float(a.std(ddof=1))
            lo, hi = np.quantile(a, [(1 - fit.level) / 2, (1 + fit.level) / 2])
        rows.append({"judge": judge, "group": g, "part": part, "n_own_items": int(own.sum()), "self_preference": est,
                     "se": se, "lower": float(lo), "upper": float(hi),
                     "p_value": float(2 * norm.sf(abs(est) / se)) if se > 0 else np.nan})
    return pd.DataFrame(rows)


def plot_judges(fit, path=None, ax=None):
    """Judges in the (γ_k, ‖U_k‖) plane with γ intervals; flagged (high-influence) judges in red."""
    import matplotlib.pyplot as plt

    jt = fit.judge_table()
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4.5))
    else:
        fig = ax.figure
    colors = np.where(jt["flagged"], "tab:red", "tab:blue")
    ax.errorbar(jt["gamma"], jt["residual_norm"], xerr=[jt["gamma"] - jt["lower"], jt["upper"] - jt["gamma"]],
                fmt="none", ecolor="0.6", zorder=1)
    ax.scatter(jt["gamma"], jt["residual_norm"], c=colors, zorder=2)
    for _, r in jt.iterrows():
        ax.annotate(str(r["judge"]), (r["gamma"], r["residual_norm"]), fontsize=8, xytext=(3, 3),
                    textcoords="offset points")
    ax.axvline(1.0, color="0.8", ls="--", lw=1)
    ax.set_xlabel("consensus sensitivity γ_k")
    ax.set_ylabel("residual heterogeneity ‖U_k‖")
    ax.set_title(f"HJA judges (rank {fit.rank}, {fit.method}); red = high influence")
    fig.tight_layout()
    if path:
        from bayesrank.outputs import save_figure

        save_figure(fig, path, dpi=120)
    return fig
