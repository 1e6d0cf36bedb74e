"""`bayesrank review` on the bundled 1.67M-vote Chatbot Arena with the default claims, beside the
separate commands that give the same numbers — measured in one run (whole processes: wall time,
CPU time = user + sys of the process and its threads/children, and the 1-minute load average).

    python benchmarks/bench_review.py [--skip-nuts] [--repeat N] [--no-evalica]

Rows: `review --fast` (Laplace), `review` (NUTS), and the separate commands a reviewer would
otherwise run: `bayesrank fit` for the four frequentist intervals and the Bayesian fit, `bayesrank
ranks`, and per default claim one `bayesrank audit` (drop, flip, add) and one `bayesrank audit
--significance` (refused, and timed, when the claim is not significant). Targets: `review --fast`
≤ 5 s and `review` with NUTS (the demo's run) ≤ 15 s, whole process on 2 cores. The ratio is review
time / sum of the separate commands' times. On a shared machine wall times move with the load;
CPU times much less (the targets are wall times on an otherwise idle 2-core machine, so the table
prints both). One untimed warm-up review first (`--fast`: fills the OS file cache); the numba NUTS
kernels are compiled by the first NUTS run after installing and cached on disk (later runs load them
in ~0.05 s), so run one NUTS review before timing a fresh install.

The anchor (issue 28): Evalica's Bradley–Terry CLI (``evalica -i CSV -o OUT pairwise bradley-terry``:
a point estimate, no intervals) on the bundled votes expanded to one ``left,right,winner`` row per
battle (1,670,250 rows, :func:`bench_startup.battles_csv`), run interleaved with ``review CSV
--fast`` on that CSV, ``review arena --fast`` on the bundled pair counts and ``review arena`` (NUTS):
targets ``review --fast`` ≤ 1.0 × Evalica (the CSV and the counts) and ``review`` (NUTS) ≤ 2.5 ×.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Timed commands use Python's bytecode caches as a user's installed package does (an environment
# that sets PYTHONDONTWRITEBYTECODE would make every child compile its imports again).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

BIN = [sys.executable, "-m", "bayesrank.cli"]
EVALICA = Path(sys.executable).parent / "evalica"


def timed(args: list[str], refusal_ok: bool = False, command: list[str] | None = None) -> tuple[float, float, float]:
    """(wall s, CPU s, load average before) of one command (``bayesrank ARGS``, or ``command``);
    ``refusal_ok``: exit 2 (e.g. a claim that is not significant has no significance to lose — the
    review skips it too) is timed, not an error."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    res = subprocess.run(command or BIN + args, capture_output=True, text=True, env={**os.environ, "COLUMNS": "140"})
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0 and not (refusal_ok and res.returncode == 2):
        raise SystemExit(f"failed: {' '.join(args)}\n{res.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, load


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-nuts", action="store_true")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each review (the best wall time is reported)")
    ap.add_argument("--no-evalica", action="store_true", help="skip the Evalica anchor rows")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp())
    timed(["review", "arena", "--fast"])  # warm-up: numba cache, file cache
    rows = []

    def best(cmd):
        runs = [timed(cmd) for _ in range(args.repeat)]
        return min(runs, key=lambda r: r[0])

    fast = best(["review", "arena", "--fast", "--json", str(out / "fast.json")])
    rows.append(("review arena --fast", *fast))
    claims = [c["claim"] for c in json.loads((out / "fast.json").read_text())["claims"]]
    separate = [["fit", "arena", "--ci", "fisher"], ["fit", "arena", "--ci", "sandwich"],
                ["fit", "arena", "--method", "bootstrap"], ["ranks", "arena"]]
    for c in claims:
        objective = c if c in ("top1", "order") or c.startswith("topk:") else f"pair:{c}"
        separate.append(["audit", "arena", "--objective", objective, "--actions", "drop,flip,add"])
        if c != "order":  # the review's "to lose significance" answer (refused when not significant)
            separate.append(["audit", "arena", "--objective", objective, "--actions", "drop,flip,add",
                             "--significance"])
    sep = [0.0, 0.0]
    for a in separate:
        w, c, load = timed(a, refusal_ok="--significance" in a)
        sep[0] += w
        sep[1] += c
        rows.append(("  " + " ".join(a), w, c, load))
    rows.append(("separate commands (frequentist + audits)", sep[0], sep[1], float("nan")))
    if not args.skip_nuts:
        full = best(["review", "arena", "--json", str(out / "full.json")])
        rows.append(("review arena (NUTS 4 x (500 tune + 1,000 draws), twice with ties)", *full))
        nuts = timed(["fit", "arena", "--method", "nuts", "--draws", "1000", "--tune", "500"])
        rows.append(("  fit arena --method nuts (same settings)", *nuts))
        rows.append(("separate commands incl. NUTS", sep[0] + nuts[0], sep[1] + nuts[1], float("nan")))
    width = max(len(r[0]) for r in rows)
    print(f"{'command':<{width}}  {'wall s':>8}  {'CPU s':>8}  {'load':>5}")
    for name, w, c, load in rows:
        print(f"{name:<{width}}  {w:8.1f}  {c:8.1f}  {load:5.1f}")
    print(f"\nreview --fast / separate frequentist commands (wall): {fast[0] / sep[0]:.2f}")
    if not args.skip_nuts:
        print(f"review / separate commands incl. NUTS (wall): {full[0] / (sep[0] + nuts[0]):.2f}")
    print("\ntargets (whole process, wall, idle 2-core machine):")
    print(f"  review arena --fast  <= 5 s : {fast[0]:6.1f} s wall, {fast[1]:6.1f} s CPU, load {fast[2]:.1f} -> "
          f"{'met' if fast[0] <= 5 else 'NOT met'}")
    if not args.skip_nuts:
        print(f"  review arena (NUTS)  <= 15 s: {full[0]:6.1f} s wall, {full[1]:6.1f} s CPU, load {full[2]:.1f} -> "
              f"{'met' if full[0] <= 15 else 'NOT met'}")
    if not args.no_evalica:
        anchor(out, args.repeat, None if args.skip_nuts else full)
    print(f"load average at the end: {os.getloadavg()}")


def anchor(out: Path, repeat: int, nuts: tuple[float, float, float] | None) -> None:
    """Evalica's CLI on the 1.67M-row CSV beside ``review --fast`` on the same CSV and on the bundled
    counts, interleaved ``repeat`` times (best wall time each); ratios to Evalica (module docstring)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_startup import battles_csv

    csv = battles_csv(out)
    cmds = {"evalica -i CSV -o OUT pairwise bradley-terry":
            ([], [str(EVALICA), "-i", str(csv), "-o", str(out / "evalica.csv"), "pairwise", "bradley-terry"]),
            "review CSV --fast": (["review", str(csv), "--fast", "--json", str(out / "csv.json")], None),
            "review arena --fast": (["review", "arena", "--fast", "--json", str(out / "counts.json")], None)}
    timed(*cmds["review CSV --fast"])  # warm-up: the CSV in the file cache
    runs: dict[str, list] = {name: [] for name in cmds}
    for _ in range(max(1, repeat)):
        for name, (a, c) in cmds.items():
            runs[name].append(timed(a, command=c))
    best = {name: min(r, key=lambda x: x[0]) for name, r in runs.items()}
    ref = best["evalica -i CSV -o OUT pairwise bradley-terry"]
    print(f"\nanchor: Evalica's Bradley-Terry CLI on the same {sum(1 for _ in csv.open()) - 1:,}-row CSV "
          f"(best of {max(1, repeat)} interleaved runs)")
    print(f"{'command':<48}  {'wall s':>8}  {'CPU s':>8}  {'load':>5}  {'/ Evalica':>9}")
    rows = [(name, *best[name]) for name in cmds]
    if nuts is not None:
        rows.append(("review arena (NUTS; the run above)", *nuts))
    for name, w, c, load in rows:
        print(f"{name:<48}  {w:8.2f}  {c:8.2f}  {load:5.1f}  {w / ref[0]:9.2f}")
    for name, limit in (("review CSV --fast", 1.0), ("review arena --fast", 1.0)):
        print(f"  {name} <= {limit} x Evalica: {best[name][0] / ref[0]:.2f} -> "
              f"{'met' if best[name][0] <= limit * ref[0] else 'NOT met'}")
    if nuts is not None:
        print(f"  review arena (NUTS) <= 2.5 x Evalica: {nuts[0] / ref[0]:.2f} -> "
              f"{'met' if nuts[0] <= 2.5 * ref[0] else 'NOT met'}")


if __name__ == "__main__":
    main()
