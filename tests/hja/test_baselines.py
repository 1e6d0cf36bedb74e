"""Pooled Bradley–Terry and JA-Ranking degrade under strong heterogeneity; HJA does not."""

import warnings

import numpy as np

from bayesrank.hja.baselines import ja_proba, ja_ranking, pooled_bt, pooled_bt_proba
from bayesrank.hja.mle import fit_constrained_mle
from bayesrank.hja.model import held_out_loss, pair_prediction_scores
from bayesrank.hja.simulate import sample_counts, simulate_truth


def _errors(het, reps=4):
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rep in range(reps):
            truth, _ = simulate_truth(n_judges=6, n_items=10, rank=2, heterogeneity=het, seed=rep)
            c = sample_counts(truth, 3000, seed=rep)
            test = sample_counts(truth, 3000, seed=rep + 99)
            h = fit_constrained_mle(c, 2, n_starts=2, warn=False).best.params
            j = ja_ranking(c)
            b = pooled_bt(c)
            out.append([np.abs(h.mu - truth.mu).max(), np.abs(j.mu - truth.mu).max(), np.abs(b - truth.mu).max(),
                        held_out_loss(h, test)[0], pair_prediction_scores(ja_proba(j, test), test)[0],
                        pair_prediction_scores(pooled_bt_proba(b, test), test)[0]])
    return np.mean(out, axis=0)


def test_baselines_degrade_under_strong_heterogeneity_hja_does_not():
    mild = _errors(0.5)
    strong = _errors(5.0)
    # HJA's consensus error stays small (< 0.12) in both regimes
    assert mild[0] < 0.12 and strong[0] < 0.12, (mild, strong)
    # pooled BT and JA: consensus error at least 2.5× HJA's under strong heterogeneity
    assert strong[1] > 2.5 * strong[0] and strong[2] > 2.5 * strong[0], strong
    # ...and they are worse than under mild heterogeneity
    assert strong[1] > 1.5 * mild[1] and strong[2] > 1.5 * mild[2], (mild, strong)
    # held-out log-loss per comparison: HJA beats both baselines by > 0.02 nats under strong heterogeneity
    assert strong[4] - strong[3] > 0.02 and strong[5] - strong[3] > 0.02, strong
