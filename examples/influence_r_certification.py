"""How far are the greedy R scores from the true minimum? Certified minima on small leaderboards.

R scores are the budget of a greedy, influence-ranked audit: an upper bound on the smallest number
of actions that breaks the property. On 40 simulated leaderboards (6 players, every pair plays 4
matches, strengths N(0, 0.8²); boards without a finite MLE skipped) this compares the greedy top-1
budget (drop and flip, budget 6) with the exhaustive minimum over every action multiset of up to 4
matches (`bayesrank.influence.baselines.exhaustive_minimum`, each set refitted exactly). Where no set
of ≤ 4 matches breaks the top-1, 5 is a certified lower bound. ~2 min on 2 cores.

Run: ``python examples/influence_r_certification.py``
"""

from collections import Counter

import numpy as np
from threadpoolctl import threadpool_limits

from bayesrank.data.aggregate import PairCounts
from bayesrank.errors import NoFiniteEstimateError
from bayesrank.influence.greedy import greedy_audit
from bayesrank.influence.baselines import exhaustive_minimum
from bayesrank.influence.objectives import TopK
from bayesrank.influence.state import BTState


def board(seed, k=6, n=4):
    rng = np.random.default_rng(seed)
    theta = np.sort(rng.normal(0, 0.8, k))[::-1]
    i, j = np.triu_indices(k, 1)
    wins = rng.binomial(n, 1 / (1 + np.exp(-(theta[i] - theta[j])))).astype(float)
    return PairCounts(np.array([f"p{q}" for q in range(k)], dtype=object), i, j, wins, n - wins, np.zeros(len(i)))


def main(n_seeds=40, max_size=4, budget=6):
    tally = {"drop": Counter(), "flip": Counter()}
    for seed in range(n_seeds):
        try:
            st = BTState.fit(board(seed))
        except NoFiniteEstimateError:
            continue
        for kind in tally:
            g = greedy_audit(st, TopK(st, 1), kind, budget=budget)
            gb = g.budget if g.verified else None
            e = exhaustive_minimum(st, TopK(st, 1), kind, max_size=min(max_size, gb) if gb else max_size)
            if e["budget"] is not None:
                gap = "greedy = minimum" if gb == e["budget"] else f"greedy = minimum + {gb - e['budget']}"
            elif gb is None:
                gap = f"not broken by greedy within {budget}; minimum ≥ {e['lower_bound']}"
            elif gb == e["lower_bound"]:
                gap = "greedy = minimum"  # upper bound meets the certified lower bound
            else:
                gap = f"greedy = {gb}, minimum ≥ {e['lower_bound']} (gap ≤ {gb - e['lower_bound']})"
            tally[kind][gap] += 1
    print("| action | outcome | leaderboards |\n|---|---|---:|")
    for kind, c in tally.items():
        for gap, n in sorted(c.items(), key=lambda kv: -kv[1]):
            print(f"| {kind} | {gap} | {n} |")


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
