"""Coverage of the calibration-gap intervals by simulation with a known population gap.

The paired posterior's 95% interval and the paired percentile bootstrap interval of the plug-in
gap, per estimator, against the population value of the same functional (bayesrank.calibration.
coverage: truth, population gaps on 2·10⁶ items, one nutpie-compiled model re-used with new data).

    python examples/calibration_gap_coverage.py --reps 0:600 --estimators ece,ece_em,ks --out out/cov_a.csv
    python examples/calibration_gap_coverage.py --reps 600:800 --estimators ece,ece_em,ks,smece --out out/cov_b.csv
    python examples/calibration_gap_coverage.py --table out/cov_a.csv out/cov_b.csv
    python examples/calibration_gap_coverage.py --scenario calibrated-verbal --no-posterior \
        --reps 0:1200 --estimators ece,ks,ece2_debiased --out out/cov_boundary_boot.csv

``--no-posterior``: bootstrap intervals only (seconds per replication instead of a NUTS fit; the
posterior columns are left empty). ``ece2_debiased`` (Kumar et al.'s debiased squared ℓ2 error)
has no posterior functional and is always bootstrap-only; its rows also carry the percentile,
basic and recentred bootstrap intervals (bayesrank.calibration.bootstrap).

Replication r uses its own random stream ``default_rng([seed, r])``, so disjoint ranges run in
separate processes give one study. Rows are appended to ``--out`` as they finish.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from bayesrank.calibration.coverage import Truth, coverage_table, run_coverage

SCENARIOS = {"miscalibrated": Truth(), "calibrated-verbal": Truth(verbal_shift=0.0, verbal_noise=0.0)}


def _print_table(frames: list[pd.DataFrame]) -> None:
    res = pd.concat(frames, ignore_index=True).drop_duplicates(["rep", "estimator"])
    tab = coverage_table(res)
    pd.set_option("display.width", 200)
    print(tab.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    n = tab.set_index("estimator")["replications"]
    for est, r in n.items():
        se = np.sqrt(0.95 * 0.05 / r)
        print(f"{est}: {r} replications, Monte Carlo SE at 95% = {se:.4f}; a 3-SE band around 0.95 is "
              f"[{0.95 - 3 * se:.3f}, {0.95 + 3 * se:.3f}] (tells 95% from {0.95 - 3 * se:.3f}).")
    per_rep = res.groupby("rep")["cpu_seconds"].max()
    fitted = res["converged"].dropna()
    posterior = (f"; posterior fits not converged: {int((~fitted.astype(bool)).sum())} of {len(fitted.index)} rows"
                 if len(fitted) else "; no posterior fitted")
    print(f"mean CPU seconds per replication: {per_rep.mean():.2f}{posterior}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", default="0:200", help="replication range a:b (default 0:200)")
    ap.add_argument("--estimators", default="ece,ece_em,ks,smece")
    ap.add_argument("--n-items", type=int, default=800)
    ap.add_argument("--scenario", default="miscalibrated", choices=sorted(SCENARIOS),
                    help="miscalibrated: both readouts miscalibrated (default); calibrated-verbal: the stated "
                         "confidence is p rounded to the 0.5..1.0 scale (nearly calibrated: the boundary case)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="out/calibration_gap_coverage.csv")
    ap.add_argument("--no-posterior", action="store_true", help="bootstrap intervals only (no NUTS fit)")
    ap.add_argument("--table", nargs="*", default=None, help="only print the table of these result CSVs")
    args = ap.parse_args()
    if args.table is not None:
        _print_table([pd.read_csv(p) for p in args.table])
        return
    warnings.filterwarnings("ignore", category=UserWarning)
    a, b = (int(x) for x in args.reps.split(":"))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    truth = SCENARIOS[args.scenario]
    ests = tuple(args.estimators.split(","))
    true_gaps = truth.population_gaps(ests)
    print("population gaps:", {k: round(v, 4) for k, v in true_gaps.items()}, flush=True)
    written = {"n": 0}

    def progress(r, rows):
        new = pd.DataFrame(rows[written["n"]:])
        new.to_csv(out, mode="a", header=not out.exists() or out.stat().st_size == 0, index=False)
        written["n"] = len(rows)
        if (r + 1) % 25 == 0:
            print(f"replication {r + 1}", flush=True)

    res = run_coverage(range(a, b), n_items=args.n_items, truth=truth, estimators=ests, seed=args.seed,
                       true_gaps=true_gaps, progress=progress, posterior=not args.no_posterior)
    _print_table([res])


if __name__ == "__main__":
    main()
