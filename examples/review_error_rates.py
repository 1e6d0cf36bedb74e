"""Error rates of the review's claim tests and verdicts, by simulation with known truth.

Prints the tables of docs/review.md ("Error rates"): sizes at the least-favourable nulls (beside the
previous rule: two-sided tests for every claim, posterior threshold 0.95, order from the spread of τ
between Gaussian draws around θ̂), sizes with clustered truth (``--cluster``), power curves, the order claim near a tie, and the verdict as
evidence grows (P(fragile) against the claim's own evidence and, for the same replicates, against
all comparisons of a leaderboard diluted by unrelated games).

    python examples/review_error_rates.py            # about 30 minutes on 2 shared cores
    python examples/review_error_rates.py --quick    # 1,000 replicates, 30 per verdict row
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.stats import norm

from bayesrank.review.error_rates import (
    asymptotic_sd,
    claim_tests,
    laplace_probabilities,
    order_supported,
    rate,
    simulate,
    simulate_clustered,
    truths,
    verdicts,
)

LEVEL = 0.95


def cell(hits) -> str:
    p, s = rate(hits)
    return f"{100 * p:.2f}% ({100 * s:.2f})"


def kendall_rows(g, ref):
    iu = np.triu_indices(g.shape[1], 1)
    s = np.sign(g[:, iu[0]] - g[:, iu[1]])
    r = np.sign(ref[iu[0]] - ref[iu[1]])
    return (s * r).sum(axis=1) / len(r)


def previous_order_test(score, cov, reference, level, *, errors=None, **kw):
    """The previous frequentist answer: lower (1 − level)/2 quantile of τ between 400 Gaussian draws
    N(θ̂, Σ) and θ̂, supported above 0.9."""
    g = score + (errors[:400] if errors is not None else np.random.default_rng(0).multivariate_normal(
        np.zeros(len(score)), cov, size=400))
    return {"supported": np.quantile(kendall_rows(g, reference), (1 - level) / 2) > 0.9}


def marginal_order_test(score, cov, reference, level, *, errors=None, **kw):
    """An invalid variant: the τ bound with each pair declared by its own one-sided test."""
    from bayesrank.bt.result import contrast_sd
    from bayesrank.review.order import tau_bound

    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.nan_to_num((score[:, None] - score[None, :]) / contrast_sd(cov))
    return {"supported": tau_bound(t > norm.ppf(level), reference) > 0.9}


def sizes(n_rep):
    z2 = norm.ppf(0.975)
    rows = []
    cases = [("--claim p0>p1, p0 = p1", [0, 0, -0.5, -1], 0.0, "pair", 2),
             ("#1 > #2 (default pair), tied leaders", [0.5, 0.5, -1, -1.5], 0.0, "adjacent", 2),
             ("top1, tied leaders", [0.5, 0.5, -1, -1.5], 0.0, "top1", 2),
             ("topk:2, tie across the boundary", [1.5, 0, 0, -1.5], 0.0, "topk", 2),
             ("--claim p0>p1, p0 = p1, 35% ties (sandwich)", [0, 0, -0.5, -1], 0.35, "pair", 2)]
    for seed, (name, theta, ties, key, k_top) in enumerate(cases, start=1):
        sim = simulate(theta, 100, n_rep, seed=seed, tie_rate=ties)
        tests, truth, prob = claim_tests(sim, LEVEL, k_top=k_top, order=False), truths(sim, k_top), \
            laplace_probabilities(sim, seed=seed, k_top=k_top)
        false = ~truth[key]
        thr = LEVEL if key == "pair" else 0.975
        nominal = "5%"
        freq, bay = tests[key] & false, (prob[key] >= thr) & false
        # the previous rule: a two-sided 95% test for every claim, posterior P ≥ 0.95
        if key == "pair":
            t = (sim.estimate[:, 0] - sim.estimate[:, 1]) / np.sqrt(
                sim.cov[:, 0, 0] + sim.cov[:, 1, 1] - 2 * sim.cov[:, 0, 1])
            old_test = (t > z2) & sim.ok
        else:
            old_test = tests[key]
        old_freq, old_bay = old_test & false, (prob[key] >= LEVEL) & false
        disagree_new = np.mean(tests[key] != (prob[key] >= thr))
        disagree_old = np.mean(old_test != (prob[key] >= LEVEL))
        rows.append(f"| {name} | {nominal} | {cell(freq)} | {cell(bay)} | {cell(freq & bay)} | {cell(old_freq)} | "
                    f"{cell(old_bay)} | {100 * disagree_new:.1f}% / {100 * disagree_old:.1f}% |")
    print(f"\nSizes at the least-favourable null ({n_rep:,} leaderboards each, 100 games per pair; rate (MC SE))\n")
    print("| claim, truth | nominal | test | posterior | both (verdict) | previous test | previous posterior (≥ 0.95) "
          "| answers differ: now / before |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


def clustered(n_rep):
    import dataclasses

    print(f"\nClustered truth ({n_rep:,} panels: 5 players, 40 items per pair, 5 judges per item, an item effect "
          "u ~ N(0, 1.5²) on the logit shared by its judges; p0 = p1; rate (MC SE))\n")
    print("| claim | nominal | test, cluster-robust (--cluster item) | posterior adjusted to it | test, independence "
          "covariance | posterior, independence |")
    print("|---|---|---|---|---|---|")
    sim = simulate_clustered([0.0, 0.0, -0.4, -0.8, -1.2], 40, 5, 1.5, n_rep, seed=11)
    naive_sim = dataclasses.replace(sim, cov=sim.fisher)
    truth = truths(sim)
    tests, naive = claim_tests(sim, LEVEL, order=False), claim_tests(naive_sim, LEVEL, order=False)
    prob, plain = laplace_probabilities(sim, seed=11), laplace_probabilities(sim, seed=11, adjusted=False)
    for key, label, thr in (("pair", "--claim p0>p1 (one-sided)", LEVEL), ("top1", "top1 (two-sided)", (1 + LEVEL) / 2)):
        t = ~truth[key]
        print(f"| {label} | 5% | {cell(tests[key] & t)} | {cell((prob[key] >= thr) & t)} | {cell(naive[key] & t)} | "
              f"{cell((plain[key] >= thr) & t)} |")


def power(n_rep):
    base = np.array([0.0, 0.0, -0.5, -1.0])
    print(f"\nPower of the pair claim p0 > p1 ({n_rep:,} leaderboards per row; δ in contrast SDs at the truth)\n")
    print("| δ/sd | --claim (one-sided): simulated | asymptotic Φ(δ/sd − 1.645) | default pair (two-sided, p0 "
          "reported first): simulated | asymptotic Φ(δ/sd − 1.96) |")
    print("|---|---|---|---|---|")
    for m, step in enumerate((0.0, 1.0, 2.0, 3.0, 4.0)):
        theta = base.copy()
        sd = asymptotic_sd(theta, 100, 0, 1)
        theta[0] += step * sd
        sd = asymptotic_sd(theta, 100, 0, 1)
        delta = (theta[0] - theta[1]) / sd
        sim = simulate(theta, 100, n_rep, seed=100 + m)
        tests = claim_tests(sim, LEVEL, order=False)
        first = np.argmax(sim.estimate, axis=1) == 0
        print(f"| {delta:.2f} | {cell(tests['pair'])} | {100 * norm.cdf(delta - norm.ppf(LEVEL)):.2f}% | "
              f"{cell(tests['adjacent'] & first)} | {100 * norm.cdf(delta - norm.ppf(0.975)):.2f}% |")


def order(n_rep):
    print(f"\nThe order claim near a tie ({n_rep:,} leaderboards: 6 players 1 logit apart, 200 games per pair, the "
          "last two near twins; the claim is false when the twins are reported in the wrong order)\n")
    print("| twins apart (contrast SDs) | P(claim false) | false support: this test | previous (Gaussian-draw τ) "
          "| marginal one-sided declarations (invalid) | support when true: this test |")
    print("|---|---|---|---|---|---|")
    base = np.array([2.5, 1.5, 0.5, -0.5, -1.5, -1.5])
    for m, gap in enumerate((0.05, 0.5, 1.0, 2.0)):
        theta = base.copy()
        theta[5] -= gap * asymptotic_sd(base, 200, 4, 5)
        sim = simulate(theta, 200, n_rep, seed=200 + m)
        truth = truths(sim)["order"]
        mine = order_supported(sim, LEVEL, seed=m)
        prev = order_supported(sim, LEVEL, seed=m, test=previous_order_test)
        marg = order_supported(sim, LEVEL, seed=m, test=marginal_order_test)
        print(f"| {gap} | {100 * (~truth).mean():.1f}% | {cell(mine & ~truth)} | {cell(prev & ~truth)} | "
              f"{cell(marg & ~truth)} | {100 * mine[truth].mean():.1f}% |")


def fragile(reps):
    print(f"\nVerdicts of top1 as evidence grows ({reps} leaderboards per row, --fast, fragile below 1%; 4 players, "
          "the leader's gap δ to #2)\n")
    print("| δ | games per pair | P(significant) | P(supported) | P(fragile) | P(fragile \\| significant) | median "
          "n_eff | P(fragile) against all comparisons, board ×1 / ×10 / ×100 (diluted; at least) |")
    print("|---|---|---|---|---|---|---|---|")
    rows_of = [(0.3, (25, 50, 100, 200, 400, 800)), (0.04, (400, 1600, 6400, 25600))]
    m = 0
    for gap, sizes_ in rows_of:
        theta = np.array([gap, 0.0, -0.2, -0.5])
        for n in sizes_:
            m += 1
            sim = simulate(theta, n, reps, seed=300 + m)
            rows = verdicts(sim, claims=("top1",), reps=reps, seed=m)
            v = np.array([r["verdict"] for r in rows])
            sig = np.array([r["supported"] for r in rows])
            frac_all = np.array([np.inf if r["fraction_of_all"] is None else r["fraction_of_all"] for r in rows])
            stat_sup = np.isin(v, ["supported", "fragile", "not searched"])
            old = [np.mean(stat_sup & (frac_all / d < 0.01)) for d in (1, 10, 100)]
            cond = f"{100 * np.mean(v[sig] == 'fragile'):.1f}%" if sig.any() else "–"
            print(f"| {gap} | {n:,} | {100 * sig.mean():.1f}% | {100 * np.mean(v == 'supported'):.1f}% | "
                  f"{100 * np.mean(v == 'fragile'):.1f}% | {cond} | {np.median([r['n_eff'] for r in rows]):,.0f} | "
                  + " / ".join(f"{100 * o:.1f}%" for o in old) + " |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n_rep, reps = (1000, 30) if args.quick else (4000, 100)
    sizes(n_rep)
    clustered(n_rep)
    power(n_rep)
    order(n_rep)
    fragile(reps)


if __name__ == "__main__":
    main()
