"""CI-objective predictions vs exact refits on ATP 2024 and LLMFAO (bundled data).

For 1000 sampled drops and adds (seeded), each of ci-trace and ci-player (leader): Spearman and
median absolute error of the predicted driver change for order = first, linear, 1sN-plain, 1sN
against exact refits. Prints a Markdown table (the one in docs/influence.md). ~3 min on 2 cores.

Run: ``python examples/influence_ci_accuracy.py``
"""
import numpy as np
from threadpoolctl import threadpool_limits

threadpool_limits(1)
from scipy.stats import spearmanr

from bayesrank.data import finite_core, read_comparisons
from bayesrank.datasets import path
from bayesrank.influence.actions import candidates
from bayesrank.influence.baselines import exact_deltas
from bayesrank.influence.greedy import _state_for
from bayesrank.influence.objectives import CIObjective
from bayesrank.influence.state import BTState

data = {"ATP": BTState.fit(finite_core(read_comparisons(path("tennis/atp_matches_2024.csv")), min_matches=1).aggregate()),
        "LLMFAO": BTState.fit(read_comparisons(path("llmfao/crowd-comparisons.csv")).aggregate())}
print("| data | action | objective | first | linear 1sN | 1sN-plain | 1sN |")
print("|---|---|---|---|---|---|---|")
for dn, st in data.items():
    leader = str(st.players[st.ranking()[0]])
    for kind, seed in [("drop", 4), ("add", 5)]:
        s2 = _state_for(st, kind) if kind == "add" else st
        cand = candidates(s2, kind); rng = np.random.default_rng(seed)
        cand = cand.take(np.sort(rng.choice(len(cand), min(1000, len(cand)), replace=False)))
        for on, o in [("ci-trace", CIObjective(s2, None, "inflate" if kind == "drop" else "reduce", 1.5 if kind == "drop" else 0.5)),
                      ("ci-player:leader", CIObjective(s2, leader, "inflate" if kind == "drop" else "reduce", 1.5 if kind == "drop" else 0.5))]:
            ex = exact_deltas(s2, o, cand); ok = np.isfinite(ex)
            cells = []
            for order in ["first", "linear", "1sN-plain", "1sN"]:
                v = o.delta(s2, cand, 1.0, order)
                cells.append(f"{spearmanr(v[ok], ex[ok]).statistic:.4f} / {np.median(np.abs(v - ex)[ok]):.1e}")
            print(f"| {dn} | {kind} | {on} | " + " | ".join(cells) + " |", flush=True)
