"""Simulated judge panels with known truth.

Truth: ``μ`` ~ spread evenly over ``[−spread, spread]`` (optionally with near-tie pairs), judge
sensitivities ``γ_k = 1 + sd_gamma·z`` (noisy judges get ``γ_k = noisy_gamma``), and a rank-r residual
``U Vᵀ`` with singular values ``heterogeneity·(r, r−1, …, 1)/r`` — everything re-anchored so the
truth satisfies Condition 1 exactly. Each judge compares uniformly random pairs; outcomes are
Bernoulli(σ(S_ki − S_kj)) (no ties), aggregated to counts per (judge, pair).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from bayesrank.hja.anchor import HJAParams, reanchor_scores
from bayesrank.hja.data import JudgePairCounts


@dataclass
class SimulatedPanel:
    counts: JudgePairCounts
    truth: HJAParams
    near_tie_pairs: list


def simulate_truth(
    n_judges: int = 6, n_items: int = 10, rank: int = 1, heterogeneity: float = 1.0, spread: float = 1.5,
    sd_gamma: float = 0.3, n_noisy: int = 0, noisy_gamma: float = 0.1, near_ties: int = 0, seed: int = 0,
) -> tuple[HJAParams, list]:
    """Identified truth (see module docstring) and the list of near-tie item pairs."""
    rng = np.random.default_rng(seed)
    K, N = n_judges, n_items
    mu = np.linspace(-spread, spread, N)
    ties = []
    for t in range(near_ties):  # move item 2t+1 next to item 2t (gap 0.05)
        a, b = 2 * t, 2 * t + 1
        if b < N:
            mu[b] = mu[a] + 0.05
            ties.append((a, b))
    mu = rng.permutation(mu)
    ties = []
    if near_ties:
        order = np.argsort(mu)
        diffs = np.diff(mu[order])
        ties = [tuple(sorted((int(order[m]), int(order[m + 1])))) for m in np.flatnonzero(diffs < 0.06)]
    gamma = 1.0 + sd_gamma * rng.normal(size=K)
    gamma[K - n_noisy:] = noisy_gamma if n_noisy else gamma[K - n_noisy:]
    gamma = np.abs(gamma)
    S = np.outer(gamma, mu - mu.mean())
    if rank:
        P = np.linalg.qr(rng.normal(size=(K, rank)) - 0.0)[0]
        Q = np.linalg.qr(rng.normal(size=(N, rank)))[0]
        s = heterogeneity * np.arange(rank, 0, -1) / rank
        S = S + (P * s) @ Q.T
    truth = reanchor_scores(S, rank)
    return truth, ties


def sample_counts(truth: HJAParams, comparisons_per_judge: int, seed: int = 0, judges=None, items=None,
                  noise_judges: int = 0) -> JudgePairCounts:
    """Draw ``comparisons_per_judge`` comparisons of uniformly random pairs for every judge."""
    rng = np.random.default_rng(seed)
    K, N = len(truth.gamma), len(truth.mu)
    S = truth.scores
    pairs_i, pairs_j = np.triu_indices(N, 1)
    R = len(pairs_i)
    n = rng.multinomial(comparisons_per_judge, np.full(R, 1.0 / R), size=K).astype(float)  # (K, R)
    eta = S[:, pairs_i] - S[:, pairs_j]
    y = rng.binomial(n.astype(np.int64), expit(eta)).astype(float)
    kk = np.repeat(np.arange(K), R)
    judges = np.array(judges if judges is not None else [f"judge{k}" for k in range(K)], dtype=object)
    items = np.array(items if items is not None else [f"item{i:02d}" for i in range(N)], dtype=object)
    keep = n.ravel() > 0
    return JudgePairCounts(judges, items, kk[keep], np.tile(pairs_i, K)[keep], np.tile(pairs_j, K)[keep],
                           y.ravel()[keep], n.ravel()[keep])


def simulate_panel(comparisons_per_judge: int = 500, seed: int = 0, **truth_kw) -> SimulatedPanel:
    truth, ties = simulate_truth(seed=seed, **truth_kw)
    counts = sample_counts(truth, comparisons_per_judge, seed=seed + 10_000)
    return SimulatedPanel(counts, truth, ties)


def to_comparisons_frame(counts: JudgePairCounts) -> pd.DataFrame:
    """Canonical comparison rows (model_a, model_b, outcome, judge, weight) from integer counts."""
    wins = counts.y
    losses = counts.n - counts.y
    f = counts.frame()
    a = f.assign(model_a=f.item_i, model_b=f.item_j, outcome="a", weight=wins)
    b = f.assign(model_a=f.item_i, model_b=f.item_j, outcome="b", weight=losses)
    out = pd.concat([a, b], ignore_index=True)
    out = out[out.weight > 0][["model_a", "model_b", "outcome", "judge", "weight"]]
    return out.reset_index(drop=True)
