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
