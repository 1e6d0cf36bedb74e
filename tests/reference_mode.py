"""The compile mode of the tests' reference log densities (PyMC's own ``compile_logp``/``compile_dlogp``):
PyTensor's Python VM with the full graph rewrites (the stabilising ones — ``log1pexp``, ``log(sigmoid)``
→ ``softplus`` — included; fusion excluded, which the Python VM would run element by element), so the
reference is PyTensor's default numbers without numba's compilation (10–20 s per graph on a machine's
first run). ``FAST_COMPILE`` is not used for references: it skips the stabilising rewrites (a Binomial
with ``logit_p`` came out 2.6e-3 off at a random point)."""

from pytensor.compile.mode import Mode

REFERENCE_MODE = Mode(linker="py", optimizer="fast_run").excluding("fusion")
