"""``review(data, ...)``: claims in, verdicts with their evidence out, as a :class:`ReviewReport`.

The kind of data is detected from the columns (as the readers do) and can be forced:

- ``pairwise``   votes or matches (every reader of ``bayesrank.data``);
- ``judges``     pairwise data with a judge column (``judge``, ``worker``, ``annotator``);
- ``grid``       an evaluation grid (``model``, ``benchmark``, ``score`` + configuration axes, or per-item
                 ``model``, ``item``, ``correct`` + axes);
- ``confidence`` calibration records (``correct``, ``verbal``, ``token``);
- ``items``      per-item benchmark results: ``model``, ``item``, ``score`` rows, or a folder of harness
                 logs (Inspect ``.eval``, lm-eval samples, HELM runs, Every Eval Ever, SWE-bench lists).
"""

from __future__ import annotations

from pathlib import Path

from bayesrank.errors import InputError
from bayesrank.review.claims import KINDS

JUDGE_COLUMNS = ("judge", "worker", "annotator")
GRID_COLUMNS = ({"model", "benchmark", "score"}, {"model", "task", "value"}, {"model", "item", "correct"})
CONFIDENCE_COLUMNS = {"correct", "verbal", "token"}
ITEM_COLUMNS = {"model", "item", "score"}


def _columns(path: Path) -> list[str]:
    """Column names without reading the whole file."""
    import json

    import pandas as pd

    suffix = path.suffix.lower()
    if path.is_dir():
        return []
    if suffix in (".csv", ".tsv", ".tab", ".gz"):
        return list(pd.read_csv(path, nrows=5, sep="\t" if suffix in (".tsv", ".tab") else ",").columns)
    if suffix in (".jsonl", ".ndjson"):
        with open(path) as f:
            first = f.readline()
        return list(json.loads(first)) if first.strip() else []
    if suffix == ".json":
        obj = json.loads(path.read_text())
        if isinstance(obj, dict):
            return list(obj)
        return list(obj[0]) if obj and isinstance(obj[0], dict) else []
    if suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    return []


def detect_kind(path: Path) -> str:
    """pairwise | judges | grid | confidence | items, from the columns (see module docstring)."""
    if path.is_dir() and list(path.glob("L3_data*.csv")):
        return "confidence"
    from bayesrank.items.readers import detect_format

    if detect_format(path) not in (None, "long") or ITEM_COLUMNS <= set(_columns(path)):
        return "items"
    cols = set(_columns(path))
    if CONFIDENCE_COLUMNS <= cols:
        return "confidence"
    if path.is_dir() or any(g <= cols for g in GRID_COLUMNS):
        return "grid"
    if cols & set(JUDGE_COLUMNS):
        return "judges"
    return "pairwise"


def review(data, *, kind: str | None = None, claims=None, judge_col: str | None = None, level: float = 0.95,
           fragile_below: float = 0.01, fast: bool = False, seed: int = 0, budget: int | None = None,
           format: str = "auto", exclude_invalid: bool = False, command=None, progress=None, **options):
    """Review ``data`` (a path or a bundled dataset name) and return a :class:`ReviewReport`.

    ``claims``: claim strings (see :mod:`bayesrank.review.claims`); None gives the defaults.
    ``fast``: the Laplace approximation (NumPy twin) replaces NUTS for the Bayesian answers.
    ``budget``: the audits' action budget (default 5% of the comparisons).
    ``style="A:B,..."`` (with ``style_transform``, ``style_standardize`` as ``bayesrank fit --style``)
    answers every claim again under style control.
    """
    import warnings

    from bayesrank.blas import single_blas_thread

    with single_blas_thread(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = _review(data, kind=kind, claims=claims, judge_col=judge_col, level=level,
                         fragile_below=fragile_below, fast=fast, seed=seed, budget=budget, format=format,
                         exclude_invalid=exclude_invalid, command=command, progress=progress, **options)
    # warnings raised on the way are part of the evidence: kept in the report, once each
    seen = set(report.notes)
    for w in caught:
        if issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning, FutureWarning)):
            continue
        text = f"{w.category.__name__}: {str(w.message).splitlines()[0]}"
        if str(w.message) not in " ".join(seen) and text not in seen:
            report.notes.append(text)
            seen.add(text)
    return report


def _review(data, *, kind, claims, judge_col, level, fragile_below, fast, seed, budget, format, exclude_invalid,
            command, progress, **options):
    from bayesrank.datasets import resolve

    if not 0 < level < 1:
        raise InputError(f"--level must be in (0, 1), got {level}")
    if not 0 < fragile_below < 1:
        raise InputError(f"--fragile-below must be a fraction in (0, 1), got {fragile_below}")
    path = resolve(data)
    kind = kind or detect_kind(path)
    if kind not in KINDS:
        raise InputError(f"--kind must be one of {', '.join(KINDS)}, got {kind!r}")
    common = dict(claims=claims, level=level, fragile_below=fragile_below, fast=fast, seed=seed, command=command,
                  progress=progress)
    grid_options = {k: options.pop(k) for k in ("axes", "metric", "models", "benchmarks") if k in options}
    item_options = {k: options.pop(k) for k in ("cluster",) if k in options}
    if item_options and kind != "items":
        raise InputError(f"--{next(iter(item_options))} applies to per-item results (--kind items) only "
                         f"(this is {kind} data)")
    if grid_options and kind not in ("grid", "items"):
        raise InputError(f"--{next(iter(grid_options))} applies to grid data only (this is {kind} data)")
    if options.get("style") and kind not in ("pairwise", "judges"):
        raise InputError(f"--style applies to pairwise battles only (this is {kind} data)")
    if not options.get("style") and ({"style_transform", "style_standardize"} & set(options)):
        raise InputError("--style-transform / --style-standardize need --style")
    if kind == "items":
        if "axes" in grid_options:
            raise InputError("--axes applies to grid data only (this is items data)")
        from bayesrank.review.items import review_items

        return review_items(path, format=format, exclude_invalid=exclude_invalid, **common, **grid_options,
                            **item_options, **options)
    if kind in ("pairwise", "judges"):
        from bayesrank.review.pairwise_report import review_pairwise

        return review_pairwise(path, kind=kind, judge_col=judge_col, budget=budget, format=format,
                               exclude_invalid=exclude_invalid, **common, **options)
    if kind == "grid":
        from bayesrank.review.grid import review_grid

        return review_grid(path, **common, **grid_options, **options)
    from bayesrank.review.confidence import review_confidence

    return review_confidence(path, **common, **options)
