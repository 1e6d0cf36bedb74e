"""How PyTensor compiles the functions an optimizer calls (a posterior mode, its gradient and Hessian).

:func:`optimizer_mode` is ``"FAST_COMPILE"`` — PyTensor's Python VM with the graph rewrites its
helpers (``log1pexp``, ``log1mexp``, ``logsumexp``, …) need to stay stable, and no code generation —
for models with fewer than :data:`COMPILE_BELOW_ROWS` observed values, and PyTensor's default
(numba) above. A MAP or Laplace fit evaluates its function tens of times: on small data numba's
compilation of the log density with its gradient and Hessian (10–60 s on a machine's first run,
cached on disk afterwards) costs far more than it saves; on 200,000 comparisons with style features
the Python VM's evaluations take 1.7× numba's (59 s against 35 s), so large data keep numba. The
samplers (NUTS: thousands of gradient evaluations) always keep PyTensor's default. The fits are
checked against independent references (ridge and penalised MLEs, finite differences) in both modes'
ranges in the suite.
"""

from __future__ import annotations

from typing import Any

import numpy as np

COMPILE_BELOW_ROWS = 20_000


def observed_size(model: Any) -> int:
    """The number of observed values of a PyMC model (its observed variables' data, summed)."""
    total = 0
    for rv in model.observed_RVs:
        value = model.rvs_to_values[rv]
        data = getattr(value, "data", None)
        if data is None and hasattr(value, "get_value"):
            data = value.get_value()
        total += int(np.size(data)) if data is not None else 0
    return total


def optimizer_mode(model: Any) -> str | None:
    """``"FAST_COMPILE"`` below :data:`COMPILE_BELOW_ROWS` observed values, else None (PyTensor's default)."""
    return "FAST_COMPILE" if observed_size(model) < COMPILE_BELOW_ROWS else None
