import os

import matplotlib
from threadpoolctl import threadpool_limits

matplotlib.use("Agg")

# The suite runs under pytest-xdist on 2 cores: one BLAS thread per worker avoids oversubscription
# (multi-threaded OpenBLAS was measured 10-15x slower on the small solves used here).
threadpool_limits(limits=1, user_api="blas")

# The terminal's width is the caller's: CI's COLUMNS=80 wrapped player names across table lines.
# Tests see the width a pipe gets (140 columns); tests of narrow terminals set COLUMNS themselves.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)


def pytest_configure(config):
    """The two tiers. Tests marked ``validation`` (long calibrations: SBCs, coverage and error rates at
    thousands of replications; docs/validation.md) run only with ``BAYESRANK_VALIDATION=1`` (what
    ``./dev validate`` sets); otherwise they are deselected, so the default suite's skips are only
    tests whose system tool is missing."""
    if os.environ.get("BAYESRANK_VALIDATION") == "1":
        return
    mark = config.option.markexpr
    config.option.markexpr = f"({mark}) and not validation" if mark else "not validation"


def pytest_collection_modifyitems(session, config, items):
    """Modules with slow tests (posterior sampling, simulations) run first; the order of the modules
    is otherwise kept and each module's tests stay together (its module-scoped fixtures are built
    once). The two workers of ``./dev test`` take each other's pending tests when idle, so the run
    then ends on short tests instead of one worker waiting while the other finishes a minute-long
    simulation that happened to come last."""
    def module(item):
        return item.nodeid.split("::")[0]

    first = {}
    slow = set()
    for n, item in enumerate(items):
        first.setdefault(module(item), n)
        if item.get_closest_marker("slow") is not None:
            slow.add(module(item))
    items.sort(key=lambda item: (module(item) not in slow, first[module(item)]))
