"""Speed of the items kind at the issue's scale: 100 models × 10,000 binary items (Rasch data), whole
process (``bayesrank review FILE --fast`` and with NUTS) beside the separate steps, in one run.

    python benchmarks/bench_items.py [--models 100] [--items 10000] [--no-nuts]
    python benchmarks/bench_items.py --curve [--sizes 2000x10000,5000x20000] [--bayes]

``--bayes``: the curve of ``review --kind items`` without ``--fast`` (NUTS up to ``NUTS_MAX_MODELS``
models, the Laplace + PSIS fit above; the method and its check are printed).

Targets (issue 20): ``review --fast`` < 10 s and ``review`` with NUTS < 60 s, whole process on 2
cores. Each row gives wall seconds and CPU seconds (user + sys; for the whole processes those of
the child process); the whole-process times include Python start-up and imports. The load average
is printed before and after: on a shared machine wall times move with it, CPU times much less."""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from process_usage import whole_process
from scipy.special import expit


def make(path: Path, m: int, n: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    th = np.linspace(1.5, -1.5, m)
    b = rng.normal(-0.5, 1.5, n)
    y = (rng.random((m, n)) < expit(th[:, None] - b[None, :])).astype(np.int8)
    pd.DataFrame({"model": np.repeat([f"model{i:03d}" for i in range(m)], n), "item": np.tile(np.arange(n), m),
                  "score": y.ravel()}).to_csv(path, index=False)


def make_wide(path: Path, m: int, n: int, seed: int = 0) -> None:
    """The same Rasch data as :func:`make` as an items × models table (``item`` column, one 0/1 column
    per model; 2 bytes per cell: 40 MB at 2,000 × 10,000), written in blocks of items."""
    rng = np.random.default_rng(seed)
    th = np.linspace(1.5, -1.5, m)
    b = rng.normal(-0.5, 1.5, n)
    with open(path, "wb") as f:
        f.write(("item," + ",".join(f"model{i:04d}" for i in range(m)) + "\n").encode())
        for s in range(0, n, 1000):
            bb = b[s:s + 1000]
            y = (rng.random((len(bb), m)) < expit(th[None, :] - bb[:, None])).astype(np.uint8)
            cells = np.full((len(bb), 2 * m), ord(","), dtype=np.uint8)
            cells[:, 0::2] = y + ord("0")
            cells[:, -1] = ord("\n")
            f.write(b"".join(f"q{s + r},".encode() + cells[r].tobytes() for r in range(len(bb))))


CURVE = ([(m, 10_000) for m in (100, 500, 1000, 2000, 5000)] + [(2000, n) for n in (1000, 5000, 20_000)]
         + [(5000, 20_000)])


def curve(sizes=CURVE, bayes: bool = False) -> None:
    """The scaling curve of ``review FILE --kind items --fast`` on wide 0/1 tables (issue 28: 2,000 ×
    10,000 in ≤ 60 s and ≤ 4 GB, converged; 5,000 × 20,000 within 8 GB): one process per size.
    ``bayes``: without ``--fast`` (NUTS, or Laplace + PSIS above ``NUTS_MAX_MODELS`` models; ≤ 10 min)."""
    import json

    tmp = Path(tempfile.mkdtemp())
    print(f"{'models':>7s} {'items':>7s} {'MB':>6s} {'wall s':>7s} {'CPU s':>7s} {'peak GB':>8s}  converged  load",
          flush=True)
    for m, n in sizes:
        csv, out = tmp / f"w{m}x{n}.csv", tmp / "r.json"
        make_wide(csv, m, n)
        load = os.getloadavg()[0]
        wall, cpu, rss = whole_process([sys.executable, "-m", "bayesrank.cli", "review", str(csv), "--kind", "items",
                                        *([] if bayes else ["--fast"]), "--json", str(out)])
        model = json.loads(out.read_text())["sections"]["items_model"]
        conv = model["diagnostics"]["converged"]
        psis = model["diagnostics"].get("extra", {}).get("psis")
        how = f"  {model['method']}" + (f", k̂ {psis['pareto_k']:.2f}, ESS {psis['ess']:,.0f}" if psis else "") if bayes else ""
        print(f"{m:7d} {n:7d} {csv.stat().st_size / 1e6:6.0f} {wall:7.1f} {cpu:7.1f} {rss:8.2f}  {str(conv):9s} "
              f"{load:5.1f}{how}", flush=True)
        csv.unlink()


def _cpu(who) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def timed(label, fn, who=resource.RUSAGE_SELF):
    """Run ``fn``; print wall and CPU seconds (of this process, or of its children)."""
    c, t = _cpu(who), time.perf_counter()
    out = fn()
    wall, cpu = time.perf_counter() - t, _cpu(who) - c
    print(f"{label:<64s} {wall:8.2f} s wall {cpu:8.2f} s CPU", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=100)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--no-nuts", action="store_true")
    ap.add_argument("--curve", action="store_true", help="the scaling curve of review --kind items --fast (wide tables)")
    ap.add_argument("--sizes", default=None, help="with --curve: MxN,MxN,... (default: the curve of docs/scale.md)")
    ap.add_argument("--bayes", action="store_true", help="with --curve: review without --fast (NUTS or Laplace + PSIS)")
    a = ap.parse_args()
    if a.curve:
        sizes = CURVE if a.sizes is None else [tuple(int(v) for v in s.split("x")) for s in a.sizes.split(",")]
        return curve(sizes, bayes=a.bayes)
    tmp = Path(tempfile.mkdtemp())
    csv = tmp / "items.csv"
    make(csv, a.models, a.items)
    print(f"{a.models} models × {a.items:,} items ({a.models * a.items:,} rows); "
          f"{len(os.sched_getaffinity(0))} CPUs; load average {os.getloadavg()[0]:.2f}")
    for extra in ([["--fast"]] + ([] if a.no_nuts else [[]])):
        cmd = [sys.executable, "-m", "bayesrank.cli", "review", str(csv), *extra, "--json", str(tmp / "r.json")]

        def whole(cmd=cmd):
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode:
                raise SystemExit(f"{' '.join(cmd)} failed:\n{run.stderr[-3000:]}")

        timed(f"whole process: bayesrank review {' '.join(extra) or '(NUTS)'}", whole, resource.RUSAGE_CHILDREN)
        if not extra:
            import json

            model = json.loads((tmp / "r.json").read_text())["sections"]["items_model"]
            print("   ", model["method"], model["diagnostics"].get("rhat_max"), model["diagnostics"].get("divergences"))
    from bayesrank.items import irt
    from bayesrank.items.frequentist import mean_covariance, model_table, pair_stats, rank_sets
    from bayesrank.items.perturb import lose_significance, overturn
    from bayesrank.items.readers import read_items

    data, _ = timed("read CSV → ItemScores", lambda: read_items(csv))
    timed("means, Wilson intervals, paired covariance", lambda: (model_table(data), mean_covariance(data)))
    m = data.n_models
    a_, b_ = np.triu_indices(m, 1)
    timed(f"exact McNemar, all {len(a_):,} pairs", lambda: pair_stats(data, a_, b_))
    timed("simultaneous rank sets + tie groups", lambda: rank_sets(data))
    order = np.argsort(-data.means(), kind="stable")
    top5 = [(int(x), int(y)) for x in order[:5] for y in order[5:]]
    timed(f"topk:5 exact re-grades + drops ({len(top5)} contrasts)",
          lambda: [overturn(data, top5, k) for k in ("flip", "drop")])
    timed("topk:5 loss of significance (flip + drop)", lambda: [lose_significance(data, top5, k, 0.05, "two")
                                                               for k in ("flip", "drop")])
    st = timed("Rasch sufficient statistics", lambda: irt.sufficient(data))
    lap = timed("Rasch Laplace (trust-region Newton, analytic Hessian)", lambda: irt.fit_laplace(st))
    if not a.no_nuts:
        f = timed(f"Rasch NUTS (nutpie, 4 chains × {irt.DRAWS:,} + {irt.TUNE})",
                  lambda: irt.fit_nuts(data, loo=False, laplace=lap, stats=st))
        print("   ", f.diagnostics.line(), f.extra.get("grid"))
        timed("posterior predictive check of item totals (100 draws)",
              lambda: irt.ppc_item_totals(f, data, n_draws=100, stats=irt.nuts_grid(st, lap)))
        timed("item-level PSIS-LOO (500 draws × all items)",
              lambda: irt.loo_items(f.draws, f.mu, f.sigma, data, chains=4))
    fractional_significance()
    print(f"load average {os.getloadavg()[0]:.2f}")


def fractional_significance(m: int = 30, n: int = 3000, seed: int = 0) -> None:
    """Loss of significance under the paired t test (bayesrank.items.significance) for the topk:5 claim
    on fractional scores (m models × n items, a shared item effect, models 0.04 apart)."""
    from bayesrank.items.data import ItemScores
    from bayesrank.items.significance import lose_significance_studentized

    rng = np.random.default_rng(seed)
    base = rng.beta(5, 3, n)
    y = np.round(np.clip(base[None, :] + np.linspace(0.6, -0.6, m)[:, None] + rng.normal(0, 0.2, (m, n)), 0, 1), 2)
    d = ItemScores(np.array([f"model{i:03d}" for i in range(m)], dtype=object),
                   np.array([str(i) for i in range(n)], dtype=object), y, np.ones_like(y, dtype=np.int64))
    order = np.argsort(-d.means(), kind="stable")
    top5 = [(int(x), int(z)) for x in order[:5] for z in order[5:]]
    for action in ("flip", "drop"):
        e = timed(f"fractional {m} × {n:,}: topk:5 loss of significance, {action} ({len(top5)} contrasts)",
                  lambda action=action: lose_significance_studentized(d, top5, action, 0.05, "two"))
        print(f"    budget {e['budget']}, lower bound {e['lower_bound']}, exact {e['exact']}, verified {e['verified']}")


if __name__ == "__main__":
    main()
