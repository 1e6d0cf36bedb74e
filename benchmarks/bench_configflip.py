"""Timing and accuracy of bayesrank.configflip against statsmodels, plus the posterior at spec scale.

1. A 612-cell grid (3 models x 72 configurations x 3 benchmarks, 36 cells dropped -> unbalanced):
   all metrics (rho_flip, Property 1, tau_R, orderings) + Type-II ANOVA, timed; the ANOVA is compared
   with statsmodels' ols + anova_lm(typ=2) (time ratio and max |difference|).
2. The hierarchical flip posterior on a 3-model x 72-configuration x 500-item grid (108,000 per-item
   Bernoulli observations), 2 chains x 500 draws on 2 cores: wall time.
3. Calibration of P(A > B | c) over repeated simulations with known truth: reliability table and
   Brier score of the hierarchical posterior vs the no-pooling twin vs the raw sign.

Run:  python benchmarks/bench_configflip.py [--skip-posterior] [--repeats 10]
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
import warnings

import numpy as np
import pandas as pd

from bayesrank.configflip.analysis import analyze
from bayesrank.configflip.anova import anova_type2
from bayesrank.configflip.grid import EvalGrid
from bayesrank.configflip.posterior import FlipPosterior
from bayesrank.configflip.simulate import simulate_grid

AXES = {"template": ["minimal", "role", "detailed", "cot"], "decoding": ["greedy", "t0.3", "t0.7"],
        "fewshot": ["0", "3", "5"], "scoring": ["regex", "logprob"]}


def grid_612(seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for b in ("truthfulqa", "bbq", "xstest"):
        for m, base in zip(("qwen", "mistral", "yi"), rng.normal(0.6, 0.03, 3)):
            for combo in itertools.product(*AXES.values()):
                rows.append({"model": m, "benchmark": b, **dict(zip(AXES, combo)),
                             "score": float(np.clip(base + rng.normal(0, 0.04), 0, 1))})
    d = pd.DataFrame(rows)
    return d.drop(index=rng.choice(len(d), 36, replace=False)).reset_index(drop=True)


def bench_metrics_and_anova() -> None:
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    d = grid_612()
    print(f"1. grid: {len(d)} cells, {d.benchmark.nunique()} benchmarks, 3 models, axes {list(AXES)}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        g = EvalGrid.from_scores(d, axes=list(AXES))
        res = analyze(g, anova_order=2)
        t_all = time.perf_counter() - t0
    print(f"   validate + rho_flip + tau_R + orderings + ANOVA(order 2) for all benchmarks: {t_all:.3f} s")
    factors = ["model", *AXES]
    for order in (2, 3):
        mine_t = ref_t = 0.0
        maxdiff = 0.0
        for b in g.benchmarks:
            sub = d[d.benchmark == b]
            t0 = time.perf_counter()
            mine = anova_type2(sub, "score", factors, max_order=order).set_index("term")
            mine_t += time.perf_counter() - t0
            terms = [":".join(f"C({x})" for x in c) for k in range(1, order + 1)
                     for c in itertools.combinations(factors, k)]
            t0 = time.perf_counter()
            ref = anova_lm(smf.ols("score ~ " + " + ".join(terms), data=sub).fit(), typ=2)
            ref_t += time.perf_counter() - t0
            ref.index = [i.replace("C(", "").replace(")", "") for i in ref.index]
            for term in ref.index:
                maxdiff = max(maxdiff, abs(mine.loc[term, "sum_sq"] - ref.loc[term, "sum_sq"]),
                              abs(np.nan_to_num(mine.loc[term, "F"]) - np.nan_to_num(ref.loc[term, "F"])))
        print(f"   ANOVA order {order}, 3 benchmarks: bayesrank {mine_t:.3f} s | statsmodels {ref_t:.3f} s | "
              f"ratio {ref_t / mine_t:.1f}x | max |diff| (SS, F) = {maxdiff:.1e}")
    r = res.results["truthfulqa"]
    print(f"   truthfulqa: tau_R = {r.tau['tau_R']:.3f}, max rho_flip = {r.pairs.rho_flip.max():.3f}, "
          f"{r.orderings_info['n_reachable']} orderings")


def bench_posterior(sampler: str = "nutpie") -> None:
    print("2. flip posterior: 3 models x 72 configurations x 500 items (per-item Bernoulli, item effects)")
    axes = {"template": AXES["template"], "decoding": AXES["decoding"], "fewshot": AXES["fewshot"],
            "scoring": AXES["scoring"]}
    g, truth = simulate_grid({"qwen": 0.3, "mistral": 0.2, "yi": 0.0}, axes, n_items=500, per_item=True, seed=5,
                             axis_effect_sd=0.2, interaction={("yi", "template", "cot"): 0.4})
    print(f"   {len(g.items):,} observations; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    import resource

    def cpu():
        s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime

    t0, c0 = time.perf_counter(), cpu()
    # nutpie (optional extra) with target_accept 0.95: tree depth ~5.7 instead of ~7 with PyMC's NUTS
    res = FlipPosterior(g).fit(draws=500, tune=500, chains=2, cores=2, random_seed=0, nuts_sampler=sampler,
                               target_accept=0.95 if sampler == "nutpie" else 0.9)
    wall, cpu_s = time.perf_counter() - t0, cpu() - c0
    ss = res.idata["sample_stats"]
    print(f"   wall time (build + compile + sample 2x1000 iterations): {wall:.1f} s; CPU time {cpu_s:.1f} s "
          f"(on an otherwise idle 2-core machine wall ~ CPU/2 for the sampling part); load average now "
          f"{os.getloadavg()[0]:.1f}")
    depth = ss["tree_depth"] if "tree_depth" in ss else ss["depth"]  # PyMC vs nutpie naming
    print(f"   sampler {sampler}: divergences {int(ss['diverging'].sum())}, mean tree depth {float(depth.mean()):.2f}")
    print(res.pair_summary()[["model_a", "model_b", "rho_flip_mean", "p_rho_flip_positive", "claims_reversal"]]
          .to_string(index=False))
    t0 = time.perf_counter()
    counts = FlipPosterior(g, use_items=False).fit(draws=500, tune=500, chains=2, cores=2, random_seed=0)
    ss = counts.idata["sample_stats"]
    print(f"   same grid, counts-only binomial model (216 cells): wall {time.perf_counter() - t0:.1f} s, "
          f"mean tree depth {float(ss['tree_depth'].mean()):.2f}, divergences {int(ss['diverging'].sum())}")
    print(counts.pair_summary()[["model_a", "model_b", "rho_flip_mean", "p_rho_flip_positive", "claims_reversal"]]
          .to_string(index=False))


def bench_calibration(repeats: int) -> None:
    print(f"3. calibration of P(A > B | c) over {repeats} simulated grids (3 models x 8 configs x 300 items)")
    axes = {"template": ["t1", "t2", "t3", "t4"], "decoding": ["greedy", "sample"]}
    rng = np.random.default_rng(123)
    rec = []
    for r in range(repeats):
        ab = dict(zip("ABC", rng.normal(0, 0.25, 3)))
        inter = {(m, "template", t): rng.normal(0, 0.2) for m in "ABC" for t in axes["template"]}
        g, truth = simulate_grid(ab, axes, n_items=300, per_item=False, seed=1000 + r, interaction=inter,
                                 axis_effect_sd=0.2)
        for method in ("nuts", "mle"):
            pg = FlipPosterior(g).fit(method=method, draws=400, tune=400, chains=2, random_seed=r).p_greater()
            for row in pg.itertuples():
                rec.append({"method": method, "p": row.p_a_greater, "raw": float(row.observed_diff > 0),
                            "truth": float(truth.loc[row.config, row.model_a] > truth.loc[row.config, row.model_b])})
    df = pd.DataFrame(rec)
    bins = [0, 0.05, 0.2, 0.4, 0.6, 0.8, 0.95, 1.0001]
    for method, d in df.groupby("method"):
        d = d.assign(bin=pd.cut(d.p, bins, right=False))
        table = d.groupby("bin", observed=True).agg(n=("p", "size"), mean_p=("p", "mean"), freq_true=("truth", "mean"))
        print(f"   {method}: Brier {np.mean((d.p - d.truth) ** 2):.4f} (raw sign {np.mean((d.raw - d.truth) ** 2):.4f})")
        print("   " + table.to_string().replace("\n", "\n   "))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-posterior", action="store_true")
    ap.add_argument("--sampler", default="nutpie", choices=("nutpie", "pymc"), help="NUTS implementation for the spec-scale posterior")
    ap.add_argument("--repeats", type=int, default=10)
    a = ap.parse_args()
    bench_metrics_and_anova()
    if not a.skip_posterior:
        bench_posterior(a.sampler)
    if a.repeats:
        bench_calibration(a.repeats)
