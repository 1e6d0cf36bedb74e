"""Start-up and end-to-end CLI time, side by side in one run (ratios, not timed asserts).

Data: the bundled LMArena pair counts (``arena``: 129 models, 3,460 pairs) expanded to one CSV
row per battle (1,670,250 rows; ``left, right, winner`` in {left, right, tie}: the format Evalica's
CLI reads and ``bayesrank fit`` detects as ``llmfao``), shuffled with seed 0.

Commands, each a whole process (interpreter start, imports, reading, fitting, writing), run
``--repeats`` times interleaved; the median is reported:

- ``bayesrank --help``                                   target < 0.5 s
- ``bayesrank fit DATA --method mle`` (table to stdout)  target <= 0.3 x Evalica's CLI
- ``evalica -i DATA -o OUT pairwise bradley-terry``      the reference (Bradley-Terry, ties = half a win)

An extra untimed ``bayesrank fit ... --json OUT`` run gives the scores; the two leaderboards are compared: same ranking (order of scores) and the largest score difference
after centring both on the log scale (Evalica reports exp-scale scores; see its docs).

    python benchmarks/bench_startup.py [--repeats 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

# Timed commands use Python's bytecode caches as a user's installed package does (an environment
# that sets PYTHONDONTWRITEBYTECODE would make every child compile its imports again).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

BIN = Path(sys.executable).parent


def battles_csv(dest: Path) -> Path:
    """The arena pair counts expanded to one ``left,right,winner`` row per battle."""
    from bayesrank.datasets import path

    f = dest / "arena_battles.csv"
    if f.exists():
        return f
    obj = json.loads(path("arena").read_text())
    models = np.asarray(obj["models"], dtype=object)
    x, y = np.asarray(obj["X"]), np.asarray(obj["Y"], dtype=np.int64)
    labels = np.array(["left", "right", "tie", "tie"])[: y.shape[1]]
    reps = y.ravel()
    df = pd.DataFrame({"left": np.repeat(np.repeat(models[x[:, 0]], y.shape[1]), reps),
                       "right": np.repeat(np.repeat(models[x[:, 1]], y.shape[1]), reps),
                       "winner": np.repeat(np.tile(labels, len(x)), reps)})
    df.sample(frac=1.0, random_state=0).to_csv(f, index=False)
    return f


def timed(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", default=None, help="folder for the CSV and outputs (default: a temp dir)")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_startup_"))
    work.mkdir(parents=True, exist_ok=True)
    data = battles_csv(work)
    n_rows = sum(1 for _ in data.open()) - 1
    evalica = shutil.which("evalica", path=str(BIN)) or shutil.which("evalica")
    commands = {
        "bayesrank --help": [str(BIN / "bayesrank"), "--help"],
        "bayesrank fit --method mle": [str(BIN / "bayesrank"), "fit", str(data), "--method", "mle"],
        "evalica pairwise bradley-terry": [evalica, "-i", str(data), "-o", str(work / "evalica.csv"),
                                           "pairwise", "bradley-terry"],
    }
    times = {name: [] for name in commands}
    for _ in range(args.repeats):  # interleaved: machine load affects every command alike
        for name, cmd in commands.items():
            times[name].append(timed(cmd, work))
    med = {name: statistics.median(t) for name, t in times.items()}
    # the same fit once more, untimed, writing JSON for the ranking comparison
    subprocess.run([*commands["bayesrank fit --method mle"], "--json", str(work / "bayesrank.json")], cwd=work,
                   check=True, stdout=subprocess.DEVNULL)

    ours = pd.DataFrame(json.loads((work / "bayesrank.json").read_text())["players"]).set_index("player")["score"]
    ref = np.log(pd.read_csv(work / "evalica.csv").set_index("item")["score"])
    ref = (ref - ref.mean()).loc[ours.index]
    ours = ours - ours.mean()
    same_order = list(ours.sort_values(ascending=False).index) == list(ref.sort_values(ascending=False).index)

    print(f"data: {data.name}, {n_rows:,} rows, {len(ours)} players; median of {args.repeats} interleaved runs")
    print(f"{'command':<34} {'seconds':>8}  runs")
    for name, t in med.items():
        print(f"{name:<34} {t:8.2f}  {' '.join(f'{v:.2f}' for v in times[name])}")
    ratio = med["bayesrank fit --method mle"] / med["evalica pairwise bradley-terry"]
    print(f"\nbayesrank --help: {med['bayesrank --help']:.2f} s (target < 0.5 s)")
    print(f"bayesrank fit / evalica = {ratio:.2f} (target <= 0.30)")
    print(f"same ranking: {same_order}; max |score difference| (log scale, centred): {np.abs(ours - ref).max():.2e}")


if __name__ == "__main__":
    main()
