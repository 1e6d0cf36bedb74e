"""Timing and accuracy of bayesrank.configflip against statsmodels, plus the posterior at spec scale.

1. A 612-cell grid (3 models x 72 configurations x 3 benchmarks, 36 cells dropped -> unbalanced):
   all metrics (rho_flip, Property 1, tau_R, orderings) + Type-II ANOVA, timed; the ANOVA is compared
   with statsmodels' ols + anova_lm(typ=2) (time ratio and max |difference|).
2. The hierarchical flip posterior on a 3-player x 72-configuration x 500-item grid (108,000 per-item
   Bernoulli observations), 2 chains x 500 draws on 2 cores, nutpie (default) and PyMC's NUTS side by
   side: wall time, R-hat, bulk/tail ESS, ESS per second, divergences.
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


def bench_posterior(samplers=("nutpie", "pymc"), draws: int = 1000, tune: int = 1000) -> None:
    """Spec-scale flip posterior, side by side per sampler at the same draws: wall time (build + compile +
    sample), R-hat / bulk and tail ESS / divergences over eta and the hyper-parameters (the package's
    one definition of converged), ESS per second, tree depth, and the verdicts."""
    print("2. flip posterior: 3 players x 72 configurations x 500 items (per-item Bernoulli, item effects)")
    axes = {"template": AXES["template"], "decoding": AXES["decoding"], "fewshot": AXES["fewshot"],
            "scoring": AXES["scoring"]}
    g, truth = simulate_grid({"qwen": 0.3, "mistral": 0.2, "yi": 0.0}, axes, n_items=500, per_item=True, seed=5,
                             axis_effect_sd=0.2, interaction={("yi", "template", "cot"): 0.4})
    print(f"   {len(g.items):,} observations; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"{tune} tuning + {draws} draws x 2 chains on 2 cores (the package defaults)")
    import resource

    def cpu():
        s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime

    rows = []
    for sampler in samplers:
        t0, c0 = time.perf_counter(), cpu()
        res = FlipPosterior(g).fit(draws=draws, tune=tune, chains=2, cores=2, random_seed=0, nuts_sampler=sampler)
        wall, cpu_s = time.perf_counter() - t0, cpu() - c0
        d = res.diagnostics
        ss = res.idata["sample_stats"]
        depth = ss["tree_depth"] if "tree_depth" in ss else ss["depth"]  # PyMC vs nutpie naming
        ps = res.pair_summary().set_index(["player_a", "player_b"])
        rows.append({"sampler": d.method, "wall_s": round(wall, 1), "cpu_s": round(cpu_s, 1),
                     "rhat_max": round(d.rhat_max, 4), "ess_bulk_min": round(d.ess_bulk_min),
                     "ess_tail_min": round(d.ess_tail_min), "ess_bulk_per_s": round(d.ess_bulk_min / wall, 1),
                     "divergences": d.divergences, "mean_tree_depth": round(float(depth.mean()), 2),
                     "converged": d.converged, "load_after": round(os.getloadavg()[0], 1),
                     "rho_flip_mean(qwen,mistral)": round(ps.loc[("qwen", "mistral"), "rho_flip_mean"], 3),
                     "claims_reversal": ",".join(f"{a}-{b}" for (a, b), r in ps.iterrows() if r.claims_reversal)})
        print(f"   {d.line()}  [{wall:.1f} s]", flush=True)
    print(pd.DataFrame(rows).to_string(index=False))
    t0 = time.perf_counter()
    counts = FlipPosterior(g, use_items=False).fit(draws=draws, tune=tune, chains=2, cores=2, random_seed=0)
    print(f"   same grid, counts-only binomial model (216 cells): wall {time.perf_counter() - t0:.1f} s; "
          f"{counts.diagnostics.line()}")
    print(counts.pair_summary()[["player_a", "player_b", "rho_flip_mean", "p_rho_flip_positive", "claims_reversal"]]
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
            pg = FlipPosterior(g).fit(method=method, draws=400, tune=400, chains=2, cores=2, random_seed=r).p_greater()
            for row in pg.itertuples():
                rec.append({"method": method, "p": row.p_a_greater, "raw": float(row.observed_diff > 0),
                            "truth": float(truth.loc[row.config, row.player_a] > truth.loc[row.config, row.player_b])})
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
    ap.add_argument("--samplers", default="nutpie,pymc", help="NUTS implementations compared at spec scale")
    ap.add_argument("--repeats", type=int, default=10)
    a = ap.parse_args()
    bench_metrics_and_anova()
    if not a.skip_posterior:
        bench_posterior(tuple(a.samplers.split(",")))
    if a.repeats:
        bench_calibration(a.repeats)
