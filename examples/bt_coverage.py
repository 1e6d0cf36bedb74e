"""Coverage study: do 95% Bradley-Terry intervals cover the true strengths within 3 Monte Carlo SEs of 95%?

Simulated leaderboards with known truth (every pair played ``n`` times, binary BT outcomes, or
Davidson outcomes with ties). Methods:

- Fisher (observed information) Wald intervals, half ties and Davidson — batched Newton refits;
- percentile bootstrap (multinomial resampling of comparisons, as LMArena);
- Laplace: the PyMC model's MAP + inverse Hessian. Its mode/covariance equal the ridge-MLE twin
  (ridge = 1/prior_sigma²) to 1e-8 (tests/bt/test_pymc_references.py), so the many-replicate
  study uses the twin; ``--pymc-check`` datasets are also fitted with the real PyMC Laplace and
  the two are compared;
- NUTS: the PyMC model sampled on ``--nuts`` datasets (2 chains; each dataset compiles a model,
  so this is the slow part).

Run: ``python examples/bt_coverage.py [--reps 1000] [--nuts 20] [--pymc-check 3]``; writes
``out/bt_coverage.csv`` and prints the table. The small version runs in the test suite
(tests/bt/test_coverage.py).
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
    all_pairs,
    bootstrap_coverage,
    coverage_summary,
    fisher_coverage,
    simulate_counts,
    truth,
)

threadpool_limits(limits=1, user_api="blas")


def row(method, cover, note=""):
    """Coverage with its between-dataset Monte Carlo SE (intervals of one dataset are dependent)."""
    s = coverage_summary(np.asarray(cover))
    return {"method": method, **s, "within_3se_of_95": bool(abs(s["coverage"] - 0.95) <= 3 * s["mc_se"]), "note": note}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--players", type=int, default=12)
    ap.add_argument("--per-pair", type=int, default=25)
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--boot-reps", type=int, default=200)
    ap.add_argument("--nuts", type=int, default=20, help="datasets sampled with NUTS (0 to skip)")
    ap.add_argument("--pymc-check", type=int, default=3, help="datasets fitted with the real PyMC Laplace")
    ap.add_argument("--out", default="out/bt_coverage.csv")
    args = ap.parse_args(argv)

    from bayesrank.bt import DEFAULT_PRIOR_SIGMA

    k = args.players
    theta = truth(k, spread=1.0, seed=11)
    template = all_pairs(k, args.per_pair)
    batch = simulate_counts(theta, template, n_rep=args.reps, seed=12)
    rows = []
    t = time.perf_counter()
    cov, _ = fisher_coverage(theta, template, batch, "half")
    rows.append(row("Fisher (MLE)", cov, f"{args.reps} datasets × {k} players"))
    ridge = 1 / DEFAULT_PRIOR_SIGMA**2
    cov_l, _ = fisher_coverage(theta, template, batch, "half", ridge=ridge)
    rows.append(row("Laplace (PyMC twin)", cov_l, f"ridge = 1/σ² = {ridge:.3f}; σ = {DEFAULT_PRIOR_SIGMA}"))
    dav = simulate_counts(theta, template, n_rep=args.reps, seed=13, log_nu=-0.7)
    cov_d, _ = fisher_coverage(theta, template, dav, "davidson")
    rows.append(row("Fisher (Davidson ties)", cov_d, "Davidson data, ν = e^-0.7"))
    bc = bootstrap_coverage(theta, template, batch[: args.boot_reps], n_boot=300, seed=14)
    rows.append(row("bootstrap percentile", bc, f"{args.boot_reps} datasets × 300 resamples"))
    print(f"frequentist part: {time.perf_counter() - t:.1f} s", flush=True)

    if args.pymc_check or args.nuts:
        from bayesrank.bt import build_bt_model, map_laplace
        from bayesrank.bt.mle import constrained_covariance, fit_newton
        from bayesrank.bt.pymc_model import sample_nuts

        diffs = []
        for r in range(args.pymc_check):
            c = template.with_counts(batch[r])
            lf = map_laplace(build_bt_model(c, ties="half"))
            p, h, _, _ = fit_newton(c, ties="half", ridge=ridge)
            diffs.append(max(np.abs(lf.theta - p).max(), np.abs(lf.cov - constrained_covariance(h, k)).max()))
        if diffs:
            print(f"PyMC Laplace vs twin on {len(diffs)} datasets: max |Δ| = {max(diffs):.2e}")
        if args.nuts:
            t = time.perf_counter()
            hits = []
            for r in range(args.nuts):
                c = template.with_counts(batch[r])
                dt = sample_nuts(build_bt_model(c, ties="half"), draws=500, tune=500, chains=2, seed=100 + r, cores=1)
                th = dt.posterior["theta"].transpose("chain", "draw", "player").values.reshape(-1, k)
                lo, hi = np.quantile(th, [0.025, 0.975], axis=0)
                hits.append((lo <= theta) & (theta <= hi))
            rows.append(row("NUTS (equal-tailed)", np.array(hits), f"{args.nuts} datasets; {time.perf_counter() - t:.0f} s"))

    table = pd.DataFrame(rows)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False)
    pd.set_option("display.width", 160)
    print(table.round(4).to_string(index=False))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
