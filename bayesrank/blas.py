"""One BLAS thread for the small dense algebra (K ≤ a few hundred players) of fits, audits and rank sets.

Measured on a shared 2-core machine, multi-threaded OpenBLAS made 129 × 129 inversions and SVDs
10–50× slower than one thread (thread hand-off costs more than the flops), so the commands that run
many small solves use :func:`single_blas_thread`.

threadpoolctl limits only the BLAS libraries already loaded, and NumPy and SciPy each bring their
own OpenBLAS: both are loaded before the limit is set. (Entered before NumPy was imported, the limit
used to miss both, and ``review(..., fast=True)`` from Python took 2.4× the CPU time of the CLI.)
"""

from __future__ import annotations

import contextlib


def single_blas_thread():
    """Context manager limiting every BLAS library (NumPy's and SciPy's) to one thread (a no-op when
    threadpoolctl is missing)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        return contextlib.nullcontext()
    import numpy  # noqa: F401  (loads NumPy's OpenBLAS, so that the limit reaches it)
    import scipy.linalg  # noqa: F401  (SciPy's wheels bundle a second OpenBLAS)

    return threadpool_limits(1, user_api="blas")
