"""Bradley-Terry benchmark: bayesrank vs evalica vs arena-rank, and NUTS aggregated vs unaggregated.

Workloads (both start from a pandas DataFrame of names ``model_a, model_b, winner``):

- ``arena``: the real Chatbot Arena counts (bundled ``chatbotarena_20240814.json``) expanded to
  1,670,250 battle rows (129 models; both tie kinds are ``tie``).
- ``synthetic``: 1,000,000 comparisons among 150 models, 10% ties, seeded.

Each tool runs in its own subprocess (clean memory accounting: peak RSS from ``resource``, minus
the RSS after the DataFrame was built), twice in a row: ``cold`` includes one-off costs (JAX
compilation for arena-rank), ``warm`` is the best of the second and third runs in the same process.

- bayesrank: ``read_comparisons`` + ``aggregate`` + Newton MLE + Fisher CIs (half ties).
- evalica:   ``evalica.bradley_terry`` with its defaults (ties = draws at weight 1/2), no CIs.
- arena-rank: ``PairDataset.from_pandas`` + L-BFGS fit + sandwich CIs (its defaults).

NUTS: ``BradleyTerry(arena).fit("nuts")`` with 4 chains × (1000 tune + 1000 draws) on the
aggregated pair counts, vs the same PyMC model written on unaggregated rows: the cost of one
log-density + gradient evaluation on all 1.67M rows is measured, and a short NUTS run on the
unaggregated rows is timed; the full 4-chain time is projected from the measured gradient cost
and the number of leapfrog steps the aggregated run actually took (same posterior, same steps).

``--rows-full TUNE DRAWS`` measures instead of projecting: the same NUTS settings (4 chains, 2 cores)
on the aggregated counts and on all 1,670,250 rows, both timed (≈ 1 h for 250 + 250).

Run: ``python benchmarks/bench_bt.py [--skip-nuts] [--rows-full TUNE DRAWS] [--json out/bench_bt.json]``. All BLAS
libraries are limited to one thread (multi-threaded OpenBLAS is much slower on a busy machine).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

N_SYNTH, K_SYNTH, TIE_SYNTH, SEED = 1_000_000, 150, 0.10, 20240814


# ----------------------------------------------------------------------------- workloads
def arena_frame() -> pd.DataFrame:
    """1,670,250 battle rows expanded from the bundled arena pair counts (shuffled, seeded)."""
    from bayesrank.datasets import path

    raw = json.loads(path("arena/chatbotarena_20240814.json").read_text())
    models = np.asarray(raw["models"], dtype=object)
    x = np.asarray(raw["X"])
    y = np.asarray(raw["Y"], dtype=np.int64)
    labels = np.array(["model_a", "model_b", "tie", "tie"], dtype=object)
    reps = y.ravel()
    pair = np.repeat(np.repeat(np.arange(len(x)), y.shape[1]), reps)
    out = np.repeat(np.tile(np.arange(y.shape[1]), len(x)), reps)
    order = np.random.default_rng(SEED).permutation(len(pair))
    pair, out = pair[order], out[order]
    return pd.DataFrame({"model_a": models[x[pair, 0]], "model_b": models[x[pair, 1]], "winner": labels[out]})


def synthetic_frame() -> pd.DataFrame:
    """1M comparisons among 150 models; strengths N(0, 1); 10% ties, else a BT win."""
    rng = np.random.default_rng(SEED)
    theta = rng.normal(0.0, 1.0, K_SYNTH)
    a = rng.integers(0, K_SYNTH, N_SYNTH)
    b = (a + rng.integers(1, K_SYNTH, N_SYNTH)) % K_SYNTH
    p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b])))
    u = rng.random(N_SYNTH)
    tie = rng.random(N_SYNTH) < TIE_SYNTH
    winner = np.where(tie, "tie", np.where(u < p, "model_a", "model_b")).astype(object)
    names = np.array([f"model-{k:03d}" for k in range(K_SYNTH)], dtype=object)
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner})


# ----------------------------------------------------------------------------- tools
def run_bayesrank(df):
    from scipy.stats import norm

    from bayesrank.bt.mle import constrained_covariance, fit_newton
    from bayesrank.data import read_comparisons

    counts = read_comparisons(df, format="battles").aggregate()
    params, hess, model, _ = fit_newton(counts, ties="half")
    sd = np.sqrt(np.diag(constrained_covariance(hess, counts.n_players)))
    z = norm.ppf(0.975)
    upper = params + z * sd  # the CI is part of the timed work
    return {str(p): float(s) for p, s in zip(counts.players, params)}, {"ci_halfwidth_median": float(np.median(upper - params))}


def run_evalica(df):
    import evalica

    w = df["winner"].map({"model_a": evalica.Winner.X, "model_b": evalica.Winner.Y, "tie": evalica.Winner.Draw})
    r = evalica.bradley_terry(df["model_a"], df["model_b"], w)
    s = np.log(r.scores)  # strengths, geometric-mean normalised: log-scores are sum-to-zero logits
    return {str(k): float(v) for k, v in s.items()}, {"iterations": int(r.iterations)}


def run_arena_rank(df):
    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.utils.data_utils import PairDataset

    ds = PairDataset.from_pandas(df)
    bt = BradleyTerry(len(ds.competitors))
    out = bt.compute_ratings_and_cis(ds, ci_method="sandwich")
    alpha = 400.0 / np.log(10.0)
    theta = (np.asarray(out["ratings"]) - 1000.0) / alpha
    half = (np.asarray(out["rating_upper"]) - np.asarray(out["rating_lower"])) / 2 / alpha
    return {str(c): float(t) for c, t in zip(out["competitors"], theta)}, {"ci_halfwidth_median": float(np.median(half))}


TOOLS = {"bayesrank": run_bayesrank, "evalica": run_evalica, "arena-rank": run_arena_rank}
WORKLOADS = {"arena": arena_frame, "synthetic": synthetic_frame}


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def worker(workload: str, tool: str) -> dict:
    """Runs in a subprocess: build the frame, then time the tool 3 times (cold = first call, warm = best
    of the next two, the usual way to damp noise from a shared machine); report peak memory."""
    import resource

    df = WORKLOADS[workload]()
    fn = TOOLS[tool]
    base = _rss_mb()
    times = []
    for _ in range(3):
        t = time.perf_counter()
        scores, info = fn(df)
        times.append(time.perf_counter() - t)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"workload": workload, "tool": tool, "rows": len(df), "cold_s": times[0], "warm_s": min(times[1:]),
            "peak_rss_mb": peak, "peak_over_frame_mb": peak - base, "frame_rss_mb": base, "scores": scores, "info": info}


def _spawn(workload, tool) -> dict:
    cmd = [sys.executable, __file__, "--worker", workload, tool]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{tool} on {workload} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def compare_fits(results: list[dict]) -> pd.DataFrame:
    rows = []
    for wl in WORKLOADS:
        rs = {r["tool"]: r for r in results if r["workload"] == wl}
        if "bayesrank" not in rs:
            continue
        ours = pd.Series(rs["bayesrank"]["scores"])
        order = list(ours.sort_values(ascending=False).index)
        for tool, r in rs.items():
            s = pd.Series(r["scores"]).loc[ours.index]
            s = s - s.mean()
            other = list(s.sort_values(ascending=False).index)
            rows.append({
                "workload": wl, "tool": tool, "rows": r["rows"], "players": len(ours),
                "cold_s": r["cold_s"], "warm_s": r["warm_s"],
                "ours_faster_cold": r["cold_s"] / rs["bayesrank"]["cold_s"],
                "ours_faster_warm": r["warm_s"] / rs["bayesrank"]["warm_s"],
                "peak_rss_mb": r["peak_rss_mb"], "peak_over_frame_mb": r["peak_over_frame_mb"],
                "max_abs_diff_logit": float(np.abs(s.to_numpy() - ours.to_numpy()).max()),
                "ranking_identical": other == order,
                "rank_positions_differing": int(sum(a != b for a, b in zip(other, order))),
            })
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- NUTS
def row_model(players, n_rows=None):
    """The aggregated PyMC BT model written on unaggregated battle rows (first ``n_rows`` of
    :func:`arena_frame`): ZeroSumNormal prior, y ∈ {1, 0, ½} (half ties), one Bernoulli-kernel
    term per battle in a ``Potential``."""
    import pymc as pm
    import pytensor.tensor as pt

    from bayesrank.bt.pymc_model import DEFAULT_PRIOR_SIGMA

    rows = arena_frame().iloc[:n_rows]
    names = pd.Index(players)
    ia, ib = names.get_indexer(rows["model_a"]), names.get_indexer(rows["model_b"])
    yv = rows["winner"].map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5}).to_numpy()
    with pm.Model(coords={"player": [str(p) for p in players]}) as m:
        theta = pm.ZeroSumNormal("theta", sigma=DEFAULT_PRIOR_SIGMA, dims="player")
        d = theta[ia] - theta[ib]
        pm.Potential("rows", -(yv * pt.softplus(-d) + (1 - yv) * pt.softplus(d)).sum())
    return m


def nuts_benchmark(chains: int = 4, draws: int = 1000, tune: int = 1000, sub_rows: int = 100_000) -> dict:
    """NUTS on aggregated counts (timed in full) vs the same model on unaggregated rows."""
    import pymc as pm
    import pytensor

    from bayesrank.bt import BradleyTerry
    from bayesrank.data import read_comparisons
    from bayesrank.datasets import path

    comps = read_comparisons(path("arena/chatbotarena_20240814.json"))
    counts = comps.aggregate()
    out = {"players": int(counts.n_players), "pairs": int(counts.n_pairs), "chains": chains, "draws": draws, "tune": tune}

    bt = BradleyTerry(comps, ties="half")  # the half-win model (the row model below is half-win too)
    t = time.perf_counter()
    fit = bt.fit("nuts", chains=chains, draws=draws, tune=tune, seed=1, ppc=False, loo=False)
    out["aggregated_nuts_s"] = time.perf_counter() - t
    st = fit.idata.sample_stats
    steps = int(np.asarray(st["n_steps"]).sum()) if "n_steps" in st else None
    out["aggregated_leapfrog_steps_draws"] = steps
    out["diagnostics"] = {k: getattr(fit.diagnostics, k) for k in ("rhat_max", "ess_bulk_min", "divergences")}

    def grad_cost(m, reps=20):
        """Seconds per (log p, ∇ log p) evaluation of a compiled PyTensor function at the initial point."""
        logp = m.logp()
        vv = m.value_vars
        f = pytensor.function(vv, [logp, *pytensor.grad(logp, vv)])
        ip = m.initial_point()
        args = [ip[v.name] for v in vv]
        f(*args)
        t = time.perf_counter()
        for _ in range(reps):
            f(*args)
        return (time.perf_counter() - t) / reps

    agg_cost = grad_cost(bt.model, reps=200)
    full = row_model(counts.players)
    row_cost = grad_cost(full, reps=5)
    out["grad_eval_aggregated_ms"] = agg_cost * 1e3
    out["grad_eval_rows_ms"] = row_cost * 1e3
    out["grad_cost_ratio"] = row_cost / agg_cost

    # short real NUTS on unaggregated rows (a subsample keeps it feasible; per-step cost scales with rows)
    sub = row_model(counts.players, sub_rows)
    with sub:
        t = time.perf_counter()
        dt = pm.sample(draws=200, tune=200, chains=1, cores=1, random_seed=2, progressbar=False,
                           compute_convergence_checks=False, nuts_sampler="pymc")
        out["rows_subsample_nuts_s"] = time.perf_counter() - t
    sub_steps = int(np.asarray(dt.sample_stats["n_steps"]).sum())
    out["rows_subsample"] = sub_rows
    out["rows_subsample_steps_draws"] = sub_steps
    per_step_sub = out["rows_subsample_nuts_s"] / max(sub_steps * 2, 1)  # tune ≈ draws in steps
    out["rows_subsample_s_per_step"] = per_step_sub
    if steps:
        total_steps = steps * (1 + tune / draws)  # tuning steps ≈ draw steps
        # 4 chains on 2 cores: wall ≈ total steps × per-step cost / 2
        out["projected_rows_nuts_s"] = total_steps * row_cost / min(chains, 2)
        out["projected_speedup"] = out["projected_rows_nuts_s"] / out["aggregated_nuts_s"]
    return out


def nuts_rows_full(chains: int = 4, tune: int = 250, draws: int = 250) -> dict:
    """Measured, not projected: the same NUTS settings on the aggregated counts and on all
    1,670,250 unaggregated rows (both PyMC NUTS, ``chains`` chains on 2 cores, same seed)."""
    import pymc as pm

    from bayesrank.bt import BradleyTerry
    from bayesrank.data import read_comparisons
    from bayesrank.datasets import path

    comps = read_comparisons(path("arena/chatbotarena_20240814.json"))
    counts = comps.aggregate()
    out = {"chains": chains, "tune": tune, "draws": draws, "load_average_start": os.getloadavg()[0]}
    t = time.perf_counter()
    fit = BradleyTerry(comps, ties="half").fit("nuts", chains=chains, draws=draws, tune=tune, seed=3, ppc=False, loo=False)
    out["aggregated_nuts_s"] = time.perf_counter() - t
    out["aggregated_leapfrog_steps_draws"] = int(np.asarray(fit.idata.sample_stats["n_steps"]).sum())
    full = row_model(counts.players)
    t = time.perf_counter()
    with full:
        dt = pm.sample(draws=draws, tune=tune, chains=chains, cores=2, random_seed=3, progressbar=True,
                       compute_convergence_checks=False, nuts_sampler="pymc")
    out["rows_nuts_s"] = time.perf_counter() - t
    out["rows_leapfrog_steps_draws"] = int(np.asarray(dt.sample_stats["n_steps"]).sum())
    rows_mean = np.asarray(dt.posterior["theta"]).reshape(-1, counts.n_players).mean(axis=0)
    out["speedup"] = out["rows_nuts_s"] / out["aggregated_nuts_s"]
    out["rows_diagnostics"] = {"divergences": int(np.asarray(dt.sample_stats["diverging"]).sum())}
    agg_mean = fit.table().set_index("player").loc[list(counts.players), "score"].to_numpy()
    out["max_abs_diff_posterior_mean"] = float(np.abs(rows_mean - agg_mean).max())
    out["load_average_end"] = os.getloadavg()[0]
    return out


# ----------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", nargs=2, metavar=("WORKLOAD", "TOOL"), help=argparse.SUPPRESS)
    ap.add_argument("--skip-nuts", action="store_true")
    ap.add_argument("--only-nuts", action="store_true")
    ap.add_argument("--rows-full", nargs=2, type=int, metavar=("TUNE", "DRAWS"),
                    help="only: NUTS on all unaggregated rows vs aggregated, same settings, both timed")
    ap.add_argument("--workloads", nargs="*", default=list(WORKLOADS))
    ap.add_argument("--json", default="out/bench_bt.json")
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return 0

    from bayesrank.report import rich_table

    report = {}
    if args.rows_full:
        nr = nuts_rows_full(tune=args.rows_full[0], draws=args.rows_full[1])
        for k, v in nr.items():
            print(f"  {k}: {v}")
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"nuts_rows_full": nr}, indent=2, default=float))
        print(f"wrote {args.json}")
        return 0
    if not args.only_nuts:
        results = []
        for wl in args.workloads:
            for tool in TOOLS:
                print(f"running {tool} on {wl} ...", flush=True)
                results.append(_spawn(wl, tool))
        table = compare_fits(results)
        pd.set_option("display.width", 200)
        print(table.round(3).to_string(index=False))
        try:
            rich_table(table.round(3))
        except Exception:  # noqa: BLE001 - the plain table above is enough
            pass
        report["mle"] = table.to_dict(orient="records")
    if not args.skip_nuts:
        print("running NUTS (aggregated vs rows) ...", flush=True)
        nb = nuts_benchmark()
        for k, v in nb.items():
            print(f"  {k}: {v}")
        report["nuts"] = nb
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(report, indent=2, default=float))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
