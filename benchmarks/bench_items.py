"""Speed of the items kind at the issue's scale: 100 models × 10,000 binary items (Rasch data), whole
process (``bayesrank review FILE --fast`` and with NUTS) beside the separate steps, in one run.

    python benchmarks/bench_items.py [--models 100] [--items 10000] [--no-nuts]

Prints seconds per step; the whole-process times include Python start-up and imports."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit


def make(path: Path, m: int, n: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    th = np.linspace(1.5, -1.5, m)
    b = rng.normal(-0.5, 1.5, n)
    y = (rng.random((m, n)) < expit(th[:, None] - b[None, :])).astype(np.int8)
    pd.DataFrame({"model": np.repeat([f"model{i:03d}" for i in range(m)], n), "item": np.tile(np.arange(n), m),
                  "score": y.ravel()}).to_csv(path, index=False)


def timed(label, fn):
    t = time.perf_counter()
    out = fn()
    print(f"{label:<48s} {time.perf_counter() - t:8.2f} s", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=100)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--no-nuts", action="store_true")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    csv = tmp / "items.csv"
    make(csv, a.models, a.items)
    print(f"{a.models} models × {a.items:,} items ({a.models * a.items:,} rows)")
    for extra in ([["--fast"]] + ([] if a.no_nuts else [[]])):
        cmd = [sys.executable, "-m", "bayesrank.cli", "review", str(csv), *extra, "--json", str(tmp / "r.json")]
        def whole(cmd=cmd):
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode:
                raise SystemExit(f"{' '.join(cmd)} failed:\n{run.stderr[-3000:]}")

        timed(f"whole process: bayesrank review {' '.join(extra) or '(NUTS)'}", whole)
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
    timed("topk:5 exact re-grades + drops (475 contrasts)", lambda: [overturn(data, top5, k) for k in ("flip", "drop")])
    timed("topk:5 loss of significance (flip + drop)", lambda: [lose_significance(data, top5, k, 0.05, "two")
                                                               for k in ("flip", "drop")])
    timed("Rasch Laplace (NumPy twin)", lambda: irt.fit_laplace(data))
    if not a.no_nuts:
        f = timed("Rasch NUTS (PyMC, 4 chains × 500 + 500, incl. compile)", lambda: irt.fit_nuts(data, loo=False))
        print("   ", f.diagnostics.line())
        timed("item-level PSIS-LOO (500 draws × 10,000 items)",
              lambda: irt.loo_items(f.draws, f.mu, f.sigma, data, chains=4))


if __name__ == "__main__":
    main()
