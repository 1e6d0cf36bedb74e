"""``review(data, ...)``: claims in, verdicts with their evidence out, as a :class:`ReviewReport`.

The kind of data is detected from the columns (as the readers do) and can be forced:

- ``pairwise``   votes or matches (every reader of ``bayesrank.data``);
- ``judges``     pairwise data with a judge column (``judge``, ``worker``, ``annotator``);
- ``grid``       an evaluation grid (``model``, ``benchmark``, ``score`` + configuration axes, or per-item
                 ``model``, ``item``, ``correct`` + axes);
- ``confidence`` calibration records (``correct``, ``verbal``, ``token``);
- ``items``      per-item benchmark results: ``model``, ``item``, ``score`` rows, or a folder of harness
                 logs (Inspect ``.eval``, lm-eval samples, HELM runs, Every Eval Ever, SWE-bench lists);
- ``table``      a published results table: ``model`` + ``correct`` + ``n``, ``model`` + ``accuracy`` + ``n``
                 (optional ``benchmark``, ``stderr``), or ``model`` + ``score`` + ``lower``/``upper`` or
                 ``stderr`` (arena-style), and no item column (:mod:`bayesrank.review.table`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bayesrank.errors import InputError
from bayesrank.review.claims import KINDS

if TYPE_CHECKING:
    from bayesrank.review.report import ReviewReport

#: ``columns=``: ``{"a": "home", ...}`` or ``"a=home,b=away,..."`` (the command line's ``--columns``)
Columns = Mapping[str, Any] | str | None
#: ``outcome_map=``: ``{"model_1": "a", ...}`` or ``"model_1=a,..."``
OutcomeMap = Mapping[str, str] | str | None
#: ``progress=``: called with a label (and, for claims, the claim's number and the count) as work advances
Progress = Callable[..., object] | None

PAIR_KEYS = {"a", "b", "outcome", "score_a", "score_b", "judge", "cluster", "weight", "pair"}

JUDGE_COLUMNS = ("judge", "worker", "annotator")
GRID_COLUMNS = ({"model", "benchmark", "score"}, {"model", "task", "value"}, {"model", "item", "correct"})
CONFIDENCE_COLUMNS = {"correct", "verbal", "token"}
ITEM_COLUMNS = {"model", "item", "score"}


GRID_KEYS = {"model", "item", "score", "benchmark"}
TABLE_KEYS = {"model", "benchmark", "correct", "n", "accuracy", "stderr", "score", "lower", "upper", "votes"}
TABLE_ONLY_KEYS = {"n", "accuracy", "stderr", "lower", "upper", "votes"}
CONFIDENCE_KEYS = {"correct", "verbal", "token", "group"}


def detect_kind(path: Any, columns: Columns = None, judge_cols: str | Sequence[str] | None = None,
                path_pattern: str | None = None) -> str:
    """pairwise | judges | grid | confidence | items, from the column names (of a file, a folder's first
    file, or a DataFrame) and the keys of a ``columns`` mapping (see module docstring)."""
    import pandas as pd

    from bayesrank.data.columns import parse_columns, parse_judge_cols

    keys = set(parse_columns(columns, keys=tuple(sorted(PAIR_KEYS | GRID_KEYS | CONFIDENCE_KEYS | TABLE_KEYS))))
    if keys & TABLE_ONLY_KEYS and "item" not in keys:
        return "table"
    if keys & CONFIDENCE_KEYS - {"group"} or ("group" in keys and not keys & PAIR_KEYS):
        return "confidence"
    if "item" in keys:
        return "items"
    if keys & GRID_KEYS:
        return "grid"
    if parse_judge_cols(judge_cols) or "judge" in keys or "{judge}" in str(path_pattern or ""):
        return "judges"
    if isinstance(path, pd.DataFrame):  # a table in memory: detected as the same table in a file would be
        cols = set(map(str, path.columns))
        from bayesrank.data.results_table import looks_like_table
        from bayesrank.items.readers import is_long

        if not path_pattern and looks_like_table(sorted(cols), columns):
            return "table"
        if not path_pattern and (is_long(cols) or ITEM_COLUMNS <= cols):
            return "items"
    elif hasattr(path, "frame"):  # Comparisons
        return "judges" if "judge" in path.frame else "pairwise"
    else:
        path = Path(path)
        if path.is_dir() and list(path.glob("L3_data*.csv")):
            return "confidence"
        from bayesrank.data.tables import read_header
        from bayesrank.items.readers import detect_format

        cols = set(read_header(path))
        from bayesrank.data.results_table import looks_like_table

        if not path_pattern and not path.is_dir() and looks_like_table(sorted(cols), columns):
            return "table"
        if not path_pattern and (detect_format(path) not in (None, "long") or ITEM_COLUMNS <= cols):
            return "items"
    if CONFIDENCE_COLUMNS <= cols:
        return "confidence"
    from bayesrank.data.columns import detect_pairwise
    from bayesrank.data.readers import _signature

    pairwise = bool(cols) and (_signature(cols) is not None or detect_pairwise(sorted(cols)) is not None)
    if (not isinstance(path, pd.DataFrame) and Path(path).is_dir() and not path_pattern and not pairwise) \
            or any(g <= cols for g in GRID_COLUMNS):
        return "grid"
    from bayesrank.data.columns import WIDE_JUDGE

    if cols & set(JUDGE_COLUMNS) or sum(bool(WIDE_JUDGE.match(c)) for c in cols) >= 2:
        return "judges"
    return "pairwise"


def review(data: Any, *, kind: str | None = None, claims: Iterable[str] | None = None, judge_col: str | None = None,
           level: float = 0.95, fragile_below: float = 0.01, fast: bool = False, seed: int = 0,
           budget: int | None = None, format: str = "auto", exclude_invalid: bool = False,
           command: Sequence[str] | None = None, progress: Progress = None, columns: Columns = None,
           outcome_map: OutcomeMap = None, judge_cols: str | Sequence[str] | None = None, encoding: str | None = None,
           path_pattern: str | None = None, join: str | Sequence[str] | None = None, on: str | None = None,
           **options: Any) -> ReviewReport:
    """Review ``data`` (a path, a folder, a bundled dataset name, a table in memory — a pandas
    DataFrame or a pyarrow Table — or :class:`~bayesrank.data.Comparisons`) and return a
    :class:`ReviewReport`. A table in memory is reviewed as the same table written to a file would be
    by ``bayesrank review FILE`` (every kind; the same ``columns``, ``outcome_map``, ``kind``), its
    rows named by the DataFrame's index in messages.

    ``columns`` (``{"a": ..., "b": ..., "outcome": ...}`` or ``"a=COL,b=COL,..."``; grids: ``model``,
    ``item``, ``score``, ``benchmark``; confidence records: ``correct``, ``verbal``, ``token``,
    ``group``), ``outcome_map``, ``judge_cols``, ``encoding`` and ``path_pattern`` say how to read it
    (:mod:`bayesrank.data.columns`); ``exclude_invalid`` excludes and counts invalid rows.

    ``claims``: claim strings (see :mod:`bayesrank.review.claims`); None gives the defaults.
    ``fast``: the Laplace approximation (NumPy twin) replaces NUTS for the Bayesian answers.
    ``budget``: the audits' action budget (default 5% of the comparisons).
    ``all_ranks``: the page's leaderboard shows every rank column (default: the simultaneous rank set).
    ``style="A:B,..."`` (with ``style_transform``, ``style_standardize`` as ``bayesrank fit --style``)
    answers every claim again under style control. ``scale="elo"`` (pairwise and judge data) shows
    every score, contrast and interval in Elo points (× 400/ln 10; tests, probabilities, verdicts and
    perturbation budgets do not change). ``cluster="COL"`` and ``position_effect=True``
    change the Bradley–Terry model every fit uses (cluster-robust intervals; an intercept for the
    first-listed side): the frequentist and Bayesian answers are about that model; the perturbation
    answers audit the model's point estimate on the comparisons (see docs/review.md).
    ``twopl=True`` (per-item results): the 2PL item-response model, an item discrimination a_i
    (logit P = a_i(θ_m − b_i)), in place of the Rasch model for the Bayesian answers.
    ``kind="table"`` (a published results table; ``columns`` keys ``model``, ``benchmark``, ``correct``,
    ``n``, ``accuracy``, ``stderr``, ``score``, ``lower``, ``upper``, ``votes``): bounds over every pairing
    the margins allow (:mod:`bayesrank.review.table`); ``interval_level`` is the level of a score table's
    published intervals (default 0.95).
    """
    import warnings

    from bayesrank.blas import single_blas_thread

    with single_blas_thread(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reading = {k: v for k, v in dict(columns=columns, outcome_map=outcome_map, judge_cols=judge_cols,
                                         encoding=encoding, path_pattern=path_pattern, join=join,
                                         on=on).items() if v is not None}
        report = _review(data, kind=kind, claims=claims, judge_col=judge_col, level=level,
                         fragile_below=fragile_below, fast=fast, seed=seed, budget=budget, format=format,
                         exclude_invalid=exclude_invalid, command=command, progress=progress, reading=reading,
                         **options)
    # warnings raised on the way are part of the evidence: kept in the report (in words, once each), not on stderr
    for text in warning_notes(caught):
        if text not in report.notes and not any(text in n or n in text for n in report.notes):
            report.notes.append(text)
    return report


#: library warnings the report rewrites in its own words (message start -> sentence)
KNOWN_WARNINGS = {
    "Estimated shape parameter of Pareto distribution is greater than":
        "PSIS-LOO: for some pairs the Pareto k of the importance weights exceeds {k}, so their "
        "leave-one-out estimate is unreliable; the methods section counts them.",
}


def warning_notes(caught: Iterable[Any]) -> list[str]:
    """One sentence per distinct warning (deprecations dropped): known library warnings in the
    report's words, others as 'Category (module): first line'."""
    import re

    out = []
    for w in caught:
        if issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning, FutureWarning)):
            continue
        msg = str(w.message)
        for start, sentence in KNOWN_WARNINGS.items():
            if msg.startswith(start):
                k = re.search(r"greater than ([0-9.]+)", msg)
                text = sentence.format(k=k.group(1) if k else "0.7")
                break
        else:
            module = getattr(w, "filename", "") or ""
            where = next((part for part in ("arviz", "pymc", "pytensor", "numpy", "scipy", "pandas", "matplotlib",
                                            "nutpie", "bayesrank") if part in module), None)
            text = f"{w.category.__name__}{f' ({where})' if where else ''}: {msg.splitlines()[0]}"
        if text not in out:
            out.append(text)
    return out


def _review(data: Any, *, kind: str | None, claims: Iterable[str] | None, judge_col: str | None, level: float,
            fragile_below: float, fast: bool, seed: int, budget: int | None, format: str, exclude_invalid: bool,
            command: Sequence[str] | None, progress: Progress, reading: dict[str, Any] | None = None,
            **options: Any) -> ReviewReport:

    from bayesrank.data.comparisons import Comparisons
    from bayesrank.datasets import resolve

    reading = dict(reading or {})
    if not 0 < level < 1:
        raise InputError(f"--level must be in (0, 1), got {level}")
    if not 0 < fragile_below < 1:
        raise InputError(f"--fragile-below must be a fraction in (0, 1), got {fragile_below}")
    in_memory = not isinstance(data, (str, os.PathLike))
    if in_memory and not isinstance(data, Comparisons):
        from bayesrank.data.frames import as_frame

        data = as_frame(data)  # a pyarrow table becomes a DataFrame; anything else is one line
    path = data if in_memory else resolve(data)
    kind = kind or detect_kind(path, reading.get("columns"), reading.get("judge_cols"), reading.get("path_pattern"))
    if kind not in KINDS:
        raise InputError(f"--kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if isinstance(data, Comparisons) and kind not in ("pairwise", "judges"):
        raise InputError(f"Comparisons are pairwise or judges data, not {kind} data")
    if in_memory and (reading.get("path_pattern") or reading.get("join")):
        raise InputError("--path-pattern / --join read files of a folder; this data is already a table in memory")
    if kind == "judges" and isinstance(data, Comparisons) and "judge" not in data.frame:
        raise InputError("--kind judges needs a judge column: these comparisons have none")
    _check_keys(kind, reading.get("columns"))
    from bayesrank.review.scale import check as check_scale

    scale = check_scale(options.pop("scale", None) or "logit", kind)
    if scale != "logit":
        options["scale"] = scale
    if kind not in ("pairwise", "judges") and (reading.get("outcome_map") or reading.get("judge_cols")):
        raise InputError(f"--outcome-map / --judge-cols apply to pairwise comparisons (this is {kind} data)")
    common: dict[str, Any] = dict(claims=claims, level=level, fragile_below=fragile_below, fast=fast, seed=seed, command=command,
                  progress=progress)
    grid_options = {k: options.pop(k) for k in ("axes", "metric", "models", "benchmarks") if k in options}
    for key, kinds in (("ridge", ("pairwise", "judges")), ("tune", ("pairwise", "judges", "items")),
                       ("chains", ("pairwise", "judges", "items")), ("rank", ("judges",)), ("twopl", ("items",))):
        if key in options and kind not in kinds:
            raise InputError(f"--{key} applies to {' and '.join(kinds)} data (this is {kind} data)")
    if options.get("cluster") and kind not in ("items", "pairwise", "judges"):
        raise InputError(f"--cluster applies to per-item results and pairwise battles (this is {kind} data)")
    item_options = {"cluster": options.pop("cluster")} if kind == "items" and "cluster" in options else {}
    if kind == "table":
        for key in ("axes", "metric"):
            if key in grid_options:
                raise InputError(f"--{key} applies to grid data only (this is a results table)")
    if grid_options and kind not in ("grid", "items", "table"):
        raise InputError(f"--{next(iter(grid_options))} applies to grid data only (this is {kind} data)")
    for flag, key in (("--style", "style"), ("--position-effect", "position_effect")):
        if options.get(key) and kind not in ("pairwise", "judges"):
            raise InputError(f"{flag} applies to pairwise battles only (this is {kind} data)")
    for key in ("cluster", "position_effect"):
        if key in options and not options[key]:
            options.pop(key)
    all_ranks = bool(options.pop("all_ranks", False))
    if all_ranks and kind not in ("pairwise", "judges"):
        raise InputError(f"--all-ranks applies to pairwise and judge data only (this is {kind} data)")
    if not options.get("style") and ({"style_transform", "style_standardize"} & set(options)):
        raise InputError("--style-transform / --style-standardize need --style")
    if kind == "items":
        if "axes" in grid_options:
            raise InputError("--axes applies to grid data only (this is items data)")
        from bayesrank.review.items import review_items

        if reading.get("path_pattern") or reading.get("encoding"):
            raise InputError("--path-pattern / --encoding: per-item results are read by the items readers "
                             "(--columns model=,item=,score= name their columns)")
        return review_items(path, format=format, exclude_invalid=exclude_invalid, columns=reading.get("columns"),
                            **common, **grid_options, **item_options, **options)
    if "interval_level" in options and kind != "table":
        raise InputError(f"--interval-level applies to published score tables (this is {kind} data)")
    if kind == "table":
        from bayesrank.review.table import review_table

        if reading.get("path_pattern") or reading.get("join"):
            raise InputError("--path-pattern / --join: a results table is one file")
        extra = sorted(set(options) - {"interval_level"})
        if extra:
            raise InputError(f"--{extra[0].replace('_', '-')} does not apply to a results table (nothing is fitted)")
        return review_table(path, reading=reading, **common, **grid_options, **options)
    if kind in ("pairwise", "judges"):
        from bayesrank.review.pairwise_report import review_pairwise

        return review_pairwise(path, kind=kind, judge_col=judge_col, budget=budget, format=format,
                               exclude_invalid=exclude_invalid, reading=reading, all_ranks=all_ranks, **common,
                               **options)
    if kind == "grid":
        from bayesrank.review.grid import review_grid

        return review_grid(path, reading=reading, **common, **grid_options, **options)
    from bayesrank.review.confidence import review_confidence

    return review_confidence(path, reading=reading, exclude_invalid=exclude_invalid, **common, **options)


def _check_keys(kind: str, columns: Columns) -> None:
    """``--columns`` keys must belong to the kind of data reviewed (one line naming the ones that do not)."""
    from bayesrank.data.columns import parse_columns

    allowed = {"pairwise": PAIR_KEYS, "judges": PAIR_KEYS, "grid": GRID_KEYS, "confidence": CONFIDENCE_KEYS,
               "items": GRID_KEYS, "table": TABLE_KEYS}[kind]
    keys = set(parse_columns(columns, keys=tuple(sorted(PAIR_KEYS | GRID_KEYS | CONFIDENCE_KEYS | TABLE_KEYS))))
    wrong = sorted(keys - allowed)
    if wrong:
        raise InputError(f"--columns {', '.join(wrong)}: not keys of {kind} data (its keys: {', '.join(sorted(allowed))})")
