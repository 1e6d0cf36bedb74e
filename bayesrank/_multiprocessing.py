"""A safe multiprocessing start method for multi-process sampling.

PyMC runs chains in worker processes started with ``fork`` on Linux. Forking a process in which
JAX's runtime has started (nutpie's JAX backend, a JAX sampler, any ``jax.numpy`` call) may deadlock
and JAX warns "os.fork() was called ... JAX is multithreaded". Importing JAX alone starts nothing:
``arviz_base`` imports it as a side effect whenever it is installed (its lazy loader of ``numpyro``
triggers the lazy ``jax`` module), so an installed JAX is not a reason to give up ``fork``, but a
started JAX runtime is: then the workers come from a fresh ``forkserver`` process instead.
"""

from __future__ import annotations

import sys


def jax_runtime_started() -> bool:
    """True when JAX's backends (its thread pools) have been created in this process."""
    bridge = sys.modules.get("jax._src.xla_bridge")
    return bool(getattr(bridge, "_backends", None))


def pymc_mp_ctx() -> str | None:
    """``mp_ctx`` for ``pm.sample``: ``"forkserver"`` once JAX's runtime has started, else ``None``
    (PyMC's default, ``fork`` on Linux: workers start fast and share the compiled model)."""
    return "forkserver" if jax_runtime_started() else None
