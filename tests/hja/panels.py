"""A small judge panel like Vicuna-80's: every judge rates the first six players, only the human
judge rates the last four (so with HJA rank ≥ 1 their residual is not identified), and two LLM
judges deviate systematically on alternate players (so held-out fit prefers rank 1)."""

import numpy as np
import pandas as pd

ONLY_HUMAN = ["m6", "m7", "m8", "m9"]


def one_judge_panel(seed: int = 0, per_pair: int = 20, heterogeneity: float = 0.6) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    models = [f"m{i}" for i in range(10)]
    mu = np.linspace(1.0, -1.0, 10)
    v = np.tile([1.0, -1.0], 5)
    judges = {"human": (1.0, 0.0), "gpt4": (1.2, heterogeneity), "claude": (0.9, -heterogeneity)}
    rows = []
    for judge, (gamma, u) in judges.items():
        seen = models if judge == "human" else [m for m in models if m not in ONLY_HUMAN]
        for a in range(len(seen)):
            for b in range(a + 1, len(seen)):
                eta = gamma * (mu[a] - mu[b]) + u * (v[a] - v[b])
                for _ in range(per_pair):
                    rows.append((seen[a], seen[b], "a" if rng.random() < 1 / (1 + np.exp(-eta)) else "b", judge))
    return pd.DataFrame(rows, columns=["model_a", "model_b", "outcome", "judge"])
