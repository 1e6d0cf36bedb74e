"""Out-of-core aggregation vs the in-memory reader, side by side in one run.

Synthetic votes with known truth: K players with θ ~ N(0, 1), uniformly random pairs, outcomes
from Bradley-Terry with 10% ties, player names ``model-000``.., written on the fly into a temp dir
as Parquet files of ``--file-rows`` rows (and a CSV copy of the first ``--csv-rows`` rows).

Each path runs in its own process and reports its peak resident memory (``ru_maxrss``):

- streaming: ``bayesrank.data.streaming.aggregate_files(DIR)`` over all ``--rows`` votes
  (target: 50M votes with peak RSS < 2 GB)
- in memory: ``read_comparisons(pd.read_parquet(files)).aggregate()`` over the first
  ``--in-memory-rows`` votes (memory grows with rows; run it at 50M only with RAM to spare)
- streaming over the same subset, whose counts must equal the in-memory counts exactly

    python benchmarks/bench_outofcore.py [--rows 50_000_000] [--in-memory-rows 10_000_000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CHILD = r"""
import json, resource, sys, time
import numpy as np
mode, files, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
t0 = time.perf_counter()
if mode == "stream":
    from bayesrank.data.streaming import aggregate_files
    res = aggregate_files(files)
    counts, rows = res, res.rows
else:
    import pandas as pd
    from bayesrank.data import read_comparisons
    df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    rows = len(df)
    counts = read_comparisons(df).aggregate()
seconds = time.perf_counter() - t0
np.savez(out, players=counts.players.astype(str), i=counts.i, j=counts.j, counts=counts.counts)
print(json.dumps({"rows": rows, "seconds": seconds, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def write_votes(folder: Path, rows: int, file_rows: int, k: int, seed: int) -> list[Path]:
    """Parquet files of synthetic Bradley-Terry votes (canonical ``model_a, model_b, outcome``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    theta = rng.normal(size=k)
    names = pa.array([f"model-{p:03d}" for p in range(k)])
    labels = pa.array(["a", "b", "tie"])
    files, done = [], 0
    while done < rows:
        n = min(file_rows, rows - done)
        a = rng.integers(0, k, n)
        b = (a + rng.integers(1, k, n)) % k  # never a self-comparison
        p_a = 1 / (1 + np.exp(-(theta[a] - theta[b])))
        u = rng.random(n)
        tie = rng.random(n) < 0.1
        outcome = np.where(tie, 2, np.where(u < p_a, 0, 1))
        table = pa.table({  # plain string columns, as most exports have them (Parquet compresses them itself)
            "model_a": pa.DictionaryArray.from_arrays(pa.array(a, pa.int32()), names).cast(pa.string()),
            "model_b": pa.DictionaryArray.from_arrays(pa.array(b, pa.int32()), names).cast(pa.string()),
            "outcome": pa.DictionaryArray.from_arrays(pa.array(outcome, pa.int8()), labels).cast(pa.string()),
        })
        f = folder / f"votes-{len(files):03d}.parquet"
        pq.write_table(table, f, row_group_size=1_000_000)
        files.append(f)
        done += n
    return files


def run(mode: str, files: list[Path], out: Path) -> dict:
    res = subprocess.run([sys.executable, "-c", CHILD, mode, json.dumps([str(f) for f in files]), str(out)],
                         check=True, capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=50_000_000)
    ap.add_argument("--in-memory-rows", type=int, default=10_000_000)
    ap.add_argument("--csv-rows", type=int, default=5_000_000, help="also stream a CSV copy of this many rows (0: skip)")
    ap.add_argument("--file-rows", type=int, default=5_000_000)
    ap.add_argument("--players", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_outofcore_") as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        files = write_votes(tmp, args.rows, args.file_rows, args.players, args.seed)
        size = sum(f.stat().st_size for f in files) / 2**20
        print(f"wrote {args.rows:,} votes, {args.players} players, {len(files)} Parquet files "
              f"({size:.0f} MB) in {time.perf_counter() - t0:.0f} s")
        n_sub = max(1, -(-args.in_memory_rows // args.file_rows))
        results = [("streaming (all files)", "stream", files),
                   (f"streaming (first {n_sub} files)", "stream", files[:n_sub]),
                   (f"in memory (first {n_sub} files)", "memory", files[:n_sub])]
        if args.csv_rows:
            import pyarrow.csv as pcsv
            import pyarrow.parquet as pq

            csv_dir = tmp / "csv"
            csv_dir.mkdir()
            table = pq.read_table(files[0]).slice(0, args.csv_rows)
            pcsv.write_csv(table, csv_dir / "votes.csv")
            del table
            results.append((f"streaming CSV ({args.csv_rows:,} rows)", "stream", [csv_dir / "votes.csv"]))
        rows = []
        for label, mode, fs in results:
            r = run(mode, fs, tmp / f"{len(rows)}.npz")
            rows.append((label, r))
            print(f"  {label:<34} {r['rows']:>12,} rows {r['seconds']:8.1f} s {r['peak_rss_mb']:8.0f} MB peak RSS", flush=True)
        a, b = np.load(tmp / "1.npz"), np.load(tmp / "2.npz")
        equal = all(np.array_equal(a[k], b[k]) for k in ("players", "i", "j", "counts"))
        full = rows[0][1]
        print(f"\nstreaming {full['rows']:,} votes: peak RSS {full['peak_rss_mb']:.0f} MB (target < 2048 MB), "
              f"{full['rows'] / full['seconds'] / 1e6:.1f}M rows/s")
        mem, sub = rows[2][1], rows[1][1]
        print(f"same {mem['rows']:,} rows: in-memory peak RSS / streaming peak RSS = "
              f"{mem['peak_rss_mb'] / sub['peak_rss_mb']:.1f}; time ratio = {mem['seconds'] / sub['seconds']:.2f}; "
              f"counts identical: {equal}")


if __name__ == "__main__":
    main()
