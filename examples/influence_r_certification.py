"""How far are the greedy R scores from the true minimum? Certified minima on small leaderboards.

R_top1, R_tau and R_CI (``bayesrank.influence.robustness``) are the budgets of greedy,
influence-ranked audits: upper bounds on the smallest number of comparisons whose perturbation
breaks the property. On 40 simulated leaderboards (5 players, every pair plays 3 matches,
strengths N(0, 0.8²); boards without a finite MLE skipped) this compares each greedy budget (drop
and flip, budget 8) with the certified minimum of ``audit(..., certify=5)``: every action
multiset below the greedy budget (up to 5 matches) is refitted exactly
(``baselines.exhaustive_minimum``). ~3 min on 2 cores.

Run: ``python examples/influence_r_certification.py``
"""

from collections import Counter

import numpy as np
from threadpoolctl import threadpool_limits

from bayesrank.data.aggregate import PairCounts
from bayesrank.errors import NoFiniteEstimateError
from bayesrank.influence import audit
from bayesrank.influence.state import BTState


def board(seed, k=5, n=3):
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 0.8, k)
    i, j = np.triu_indices(k, 1)
    wins = rng.binomial(n, 1 / (1 + np.exp(-(theta[i] - theta[j])))).astype(float)
    return PairCounts(np.array([f"p{q}" for q in range(k)], dtype=object), i, j, wins, n - wins, np.zeros(len(i)))


def main(n_boards=40, certify=5, budget=8):
    tally: dict = {}
    boards = 0
    for seed in range(10 * n_boards):
        if boards == n_boards:
            break
        try:
            st = BTState.fit(board(seed))
        except NoFiniteEstimateError:
            continue
        boards += 1
        rep = audit(st, "top1", "drop,flip", robustness=True, budget=budget, certify=certify)
        for name, res in rep.robustness_audits:
            cert = res.certified
            g = res.budget if (res.broken and res.verified) else None
            if cert["minimum"] is not None and g is not None:
                gap = "greedy = minimum" if g == cert["minimum"] else f"greedy = minimum + {g - cert['minimum']}"
            elif cert["minimum"] is not None:
                gap = f"greedy not broken within {budget}; minimum {cert['minimum']}"
            else:
                gap = f"no certificate (minimum ≥ {cert['lower_bound']})"
            tally.setdefault((name, res.action), Counter())[gap] += 1
    print(f"{boards} boards (5 players, 30 comparisons each)\n")
    print("| score | action | outcome | boards |\n|---|---|---|---:|")
    for (name, action), c in tally.items():
        for gap, n in sorted(c.items(), key=lambda kv: -kv[1]):
            print(f"| {name} | {action} | {gap} | {n} |")


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
