"""Pairwise reviews at scale in players: the curve of ``bayesrank review FILE --fast`` on simulated
chess- or tennis-like tournaments (``bayesrank.bt.simulate.simulate_tournament``: each player ~200
games against opponents of nearby rank, spread 40 ranks, no ties), 100 → 3,000 players (10,000 →
300,000 games), one whole process per size (Python start-up, imports, reading the CSV, every fit,
the audits of the default claims, the rank sets, JSON and HTML written).

    python benchmarks/bench_players.py [--sizes 100,300,1000,2000,3000] [--games-per-player 200]

Each row: players, games, distinct pairs, wall seconds, CPU seconds (user + sys of the child), its
peak RSS (``os.wait4``: the child's own), whether the review converged, and the 1-minute load
average before the run (wall times on a shared machine move with it, CPU times much less). Target
(issue 28): 3,000 players and 300,000 games in ≤ 60 s wall on 2 cores, converged.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
from process_usage import whole_process

SIZES = (100, 300, 1000, 2000, 3000)


def main() -> None:
    from bayesrank.bt.simulate import simulate_tournament

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="numbers of players, comma-separated")
    ap.add_argument("--games-per-player", type=float, default=200.0)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_players_"))
    print(f"{len(os.sched_getaffinity(0))} CPUs; review FILE --fast --json --html, one process per size", flush=True)
    print(f"{'players':>7s} {'games':>8s} {'pairs':>7s} {'wall s':>7s} {'CPU s':>7s} {'peak GB':>8s}  converged  load",
          flush=True)
    for k in (int(s) for s in a.sizes.split(",")):
        frame, _ = simulate_tournament(k, games_per_player=a.games_per_player, spread=40, seed=0)
        csv, out = tmp / f"t{k}.csv", tmp / "r.json"
        frame.to_csv(csv, index=False)
        x, y = frame["model_a"].to_numpy(dtype=str), frame["model_b"].to_numpy(dtype=str)
        pairs = len(set(zip(np.where(x < y, x, y), np.where(x < y, y, x))))
        load = os.getloadavg()[0]
        wall, cpu, rss = whole_process([sys.executable, "-m", "bayesrank.cli", "review", str(csv), "--fast",
                                        "--json", str(out), "--html", str(tmp / "r.html")])
        conv = json.loads(out.read_text())["diagnostics"]["converged"]
        print(f"{k:7d} {len(frame):8d} {pairs:7d} {wall:7.1f} {cpu:7.1f} {rss:8.2f}  {str(conv):9s} {load:5.1f}",
              flush=True)
        csv.unlink()
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
