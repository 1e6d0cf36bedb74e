"""``single_blas_thread`` reaches every BLAS library, also when it is entered before NumPy or SciPy
were imported (as ``review()`` is from a fresh interpreter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import json
from bayesrank.blas import single_blas_thread
with single_blas_thread():
    import numpy, scipy.linalg, threadpoolctl
    inside = [(i["filepath"], i["num_threads"]) for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
print(json.dumps(inside))
"""


def test_limit_set_before_numpy_is_imported_reaches_numpy_and_scipy_blas():
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "4"}  # a default above one thread, whatever the machine
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, env=env).stdout
    inside = json.loads(out.strip().splitlines()[-1])
    assert len(inside) >= 2  # NumPy's and SciPy's OpenBLAS
    assert all(n == 1 for _, n in inside), inside
