"""Configuration ranges: the full grid or a named sub-range given as a filter string.

Grammar: comma-separated clauses ``axis=level``, ``axis!=level``; ``|`` separates alternatives
(``num_fewshot=0|5``). Clauses are AND-ed; levels compare as strings. Example, the spec's core range:
``"template!=cot,decoding=greedy"``. Named ranges (:data:`NAMED_RANGES`, or a dict passed as ``named``)
can be given by name instead.
"""

from __future__ import annotations

import re

import pandas as pd

from bayesrank.errors import InputError

from .grid import EvalGrid

NAMED_RANGES = {
    "full": "",
    # spec 03's core range: no stress levels (chain-of-thought template, non-greedy decoding)
    "core": "template!=cot,decoding=greedy",
}

_CLAUSE = re.compile(r"^\s*([^!=]+?)\s*(!=|=)\s*(.+?)\s*$")


def parse_range(spec: str | None, named: dict[str, str] | None = None) -> list[tuple[str, str, list[str]]]:
    """``"template!=cot,decoding=greedy"`` -> ``[("template", "!=", ["cot"]), ("decoding", "=", ["greedy"])]``;
    a name from ``named`` (default :data:`NAMED_RANGES`) is replaced by its filter."""
    if spec is not None and spec.strip() in {**NAMED_RANGES, **(named or {})}:
        spec = {**NAMED_RANGES, **(named or {})}[spec.strip()]
    if spec is None or not spec.strip():
        return []
    clauses = []
    for part in spec.split(","):
        m = _CLAUSE.match(part)
        if not m:
            raise InputError(f"cannot parse range clause {part!r} in {spec!r}: expected 'axis=level' or "
                             "'axis!=level' (alternatives separated by '|')")
        axis, op, vals = m.groups()
        clauses.append((axis, op, [v.strip() for v in vals.split("|")]))
    return clauses


def apply_range(grid: EvalGrid, spec: str | None, named: dict[str, str] | None = None) -> EvalGrid:
    """Restrict ``grid`` to the configurations the filter admits; unknown axes/levels are errors."""
    clauses = parse_range(spec, named)
    mask = pd.Series(True, index=grid.data.index)
    for axis, op, vals in clauses:
        if axis not in grid.axes:
            raise InputError(f"range {spec!r}: no axis {axis!r}; axes are {list(grid.axes)}")
        known = set(grid.data[axis])
        unknown = [v for v in vals if v not in known]
        if unknown:
            raise InputError(f"range {spec!r}: axis {axis!r} has no level(s) {unknown}; levels are {sorted(known)}")
        hit = grid.data[axis].isin(vals)
        mask &= hit if op == "=" else ~hit
    if not mask.any():
        raise InputError(f"range {spec!r} admits no cell of the grid")
    return grid.filter(mask)
