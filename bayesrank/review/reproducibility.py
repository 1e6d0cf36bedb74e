"""The appendix that lets anyone rerun a report: data hash, rows read and excluded, versions, seed, command."""

from __future__ import annotations

import hashlib
import shlex
import sys
from importlib import metadata
from pathlib import Path

PACKAGES = ("bayesrank", "pymc", "pytensor", "arviz", "numpy", "scipy", "pandas", "xarray")


def sha256_of(path: str | Path) -> str:
    """SHA-256 of a file, or of every file of a directory in sorted relative-path order."""
    p = Path(path)
    h = hashlib.sha256()
    files = sorted(q for q in p.rglob("*") if q.is_file()) if p.is_dir() else [p]
    for q in files:
        if p.is_dir():
            h.update(str(q.relative_to(p)).encode() + b"\0")
        with open(q, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def data_name(data) -> str:
    """What a report's title calls the data: the file or folder name, or 'the data given' (a table
    or comparisons in memory)."""
    return data.name if isinstance(data, Path) else "the data given"


def where(data) -> str:
    """What a message calls the data: the path, or 'the DataFrame'."""
    return str(data) if isinstance(data, (str, Path)) else "the DataFrame"


def versions() -> dict:
    out = {"python": sys.version.split()[0]}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def appendix(data_path, n_rows: int, exclusions: dict, seed: int, command: list[str] | None,
             n_comparisons: float | None = None, frame=None) -> dict:
    """``{data, data_sha256, n_rows, [n_comparisons,] n_excluded, excluded_by_reason, versions, seed, command}``
    (``n_rows``: rows read; ``n_comparisons``: the comparisons they hold, e.g. a pair-count row holds many).
    Data given in memory (``data_path`` None, or a DataFrame): ``data`` is ``<in memory>`` and the hash
    is that of the validated comparisons (``frame``), or of the DataFrame, written as CSV."""
    cmd = command if command is not None else ["bayesrank", *sys.argv[1:]]
    if data_path is not None and not isinstance(data_path, (str, Path)):  # a table in memory
        from bayesrank.data.frames import as_frame

        data_path, frame = None, as_frame(data_path)
    if data_path is None:
        digest = hashlib.sha256(frame.to_csv(index=False).encode()).hexdigest() if frame is not None else ""
    return {
        "data": str(data_path) if data_path is not None else "<in memory>",
        "data_sha256": sha256_of(data_path) if data_path is not None else digest,
        "n_rows": int(n_rows),
        **({} if n_comparisons is None else {"n_comparisons": float(n_comparisons)}),
        "n_excluded": int(exclusions.get("total", 0)),
        "excluded_by_reason": dict(exclusions.get("by_reason", {})),
        "versions": versions(),
        "seed": int(seed),
        "command": shlex.join(cmd),
    }
