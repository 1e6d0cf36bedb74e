"""Where each data row came from, so that messages name what a user can find: the file line (1-based,
as an editor shows it), the record of a Parquet file, or the index label of a DataFrame.

A table read by :mod:`bayesrank.data.tables` keeps, as its index, each row's position among the
file's data records (0-based, counted before any row is dropped); :class:`Origin` turns positions
into places. Line numbers of CSV files are found only when a message needs them (one pass over the
file), so reading stays as fast as ``pandas.read_csv``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

UNITS = ("line", "record", "row")


@dataclass
class Origin:
    """Positions (index labels) -> places. ``unit``: ``line`` (text files), ``record`` (Parquet, 1-based)
    or ``row`` (a DataFrame's own index labels, shown as they are)."""

    source: str = "<frame>"
    unit: str = "row"
    lines: Callable[[], np.ndarray] | None = None  # position -> 1-based line (computed on first use)
    files: list[str] = field(default_factory=list)  # several files: position -> file via file_of
    file_of: np.ndarray | None = None
    _cache: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def frame(cls) -> Origin:
        return cls()

    def _line_array(self) -> np.ndarray | None:
        if self.lines is None:
            return None
        if self._cache is None:
            self._cache = np.asarray(self.lines(), dtype=np.int64)
        return self._cache

    def place(self, label):
        """The place of one row: a line number, a record number, ``file:line`` or the index label."""
        if self.unit == "row":
            return label.item() if hasattr(label, "item") else label
        pos = int(label)
        if self.unit == "record":
            number = pos + 1
        else:
            arr = self._line_array()
            number = int(arr[pos]) if arr is not None and 0 <= pos < len(arr) else pos + 1
        if self.files and self.file_of is not None:
            return f"{self.files[int(self.file_of[pos])]} {self.unit} {number}"
        return number

    @property
    def plural(self) -> str:
        """The unit in front of a list of places (empty when each place names its file)."""
        if self.files:
            return ""
        return {"line": "lines", "record": "records", "row": "rows"}[self.unit]

    def describe(self, labels, limit: int = 5) -> str:
        """``"lines 4, 9, 17"`` (first ``limit`` places, ``... and N more``) for messages."""
        labels = list(labels)
        shown = ", ".join(str(self.place(x)) for x in labels[:limit])
        more = f" and {len(labels) - limit} more" if len(labels) > limit else ""
        if self.files and self.file_of is not None:  # "a.jsonl lines 8, 27; b.jsonl line 3"
            groups: dict = {}
            for x in labels[:limit]:
                pos = int(x)
                number = pos + 1 if self.unit == "record" else int(self._line_array()[pos])
                groups.setdefault(self.files[int(self.file_of[pos])], []).append(number)
            shown = "; ".join(f"{f} {self.unit if len(v) == 1 else self.unit + 's'} {', '.join(map(str, v))}"
                              for f, v in groups.items())
            return f"{shown}{more}"
        unit = self.unit if len(labels) == 1 else self.plural
        where = "" if self.source == "<frame>" else f" of {self.source}"
        if self.unit == "row" and self.source == "<frame>":
            where = " (DataFrame index)"
        return f"{unit} {shown}{more}{where}"

    def places(self, labels, limit: int = 5) -> list:
        return [self.place(x) for x in list(labels)[:limit]]
