"""False-alarm rate of the NUTS-vs-Laplace check on the 1.67M-vote arena (issue 12.1).

The slow test ``tests/bt/test_pymc_references.py::test_nuts_agrees_with_laplace_on_arena`` runs one
seed of NUTS (2 chains × (400 tune + 400 draws)) and checks that posterior means and SDs of all 129
players agree with the Laplace twin within their own Monte Carlo errors (ArviZ MCSE of the mean and
of the SD; bounds 5 and 5.5 on max |z| over 129 players). The model is correct, so every alarm is false.
This script runs seeds 0..N−1 (every seed, none chosen), records per seed the largest |z| and
whether any check fires, and estimates the false-alarm rate two ways:

* directly (alarms / seeds, with a 95% Clopper-Pearson upper bound), and
* from the pooled z-values (2 × 2,580): per check, P(max of 129 |z| ≥ bound) implied by a normal
  with their SD, and — conservatively, for heavy tails — by a Student t whose tail matches the
  observed share of |z| > 3 (the direct count of 20 seeds alone cannot show a rate below 1%).

Run: ``python examples/bt_nuts_laplace_false_alarm.py [--seeds 20]`` (≈ 20 s per seed); writes
``out/bt_nuts_laplace_false_alarm.csv``.
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
from bt.nuts_laplace import MEDIAN_REL_BOUND, Z_BOUND_MEAN, Z_BOUND_SD, alarms, nuts_laplace_z  # noqa: E402

threadpool_limits(limits=1, user_api="blas")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--draws", type=int, default=400)
    ap.add_argument("--out", default="out/bt_nuts_laplace_false_alarm.csv")
    args = ap.parse_args(argv)

    from scipy.optimize import brentq
    from scipy.stats import beta, norm
    from scipy.stats import t as student_t

    from bayesrank.bt import DEFAULT_PRIOR_SIGMA, build_bt_model
    from bayesrank.bt.mle import constrained_covariance, fit_newton
    from bayesrank.bt.pymc_model import sample_nuts
    from bayesrank.data import read_comparisons
    from bayesrank.datasets import path

    counts = read_comparisons(path("arena/chatbotarena_20240814.json")).aggregate()
    k = counts.n_players
    params, hess, _, _ = fit_newton(counts, ties="half", ridge=1 / DEFAULT_PRIOR_SIGMA**2)
    sd_lap = np.sqrt(np.diag(constrained_covariance(hess, k)))
    model = build_bt_model(counts, ties="half")
    rows, zs_mean, zs_sd = [], [], []
    for seed in range(args.seeds):
        t = time.perf_counter()
        dt = sample_nuts(model, draws=args.draws, tune=args.draws, chains=2, seed=seed, cores=1)
        z = nuts_laplace_z(dt, params, sd_lap)
        a = alarms(z)
        zs_mean.append(z["z_mean"])
        zs_sd.append(z["z_sd"])
        rows.append({"seed": seed, "max_abs_z_mean": np.abs(z["z_mean"]).max(), "max_abs_z_sd": np.abs(z["z_sd"]).max(),
                     "median_rel_sd": float(np.median(z["rel_sd"])), "ess_bulk_min": z["ess_bulk_min"],
                     "divergences": z["divergences"], "alarm": any(a.values()), **{f"alarm_{n}": v for n, v in a.items()},
                     "seconds": time.perf_counter() - t})
        print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out, index=False)
    n, n_alarm = len(df), int(df["alarm"].sum())
    upper = float(beta.ppf(0.95, n_alarm + 1, n - n_alarm)) if n_alarm < n else 1.0
    zm, zsd = np.concatenate(zs_mean), np.concatenate(zs_sd)
    pd.set_option("display.width", 160)
    print(df.round(3).to_string(index=False))
    print(f"\nseeds {n}: alarms {n_alarm} (direct rate {n_alarm / n:.3f}, 95% upper bound {upper:.3f})")
    total_normal = total_t = 0.0
    for name, z, bound in (("mean", zm, Z_BOUND_MEAN), ("sd", zsd, Z_BOUND_SD)):
        s = float(z.std())
        share3 = float(np.mean(np.abs(z) > 3))
        p_normal = 1 - (1 - 2 * norm.sf(bound / s)) ** k
        nu = brentq(lambda v: 2 * student_t.sf(3, v) - max(share3, 2 * norm.sf(3) + 1e-9), 2.01, 1e6)
        p_t = 1 - (1 - 2 * student_t.sf(bound, nu)) ** k
        total_normal += p_normal
        total_t += p_t
        print(f"pooled z ({name}): {z.size} values, mean {z.mean():+.3f}, SD {s:.3f}, share |z| > 3 {share3:.4f} "
              f"(N(0,1): 0.0027); P(max over {k} players ≥ {bound}): normal {p_normal:.1e}, t({nu:.0f} df) tail {p_t:.1e}")
    print(f"false-alarm rate of the test (both checks): normal {total_normal:.1e}, heavy-tail bound {total_t:.1e}")
    np.savez(Path(args.out).with_suffix(".npz"), z_mean=np.array(zs_mean), z_sd=np.array(zs_sd))
    print(f"median relative SD error: max |.| over seeds {df['median_rel_sd'].abs().max():.4f} (bound {MEDIAN_REL_BOUND})")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
