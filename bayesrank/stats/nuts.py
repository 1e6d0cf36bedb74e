"""NUTS on a hand-written log density: nutpie's sampler (Rust) calling a Python function that returns
``(log p(x), ∇ log p(x))`` in unconstrained coordinates x.

No PyTensor graph is compiled (PyMC's own sampler compiles C, nutpie's PyMC path compiles with numba
or JAX first), so the cost is the density's. nutpie calls the Python function holding the GIL; a
numba ``nogil`` kernel releases it while it runs, so chains can overlap on several cores (not
established: on the shared machine at load ≈ 3, 2 cores sampled the items model no faster than 1).
Mass matrix and step size are nutpie's
(diagonal, from draws and gradients). Draws come back as an ArviZ ``DataTree`` (``posterior``,
``sample_stats``) like ``pm.sample``'s, so :meth:`bayesrank.protocol.Diagnostics.sampler` applies.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np


def default_cores(chains: int) -> int:
    """Chains run at once: the CPUs this process may use, at most ``chains``."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        n = os.cpu_count() or 1
    return max(1, min(chains, n))


def sample_logp(logp_grad: Callable[[np.ndarray], tuple[float, np.ndarray]], ndim: int,
                expand: Callable[[np.ndarray], dict], shapes: dict[str, tuple], *,
                init: Callable[[int], np.ndarray], draws: int, tune: int, chains: int, seed: int,
                target_accept: float = 0.8, cores: int | None = None, coords: dict | None = None,
                dims: dict | None = None, progress: Callable[[str], None] | None = None, label: str = "NUTS"):
    """NUTS draws of the density ``logp_grad`` on R^ndim.

    ``expand(x)`` maps a point to the stored variables (``shapes``: name → shape, float64);
    ``init(seed)`` gives a chain's starting point (a different seed per chain); ``progress(text)``
    is called from a background thread with the draws done so far."""
    import nutpie
    from nutpie.compiled_pyfunc import from_pyfunc

    from bayesrank.outputs import stop_if_interrupted

    names = list(shapes)
    model = from_pyfunc(
        ndim,
        lambda: logp_grad,
        lambda seed1, seed2, chain: expand,
        [np.dtype("float64")] * len(names),
        [tuple(shapes[n]) for n in names],
        names,
        coords=coords or {},
        dims=dims or {},
        make_initial_point_fn=lambda s: np.asarray(init(int(s)), dtype=float),
    )
    kwargs = {}
    if progress is not None:
        total = chains * (draws + tune)

        def report(chain_progress):
            done = sum(int(c.finished_draws) for c in chain_progress)
            progress(f"{label}: {done:,}/{total:,} iterations")

        kwargs["progress_callback"] = report
    dt = nutpie.sample(model, draws=draws, tune=tune, chains=chains, cores=cores or default_cores(chains),
                       seed=int(seed), progress_bar=False, target_accept=float(target_accept), save_warmup=False,
                       **kwargs)
    stop_if_interrupted()  # never report a shorter chain than asked for
    return dt
