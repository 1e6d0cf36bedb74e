"""Out-of-core aggregation: comparison files larger than memory -> :class:`PairCounts`.

Every pairwise likelihood here depends on the data only through the pair counts, so the only
O(rows) step is aggregation. :func:`aggregate_files` streams a file, a directory or a glob of
Parquet / CSV / TSV files in record batches (``pyarrow.dataset``), runs each batch through the SAME
in-memory reader (:func:`bayesrank.data.read_comparisons`: same formats, validation, error messages
and exclusion counting) and :func:`bayesrank.data.aggregate.aggregate`, and sums the per-batch
counts. Memory is O(batch_rows + pairs), not O(rows).

Errors and exclusion examples name the file and the line (CSV/TSV, 1-based as an editor shows it;
found by one pass over that file only when a message needs it) or the record (Parquet, 1-based),
as the in-memory reader names them for that file read alone. The column vocabulary
(``columns=``, ``outcome_map=``, ``judge_cols=``) is the in-memory reader's; the layout is decided
once from the first file's columns. :func:`aggregate_dask` runs the same per-batch step
(:func:`count_frame`) on every partition of a Dask dataframe (places: ``partition N`` and its
index labels).
"""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np

from bayesrank.data.aggregate import PairCounts
from bayesrank.data.origin import Origin
from bayesrank.data.readers import _SIGNATURES, FORMATS, _signature, _undetected, mapped_layout, read_comparisons
from bayesrank.errors import ExclusionLog, InputError

#: file suffix -> pyarrow.dataset file kind
SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".csv.gz": "csv", ".tsv": "tsv",
            ".tsv.gz": "tsv", ".tab": "tsv"}
#: optional columns the in-memory readers use when present (judges, weights, tennis scores, tie kinds)
OPTIONAL_COLUMNS = ("judge", "worker", "annotator", "weight", "score", "tie_kind")


class StreamedCounts(PairCounts):
    """:class:`PairCounts` of every row in ``files`` (usable wherever pair counts are, e.g.
    ``BradleyTerry(aggregate_files("votes/"))``), plus what was excluded on the way (``excluded``)."""

    def __init__(self, players, i, j, wins_i, wins_j, ties, *, excluded: ExclusionLog | None = None, rows: int = 0,
                 files: list[str] | None = None, format: str = "", notes: list | None = None):
        super().__init__(players, i, j, wins_i, wins_j, ties, excluded=excluded)
        self.rows = rows
        self.files = list(files or [])
        self.format = format
        self.notes = list(notes or [])

    def __repr__(self) -> str:
        return (f"StreamedCounts({self.rows} rows in {len(self.files)} files, format {self.format}: "
                f"{self.total.sum():g} comparisons, {self.n_players} players, {self.n_pairs} pairs; "
                f"{self.excluded.report()})")


def _suffix(p: Path) -> str:
    return "".join(p.suffixes[-2:]).lower() if p.suffix.lower() == ".gz" else p.suffix.lower()


def is_collection(source) -> bool:
    """True for a folder or a glob pattern that matches no single file: what :func:`aggregate_files`
    streams (a single file is read in memory by :func:`bayesrank.data.read_comparisons`). A folder
    holding other data files (JSON, JSON lines) is read in memory too, as every command reads it."""
    p = Path(source)
    if p.is_dir():
        from bayesrank.data.tables import list_data_files

        files = list_data_files(p)
        return bool(files) and all(_suffix(f) in SUFFIXES for f in files)
    return not p.exists() and any(ch in str(source) for ch in "*?[")


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


def _text_options(files: list[Path], kind: str) -> tuple[str, str]:
    """(delimiter, encoding) of CSV/TSV files, sniffed from the first file's first lines (as the
    in-memory reader does); every file must share them."""
    from bayesrank.data.tables import _HEAD, _bom_encoding, _head_bytes, decode, sniff_delimiter

    options = None
    for f in files:
        if f.stat().st_size == 0:
            raise InputError(f"{f}: empty file (0 bytes); expected a header line and data rows")
        head = _head_bytes(f, _suffix(f).endswith(".gz"))  # a .csv.gz is read through gzip (as pyarrow does)
        if not head.strip():
            raise InputError(f"{f}: empty file (only blank lines); expected a header line and data rows")
        cut = head if len(head) < _HEAD else head[: head.rfind(b"\n") + 1] or head
        text, encoding, _ = decode(cut, f)
        here = (sniff_delimiter(text, kind), "utf8" if encoding in ("utf-8", "utf-8-sig") else encoding)
        if _bom_encoding(head) not in (None, "utf-8-sig"):
            raise InputError(f"{f}: {_bom_encoding(head)} files cannot be streamed; save the file as UTF-8")
        if options is None:
            options = here
        elif here != options:
            raise InputError(f"{f}: delimiter/encoding {here} differ from the first file's {options}; stream files "
                             "written the same way")
    return options


def _dataset(files: list[Path], kind: str, string_columns=(), options=(",", "utf8")):
    """A ``pyarrow.dataset`` over ``files``. CSV/TSV: pandas' missing-value strings are nulls (as
    ``pd.read_csv`` reads them) and player columns are read as text in every file."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.dataset as pds

    try:
        if kind == "parquet":
            return pds.dataset([str(f) for f in files], format="parquet")
        from pandas._libs.parsers import STR_NA_VALUES

        delimiter, encoding = options
        fmt = pds.CsvFileFormat(
            parse_options=pcsv.ParseOptions(delimiter=delimiter),
            convert_options=pcsv.ConvertOptions(null_values=sorted(STR_NA_VALUES), strings_can_be_null=True,
                                                column_types={c: pa.string() for c in string_columns}),
            read_options=pcsv.ReadOptions(block_size=32 << 20, encoding=encoding),
        )
        return pds.dataset([str(f) for f in files], format=fmt)
    except pa.ArrowException as err:
        raise InputError(f"cannot read {files[0].parent if len(files) > 1 else files[0]}: "
                         f"{str(err).splitlines()[0]} (a truncated or partial file?)") from None


def _columns_for(fmt: str, names: list[str], judge: str | None, layout=None) -> list[str]:
    if layout is not None:
        wanted = [c for c in layout.columns.values()] + list(layout.judge_cols) + list(OPTIONAL_COLUMNS)
    else:
        wanted = [*dict(_SIGNATURES)[fmt], *OPTIONAL_COLUMNS]
    wanted += [judge] if judge else []
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
    import pyarrow as pa

    pending, n = [], 0
    try:
        for batch in fragment.to_batches(columns=columns, batch_size=batch_rows, batch_readahead=1,
                                         fragment_readahead=1):
            pending.append(batch)
            n += batch.num_rows
            if n >= batch_rows:
                yield _to_pandas(pending, categorical)
                pending, n = [], 0
    except pa.ArrowException as err:
        raise InputError(f"{fragment.path}: {str(err).splitlines()[0]}") from None
    if n:
        yield _to_pandas(pending, categorical)


def _file_origin(path: Path, kind: str, options) -> Origin:
    """File lines (CSV/TSV: found by one pass over the file when a message needs them) or records."""
    if kind == "parquet":
        return Origin(source=path.name, unit="record")
    from bayesrank.data.tables import _csv_line_starts, _open_bytes

    delimiter, encoding = options
    return Origin(source=path.name, unit="line", lines=lambda: _csv_line_starts(
        _open_bytes(path, _suffix(path).endswith(".gz")).decode("utf-8" if encoding == "utf8" else encoding)
        .lstrip("\ufeff"), delimiter))


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
        c = pc.counts.copy()
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
        return PairCounts(names[order], i[pairs], j[pairs], counts=c)


def count_frame(df, fmt: str, label: str, judge=None, on_invalid="raise", origin: Origin | None = None,
                **reader_kwargs):
    """One batch (a pandas frame) -> (:class:`PairCounts`, :class:`ExclusionLog`) through the
    in-memory reader. With ``origin`` (the batch's file), errors and exclusion examples name that
    file's lines; without, they are prefixed with ``label`` (a partition) and name index labels."""
    fmt = "auto" if fmt == "mapped" else fmt
    try:
        comps = read_comparisons(df, format=fmt, judge=judge, on_invalid=on_invalid, origin=origin,
                                 source=origin.source if origin is not None else "<frame>", **reader_kwargs)
    except InputError as err:
        raise InputError(str(err) if origin is not None else f"{label}: {err}") from None
    log = ExclusionLog(unit="")
    for reason, n in comps.excluded.counts.items():
        places = comps.excluded.examples.get(reason, [])
        log.add(reason, n, [f"{label} {comps.excluded.unit[:-1] if comps.excluded.unit else ''} {r}".replace("  ", " ")
                            for r in places])
    return comps.aggregate(), log


def _merge(into: ExclusionLog, other: ExclusionLog) -> None:
    for reason, n in other.counts.items():
        into.add(reason, n, other.examples.get(reason, []))


def _stream_layout(names, format: str, mapping: dict):
    """(format, layout): a named row format (layout None), or ``"mapped"`` and the column mapping
    decided from the first file's columns and the vocabulary (``columns=``, ``judge_cols=``)."""
    from bayesrank.data.columns import parse_columns, parse_judge_cols

    names = list(map(str, names))
    columns = parse_columns(mapping.get("columns"))
    judge_cols = parse_judge_cols(mapping.get("judge_cols"))
    if format == "arena_counts":
        raise InputError(f"format {format!r} cannot be streamed; streaming reads row formats "
                         f"{[f for f in FORMATS if f != 'arena_counts']} (pair-count JSON is already aggregated)")
    if format != "auto" and format not in FORMATS:
        raise InputError(f"unknown format {format!r}; expected one of {FORMATS}")
    fmt = _signature(names) if format == "auto" else format
    if fmt and not judge_cols and set(columns) <= {"judge", "weight", "cluster"}:
        return fmt, None
    lay = mapped_layout(names, fmt or "auto", columns, judge_cols, {})
    if lay is None:
        raise InputError(_undetected(names, "the first file"))
    return "mapped", lay


def _result(acc: _CountAccumulator, log: ExclusionLog, rows: int, files: list[str], fmt: str,
            notes=()) -> StreamedCounts:
    pc = acc.result()
    return StreamedCounts(pc.players, pc.i, pc.j, pc.wins_i, pc.wins_j, pc.ties, excluded=log, rows=rows,
                          files=files, format=fmt, notes=list(notes))


def aggregate_files(source, format: str = "auto", judge: str | None = None, on_invalid: str = "raise",
                    batch_rows: int = 1_000_000, **reader_kwargs) -> StreamedCounts:
    """Stream ``source`` (file, directory or glob of Parquet/CSV/TSV) to pair counts.

    ``format``, ``judge``, ``on_invalid`` and ``reader_kwargs`` mean what they mean for
    :func:`bayesrank.data.read_comparisons`, which reads each batch of ``batch_rows`` rows; its
    exclusion counts are summed over batches. Memory stays O(batch_rows + pairs).
    """
    files = list_files(source)
    kind = SUFFIXES[_suffix(files[0])]
    options = _text_options(files, kind) if kind != "parquet" else (",", "utf8")
    try:
        names = _dataset(files[:1], kind, options=options).schema.names  # the first file's columns
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 (pyarrow: a damaged first file)
        raise InputError(f"{files[0]}: {str(err).splitlines()[0]}") from None
    import pandas as pd

    mapping = {k: reader_kwargs.pop(k) for k in ("columns", "outcome_map", "judge_cols") if k in reader_kwargs}
    fmt, layout = _stream_layout(names, format, mapping)
    if layout is not None:
        required = [c for c in layout.columns.values()] + list(layout.judge_cols)
        player_cols = [layout.columns[k] for k in ("a", "b", "pair", "judge", "outcome") if k in layout.columns]
        player_cols += list(layout.judge_cols)
        reader_kwargs.update(columns=dict(layout.columns), judge_cols=list(layout.judge_cols),
                             outcome_map=mapping.get("outcome_map"))
    else:
        required = dict(_SIGNATURES)[fmt]
        player_cols = [c for c in required if c in ("model_a", "model_b", "left", "right", "generator_1",
                                                      "generator_2", "winner_name", "loser_name", "home_team",
                                                      "away_team")]
    dataset = _dataset(files, kind, string_columns=player_cols, options=options)
    columns = _columns_for(fmt, names, judge, layout)
    acc, log, rows = _CountAccumulator(), ExclusionLog(unit=""), 0
    for fragment in dataset.get_fragments():
        path = Path(fragment.path)
        try:
            have = fragment.physical_schema.names
        except Exception as err:  # noqa: BLE001 (pyarrow: a damaged file)
            raise InputError(f"{path}: {str(err).splitlines()[0]} (a truncated or partial file?)") from None
        missing = sorted(set(required) - set(have))
        if missing:
            raise InputError(f"{path}: the columns {missing} are missing (the first file has them); the file has {have}")
        origin = _file_origin(path, kind, options)
        start = 0
        for df in _batches(fragment, [c for c in columns if c in have], batch_rows, categorical=player_cols):
            df.index = pd.RangeIndex(start, start + len(df))
            pc, excluded = count_frame(df, fmt, path.name, judge=judge, on_invalid=on_invalid, origin=origin,
                                       **reader_kwargs)
            acc.add(pc)
            _merge(log, excluded)
            start += len(df)
        rows += start
    if rows == 0:
        raise InputError(f"no comparisons: {source} has 0 rows")
    notes = [f"columns read as: {layout.assumed} (= {layout.flag()})"] if layout is not None and layout.assumed else []
    return _result(acc, log, rows, [str(f) for f in files], fmt, notes)


def aggregate_dask(ddf, format: str = "auto", judge: str | None = None, on_invalid: str = "raise",
                   **reader_kwargs) -> StreamedCounts:
    """The same aggregation for a Dask dataframe (votes kept on a cluster): every partition is
    counted where it lives by the in-memory reader (:func:`count_frame`), only the per-partition
    pair counts travel back and are summed here. Uses the active Dask scheduler or client.
    Errors and exclusion examples name ``partition N`` and the partition's index labels."""
    import dask

    mapping = {k: reader_kwargs.pop(k) for k in ("columns", "outcome_map", "judge_cols") if k in reader_kwargs}
    fmt, layout = _stream_layout(ddf.columns, format, mapping)
    if layout is not None:
        reader_kwargs.update(columns=dict(layout.columns), judge_cols=list(layout.judge_cols),
                             outcome_map=mapping.get("outcome_map"))
    columns = _columns_for(fmt, list(map(str, ddf.columns)), judge, layout)

    def count(part, n):
        if len(part) == 0:
            return None
        pc, log = count_frame(part[columns], fmt, f"partition {n}", judge=judge, on_invalid=on_invalid,
                              **reader_kwargs)
        return pc, log, len(part)

    tasks = [dask.delayed(count)(part, n) for n, part in enumerate(ddf.to_delayed())]
    acc, log, rows = _CountAccumulator(), ExclusionLog(unit=""), 0
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
