"""Real-data evidence for HJA vs pooled Bradley–Terry vs JA-Ranking.

- :func:`held_out_prediction`: split the comparisons (by a group column such as the prompt id, so one
  prompt's judgments stay together), fit on the training part, score held-out log-loss and accuracy
  per comparison, overall and on *near-tie* pairs (pairs whose pooled training win rate is within
  ``0.5 ± near_tie``);
- :func:`inject_noisy_judges` / :func:`rank_stability`: add synthetic noisy judges — each copies the
  pairs and counts of a random real judge but decides by coin flips (``noise_scale=0``, default) or by
  its own idiosyncratic random scores ``z ~ N(0, noise_scale²)`` — and report Kendall τ between the
  consensus with and without them. Note: HJA's consensus is by definition the judge average of the
  score matrix, so strongly *opinionated* synthetic judges (large ``noise_scale``) do move it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from bayesrank.hja.baselines import ja_proba, ja_ranking, pooled_bt, pooled_bt_proba
from bayesrank.hja.data import JudgePairCounts, from_comparisons
from bayesrank.hja.mle import fit_constrained_mle
from bayesrank.hja.model import pair_prediction_scores


def split_comparisons(comparisons, test_frac: float = 0.2, group_col: str | None = None, seed: int = 0):
    """(train, test) :class:`JudgePairCounts` on the same judges and items (split by ``group_col`` values)."""
    f = comparisons.frame
    rng = np.random.default_rng(seed)
    if group_col is not None:
        groups = f[group_col].to_numpy()
        uniq = np.unique(groups)
        test_groups = set(rng.choice(uniq, size=int(round(test_frac * len(uniq))), replace=False).tolist())
        is_test = np.isin(groups, list(test_groups))
    else:
        is_test = rng.random(len(f)) < test_frac
    judges, items = comparisons.judges, comparisons.players
    train = from_comparisons(comparisons.subset(~is_test), judges=judges, items=items)
    test = from_comparisons(comparisons.subset(is_test), judges=judges, items=items)
    return train, test


def _near_tie_rows(train: JudgePairCounts, test: JudgePairCounts, near_tie: float) -> np.ndarray:
    pooled = train.pooled()
    m = train.n_items
    rate = pd.Series(pooled.wins_i / np.maximum(pooled.total, 1e-300), index=pooled.i * m + pooled.j)
    r = rate.reindex(test.i * m + test.j).to_numpy()
    return np.isfinite(r) & (np.abs(r - 0.5) <= near_tie)


def held_out_prediction(comparisons, rank: int, test_frac: float = 0.2, group_col: str | None = None,
                        seed: int = 0, near_tie: float = 0.1) -> pd.DataFrame:
    """Held-out log-loss / accuracy (overall and near-tie pairs) for HJA(rank), JA-Ranking and pooled BT."""
    train, test = split_comparisons(comparisons, test_frac, group_col, seed)
    near = _near_tie_rows(train, test, near_tie)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hja = fit_constrained_mle(train, rank, n_starts=3, seed=seed).best.params
    probs = {
        f"HJA (rank {rank})": ja_proba(hja, test),
        "JA-Ranking": ja_proba(ja_ranking(train, seed), test),
        "pooled BT": pooled_bt_proba(pooled_bt(train), test),
    }
    rows = []
    near_test = test.with_counts(np.where(near, test.y, 0.0), np.where(near, test.n, 0.0))
    for name, p in probs.items():
        ll, acc = pair_prediction_scores(p, test)
        ll_n, acc_n = pair_prediction_scores(p, near_test)
        rows.append({"method": name, "logloss": ll, "accuracy": acc, "near_tie_logloss": ll_n,
                     "near_tie_accuracy": acc_n, "n_test": test.total, "n_near_tie": near_test.total})
    return pd.DataFrame(rows)


def inject_noisy_judges(counts: JudgePairCounts, n_noisy: int, noise_scale: float = 0.0,
                        seed: int = 0) -> JudgePairCounts:
    """Append ``n_noisy`` synthetic judges (see module docstring) to ``counts``."""
    rng = np.random.default_rng(seed)
    K = counts.n_judges
    parts = [(counts.k, counts.i, counts.j, counts.y, counts.n)]
    names = list(counts.judges)
    for m in range(n_noisy):
        src = rng.integers(K)
        sel = counts.k == src
        z = rng.normal(0.0, noise_scale, counts.n_items)
        n = np.round(counts.n[sel])
        p = 1.0 / (1.0 + np.exp(-(z[counts.i[sel]] - z[counts.j[sel]])))
        y = rng.binomial(n.astype(np.int64), p).astype(float)
        parts.append((np.full(sel.sum(), K + m), counts.i[sel], counts.j[sel], y, n))
        names.append(f"noisy{m + 1}")
    k, i, j, y, n = (np.concatenate(a) for a in zip(*parts))
    return JudgePairCounts(np.array(names, dtype=object), counts.items, k, i, j, y, n, counts.excluded)


def rank_stability(counts: JudgePairCounts, rank: int, n_noisy=(1, 2, 3), noise_scale: float = 0.0,
                   seed: int = 0) -> pd.DataFrame:
    """Kendall τ of each method's consensus with vs without injected noisy judges."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = {
            "HJA": fit_constrained_mle(counts, rank, n_starts=2, seed=seed).best.params.mu,
            "JA-Ranking": ja_ranking(counts, seed).mu,
            "pooled BT": pooled_bt(counts),
        }
        rows = []
        for m in n_noisy:
            noisy = inject_noisy_judges(counts, m, noise_scale, seed + m)
            new = {
                "HJA": fit_constrained_mle(noisy, rank, n_starts=2, seed=seed).best.params.mu,
                "JA-Ranking": ja_ranking(noisy, seed).mu,
                "pooled BT": pooled_bt(noisy),
            }
            for name in base:
                rows.append({"n_noisy": m, "method": name, "kendall_tau": kendalltau(base[name], new[name])[0]})
    return pd.DataFrame(rows).pivot(index="n_noisy", columns="method", values="kendall_tau")
