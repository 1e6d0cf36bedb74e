"""Reading a data file as it comes: every failure is one line naming the file and the line.

:func:`read_table` reads one CSV / TSV / JSON / JSON-lines / Parquet file (``.gz`` too; a file
without a known suffix is recognised from its content) into a :class:`Table`:

* **text encoding**: UTF-8 with or without a byte-order mark, UTF-16/32 with one; a file that is not
  valid UTF-8 is read as Windows-1252 (a superset of Latin-1 for text) and a note says so, or as
  the ``encoding=`` given; binary data are an error;
* **delimiter**: comma, semicolon, tab or pipe, sniffed from the first lines (``.tsv`` is tab);
* **header quirks**: blank lines before the header, header lines repeated inside the data (sports
  reference exports repeat theirs every few weeks: skipped and counted as ``repeated header line``),
  duplicated column names (kept apart as ``NAME``, ``NAME.1``, ... and recorded, so that a mapping
  that names one of them can say which copies exist);
* **parse errors** with their line: a ragged CSV row, a truncated JSON file, one bad JSON line,
  an unreadable Parquet file, an empty file or one with a header and no rows;
* **names stay text**: :meth:`Table.text` returns columns as the characters in the file
  (``3.10`` is not ``3.1``, ``007`` is not ``7``), re-reading a column that pandas inferred as numbers.

Every row keeps its position among the file's data records as its index, and the table's
:class:`~bayesrank.data.origin.Origin` turns positions into 1-based file lines for messages.
:func:`read_source` reads a file or a folder of files (optionally taking columns from each file's
path, e.g. ``{a}-vs-{b}.jsonl``).
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from bayesrank.data.origin import Origin
from bayesrank.errors import ExclusionLog, InputError

SPREADSHEETS = (".xlsx", ".xls", ".xlsm", ".ods", ".numbers")
KINDS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "sniff", ".dat": "sniff", ".json": "json",
         ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}
DELIMITERS = (",", ";", "\t", "|")
_HEAD = 1 << 16
REPEATED_HEADER = "repeated header line"
BAD_JSON_LINE = "unreadable JSON line"


@dataclass
class Table:
    """A file's rows (``frame``, index = position among the data records) and where they came from."""

    frame: pd.DataFrame | None
    source: str
    origin: Origin
    notes: list[str] = field(default_factory=list)
    skipped: ExclusionLog = field(default_factory=ExclusionLog)
    duplicated: dict[str, list[str]] = field(default_factory=dict)
    obj: dict | None = None  # a JSON object that is not a table (pair-count JSON)
    path_columns: dict[str, str] = field(default_factory=dict)  # field of a path pattern -> column
    _reread: object = field(default=None, repr=False)  # columns -> raw text frame (CSV only)

    @property
    def columns(self) -> list[str]:
        return [] if self.frame is None else [str(c) for c in self.frame.columns]

    def text(self, columns) -> pd.DataFrame:
        """``columns`` as text exactly as written in the file (missing values stay missing)."""
        cols = [c for c in dict.fromkeys(columns) if c is not None]
        out = pd.DataFrame(index=self.frame.index)
        numeric = [c for c in cols if not _is_text(self.frame[c]) or (
            self.frame[c].dtype == object and pd.api.types.infer_dtype(self.frame[c], skipna=True) != "string")]
        raw = self._reread(numeric) if (numeric and self._reread is not None) else None
        for c in cols:
            if c in numeric:
                out[c] = raw[c] if raw is not None else _as_text(self.frame[c])
            else:
                out[c] = self.frame[c]
        return out

    def with_text(self, columns) -> pd.DataFrame:
        """The frame with ``columns`` replaced by their text (see :meth:`text`)."""
        cols = [c for c in dict.fromkeys(columns) if c is not None and c in self.frame.columns]
        if not cols:
            return self.frame
        frame = self.frame.copy()
        text = self.text(cols)
        for c in cols:
            frame[c] = text[c]
        return frame


def _is_text(s: pd.Series) -> bool:
    return pd.api.types.is_string_dtype(s.dtype) or s.dtype == object


def _as_text(s: pd.Series) -> pd.Series:
    """Numbers of a JSON/Parquet column as text: integers without a decimal point, floats as Python
    writes them, booleans as ``true``/``false``; missing values stay missing."""
    def one(v):
        if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
            return np.nan
        if isinstance(v, (bool, np.bool_)):
            return "true" if v else "false"
        if isinstance(v, (float, np.floating)) and float(v).is_integer() and not pd.api.types.is_float_dtype(s.dtype):
            return str(int(v))
        return str(v.item() if hasattr(v, "item") else v)
    return s.map(one).astype(object)


# ----------------------------------------------------------------------------- bytes and encodings
def _kind_of(path: Path) -> tuple[str, bool]:
    """(kind, gzipped) from the suffix(es)."""
    suffixes = [s.lower() for s in path.suffixes]
    gz = bool(suffixes) and suffixes[-1] == ".gz"
    if gz:
        suffixes = suffixes[:-1]
    kind = KINDS.get(suffixes[-1], "sniff") if suffixes else "sniff"
    return kind, gz


def _open_bytes(path: Path, gz: bool) -> bytes:
    if gz:
        try:
            with gzip.open(path, "rb") as f:
                return f.read()
        except (OSError, EOFError) as err:
            raise InputError(f"{path}: not a readable gzip file ({err}); a truncated download?") from None
    return path.read_bytes()


def _bom_encoding(head: bytes) -> str | None:
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    return None


def _line_of_offset(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def decode(data: bytes, source, encoding: str | None = None) -> tuple[str, str, list[str]]:
    """(text, encoding used, notes). UTF-8 (with or without BOM) and BOM-marked UTF-16/32 are read as
    such; other bytes as Windows-1252 with a note, unless ``encoding`` is given."""
    notes = []
    if encoding:
        try:
            return data.decode(encoding), encoding, notes
        except LookupError:
            raise InputError(f"--encoding {encoding!r} is not a known text encoding (e.g. utf-8, latin-1, cp1252, utf-16)") from None
        except UnicodeDecodeError as err:
            raise InputError(f"{source} line {_line_of_offset(data, err.start)}: not valid {encoding} "
                             f"(byte 0x{data[err.start]:02x}); pass the file's encoding with --encoding") from None
    bom = _bom_encoding(data[:4])
    if bom:
        try:
            return data.decode(bom), bom, notes
        except UnicodeDecodeError as err:
            raise InputError(f"{source}: starts with a {bom} byte-order mark but is not valid {bom} "
                             f"(byte {err.start}); pass the file's encoding with --encoding") from None
    head = data[:_HEAD]
    if b"\x00" in head:
        even, odd = head[0::2].count(0), head[1::2].count(0)
        guess = "utf-16-le" if odd > 0.3 * len(head) / 2 and even == 0 else "utf-16-be" if even > 0.3 * len(head) / 2 and odd == 0 else None
        if guess:
            try:
                text = data.decode(guess)
                notes.append(f"read as {guess.upper()} (no byte-order mark)")
                return text, guess, notes
            except UnicodeDecodeError:
                pass
        raise InputError(f"{source}: not a text table (binary data: a NUL byte at byte {head.index(0)}); "
                         "expected CSV, TSV, JSON, JSON lines or Parquet")
    try:
        return data.decode("utf-8"), "utf-8", notes
    except UnicodeDecodeError as err:
        line = _line_of_offset(data, err.start)
        byte = data[err.start]
    for enc in ("cp1252", "latin-1"):
        try:
            text = data.decode(enc)
        except UnicodeDecodeError:
            continue
        notes.append(f"{source} is not valid UTF-8 (byte 0x{byte:02x} on line {line}): read as "
                     f"{'Windows-1252' if enc == 'cp1252' else 'Latin-1'}; pass --encoding if it is another one")
        return text, enc, notes
    raise AssertionError("latin-1 decodes every byte")  # pragma: no cover


# ----------------------------------------------------------------------------- CSV
def sniff_delimiter(text: str, kind: str) -> str:
    """The delimiter that splits the first lines into the same number (> 1) of fields most often."""
    if kind == "tsv":
        return "\t"
    lines = [ln for ln in text[:_HEAD].splitlines() if ln.strip()][:30]
    if len(lines) > 1 and not text[:_HEAD].endswith(("\n", "\r")) and len(text) > _HEAD:
        lines = lines[:-1]  # the last line of the sample may be cut
    best, score = ",", 0.0
    for d in DELIMITERS:
        try:
            counts = [len(r) for r in csv.reader(lines, delimiter=d)]
        except csv.Error:
            continue
        if not counts or max(counts) < 2:
            continue
        mode = max(set(counts), key=counts.count)
        s = counts.count(mode) / len(counts) * (mode > 1) + 1e-3 * mode
        if s > score:
            best, score = d, s
    return best


def _csv_line_starts(text: str, delimiter: str) -> np.ndarray:
    """1-based line where each data record starts (blank lines skipped, header excluded), as
    ``pandas.read_csv`` counts records."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    starts, prev, header = [], 0, False
    for row in reader:
        start = prev + 1
        prev = reader.line_num
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if not header:
            header = True
            continue
        starts.append(start)
    return np.asarray(starts, dtype=np.int64)


_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _head_bytes(path: Path, gz: bool, n: int = _HEAD) -> bytes:
    try:
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
            return f.read(n)
    except (gzip.BadGzipFile, EOFError, OSError) as err:
        raise InputError(f"{path}: not a readable gzip file ({err}); a truncated download?") from None


def _line_starts_fast(data: bytes) -> np.ndarray | None:
    """:func:`_csv_line_starts` without a CSV parser, for files with no quote character (every line
    break then ends a record); None when the file has quotes."""
    if b'"' in data:
        return None
    buf = np.frombuffer(data, dtype=np.uint8)
    breaks = np.flatnonzero(buf == 10)
    starts = np.concatenate([[0], breaks + 1])
    ends = np.concatenate([breaks, [len(buf)]])
    blank = np.isin(buf, np.frombuffer(b" \t\r\x0b\x0c", dtype=np.uint8))
    text_bytes = np.concatenate([[0], np.cumsum(~blank)])  # non-blank bytes before each offset
    nonblank = (text_bytes[ends] - text_bytes[starts]) > 0
    lines = np.flatnonzero(nonblank) + 1  # 1-based numbers of the non-blank lines
    return lines[1:]  # the first is the header


def _read_csv(path: Path, kind: str, gz: bool, encoding: str | None) -> Table:
    """pandas reads the file itself when it is UTF-8 (the common case: no copy of its text); other
    encodings are decoded here first. Line numbers are found only when a message asks for them."""
    source = str(path)
    head = _head_bytes(path, gz)
    if not head.strip() and (gz or path.stat().st_size <= len(head)):
        raise InputError(f"{source}: empty file ({path.stat().st_size} bytes); expected a header line and data rows")
    cut = head if len(head) < _HEAD else head[: head.rfind(b"\n") + 1] or head
    head_text, enc, notes = decode(cut, source, encoding)
    text = None
    if enc not in ("utf-8", "utf-8-sig") or len(head) == _HEAD and _bom_encoding(head) not in (None, "utf-8-sig"):
        data = _open_bytes(path, gz)
        text, enc, notes = decode(data, source, encoding)
        text = text.lstrip("\ufeff")
    head_text = head_text.lstrip("\ufeff")
    delim = sniff_delimiter(head_text, kind)
    if delim not in (",", "\t") or (delim == "\t" and kind != "tsv"):
        notes.append(f"{source}: delimiter {delim!r} (detected)")
    lines = [ln for ln in head_text.splitlines() if ln.strip()]
    header = next(csv.reader(lines[:1], delimiter=delim), [])
    names = [h.strip() for h in header]
    counts = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1

    def parse(**kw):
        source_arg = io.StringIO(text) if text is not None else path
        enc_arg = {} if text is not None else {"encoding": "utf-8-sig"}
        return pd.read_csv(source_arg, sep=delim, index_col=False, skip_blank_lines=True, **enc_arg, **kw)

    try:
        frame = parse()
    except UnicodeDecodeError:  # not UTF-8 after the first 64 KiB: decode the whole file (and say so)
        data = _open_bytes(path, gz)
        text, enc, more = decode(data, source, encoding)
        text = text.lstrip("\ufeff")
        notes += more
        frame = parse()
    except pd.errors.EmptyDataError:
        raise InputError(f"{source}: no header line (only blank lines)") from None
    except pd.errors.ParserError as err:
        m = _FIELDS.search(str(err))
        if m:
            want, line, saw = m.groups()
            raise InputError(f"{source} line {line}: {saw} fields where the header has {want} (a value with an "
                             f"unquoted {delim!r}, or a missing/extra column); quote the value or fix the line") from None
        raise InputError(f"{source}: not a readable CSV file ({str(err).splitlines()[0]})") from None
    frame.columns = [str(c).strip() if not str(c).startswith("Unnamed: ") else str(c) for c in frame.columns]
    duplicated = {}
    for n, k in counts.items():
        if k > 1 and n:
            duplicated[n] = [n] + [f"{n}.{i}" for i in range(1, k)]

    def line_starts():
        if text is None:
            data = _open_bytes(path, gz)
            fast = _line_starts_fast(data)
            if fast is not None:
                return fast
            return _csv_line_starts(data.decode("utf-8-sig"), delim)
        fast = _line_starts_fast(text.encode("utf-8")) if '"' not in text else None
        return fast if fast is not None else _csv_line_starts(text, delim)

    origin = Origin(source=source, unit="line", lines=line_starts)
    skipped = ExclusionLog()
    frame = _drop_repeated_headers(frame, names, skipped, origin)

    def reread(cols):
        positions = [list(frame.columns).index(c) for c in cols]
        raw = parse(dtype=str, usecols=positions, low_memory=False)
        raw.columns = [frame.columns[p] for p in sorted(positions)]
        return raw.loc[frame.index]

    return Table(frame=frame, source=source, origin=origin, notes=notes, skipped=skipped, duplicated=duplicated,
                 _reread=reread)


def _drop_repeated_headers(frame: pd.DataFrame, header: list[str], skipped: ExclusionLog,
                           origin: Origin) -> pd.DataFrame:
    """Rows that repeat the header line (every cell equal to the header's text at its position; blank
    header cells blank) are not data: dropped, counted, and the columns they forced to text read as
    numbers again."""
    if len(frame) == 0 or len(header) != len(frame.columns):
        return frame
    named = [j for j, h in enumerate(header) if h]
    if not named or not _is_text(frame.iloc[:, named[0]]):
        return frame
    cand = (frame.iloc[:, named[0]] == header[named[0]]).fillna(False).to_numpy(dtype=bool)
    if not cand.any():
        return frame
    sub = frame.iloc[np.flatnonzero(cand)]
    hit = np.ones(len(sub), dtype=bool)
    for j, h in enumerate(header):
        col = sub.iloc[:, j]
        hit &= (col.astype(object) == h).to_numpy() if h else col.isna().to_numpy() | (col.astype(object) == "").to_numpy()
    rows = sub.index[hit]
    if len(rows) == 0:
        return frame
    skipped.add(REPEATED_HEADER, len(rows), origin.places(rows))
    frame = frame.drop(index=rows)
    for c in frame.columns:
        if _is_text(frame[c]) and frame[c].notna().any():
            num = pd.to_numeric(frame[c], errors="coerce")
            if num.notna().sum() == frame[c].notna().sum():
                frame[c] = num
    return frame


# ----------------------------------------------------------------------------- JSON and JSON lines
def _json_error(source, err: json.JSONDecodeError, what: str = "not valid JSON") -> InputError:
    hint = " (truncated?)" if "Expecting" in err.msg and err.pos >= len(err.doc.rstrip()) - 1 else ""
    return InputError(f"{source} line {err.lineno} column {err.colno}: {what}: {err.msg}{hint}")


def _records_with_lines(text: str, source) -> tuple[list, list[int]]:
    """Elements of a top-level JSON array with the line each starts on."""
    dec = json.JSONDecoder()
    i, n = 0, len(text)
    ws = " \t\r\n"
    while i < n and text[i] in ws:
        i += 1
    i += 1  # '['
    records, lines, line, last = [], [], 1, 0
    while True:
        while i < n and text[i] in ws:
            i += 1
        if i >= n:
            raise _json_error(source, json.JSONDecodeError("Expecting ',' delimiter or ']'", text, i))
        if text[i] == "]":
            break
        try:
            obj, j = dec.raw_decode(text, i)
        except json.JSONDecodeError as err:
            raise _json_error(source, err) from None
        line += text.count("\n", last, i)
        last = i
        records.append(obj)
        lines.append(line)
        i = j
        while i < n and text[i] in ws:
            i += 1
        if i < n and text[i] == ",":
            i += 1
        elif i < n and text[i] == "]":
            break
        else:
            raise _json_error(source, json.JSONDecodeError("Expecting ',' delimiter or ']'", text, min(i, n)))
    rest = text[i + 1:].strip()
    if rest:
        raise _json_error(source, json.JSONDecodeError("Extra data after the array", text, text.index(rest[0], i + 1)))
    return records, lines


def _records_frame(records, lines, source, unit="line") -> pd.DataFrame:
    for r, ln in zip(records, lines):
        if not isinstance(r, dict):
            raise InputError(f"{source} {unit} {ln}: expected an object of named fields "
                             f"(one record per comparison), got a {type(r).__name__}")
    frame = pd.DataFrame.from_records(records) if records else pd.DataFrame()
    return frame


def _text_of(path: Path, gz: bool, encoding: str | None, expected: str) -> tuple[str, list[str]]:
    """(the file's text, notes) — an empty file is an error saying what was ``expected``."""
    data = _open_bytes(path, gz)
    if not data.strip():
        raise InputError(f"{path}: empty file ({len(data)} bytes); expected {expected}")
    text, _, notes = decode(data, path, encoding)
    return text.lstrip("\ufeff"), notes


def _read_json(path: Path, gz: bool, encoding: str | None) -> Table:
    source = str(path)
    text, notes = _text_of(path, gz, encoding, "a JSON array of records")
    first = text.lstrip()[:1]
    if first == "[":
        records, lines = _records_with_lines(text, source)
        if not records:
            raise InputError(f"{source}: an empty JSON array (no records)")
        frame = _records_frame(records, lines, source)
        origin = Origin(source=source, unit="line", lines=lambda: np.asarray(lines))
        return Table(frame=frame, source=source, origin=origin, notes=notes)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise _json_error(source, err) from None
    if not isinstance(obj, dict):
        raise InputError(f"{source}: JSON must be an array of records or an object, got a {type(obj).__name__}")
    if {"models", "X", "Y"} <= set(obj):
        return Table(frame=None, source=source, origin=Origin(source=source, unit="record"), notes=notes, obj=obj)
    lists = {k: v for k, v in obj.items() if isinstance(v, list)}
    if len(obj) == 1 and lists and all(isinstance(x, dict) for x in next(iter(lists.values()))):
        key = next(iter(lists))
        records = lists[key]
        notes.append(f"{source}: records read from the JSON object's {key!r} list")
        frame = _records_frame(records, range(1, len(records) + 1), source, unit="record")
        return Table(frame=frame, source=source, origin=Origin(source=source, unit="record"), notes=notes)
    try:
        frame = pd.DataFrame(obj)
    except ValueError as err:
        raise InputError(f"{source}: a JSON object must map column names to equal-length lists ({err})") from None
    return Table(frame=frame.reset_index(drop=True), source=source, origin=Origin(source=source, unit="record"),
                 notes=notes)


def _read_jsonl(path: Path, gz: bool, encoding: str | None, bad_lines: str = "raise") -> Table:
    source = str(path)
    text, notes = _text_of(path, gz, encoding, "one JSON record per line")
    records, lines, skipped = [], [], ExclusionLog()
    loads = json.loads
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = loads(line)
        except json.JSONDecodeError as err:
            if bad_lines == "exclude":
                skipped.add(BAD_JSON_LINE, 1, [number])
                continue
            raise InputError(f"{source} line {number}: not valid JSON ({err.msg} at column {err.colno}); "
                             "fix the line, or pass --exclude-invalid to skip and count such lines") from None
        if not isinstance(rec, dict):
            raise InputError(f"{source} line {number}: expected an object of named fields, got a {type(rec).__name__}")
        records.append(rec)
        lines.append(number)
    if not records:
        raise InputError(f"{source}: no readable JSON records ({skipped.report()})" if skipped.total
                         else f"{source}: no JSON records")
    frame = pd.DataFrame.from_records(records)
    origin = Origin(source=source, unit="line", lines=lambda: np.asarray(lines))
    return Table(frame=frame, source=source, origin=origin, notes=notes, skipped=skipped)


# ----------------------------------------------------------------------------- Parquet
def _read_parquet(path: Path) -> Table:
    source = str(path)
    if path.stat().st_size == 0:
        raise InputError(f"{source}: empty file (0 bytes); expected a Parquet file")
    try:
        import pyarrow.parquet as pq

        frame = pq.read_table(path).to_pandas()
    except Exception as err:  # noqa: BLE001 (pyarrow raises ArrowInvalid, OSError, ...: all one line)
        msg = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise InputError(f"{source}: not a readable Parquet file ({msg}); a truncated or partial file?") from None
    names = [str(c) for c in frame.columns]
    dup = {n: [n] * names.count(n) for n in set(names) if names.count(n) > 1}
    if dup:
        raise InputError(f"{source}: duplicated column name(s) {sorted(dup)}; rename them so that each column "
                         "has one name")
    return Table(frame=frame.reset_index(drop=True), source=source, origin=Origin(source=source, unit="record"))


# ----------------------------------------------------------------------------- entry points
def _sniff_kind(path: Path, gz: bool) -> str:
    with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
        head = f.read(_HEAD)
    if head.startswith(b"PAR1"):
        return "parquet"
    stripped = head.lstrip(codecs.BOM_UTF8).lstrip()
    if stripped.startswith(b"["):
        return "json"
    if stripped.startswith(b"{"):
        first = stripped.split(b"\n", 1)[0]
        try:
            json.loads(first)
            return "jsonl"
        except ValueError:
            return "json"
    return "csv"


def read_table(path, *, encoding: str | None = None, bad_lines: str = "raise") -> Table:
    """Read one file (see module docstring). ``bad_lines="exclude"`` skips and counts unreadable
    JSON lines instead of stopping at the first. A table in memory (a pandas DataFrame or a pyarrow
    table) is taken as it is (:func:`bayesrank.data.frames.frame_table`)."""
    from bayesrank.data.frames import frame_table, is_frame

    if is_frame(path):
        return frame_table(path)
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if path.is_dir():
        raise InputError(f"{path} is a folder; expected a file (or pass the folder where a folder of files is read)")
    kind, gz = _kind_of(path)
    if path.suffix.lower() in SPREADSHEETS:
        raise InputError(f"{path}: a spreadsheet file; export the sheet as CSV (or TSV) and pass that file")
    if kind in ("sniff", "csv", "tsv", "json", "jsonl"):
        try:
            with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
                magic = f.read(4) if path.stat().st_size else b""
        except (gzip.BadGzipFile, EOFError) as err:
            raise InputError(f"{path}: not a readable gzip file ({err}); a truncated download, or not compressed "
                             "(then drop the .gz suffix)") from None
        if magic.startswith(b"PAR1"):
            kind = "parquet"
        elif magic.startswith(b"PK\x03\x04"):
            raise InputError(f"{path}: a ZIP archive (an Excel workbook?), not a text table; unpack it or export "
                             "the sheet as CSV")
        elif kind == "sniff":
            kind = _sniff_kind(path, gz)
    if kind == "parquet":
        table = _read_parquet(path)
    elif kind == "json":
        table = _read_json(path, gz, encoding)
    elif kind == "jsonl":
        table = _read_jsonl(path, gz, encoding, bad_lines)
    else:
        table = _read_csv(path, kind, gz, encoding)
    if table.frame is not None:
        if len(table.frame.columns) == 0:
            raise InputError(f"{path}: no columns")
        if len(table.frame) == 0:
            raise InputError(f"{path}: a header but no data rows")
    return table


def read_header(path, encoding: str | None = None) -> list[str]:
    """Column names without reading the whole file (a folder: the first readable file's); ``[]`` when
    the file cannot be read (reading it then gives the one-line error)."""
    try:
        return _read_header(Path(path), encoding)
    except (OSError, EOFError, InputError, ValueError):
        return []


def _read_header(path: Path, encoding: str | None) -> list[str]:
    if path.is_dir():
        files = list_data_files(path)
        return _read_header(files[0], encoding) if files else []
    kind, gz = _kind_of(path)
    if kind == "parquet" or (kind == "sniff" and _sniff_kind(path, gz) == "parquet"):
        try:
            import pyarrow.parquet as pq

            return [str(n) for n in pq.read_schema(path).names]
        except Exception:  # noqa: BLE001 (the full read gives the one-line error)
            return []
    if kind in ("csv", "tsv") or (kind == "sniff" and _sniff_kind(path, gz) == "csv"):
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
            head = f.read(_HEAD)
        try:
            text, _, _ = decode(head if len(head) < _HEAD else head[: head.rfind(b"\n") + 1] or head, path, encoding)
        except InputError:
            return []
        text = text.lstrip("\ufeff")
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if not lines:
            return []
        delim = sniff_delimiter(text, kind)
        return [h.strip() for h in next(csv.reader(lines[:1], delimiter=delim), [])]
    try:
        table = read_table(path, encoding=encoding)
    except InputError:
        return []
    return list(table.obj) if table.obj is not None else table.columns


# ----------------------------------------------------------------------------- folders and path patterns
def _listed(files) -> list[str]:
    if isinstance(files, (str, Path)):
        files = [f for f in str(files).split(",") if f.strip()]
    return [str(f).strip() for f in files]


def list_data_files(folder) -> list[Path]:
    """Data files under ``folder`` (recursively; names starting with ``.`` or ``_`` skipped), sorted."""
    folder = Path(folder)
    out = []
    for q in folder.rglob("*"):
        if not q.is_file() or any(part.startswith((".", "_")) for part in q.relative_to(folder).parts):
            continue
        kind, _ = _kind_of(q)
        if kind != "sniff" or q.suffix.lower() == ".txt":
            out.append(q)
    return sorted(out)


def compile_path_pattern(pattern: str):
    """``{name}`` -> a named part of one path component (the first occurrence; later ones must repeat
    it), ``*`` -> any text within a component, ``?`` -> one character, ``**/`` -> any folders; the
    pattern must match a file's whole path relative to the folder (``/`` separates folders)."""
    out, seen, i = [], set(), 0
    for m in re.finditer(r"\{([A-Za-z_][A-Za-z0-9_]*)\}|\*\*/|\*\*|\*|\?", pattern):
        out.append(re.escape(pattern[i:m.start()]))
        tok = m.group(0)
        if tok == "**/":
            out.append("(?:.*/)?")
        elif tok == "**":
            out.append(".*")
        elif tok == "*":
            out.append("[^/]*?")
        elif tok == "?":
            out.append("[^/]")
        else:
            name = m.group(1)
            out.append(f"(?P={name})" if name in seen else f"(?P<{name}>[^/]+?)")
            seen.add(name)
        i = m.end()
    out.append(re.escape(pattern[i:]))
    if not seen:
        raise InputError(f"--path-pattern {pattern!r} names no field; write e.g. '{{a}}-vs-{{b}}.jsonl'")
    return re.compile("".join(out) + r"\Z"), sorted(seen)


def join_tables(table: Table, others, on: str, encoding: str | None = None) -> Table:
    """``table`` with the columns of each file in ``others`` joined on the key column ``on`` (e.g.
    per-judge verdicts kept in separate files, keyed by the item's id): every row of ``table`` is
    kept with its place (a key missing from a joined file leaves its columns empty: the rows are
    then reported as missing outcomes); a key repeated inside a joined file is an error naming its
    lines; a column name both files use gets the joined file's name as a suffix."""
    if table.frame is None:
        raise InputError(f"{table.source}: a JSON object cannot be joined with other files")
    if on not in table.frame.columns:
        raise InputError(f"--on {on!r}: no such column in {table.source}; its columns are {', '.join(table.columns)}")
    frame, notes = table.frame, list(table.notes)
    for other in others:
        t = read_table(other, encoding=encoding)
        if t.frame is None or on not in t.frame.columns:
            raise InputError(f"--join {other}: no column {on!r} to join on"
                             + (f"; its columns are {', '.join(t.columns)}" if t.frame is not None else ""))
        key = t.frame[on].astype(str)
        dup = key.duplicated(keep=False).to_numpy()
        if dup.any():
            raise InputError(f"{t.origin.describe(t.frame.index[dup])}: the key {on!r} repeats "
                             f"({key[dup].iloc[0]!r}); a joined file needs one row per key")
        extra = t.frame.drop(columns=[on])
        stem = Path(other).name.split(".")[0]
        extra.columns = [c if c not in frame.columns else f"{c}_{stem}" for c in extra.columns]
        extra.index = key.to_numpy()
        left = frame[on].astype(str)
        joined = extra.reindex(left.to_numpy())
        joined.index = frame.index
        missing = int((~left.isin(extra.index)).sum())
        frame = pd.concat([frame, joined], axis=1)
        notes.append(f"joined {other} on {on!r}: columns {', '.join(map(str, extra.columns))}"
                     + (f"; {missing} row(s) of {table.source} have no match there" if missing else ""))
        notes.extend(t.notes)
    table.frame, table.notes = frame, notes
    reread = table._reread
    joined_cols = set(frame.columns) - set(table.columns)
    if reread is not None:
        table._reread = lambda cols: reread([c for c in cols if c not in joined_cols]).join(
            frame[[c for c in cols if c in joined_cols]].map(lambda v: v if pd.isna(v) else str(v)))
    return table


def read_source(data, *, encoding: str | None = None, path_pattern: str | None = None,
                bad_lines: str = "raise", join=None, on: str | None = None) -> Table:
    """A file (:func:`read_table`) or every data file of a folder, concatenated. ``path_pattern``
    (e.g. ``ratings-{judge}/{a}-vs-{b}-*.jsonl``) keeps only files whose path relative to the
    folder matches and adds a column per ``{field}`` (recorded in ``Table.path_columns``).
    ``join`` (files) and ``on`` (a key column): :func:`join_tables`."""
    path = Path(data)
    if join and not on:
        raise InputError("--join needs --on COLUMN: the key column the files share (e.g. --on idx)")
    if on and not join:
        raise InputError("--on names the key column of --join FILE[,FILE...]; no file to join was given")
    if not path.is_dir():
        if path_pattern:
            raise InputError("--path-pattern reads a folder of files; DATA is a single file")
        table = read_table(path, encoding=encoding, bad_lines=bad_lines)
        return join_tables(table, [j for j in _listed(join)], on, encoding) if join else table
    if join:
        raise InputError("--join joins files to one DATA file, not to a folder")
    files = list_data_files(path)
    if not files:
        raise InputError(f"{path}: no data files (.csv .tsv .json .jsonl .parquet) in this folder")
    regex, fields = compile_path_pattern(path_pattern) if path_pattern else (None, [])
    parts, origins, skipped, notes, file_names, missed = [], [], ExclusionLog(), [], [], []
    offset = 0
    for f in files:
        rel = f.relative_to(path).as_posix()
        values = {}
        if regex is not None:
            m = regex.match(rel)
            if m is None:
                missed.append(rel)
                continue
            values = m.groupdict()
        t = read_table(f, encoding=encoding, bad_lines=bad_lines)
        if t.frame is None:
            raise InputError(f"{f}: a pair-count JSON object cannot be combined with other files; pass it alone")
        for n in t.notes:
            notes.append(n)
        for reason, k in t.skipped.counts.items():
            skipped.add(reason, k, [f"{rel}:{x}" for x in t.skipped.examples.get(reason, [])])
        frame = t.frame.copy()
        for name, value in values.items():
            frame[f"<path:{name}>"] = value
        lines = np.array([t.origin.place(x) if t.origin.unit != "row" else x + 1 for x in frame.index], dtype=np.int64)
        frame.index = pd.RangeIndex(offset, offset + len(frame))
        parts.append(frame)
        origins.append(lines)
        file_names.append(rel)
        offset += len(frame)
    if regex is not None and not parts:
        raise InputError(f"--path-pattern {path_pattern!r} matches no file under {path} "
                         f"(e.g. {', '.join(missed[:3])})")
    if missed:
        notes.append(f"{len(missed)} file(s) under {path} do not match --path-pattern and were not read "
                     f"(e.g. {', '.join(missed[:3])})")
    frame = pd.concat(parts)
    file_of = np.concatenate([np.full(len(p), i) for i, p in enumerate(parts)])
    all_lines = np.concatenate(origins)
    origin = Origin(source=str(path), unit="line", lines=lambda: all_lines, files=file_names, file_of=file_of)
    return Table(frame=frame, source=str(path), origin=origin, notes=notes, skipped=skipped,
                 path_columns={name: f"<path:{name}>" for name in fields})
