"""`bayesrank review` on the bundled 1.67M-vote Chatbot Arena with the default claims, beside the
separate commands that give the same numbers — measured in one run (whole processes, wall time).

    python benchmarks/bench_review.py [--skip-nuts]

Rows: `review --fast` (Laplace), `review` (NUTS), and the separate commands a reviewer would
otherwise run: `bayesrank fit` for the four frequentist intervals and the Bayesian fit, `bayesrank
ranks`, and per default claim one `bayesrank audit` (drop, flip, add) and one `bayesrank audit
--significance` (refused, and timed, when the claim is not significant). Targets: `review --fast`
≤ 5 s and `review` with NUTS (the demo's run) ≤ 15 s, whole process on 2 cores. The ratio is review
time / sum of the separate commands' times. The load average is printed: on a shared machine the
absolute times move with it, the ratios much less.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = [sys.executable, "-m", "bayesrank.cli"]


def timed(args: list[str], refusal_ok: bool = False) -> float:
    """Wall time of one command; ``refusal_ok``: exit 2 (e.g. a claim that is not significant has
    no significance to lose — the review skips it too) is timed, not an error."""
    t = time.perf_counter()
    res = subprocess.run(BIN + args, capture_output=True, text=True, env={**os.environ, "COLUMNS": "140"})
    if res.returncode != 0 and not (refusal_ok and res.returncode == 2):
        raise SystemExit(f"failed: {' '.join(args)}\n{res.stderr[-2000:]}")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-nuts", action="store_true")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp())
    rows = []
    fast = timed(["review", "arena", "--fast", "--json", str(out / "fast.json")])
    rows.append(("review arena --fast", fast))
    import json

    claims = [c["claim"] for c in json.loads((out / "fast.json").read_text())["claims"]]
    separate = [["fit", "arena", "--ci", "fisher"], ["fit", "arena", "--ci", "sandwich"],
                ["fit", "arena", "--method", "bootstrap"], ["ranks", "arena"]]
    for c in claims:
        objective = c if c in ("top1", "order") or c.startswith("topk:") else f"pair:{c}"
        separate.append(["audit", "arena", "--objective", objective, "--actions", "drop,flip,add"])
        if c != "order":  # the review's "to lose significance" answer (refused when not significant)
            separate.append(["audit", "arena", "--objective", objective, "--actions", "drop,flip,add",
                             "--significance"])
    sep_fast = 0.0
    for a in separate:
        t = timed(a, refusal_ok="--significance" in a)
        sep_fast += t
        rows.append(("  " + " ".join(a), t))
    rows.append(("separate commands (frequentist + audits)", sep_fast))
    if not args.skip_nuts:
        full = timed(["review", "arena", "--json", str(out / "full.json")])
        rows.append(("review arena (NUTS 4 x (500 + 500))", full))
        nuts = timed(["fit", "arena", "--method", "nuts", "--draws", "500", "--tune", "500"])
        rows.append(("  fit arena --method nuts (same settings)", nuts))
        rows.append(("separate commands incl. NUTS", sep_fast + nuts))
    width = max(len(r[0]) for r in rows)
    print(f"{'command':<{width}}  seconds")
    for name, t in rows:
        print(f"{name:<{width}}  {t:8.1f}")
    print(f"\nreview --fast / separate frequentist commands: {fast / sep_fast:.2f} (target: --fast <= 5 s)")
    if not args.skip_nuts:
        print(f"review / separate commands incl. NUTS: {full / (sep_fast + nuts):.2f} (target: review <= 15 s)")
    print(f"load average during the run: {os.getloadavg()}")


if __name__ == "__main__":
    main()
