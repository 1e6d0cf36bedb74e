"""One BLAS thread for the small dense algebra (K ≤ a few hundred players) of fits, audits and rank sets.

Measured on a shared 2-core machine, multi-threaded OpenBLAS made 129 × 129 inversions and SVDs
10–50× slower than one thread (thread hand-off costs more than the flops), so the commands that run
many small solves use :func:`single_blas_thread`.
"""

from __future__ import annotations

import contextlib


def single_blas_thread():
    """Context manager limiting BLAS to one thread (a no-op when threadpoolctl is missing)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")
