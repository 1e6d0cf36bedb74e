"""Per-item rows aggregated a chunk at a time: thousands of harness logs, or the partitions of a Dask
dataframe, reduced to one sum and one count per (model, item) cell as they are read, so that memory
holds the cells (at most models × items, 20 bytes each while reading) and never every sample with its
metadata.

A chunk's rows are checked as :meth:`ItemScores.from_long` checks them (bad rows raise naming the
chunk — the file, or ``partition N`` — and the rows, or are counted with ``on_invalid="exclude"``),
reduced to its cells (:func:`reduce_rows`), and the cells of all chunks are summed
(:class:`CellAccumulator`). Summing cells is exact: the matrix equals :meth:`ItemScores.from_long` on
all the rows concatenated in the same order (models and items in order of first appearance).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.errors import ExclusionLog, InputError
from bayesrank.items.data import ItemScores


@dataclass
class Cells:
    """One chunk reduced: its model and item names, and per cell (codes into those names) the sum of
    the scores and their count; ``all_binary``: every score was 0 or 1."""

    models: np.ndarray
    items: np.ndarray
    model_codes: np.ndarray
    item_codes: np.ndarray
    total: np.ndarray
    trials: np.ndarray
    all_binary: bool
    n_rows: int
    excluded: ExclusionLog
    n_chunks: int = 1


def reduce_rows(df: pd.DataFrame, *, model: str = "model", item: str = "item", score: str = "score",
                on_invalid: str = "raise", source: str = "<frame>", row_offset: int | None = 2) -> Cells:
    """A chunk of long rows ``(model, item, score)`` checked and reduced to its cells (sum and count
    of the scores per model × item)."""
    log = ExclusionLog(unit="rows (DataFrame index)" if row_offset is None else "lines")
    mnames, inames, vals, _ = ItemScores.valid_rows(df, model=model, item=item, score=score, on_invalid=on_invalid,
                                                    source=source, log=log, row_offset=row_offset)
    mcodes, models = pd.factorize(mnames, sort=False)
    icodes, items = pd.factorize(inames, sort=False)
    width = max(len(items), 1)
    key = mcodes.astype(np.int64) * width + icodes
    cell, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # cells in order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    inverse = rank[inverse.ravel()]
    cell = cell[order]
    return Cells(np.asarray(models, dtype=object), np.asarray(items, dtype=object),
                 (cell // width).astype(np.int32), (cell % width).astype(np.int32),
                 np.bincount(inverse, weights=vals, minlength=len(cell)),
                 np.bincount(inverse, minlength=len(cell)).astype(np.int32),
                 bool(np.isin(vals, (0.0, 1.0)).all()), len(df), log)


def _codes(table: dict, names: np.ndarray) -> np.ndarray:
    """Running codes of ``names`` (a chunk's unique names) in ``table``, new names appended."""
    return np.fromiter((table.setdefault(x, len(table)) for x in names), dtype=np.int64, count=len(names))


@dataclass
class CellAccumulator:
    """The cells of many chunks summed: :meth:`add` a chunk of rows (or :meth:`add_cells` one already
    reduced, e.g. on a Dask worker), then :meth:`scores` for the :class:`ItemScores`."""

    models: dict = field(default_factory=dict)
    items: dict = field(default_factory=dict)
    parts: list = field(default_factory=list)
    all_binary: bool = True
    n_rows: int = 0
    n_chunks: int = 0
    excluded: ExclusionLog = field(default_factory=ExclusionLog)
    batch_rows: int = 200_000
    _pending: list = field(default_factory=list, repr=False)
    _pending_rows: int = field(default=0, repr=False)

    def add(self, df: pd.DataFrame, **kwargs) -> None:
        """Check and add a chunk of long rows (keywords of :func:`reduce_rows`). Small chunks are
        checked and reduced together, up to :attr:`batch_rows` rows at a time (the checks cost the
        same per call whatever its size); a bad row is still reported for its own chunk
        (``source``, rows) by checking the batch's chunks one by one. With ``on_invalid="exclude"``
        each chunk is reduced on its own (exclusion examples name its rows)."""
        if kwargs.get("on_invalid", "raise") != "raise":
            self.flush()
            self.add_cells(reduce_rows(df, **kwargs))
            return
        columns = {k: v for k, v in kwargs.items() if k in ("model", "item", "score")}
        if self._pending and columns != self._pending[0][2]:
            self.flush()
        self._pending.append((df, kwargs, columns))
        self._pending_rows += len(df)
        if self._pending_rows >= self.batch_rows:
            self.flush()

    def flush(self) -> None:
        """Reduce the chunks waiting in the batch."""
        pending, self._pending, self._pending_rows = self._pending, [], 0
        if not pending:
            return
        if len(pending) == 1:
            df, kwargs, _ = pending[0]
            self.add_cells(reduce_rows(df, **kwargs))
            return
        try:
            cells = reduce_rows(pd.concat([p[0] for p in pending], ignore_index=True), **pending[0][2],
                                source="batch", row_offset=None)
        except InputError:
            for df, kwargs, _ in pending:  # the first bad chunk raises, naming itself and its rows
                reduce_rows(df, **kwargs)
            raise
        cells.n_chunks = len(pending)
        self.add_cells(cells)

    def add_cells(self, c: Cells) -> None:
        m = _codes(self.models, c.models)[c.model_codes]
        i = _codes(self.items, c.items)[c.item_codes]
        self.parts.append((m.astype(np.int32), i.astype(np.int32), c.total, c.trials))
        self.all_binary &= c.all_binary
        self.n_rows += c.n_rows
        self.n_chunks += c.n_chunks
        self.excluded.merge(c.excluded)

    def merge(self, other: CellAccumulator) -> None:
        """Add every cell of ``other`` (its names re-coded into this accumulator's)."""
        self.flush()
        other.flush()
        m = _codes(self.models, np.array(list(other.models), dtype=object))
        i = _codes(self.items, np.array(list(other.items), dtype=object))
        for mc, ic, t, r in other.parts:
            self.parts.append((m[mc].astype(np.int32), i[ic].astype(np.int32), t, r))
        self.all_binary &= other.all_binary
        self.n_rows += other.n_rows
        self.n_chunks += other.n_chunks
        self.excluded.merge(other.excluded)

    def scores(self, *, source: str = "<frame>", benchmark: str | None = None) -> ItemScores:
        """The :class:`ItemScores` of everything added (cells summed; items not scored by every model
        dropped and counted, as :meth:`ItemScores.from_long` does)."""
        self.flush()
        m_, n_ = len(self.models), len(self.items)
        if self.parts:
            flat = np.concatenate([m.astype(np.int64) * n_ + i for m, i, _, _ in self.parts])
            total = np.bincount(flat, weights=np.concatenate([p[2] for p in self.parts]), minlength=m_ * n_)
            trials = np.bincount(flat, weights=np.concatenate([p[3] for p in self.parts]),
                                 minlength=m_ * n_).astype(np.int64)
        else:
            total, trials = np.zeros(0), np.zeros(0, dtype=np.int64)
        return ItemScores.from_cells(np.array(list(self.models), dtype=object), np.array(list(self.items), dtype=object),
                                     total.reshape(m_, n_), trials.reshape(m_, n_), all_binary=self.all_binary,
                                     exclusions=self.excluded, n_rows=self.n_rows, source=source, benchmark=benchmark)


def aggregate_items_dask(ddf, *, model: str = "model", item: str = "item", score: str = "score",
                         on_invalid: str = "raise", benchmark: str | None = None) -> ItemScores:
    """:class:`ItemScores` from a Dask dataframe of long per-item rows: every partition is checked and
    reduced to its cells where it lives (:func:`reduce_rows`), only the cells travel back and are
    summed here (the active Dask scheduler or client). Errors and exclusion examples name
    ``partition N`` and the partition's index labels."""
    import dask

    def reduce(part, n):
        return reduce_rows(part, model=model, item=item, score=score, on_invalid=on_invalid,
                           source=f"partition {n}", row_offset=None) if len(part) else None

    acc = CellAccumulator(excluded=ExclusionLog(unit="rows (DataFrame index)"))
    for cells in dask.compute(*[dask.delayed(reduce)(part, n) for n, part in enumerate(ddf.to_delayed())]):
        if cells is not None:
            acc.add_cells(cells)
    return acc.scores(source=f"Dask dataframe ({ddf.npartitions} partitions)", benchmark=benchmark)
