"""NUTS on a hand-written log density: nutpie's sampler (Rust) calling a function that returns
``(log p(x), ∇ log p(x))`` in unconstrained coordinates x — a Python callable, or a C-callable
:class:`CFuncDensity` (numba ``cfunc``s reading one data array).

No PyTensor graph is compiled (PyMC's own sampler compiles C, nutpie's PyMC path compiles with numba
or JAX first), so the cost is the density's. nutpie calls a Python function holding the GIL; a
numba ``nogil`` kernel releases it while it runs, so chains can overlap on several cores (not
established: on the shared machine at load ≈ 3, 2 cores sampled the items model no faster than 1),
and each call costs ~80 µs of CPU beyond the kernel (the Bradley–Terry density on the arena's 3,460
pairs: ~190 µs per call for an ~105 µs kernel, with 1 or 2 cores). A :class:`CFuncDensity` is called
from Rust with no Python and no GIL (~135 µs per call for the same density, ~85 µs kernel); that its
chains then run in parallel on an idle machine is expected, not yet measured. Mass matrix and step size are nutpie's
(diagonal, from draws and gradients). Draws come back as an xarray ``DataTree`` (``posterior``,
``sample_stats``) like ``pm.sample``'s, so :meth:`bayesrank.protocol.Diagnostics.sampler` applies.

ArviZ is not needed for any of it: nutpie imports ArviZ only to convert its trace, so it is
imported with ArviZ deferred (:func:`import_nutpie`) and the trace converted here
(:func:`trace_tree`, the same tree as nutpie's conversion) — about 1 s of CPU less per process.
"""

from __future__ import annotations

import os
import sys
import types
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
    """NUTS draws of the density ``logp_grad`` on R^ndim: a Python callable, or a
    :class:`CFuncDensity` that nutpie calls directly (``expand`` is then unused).

    ``expand(x)`` maps a point to the stored variables (``shapes``: name → shape, float64);
    ``init(seed)`` gives a chain's starting point (a different seed per chain); ``progress(text)``
    is called from a background thread with the draws done so far."""
    nutpie = import_nutpie()
    from nutpie.compiled_pyfunc import from_pyfunc

    from bayesrank.outputs import stop_if_interrupted

    names = list(shapes)
    if isinstance(logp_grad, CFuncDensity):
        model = _cfunc_model(logp_grad, ndim, shapes, init, coords or {}, dims or {})
    else:
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
    raw = nutpie.sample(model, draws=draws, tune=tune, chains=chains, cores=cores or default_cores(chains),
                        seed=int(seed), progress_bar=False, target_accept=float(target_accept), save_warmup=False,
                        return_raw_trace=True, **kwargs)
    stop_if_interrupted()  # never report a shorter chain than asked for
    return trace_tree(raw, coords or {}, nutpie.__version__)


def import_nutpie():
    """``nutpie``, with ArviZ not executed until an attribute of it is used: ``nutpie.sample``
    imports ArviZ (~1 s of CPU, JAX and matplotlib with it) only for the conversion
    :func:`trace_tree` does. While nutpie is imported, ``sys.modules["arviz"]`` is a
    :class:`_DeferredModule`, which imports the real ArviZ on first use; the real module replaces
    it in ``sys.modules`` right after, so a later ``import arviz`` is the ordinary one."""
    if "nutpie" in sys.modules or "arviz" in sys.modules:
        import nutpie

        return nutpie
    sys.modules["arviz"] = _DeferredModule("arviz")
    try:
        import nutpie
    finally:
        if isinstance(sys.modules.get("arviz"), _DeferredModule):
            del sys.modules["arviz"]
    return nutpie


class _DeferredModule(types.ModuleType):
    """A stand-in bound by ``import NAME``: the first attribute it lacks imports the real module
    (``importlib.util.LazyLoader`` does not do here: ``import`` itself reads ``__spec__``, which
    executes a lazy module)."""

    def __getattr__(self, attr):
        import importlib

        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        real = importlib.import_module(self.__name__)
        self.__dict__.update({k: v for k, v in real.__dict__.items() if k not in ("__name__", "__spec__")})
        return getattr(real, attr)


#: sample statistics nutpie leaves out when their ``store_*`` setting is off (the settings used here)
_UNSTORED_STATS = ("gradient", "unconstrained_draw", "mass_matrix_inv", "mass_matrix_eigvals", "mass_matrix_stds",
                   "divergence_start", "divergence_end", "divergence_momentum", "divergence_start_gradient",
                   "transformed_position", "transformed_gradient", "transformation_mu")


def trace_tree(raw, coords: dict, version: str = ""):
    """nutpie's raw trace (``return_raw_trace=True``) as the ``DataTree`` nutpie's own conversion
    gives (``posterior`` and ``sample_stats`` of the draws after tuning; chain, draw and the model's
    coordinates), built with xarray alone."""
    import pandas as pd
    import xarray as xr
    from nutpie.sample import _add_arrow_data

    draw_batches, stat_batches = raw.get_arrow_trace()
    n_post = [stat.num_rows - int(stat.column("tuning").to_numpy().sum()) for stat in stat_batches]  # per chain
    groups = {}
    index = ("chain", "draw")  # nutpie's stats carry them as columns; they are the tree's coordinates
    for group, batches, skip in (("posterior", draw_batches, index), ("sample_stats", stat_batches,
                                                                      _UNSTORED_STATS + index)):
        data, dims = {}, {}
        for c, b in enumerate(batches):
            tuned = b.num_rows - n_post[c]
            _add_arrow_data(data, max(n_post), b.slice(tuned, n_post[c]), c, len(batches), dims, list(skip))
        n_chain, n_draw = len(batches), max(n_post)
        ds = xr.Dataset({k: (("chain", "draw", *dims.get(k, [])) if dims.get(k) else ("chain", "draw",
                              *[f"{k}_dim_{q}" for q in range(v.ndim - 2)]), v) for k, v in data.items()},
                        coords={"chain": np.arange(n_chain), "draw": np.arange(n_draw)})
        used = {d for v in ds.data_vars.values() for d in v.dims}
        ds = ds.assign_coords({k: pd.Index(v) for k, v in coords.items() if k in used})
        ds.attrs = {"sample_dims": ["chain", "draw"], "inference_library": "nutpie",
                    "inference_library_version": version}
        groups[group] = ds
    return xr.DataTree.from_dict(groups)


class CFuncDensity:
    """A log density nutpie evaluates without calling Python (no GIL, no per-call overhead): the
    addresses of two numba ``cfunc``s reading one float64 array ``data`` —
    ``logp(dim, x*, grad*, logp*, data*) -> int`` (0 = ok, 3/4 = non-finite gradient/value) and
    ``expand(dim, n_expanded, x*, out*, data*) -> int`` (the stored variables, concatenated in the
    order of ``shapes``). ``owner`` keeps the cfuncs and ``data`` alive while nutpie holds them."""

    def __init__(self, logp_address: int, expand_address: int, data: np.ndarray, owner=None):
        self.logp_address = int(logp_address)
        self.expand_address = int(expand_address)
        self.data = np.ascontiguousarray(data, dtype=np.float64)
        self.owner = owner


def _cfunc_model(density: CFuncDensity, ndim: int, shapes: dict, init, coords: dict, dims: dict):
    """A nutpie ``CompiledModel`` on ``density`` (nutpie's own numba-PyMC model class, with the
    cfuncs given instead of compiled from a PyTensor graph)."""
    from dataclasses import dataclass

    from nutpie import _lib
    from nutpie.sample import CompiledModel

    names = list(shapes)
    var_shapes = [tuple(shapes[n]) for n in names]
    n_expanded = int(sum(int(np.prod(s)) for s in var_shapes))

    @dataclass(frozen=True)
    class Model(CompiledModel):
        @property
        def n_dim(self):
            return ndim

        @property
        def shapes(self):
            return dict(zip(names, var_shapes))

        @property
        def coords(self):
            return coords

        def _make_sampler(self, settings, init_mean, cores, progress_type, *args):
            return _lib.PySampler.from_pymc(settings, cores, self._make_model(init_mean), progress_type, *args)

        def _make_model(self, init_mean):
            expand_fn = _lib.ExpandFunc(ndim, n_expanded, density.expand_address, density.data.ctypes.data, density)
            logp_fn = _lib.LogpFunc(density.logp_address, density.data.ctypes.data, density)
            dim_sizes = {k: len(v) for k, v in coords.items()}
            variables = _lib.PyVariable.new_variables(names, ["float64"] * len(names), var_shapes, dim_sizes, dims)

            def make_adapter(*args, **kwargs):
                raise NotImplementedError("transform adaptation needs a Python log density")

            return _lib.PyMcModel(logp_fn, expand_fn, variables, ndim, dim_sizes, coords,
                                  lambda s: np.asarray(init(int(s)), dtype=float), make_adapter)

    return Model(dims=dims)
