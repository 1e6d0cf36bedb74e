import os

import matplotlib
import pytest
from threadpoolctl import threadpool_limits

matplotlib.use("Agg")

# The suite runs under pytest-xdist on 2 cores: one BLAS thread per worker avoids oversubscription
# (multi-threaded OpenBLAS was measured 10-15x slower on the small solves used here).
threadpool_limits(limits=1, user_api="blas")

# The terminal's width is the caller's: CI's COLUMNS=80 wrapped player names across table lines.
# Tests see the width a pipe gets (140 columns); tests of narrow terminals set COLUMNS themselves.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)


def pytest_collection_modifyitems(config, items):
    """Tests marked ``validation`` (calibration runs of many minutes) run only with
    ``BAYESRANK_VALIDATION=1``; the default suite reports them as skipped, with the reason."""
    if os.environ.get("BAYESRANK_VALIDATION") == "1":
        return
    skip = pytest.mark.skip(reason="long validation run: set BAYESRANK_VALIDATION=1 to run it")
    for item in items:
        if "validation" in item.keywords:
            item.add_marker(skip)
