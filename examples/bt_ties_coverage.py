"""Which 95% interval covers when 30-40% of comparisons are ties? (issue 12.12)

Simulated leaderboards (8 players, 60 comparisons per pair, Davidson truth with log ν = 0.3, so
≈ 35% ties), each interval against its own estimand: the half-win (LMArena) estimator targets
θ*_half, the half-win fit to the expected counts; the Davidson fits target the true θ.

* Fisher, sandwich and bootstrap intervals of the half-win MLE;
* Fisher interval of the Davidson MLE;
* Laplace posteriors (the PyMC model's exact NumPy twins, tested equal to 1e-7) with half-win and
  Davidson likelihoods;
* NUTS with the half-win and Davidson likelihoods on ``--nuts`` datasets (each compiles a PyMC
  model, so fewer datasets: the table says what that number of intervals can distinguish), with the
  ratio of NUTS to Laplace interval widths on the same datasets.

Then the same intervals on the bundled LLMFAO data (39% ties): median widths relative to sandwich.

Run: ``python examples/bt_ties_coverage.py [--reps 1300] [--boot-reps 400] [--nuts 10]``; writes
``out/bt_ties_coverage.csv``. The slow test tests/bt/test_coverage.py::test_interval_coverage_with_many_ties
asserts the same table (same seeds, 1,300 datasets).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from bt.coverage_sim import (  # noqa: E402
    _constrained_inv,
    all_pairs,
    coverage_summary,
    davidson_map,
    pseudo_true_half,
    simulate_counts,
    tie_coverage,
    truth,
)
from bt.test_coverage import TIE_SETUP  # noqa: E402

threadpool_limits(limits=1, user_api="blas")


def nuts_rows(theta, template, log_nu, n_data, seed):
    """NUTS (2 chains × 500 + 500) with half-win and Davidson likelihoods on the first datasets."""
    from bayesrank.bt import build_bt_model
    from bayesrank.bt.likelihood import tie_model
    from bayesrank.bt.mle import newton
    from bayesrank.bt.pymc_model import sample_nuts

    batch = simulate_counts(theta, template, n_data, seed, log_nu=log_nu)  # same seed: the first datasets
    target = {"half": pseudo_true_half(theta, template, log_nu), "davidson": theta}
    k = len(theta)
    hits = {"half": [], "davidson": []}
    ratio = {"half": [], "davidson": []}
    for r in range(n_data):
        c = template.with_counts(batch[r])
        for ties in ("half", "davidson"):
            dt = sample_nuts(build_bt_model(c, ties=ties), draws=500, tune=500, chains=2, seed=100 + r, cores=1)
            th = dt.posterior["theta"].transpose("chain", "draw", "player").values.reshape(-1, k)
            lo, hi = np.quantile(th, [0.025, 0.975], axis=0)
            hits[ties].append((lo <= target[ties]) & (target[ties] <= hi))
            if ties == "half":
                lap = newton(tie_model("half"), c, ridge=1 / 9)
                cov = _constrained_inv(lap.hessian)
            else:
                lap = davidson_map(c, batch[r : r + 1], 3.0, 2.0)
                cov = _constrained_inv(lap.hessian, 1)
            ratio[ties].append(np.median((hi - lo) / (2 * 1.959963984540054 * np.sqrt(np.diag(cov[0])[:k]))))
    rows = []
    for ties, name in (("half", "NUTS, half-win posterior"), ("davidson", "NUTS, Davidson posterior")):
        s = coverage_summary(np.array(hits[ties]))
        rows.append({"method": name, **s, "target": "θ*_half" if ties == "half" else "θ",
                     "width_vs_laplace": float(np.median(ratio[ties]))})
    return rows


def real_data_widths():
    """Median interval width relative to the sandwich on LLMFAO (8,931 comparisons, 39% ties)."""
    from bayesrank.bt import BradleyTerry
    from bayesrank.datasets import path

    bt = BradleyTerry(path("llmfao/crowd-comparisons.csv"), ties="half")
    sand = bt.fit("mle", ci="sandwich")
    fits = {"Fisher, half-win MLE": bt.fit("mle", ci="fisher"), "sandwich, half-win MLE": sand,
            "bootstrap percentile, half-win MLE": bt.fit("bootstrap", n_boot=400, seed=0)}
    dav = BradleyTerry(path("llmfao/crowd-comparisons.csv"), ties="davidson").fit("mle", ci="fisher")
    out = {n: float(np.median((f.upper - f.lower) / (sand.upper - sand.lower))) for n, f in fits.items()}
    # Davidson θ lives on another scale (decisive-odds): compare z-statistics of adjacent contrasts instead
    def adjacent_z(f):
        order = np.argsort(-f.score)
        return np.array([abs(f.contrast(f.players[a], f.players[b]).estimate) / f.contrast(f.players[a], f.players[b]).se
                         for a, b in zip(order[:-1], order[1:])])
    z_sand, z_fisher, z_dav = adjacent_z(sand), adjacent_z(fits["Fisher, half-win MLE"]), adjacent_z(dav)
    return out, {"sandwich": float(np.median(z_sand)), "Fisher (half)": float(np.median(z_fisher)),
                 "Davidson Fisher": float(np.median(z_dav))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1300)
    ap.add_argument("--boot-reps", type=int, default=400)
    ap.add_argument("--nuts", type=int, default=10)
    ap.add_argument("--out", default="out/bt_ties_coverage.csv")
    args = ap.parse_args(argv)
    s = TIE_SETUP
    theta = truth(s["k"], spread=s["spread"], seed=s["seed"])
    template = all_pairs(s["k"], s["per_pair"])
    t = time.perf_counter()
    rows, share, widths = tie_coverage(theta, template, s["log_nu"], n_rep=args.reps, seed=22, boot_reps=args.boot_reps)
    table = [{"method": n, **coverage_summary(c), "target": "θ" if "Davidson" in n else "θ*_half",
              "mean_width": widths[n]} for n, c in rows.items()]
    print(f"ties: {share:.1%} of comparisons; frequentist + Laplace: {time.perf_counter() - t:.0f} s", flush=True)
    if args.nuts:
        t = time.perf_counter()
        table += nuts_rows(theta, template, s["log_nu"], args.nuts, seed=22)
        print(f"NUTS on {args.nuts} datasets: {time.perf_counter() - t:.0f} s", flush=True)
    df = pd.DataFrame(table)
    df["3se"] = 3 * df["mc_se"]
    df["within_3se_of_95"] = (df["coverage"] - 0.95).abs() <= df["3se"]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out, index=False)
    pd.set_option("display.width", 200)
    cols = ["method", "target", "intervals", "coverage", "mc_se", "3se", "within_3se_of_95", "mean_width", "width_vs_laplace"]
    print(df.reindex(columns=cols).round(4).to_string(index=False))
    widths_real, zs = real_data_widths()
    print("\nLLMFAO (39% ties): median interval width relative to the sandwich:",
          ", ".join(f"{n} {v:.2f}" for n, v in widths_real.items()))
    print("median |z| of adjacent-rank contrasts:", ", ".join(f"{n} {v:.2f}" for n, v in zs.items()))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
