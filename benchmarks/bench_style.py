"""Style-controlled Bradley–Terry benchmark: bayesrank's row-level Newton vs arena-rank's contextual BT.

Workload: 1,000,000 synthetic battles among 150 players with 4 style features (log-normal
per-response values, true β = (0.4, 0.2, −0.1, 0.05) on the standardised normalised differences),
10% ties, seeded; a pandas DataFrame ``model_a, model_b, winner`` + 8 raw feature columns.

Both tools start from that DataFrame and return ratings, style coefficients and sandwich CIs:

- bayesrank:  ``BradleyTerry(df, style=...)`` (validation, normalised differences, standardisation)
  + the one Newton on comparison rows (bincount gradient/Hessian) + sandwich covariance;
- arena-rank: the normalised differences (its example's ``add_style_feature_cols`` step, numpy) +
  ``ContextualPairDataset.from_pandas`` (standardisation) + L-BFGS fit + sandwich CIs, with
  ``reg=0`` (the same estimator; its default ``reg=1`` shrinks β) and ``reweighted=False``.

Each tool runs in its own subprocess, three times: ``cold`` (includes JAX compilation for
arena-rank) and ``warm`` (best of runs 2–3). The answers are compared (max |Δθ|, max |Δβ|).

Run: ``python benchmarks/bench_style.py [--n 1000000] [--json out/bench_style.json]``. BLAS is
limited to one thread (multi-threaded OpenBLAS is much slower on a busy machine).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

K, TIES, SEED = 150, 0.10, 20251201
BETA = (0.4, 0.2, -0.1, 0.05)
FEATURES = ("tokens", "headers", "lists", "bold")


def frame(n: int) -> pd.DataFrame:
    """``n`` battles with raw per-response style values (columns ``<feature>_a``, ``<feature>_b``)."""
    from bayesrank.bt.simulate import simulate_style_battles

    df, _, _ = simulate_style_battles(n_players=K, n_battles=n, beta=BETA, tie_rate=TIES, seed=SEED)
    df = df.rename(columns={f"s{f}_{s}": f"{name}_{s}" for f, name in enumerate(FEATURES) for s in "ab"})
    df["winner"] = df.pop("outcome").map({"a": "model_a", "b": "model_b", "tie": "tie"})
    return df


def run_bayesrank(df):
    from bayesrank.bt import BradleyTerry

    style = ",".join(f"{f}_a:{f}_b" for f in FEATURES)
    fit = BradleyTerry(df, style, format="battles").fit("mle", ci="sandwich")
    return dict(zip(map(str, fit.players), fit.score.tolist())), fit.coef.tolist()


def run_arena_rank(df):
    from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
    from arena_rank.utils.data_utils import ContextualPairDataset

    feat = df[["model_a", "model_b", "winner"]].copy()
    for f in FEATURES:
        a, b = df[f"{f}_a"].to_numpy(float), df[f"{f}_b"].to_numpy(float)
        tot = a + b
        feat[f] = np.divide(a - b, tot, out=np.zeros_like(tot), where=tot != 0)
    ds = ContextualPairDataset.from_pandas(feat, feature_cols=list(FEATURES), reweighted=False)
    model = ContextualBradleyTerry(len(ds.competitors), len(FEATURES), reg=0.0)
    out = model.compute_ratings_and_cis(ds, ci_method="sandwich")
    theta = (np.asarray(out["ratings"]) - 1000.0) / (400.0 / np.log(10.0))
    return dict(zip(map(str, out["competitors"]), theta.tolist())), np.asarray(out["coeffs"]).tolist()


TOOLS = {"bayesrank": run_bayesrank, "arena-rank": run_arena_rank}


def worker(tool: str, n: int) -> dict:
    df = frame(n)
    times, result = [], None
    for _ in range(3):
        t0 = time.perf_counter()
        result = TOOLS[tool](df)
        times.append(time.perf_counter() - t0)
    return {"tool": tool, "cold_s": times[0], "warm_s": min(times[1:]), "theta": result[0], "beta": result[1]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.n)))
        return 0
    res = {}
    for tool in TOOLS:
        out = subprocess.run([sys.executable, __file__, "--worker", tool, "--n", str(args.n)], capture_output=True,
                             text=True, check=True)
        res[tool] = json.loads(out.stdout.strip().splitlines()[-1])
    ours, ref = res["bayesrank"], res["arena-rank"]
    names = sorted(ours["theta"])
    d_theta = max(abs(ours["theta"][p] - ref["theta"][p]) for p in names)
    d_beta = float(np.max(np.abs(np.subtract(ours["beta"], ref["beta"]))))
    rows = [{"tool": t, "cold_s": r["cold_s"], "warm_s": r["warm_s"]} for t, r in res.items()]
    table = pd.DataFrame(rows)
    table["speedup_vs_arena_rank_warm"] = ref["warm_s"] / table["warm_s"]
    table["speedup_vs_arena_rank_cold"] = ref["cold_s"] / table["cold_s"]
    print(f"{args.n:,} battles, {K} players, {len(FEATURES)} style features, {TIES:.0%} ties; "
          f"MLE + sandwich CIs from a DataFrame")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    print(f"agreement: max |Δθ| = {d_theta:.2e}, max |Δβ| = {d_beta:.2e}; β (bayesrank) = "
          f"{np.round(ours['beta'], 4).tolist()}, truth {list(BETA)}")
    if args.json:
        from bayesrank.report import write_json

        write_json({"n": args.n, "table": table, "max_abs_theta_diff": d_theta, "max_abs_beta_diff": d_beta}, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
