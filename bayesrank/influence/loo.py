"""Bayesian cross-check: PSIS-LOO from NUTS draws vs influence-function drop scores.

The PyMC model's log-likelihood has one entry per observed pair, so PSIS-LOO leaves out a whole
pair (all its matches). For each pair r, with PSIS-smoothed importance weights ``w_rs``
(``az.loo(..., pointwise=True).log_weights``) the LOO posterior mean of the top-1 gap
``g = θ_(1) − θ_(2)`` is ``Σ_s w_rs g_s`` and its change ``Δ_r^PSIS = Σ_s w_rs g_s − mean_s g_s``.
The influence function predicts the same change for the MAP (ridge ``1/σ²``) by the group
one-step Newton for dropping all of the pair's matches (``delta = −counts_r``). We report the
Spearman and Pearson agreement and the Pareto k diagnostics.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import pearsonr, spearmanr

from bayesrank.data.aggregate import PairCounts
from bayesrank.influence.actions import Candidates
from bayesrank.influence.objectives import top1_gap
from bayesrank.influence.state import BTState


def pair_drop_candidates(state: BTState, rows: np.ndarray) -> Candidates:
    c = state.counts
    delta = -c.counts[rows]
    return Candidates("drop_pair", rows, c.i[rows], c.j[rows], delta, np.ones(len(rows)), np.zeros(len(rows), int))


def psis_loo_crosscheck(counts: PairCounts, prior_sigma: float = 3.0, draws: int = 1000, tune: int = 1000,
                        chains: int = 2, seed: int = 0, dt=None):
    """(per-pair DataFrame, summary dict) comparing PSIS-LOO and influence-function pair drops."""
    import arviz as az

    from bayesrank.bt.pymc_model import build_bt_model, sample_nuts

    state = BTState.fit(counts, ridge=1.0 / prior_sigma**2)
    if dt is None:
        model = build_bt_model(counts, ties=state.ties, prior_sigma=prior_sigma)
        dt = sample_nuts(model, draws=draws, tune=tune, chains=chains, seed=seed, cores=1)
    loo = az.loo(dt, pointwise=True)
    post = dt["posterior"]["theta"]
    theta = np.asarray(post.transpose("chain", "draw", ...)).reshape(-1, counts.n_players)  # (S, K)
    gap_obj = top1_gap(state)
    g = theta @ gap_obj.u
    lw = np.asarray(loo.log_weights.transpose("chain", "draw", ...))  # (chain, draw, pair_obs)
    lw = lw.reshape(-1, lw.shape[-1])
    w = np.exp(lw - lw.max(axis=0))
    w /= w.sum(axis=0)
    psis_change = w.T @ g - g.mean()
    wi, wj = counts.wins_i + 0.5 * counts.ties, counts.wins_j + 0.5 * counts.ties
    rows = np.flatnonzero(wi + wj > 0)  # the model's pair_obs
    cand = pair_drop_candidates(state, rows)
    pred = gap_obj.delta(state, cand, 1.0, "1sN")
    first = gap_obj.delta(state, cand, 1.0, "first")
    k = np.asarray(loo.pareto_k).ravel()
    table = pd.DataFrame({
        "player_a": counts.players[counts.i[rows]], "player_b": counts.players[counts.j[rows]],
        "n_matches": (wi + wj)[rows], "psis_gap_change": psis_change, "if_1sN_gap_change": pred,
        "if_first_gap_change": first, "pareto_k": k, "elpd_loo_i": np.asarray(loo.elpd_i).ravel(),
    })
    good = k < 0.7
    big = good & (np.abs(pred) >= 0.1 * np.abs(pred).max())  # pairs whose effect exceeds Monte Carlo noise
    summary = {
        "n_pairs": int(len(rows)),
        "share_pareto_k_below_0.7": float(good.mean()),
        "spearman": float(spearmanr(psis_change[good], pred[good]).statistic),
        "pearson": float(pearsonr(psis_change[good], pred[good]).statistic),
        "spearman_influential": float(spearmanr(psis_change[big], pred[big]).statistic),
        "n_influential": int(big.sum()),
        "slope": float(np.polyfit(pred[good], psis_change[good], 1)[0]),
        "elpd_loo": float(loo.elpd),
    }
    return table, summary
