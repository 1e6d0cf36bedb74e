"""Out-of-core aggregation: comparison files larger than memory -> :class:`PairCounts`.

Every pairwise likelihood here depends on the data only through the pair counts, so the only
O(rows) step is aggregation. :func:`aggregate_files` streams a file, a directory or a glob of
Parquet / CSV / TSV files in record batches (``pyarrow.dataset``), runs each batch through the SAME
in-memory reader (:func:`bayesrank.data.read_comparisons`: same formats, validation, error messages
and exclusion counting) and :func:`bayesrank.data.aggregate.aggregate`, and sums the per-batch
counts. Memory is O(batch_rows + pairs), not O(rows).

Row numbers in errors and exclusion examples are 0-based data rows within the named file, as the
in-memory reader reports them for that file read alone. :func:`aggregate_dask` runs the same
per-batch step (:func:`count_frame`) on every partition of a Dask dataframe.
"""

from __future__ import annotations

import glob
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bayesrank.data.aggregate import PairCounts
from bayesrank.data.readers import _SIGNATURES, FORMATS, detect_format, read_comparisons
from bayesrank.errors import ExclusionLog, InputError

#: file suffix -> pyarrow.dataset file kind
SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".csv.gz": "csv", ".tsv": "tsv",
            ".tsv.gz": "tsv", ".tab": "tsv"}
#: optional columns the in-memory readers use when present (judges, weights, tennis scores, tie kinds)
OPTIONAL_COLUMNS = ("judge", "worker", "annotator", "weight", "score", "tie_kind")


@dataclass
class StreamedCounts(PairCounts):
    """:class:`PairCounts` of every row in ``files`` (usable wherever pair counts are, e.g.
    ``BradleyTerry(aggregate_files("votes/"))``), plus what was excluded on the way."""

    excluded: ExclusionLog = field(default_factory=ExclusionLog)
    rows: int = 0
    files: list[str] = field(default_factory=list)
    format: str = ""

    def __repr__(self) -> str:
        return (f"StreamedCounts({self.rows} rows in {len(self.files)} files, format {self.format}: "
                f"{self.total.sum():g} comparisons, {self.n_players} players, {self.n_pairs} pairs; "
                f"{self.excluded.report()})")


def _suffix(p: Path) -> str:
    return "".join(p.suffixes[-2:]).lower() if p.suffix.lower() == ".gz" else p.suffix.lower()


def is_collection(source) -> bool:
    """True for a folder or a glob pattern that matches no single file: what :func:`aggregate_files`
    streams (a single file is read in memory by :func:`bayesrank.data.read_comparisons`)."""
    p = Path(source)
    return p.is_dir() or (not p.exists() and any(ch in str(source) for ch in "*?["))


def list_files(source) -> list[Path]:
    """The data files of a file, a directory (searched recursively; names starting with ``.`` or
    ``_`` skipped) or a glob pattern, sorted; every one must be Parquet or every one CSV/TSV."""
    if isinstance(source, (list, tuple)):
        files = [Path(s) for s in source]
    else:
        p = Path(source)
        if p.is_dir():
            files = [q for q in p.rglob("*") if q.is_file() and _suffix(q) in SUFFIXES
                     and not any(part.startswith((".", "_")) for part in q.relative_to(p).parts)]
        elif p.exists():
            files = [p]
        else:
            files = [Path(q) for q in glob.glob(str(source), recursive=True) if Path(q).is_file()]
            if not files:
                raise FileNotFoundError(f"no such file, directory or matching glob: {source}")
    files = sorted(files)
    if not files:
        raise InputError(f"{source}: no .parquet/.csv/.tsv files found")
    unknown = [str(f) for f in files if _suffix(f) not in SUFFIXES]
    if unknown:
        raise InputError(f"unsupported file type(s) {unknown[:3]}; streaming reads {', '.join(SUFFIXES)}")
    kinds = {SUFFIXES[_suffix(f)] for f in files}
    if len(kinds) > 1:
        raise InputError(f"{source}: mixed file types {sorted(kinds)}; stream one kind at a time")
    return files


def _dataset(files: list[Path], kind: str, string_columns=()):
    """A ``pyarrow.dataset`` over ``files``. CSV/TSV: pandas' missing-value strings are nulls (as
    ``pd.read_csv`` reads them) and player columns are read as text in every file."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.dataset as pds

    if kind == "parquet":
        return pds.dataset([str(f) for f in files], format="parquet")
    from pandas._libs.parsers import STR_NA_VALUES

    fmt = pds.CsvFileFormat(
        parse_options=pcsv.ParseOptions(delimiter="\t" if kind == "tsv" else ","),
        convert_options=pcsv.ConvertOptions(null_values=sorted(STR_NA_VALUES), strings_can_be_null=True,
                                            column_types={c: pa.string() for c in string_columns}),
        read_options=pcsv.ReadOptions(block_size=32 << 20),
    )
    return pds.dataset([str(f) for f in files], format=fmt)


def _columns_for(fmt: str, names: list[str], judge: str | None) -> list[str]:
    required = dict(_SIGNATURES)[fmt]
    wanted = [*required, *OPTIONAL_COLUMNS, *([judge] if judge else [])]
    return [c for c in names if c in wanted]


def _to_pandas(batches, categorical):
    """Record batches -> one pandas frame; ``categorical`` text columns dictionary-encoded in Arrow
    first (pandas then factorizes a few hundred names, not every row's string)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.Table.from_batches(batches)
    for name in categorical:
        i = table.schema.get_field_index(name)
        if i >= 0 and pa.types.is_string(table.schema.field(i).type):
            table = table.set_column(i, name, pc.dictionary_encode(table.column(i)))
    return table.to_pandas()


def _batches(fragment, columns, batch_rows: int, categorical=()):
    """Record batches of one file re-chunked to about ``batch_rows`` rows, as pandas frames."""
    pending, n = [], 0
    for batch in fragment.to_batches(columns=columns, batch_size=batch_rows, batch_readahead=1,
                                     fragment_readahead=1):
        pending.append(batch)
        n += batch.num_rows
        if n >= batch_rows:
            yield _to_pandas(pending, categorical)
            pending, n = [], 0
    if n:
        yield _to_pandas(pending, categorical)


class _CountAccumulator:
    """Sums per-batch :class:`PairCounts` whose player sets differ, on global player codes."""

    def __init__(self):
        self.code: dict = {}
        self.keys = np.zeros(0, dtype=np.int64)
        self.counts = np.zeros((0, 3))

    def add(self, pc: PairCounts) -> None:
        codes = np.array([self.code.setdefault(p, len(self.code)) for p in pc.players], dtype=np.int64)
        gi, gj = codes[pc.i], codes[pc.j]
        flip = gi > gj  # orient every pair as (lower code, higher code): swap the win columns
        c = pc.counts
        c[flip] = c[flip][:, [1, 0, 2]]
        keys = np.minimum(gi, gj) * (1 << 32) + np.maximum(gi, gj)
        self.keys, inv = np.unique(np.concatenate([self.keys, keys]), return_inverse=True)
        merged = np.zeros((len(self.keys), 3))
        np.add.at(merged, inv, np.concatenate([self.counts, c]))
        self.counts = merged

    def result(self) -> PairCounts:
        """Players sorted by name and pairs in ``(i, j)`` order, as the in-memory aggregate has them."""
        names = np.array(list(self.code), dtype=object)
        order = np.argsort(names, kind="stable")
        rank = np.empty(len(names), dtype=np.int64)
        rank[order] = np.arange(len(names))
        a, b = rank[self.keys >> 32], rank[self.keys & ((1 << 32) - 1)]
        c = self.counts.copy()
        flip = a > b
        c[flip] = c[flip][:, [1, 0, 2]]
        i, j = np.minimum(a, b), np.maximum(a, b)
        pairs = np.lexsort((j, i))
        c = c[pairs]
        return PairCounts(players=names[order], i=i[pairs], j=j[pairs], wins_i=np.ascontiguousarray(c[:, 0]),
                          wins_j=np.ascontiguousarray(c[:, 1]), ties=np.ascontiguousarray(c[:, 2]))


def count_frame(df, fmt: str, label: str, judge=None, on_invalid="raise", **reader_kwargs):
    """One batch (a pandas frame) -> (:class:`PairCounts`, :class:`ExclusionLog`) through the
    in-memory reader; errors and exclusion examples are prefixed with ``label`` (a file name or a
    partition), row numbers are the frame's index labels."""
    try:
        comps = read_comparisons(df, format=fmt, judge=judge, on_invalid=on_invalid, **reader_kwargs)
    except InputError as err:
        raise InputError(f"{label}: {err}") from None
    log = ExclusionLog()
    for reason, n in comps.excluded.counts.items():
        log.add(reason, n, [f"{label}:{r}" for r in comps.excluded.examples.get(reason, [])])
    return comps.aggregate(), log


def _merge(into: ExclusionLog, other: ExclusionLog) -> None:
    for reason, n in other.counts.items():
        into.add(reason, n, other.examples.get(reason, []))


def _stream_format(names, format: str) -> str:
    import pandas as pd

    fmt = detect_format(pd.DataFrame(columns=list(map(str, names)))) if format == "auto" else format
    if fmt not in FORMATS or fmt == "arena_counts":
        raise InputError(f"format {fmt!r} cannot be streamed; streaming reads row formats "
                         f"{[f for f in FORMATS if f != 'arena_counts']} (pair-count JSON is already aggregated)")
    return fmt


def _result(acc: "_CountAccumulator", log: ExclusionLog, rows: int, files: list[str], fmt: str) -> "StreamedCounts":
    pc = acc.result()
    return StreamedCounts(pc.players, pc.i, pc.j, pc.wins_i, pc.wins_j, pc.ties, excluded=log, rows=rows,
                          files=files, format=fmt)


def aggregate_files(source, format: str = "auto", judge: str | None = None, on_invalid: str = "raise",
                    batch_rows: int = 1_000_000, **reader_kwargs) -> StreamedCounts:
    """Stream ``source`` (file, directory or glob of Parquet/CSV/TSV) to pair counts.

    ``format``, ``judge``, ``on_invalid`` and ``reader_kwargs`` mean what they mean for
    :func:`bayesrank.data.read_comparisons`, which reads each batch of ``batch_rows`` rows; its
    exclusion counts are summed over batches. Memory stays O(batch_rows + pairs).
    """
    files = list_files(source)
    kind = SUFFIXES[_suffix(files[0])]
    names = _dataset(files, kind).schema.names  # the first file's columns
    import pandas as pd

    fmt = _stream_format(names, format)
    required = dict(_SIGNATURES)[fmt]
    player_cols = [c for c in required if c in ("model_a", "model_b", "left", "right", "generator_1", "generator_2",
                                                  "winner_name", "loser_name", "home_team", "away_team")]
    dataset = _dataset(files, kind, string_columns=player_cols)
    columns = _columns_for(fmt, names, judge)
    acc, log, rows = _CountAccumulator(), ExclusionLog(), 0
    for fragment in dataset.get_fragments():
        path = Path(fragment.path)
        missing = sorted(set(required) - set(fragment.physical_schema.names))
        if missing:
            raise InputError(f"{path}: format {fmt!r} needs column(s) {missing}; "
                             f"the file has {fragment.physical_schema.names}")
        start = 0
        for df in _batches(fragment, columns, batch_rows, categorical=player_cols):
            df.index = pd.RangeIndex(start, start + len(df))
            pc, excluded = count_frame(df, fmt, path.name, judge=judge, on_invalid=on_invalid, **reader_kwargs)
            acc.add(pc)
            _merge(log, excluded)
            start += len(df)
        rows += start
    if rows == 0:
        raise InputError(f"no comparisons: {source} has 0 rows")
    return _result(acc, log, rows, [str(f) for f in files], fmt)


def aggregate_dask(ddf, format: str = "auto", judge: str | None = None, on_invalid: str = "raise",
                   **reader_kwargs) -> StreamedCounts:
    """The same aggregation for a Dask dataframe (votes kept on a cluster): every partition is
    counted where it lives by the in-memory reader (:func:`count_frame`), only the per-partition
    pair counts travel back and are summed here. Uses the active Dask scheduler or client.
    Errors and exclusion examples name ``partition N`` and the partition's index labels."""
    import dask

    fmt = _stream_format(ddf.columns, format)
    columns = _columns_for(fmt, list(map(str, ddf.columns)), judge)

    def count(part, n):
        if len(part) == 0:
            return None
        pc, log = count_frame(part[columns], fmt, f"partition {n}", judge=judge, on_invalid=on_invalid,
                              **reader_kwargs)
        return pc, log, len(part)

    tasks = [dask.delayed(count)(part, n) for n, part in enumerate(ddf.to_delayed())]
    acc, log, rows = _CountAccumulator(), ExclusionLog(), 0
    for done in dask.compute(*tasks):
        if done is None:
            continue
        pc, part_log, n_rows = done
        acc.add(pc)
        _merge(log, part_log)
        rows += n_rows
    if rows == 0:
        raise InputError("no comparisons: the Dask dataframe has 0 rows")
    return _result(acc, log, rows, [f"dask: {ddf.npartitions} partitions"], fmt)
