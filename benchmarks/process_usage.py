"""Whole-process measurements shared by the scale benchmarks (bench_items.py, bench_players.py)."""

from __future__ import annotations

import os
import subprocess
import time

# Timed commands use Python's bytecode caches as a user's installed package does (an environment
# that sets PYTHONDONTWRITEBYTECODE would make every child compile its imports again).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def whole_process(cmd) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS GB) of one child process (``os.wait4``: its own rusage)."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    err = p.stderr.read().decode() if p.stderr else ""
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err[-3000:]}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1e6
