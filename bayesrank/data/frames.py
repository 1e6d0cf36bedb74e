"""Tables already in memory: a pandas DataFrame, or a pyarrow ``Table`` / ``RecordBatch`` (converted
with ``to_pandas()``, as a Parquet file is read). Readers take these where they take a file: the
rows keep the DataFrame's index, and messages name rows by that index (``row 7 (DataFrame index)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from bayesrank.errors import InputError

if TYPE_CHECKING:
    from bayesrank.data.tables import Table

FRAME_SOURCE = "<frame>"


def is_frame(data: Any) -> bool:
    """A table in memory that :func:`as_frame` accepts (a pandas DataFrame or a pyarrow table)."""
    return isinstance(data, pd.DataFrame) or _arrow_kind(data) is not None


def _arrow_kind(data: Any) -> str | None:
    mod = type(data).__module__ or ""
    if mod.startswith("pyarrow") and type(data).__name__ in ("Table", "RecordBatch"):
        return type(data).__name__
    return None


def as_frame(data: Any) -> pd.DataFrame:
    """``data`` as a pandas DataFrame (a pyarrow table through ``to_pandas()``); anything else that
    looks like a data frame (polars, …) is one line asking for a pandas DataFrame."""
    if isinstance(data, pd.DataFrame):
        return data
    if _arrow_kind(data) is not None:
        return data.to_pandas()
    mod = (type(data).__module__ or "").split(".")[0]
    if hasattr(data, "to_pandas") or hasattr(data, "__dataframe__"):
        raise InputError(f"a {mod}.{type(data).__name__} is not read directly; pass a pandas DataFrame "
                         "(e.g. data.to_pandas()) or a pyarrow Table")
    raise InputError(f"cannot read a {type(data).__name__} as a table; expected a pandas DataFrame or a pyarrow Table")


def frame_table(data: Any) -> Table:
    """A :class:`~bayesrank.data.tables.Table` over an in-memory table (no copy of a DataFrame):
    rows keep their index labels, which messages show as they are."""
    from bayesrank.data.origin import Origin
    from bayesrank.data.tables import Table

    frame = as_frame(data)
    if len(frame.columns) == 0:
        raise InputError("the DataFrame has no columns")
    if len(frame) == 0:
        raise InputError("the DataFrame has no rows")
    names = [str(c) for c in frame.columns]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"the DataFrame has duplicated column name(s) {dup}; give each column one name")
    if any(not isinstance(c, str) for c in frame.columns):
        frame = frame.rename(columns=str)
    if not frame.index.is_unique:  # rows must be told apart: a repeated index label names them by position
        frame = frame.reset_index(drop=True)
    return Table(frame=frame, source=FRAME_SOURCE, origin=Origin(source=FRAME_SOURCE, unit="row"))
