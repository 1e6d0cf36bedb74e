"""JSON export and console helpers shared by the CLI commands."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd


def to_jsonable(obj):
    """Recursively convert numpy/pandas scalars and arrays to plain JSON types (NaN/inf -> None)."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, pd.DataFrame):
        return [to_jsonable(r) for r in obj.to_dict(orient="records")]
    if isinstance(obj, pd.Series):
        return to_jsonable(obj.to_dict())
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def write_json(obj, path: str | Path) -> Path:
    from bayesrank.outputs import write_text

    return write_text(path, json.dumps(to_jsonable(obj), indent=2))


def console(stderr: bool = False):
    """A rich console; when writing to a file or pipe it is 140 columns wide (rich's default of 80
    would truncate the leaderboard tables) unless ``COLUMNS`` says otherwise."""
    import os
    import sys

    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    given = os.environ.get("COLUMNS", "").isdigit()
    return Console(stderr=stderr, width=None if stream.isatty() or given else 140)


def rich_table(df: pd.DataFrame, title: str | None = None, floatfmt: str = "{:.3f}"):
    """A rich Table from a DataFrame (floats formatted, NaN shown as '-'; a float column whose values
    are all whole numbers, such as counts, shown as integers). Every cell, column name and the title
    are plain text (:func:`bayesrank.escape.terminal_text`: no markup read, control characters shown)."""
    from rich.table import Table

    from bayesrank.escape import terminal_text

    table = Table(title=terminal_text(title) if title is not None else None)
    whole = set()
    for col in df.columns:  # names from the data are text, never rich markup; controls shown
        table.add_column(terminal_text(col), justify="right" if pd.api.types.is_numeric_dtype(df[col]) else "left")
        if pd.api.types.is_float_dtype(df[col]):
            v = df[col].to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            if len(v) and np.all(v == np.round(v)) and np.all(np.abs(v) < 1e15):
                whole.add(col)
    for row in df.itertuples(index=False):
        cells = []
        for col, v in zip(df.columns, row):
            if isinstance(v, (float, np.floating)):
                cells.append("-" if not np.isfinite(v) else f"{int(round(v)):,}" if col in whole
                             else floatfmt.format(v))
            else:
                cells.append(str(v))
        table.add_row(*(terminal_text(c) for c in cells))
    return table
