"""Confidence records: one validated row per (model, dataset, item) with both confidence signals.

Columns of ``ConfidenceRecords.frame``:

=================  =====================================================================
model, dataset     identifiers (strings)
item_id            item identifier within the dataset
correct            0/1 correctness of the scored answer
verbal             verbalised confidence in [0, 1] (parsed from text if needed)
token              token-probability confidence in [0, 1] (a readout of the answer span)
provenance         self_generated / supplied_gold / supplied_plausible_wrong / supplied_type_incompatible
scored_answer      generated / teacher_forced_gold
readout            T1 / T2 / any named readout (e.g. ``T2_yesno_normalized``)
context            bare / verbal_prefix
(extra axes)       any further protocol axis, e.g. ``prompt_variant``
=================  =====================================================================

Rows lacking either signal or the correctness are excluded *and counted* (``records.exclusions``),
so gaps are always computed on paired items. Impossible values (confidence outside [0, 1], positive
log-probabilities, non-binary correctness) raise :class:`~bayesrank.errors.InputError` naming the row.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.errors import ExclusionLog, InputError

from .protocol import PROTOCOL_COLUMNS, UNSPECIFIED
from .readouts import span_confidence
from .verbal import parse_verbal_series

CORE_COLUMNS = ("model", "dataset", "item_id", "correct", "verbal", "token")
PROTOCOL_AXES = tuple(PROTOCOL_COLUMNS)


@dataclass
class ConfidenceRecords:
    """Validated paired confidence records plus the log of excluded rows."""

    frame: pd.DataFrame
    exclusions: ExclusionLog = field(default_factory=ExclusionLog)
    extra_axes: tuple[str, ...] = ()
    #: columns whose values came from the data or an explicit constant (not the ``unspecified`` filler);
    #: ``None``: every column of ``frame``
    provided: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def axes(self) -> tuple[str, ...]:
        return PROTOCOL_AXES + tuple(self.extra_axes)

    @property
    def columns(self) -> list[str]:
        """Columns a user can group by: those present in the data (or given as constants)."""
        cols = [c for c in self.frame.columns if c not in ("correct", "verbal", "token")]
        return cols if self.provided is None else [c for c in cols if c in self.provided]

    def groups(self, by) -> list[tuple[tuple, pd.DataFrame]]:
        """``(key, rows)`` per group of the columns ``by``; a column absent from the data is an
        :class:`InputError` (it is never grouped as one ``unspecified`` group)."""
        by = list(by or [])
        if not by:
            return [((), self.frame)]
        for col in by:
            if col not in self.columns:
                raise InputError(f"--by column {col!r} is not in the data; columns you can group by: "
                                 f"{', '.join(self.columns) or '(none)'}")
        return [((k if isinstance(k, tuple) else (k,)), g) for k, g in self.frame.groupby(by, sort=True, dropna=False)]

    def summary(self) -> str:
        return f"{len(self.frame)} paired items; {self.exclusions.report()}"


def _row(idx) -> str:
    return f"row {idx}"


def group_columns(df: pd.DataFrame, by, origin=None, exclude_invalid: bool = False) -> pd.DataFrame:
    """``df`` checked for the grouping columns ``by``: each must exist, and a row without a group value
    (missing or empty) is an error naming its line, or, with ``exclude_invalid``, dropped and counted
    (the log is left in ``df.attrs["excluded"]``) — never merged into a ``nan`` group."""
    where = origin.describe if origin is not None else (lambda labels: f"rows {list(labels)[:5]}")
    log = ExclusionLog(unit=origin.plural if origin is not None else "rows")
    for col in by:
        if col not in df.columns:
            raise InputError(f"group column {col!r} is not in the data; the columns are {', '.join(map(str, df.columns))}")
    keep = np.ones(len(df), dtype=bool)
    for col in by:
        empty = (df[col].isna() | (df[col].astype(str).str.strip() == "")).to_numpy() & keep
        if not empty.any():
            continue
        if not exclude_invalid:
            raise InputError(f"{where(df.index[empty])}: column {col!r} has no group value ({int(empty.sum())} rows); "
                             "--exclude-invalid excludes and counts them")
        log.add(f"missing group in {col!r}", int(empty.sum()),
                origin.places(df.index[empty]) if origin is not None else list(df.index[empty][:5]))
        keep &= ~empty
    out = df[keep] if not keep.all() else df
    out.attrs["excluded"] = log
    return out


def _as_correct(values: pd.Series, col: str, log: ExclusionLog, exclude_invalid: bool = False, where=_row) -> pd.Series:
    """Map booleans / 0-1 / 'true'-'false' strings to 0/1; NaN is counted; anything else is an
    :class:`InputError` (or, with ``exclude_invalid``, counted and set to NaN)."""
    mapping = {"true": 1.0, "false": 0.0, "1": 1.0, "0": 0.0, "1.0": 1.0, "0.0": 0.0, "yes": 1.0, "no": 0.0}
    out, invalid = [], []
    for idx, v in values.items():
        if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
            out.append(np.nan)
            continue
        if isinstance(v, (bool, np.bool_)):
            out.append(float(v))
            continue
        if isinstance(v, (int, float, np.integer, np.floating)):
            ok, val, shown = v in (0, 1), float(v), f"{float(v):g}"
        else:
            key = str(v).strip().lower()
            ok, val, shown = key in mapping, mapping.get(key, np.nan), repr(v)
        if not ok:
            if not exclude_invalid:
                raise InputError(f"{where(idx)}: column {col!r} has correctness {shown}; expected binary 0/1 or True/False "
                                 "(--exclude-invalid excludes and counts such rows)")
            invalid.append(idx)
            val = np.nan
        out.append(val)
    s = pd.Series(out, index=values.index, dtype=float)
    log.add(f"invalid correctness ({col}): not binary", len(invalid), invalid[:5])
    missing = s.isna() & ~s.index.isin(invalid)
    log.add(f"missing correctness ({col})", int(missing.sum()), list(s.index[missing][:5]))
    return s


def _check_unit_interval(s: pd.Series, col: str, log: ExclusionLog | None = None, exclude_invalid: bool = False,
                         where=_row) -> pd.Series:
    """``s`` with values outside [0, 1] an :class:`InputError` (or, with ``exclude_invalid``, counted and NaN)."""
    bad = s.notna() & ((s < 0) | (s > 1) | ~np.isfinite(s.fillna(0.5)))
    if bad.any() and not exclude_invalid:
        idx = s.index[bad][0]
        raise InputError(f"{where(idx)}: column {col!r} has confidence {float(s[idx]):g} outside [0, 1]; expected a "
                         "probability (--exclude-invalid excludes and counts such rows)")
    if log is not None:
        log.add(f"invalid confidence ({col}): outside [0, 1]", int(bad.sum()), list(s.index[bad][:5]))
    return s.where(~bad)


def _parse_logprob_cell(v, idx, col, where=_row):
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except json.JSONDecodeError:
            raise InputError(f"{where(idx)}: column {col!r} has {v[:40]!r}, not a JSON list of log-probabilities") from None
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    return list(np.atleast_1d(np.asarray(v, dtype=float)))


def from_frame(
    df: pd.DataFrame,
    *,
    correct_col: str,
    verbal_col: str,
    token_col: str | None = None,
    token_logprobs_col: str | None = None,
    readout: str = "T1",
    model_col: str = "model",
    dataset_col: str = "dataset",
    item_col: str | None = None,
    protocol: Mapping[str, str] | None = None,
    extra_axes: tuple[str, ...] | list[str] = (),
    word_map: Mapping[str, float] | None = None,
    integer_scale: float | None = 100,
    defaults: Mapping[str, str] | None = None,
    exclude_invalid: bool = False,
    origin=None,
    excluded: ExclusionLog | None = None,
) -> ConfidenceRecords:
    """Validate a table into :class:`ConfidenceRecords`.

    ``token_col`` holds probabilities; ``token_logprobs_col`` holds per-token log-probability lists
    (Python lists or JSON strings) of the answer span, turned into a probability by ``readout``.
    Protocol fields come from columns named ``provenance``/``scored_answer``/``readout``/``context``
    when present, else from ``protocol`` (constants), else ``defaults``, else ``"unspecified"``.
    Verbal values may be numbers or text (parsed by :func:`bayesrank.calibration.verbal.parse_verbal`).
    Impossible values (confidence outside [0, 1], non-binary correctness, a non-numeric token
    probability) raise :class:`InputError` naming row and column; with ``exclude_invalid=True`` those
    rows are dropped and counted by reason instead.
    """
    if len(df) == 0:
        raise InputError("no rows: the confidence table is empty")
    for col in [correct_col, verbal_col] + [c for c in (token_col, token_logprobs_col) if c]:
        if col not in df.columns:
            raise InputError(f"column {col!r} not found; available columns: {', '.join(map(str, df.columns))}")
    if (token_col is None) == (token_logprobs_col is None):
        raise InputError("give exactly one of token_col (probabilities) or token_logprobs_col (per-token log-probabilities)")
    log = excluded.copy() if excluded is not None else ExclusionLog()
    before = {k: len(v) for k, v in log.examples.items()}  # examples already given as places
    where = (lambda idx: origin.describe([idx])) if origin is not None else _row
    if origin is not None:
        log.unit = origin.plural
    out = pd.DataFrame(index=df.index)
    provided = ["item_id"]
    out["model"] = df[model_col].astype(str) if model_col in df.columns else UNSPECIFIED
    out["dataset"] = df[dataset_col].astype(str) if dataset_col in df.columns else UNSPECIFIED
    provided += [name for name, col in (("model", model_col), ("dataset", dataset_col)) if col in df.columns]
    out["item_id"] = df[item_col].astype(str) if item_col and item_col in df.columns else df.index.astype(str)
    out["correct"] = _as_correct(df[correct_col], correct_col, log, exclude_invalid, where)

    raw_v = df[verbal_col]
    if pd.api.types.is_numeric_dtype(raw_v):
        verbal = _check_unit_interval(raw_v.astype(float), verbal_col, log, exclude_invalid, where)
        missing = raw_v.isna()
        log.add(f"missing verbal confidence ({verbal_col})", int(missing.sum()), list(raw_v.index[missing][:5]))
    else:
        numeric = pd.to_numeric(raw_v, errors="coerce")
        invalid = numeric.notna() & _check_unit_interval(numeric, verbal_col, log, exclude_invalid, where).isna()
        verbal = parse_verbal_series(raw_v[~invalid], word_map, integer_scale, log,
                                     reason=f"unparsable verbal confidence ({verbal_col})").reindex(raw_v.index)
    out["verbal"] = verbal

    if token_col is not None:
        tok = pd.to_numeric(df[token_col], errors="coerce")
        nonnum = tok.isna() & df[token_col].notna()
        if nonnum.any() and not exclude_invalid:
            idx = df.index[nonnum][0]
            raise InputError(f"{where(idx)}: column {token_col!r} has {df[token_col][idx]!r}, not a probability "
                             "(--exclude-invalid excludes and counts such rows)")
        log.add(f"invalid token probability ({token_col}): not a number", int(nonnum.sum()), list(df.index[nonnum][:5]))
        tok = _check_unit_interval(tok, token_col, log, exclude_invalid, where)
        missing = df[token_col].isna()
        log.add(f"missing token probability ({token_col})", int(missing.sum()), list(tok.index[missing][:5]))
        out["token"] = tok.astype(float)
    else:
        cells = [_parse_logprob_cell(v, i, token_logprobs_col, where) for i, v in df[token_logprobs_col].items()]
        present = [c is not None for c in cells]
        tok = np.full(len(df), np.nan)
        idx = df.index[present]
        tok[np.asarray(present)] = span_confidence([c for c in cells if c is not None], readout, index=idx)
        n_missing = len(df) - int(np.sum(present))
        log.add(f"missing token log-probabilities ({token_logprobs_col})", n_missing, list(df.index[~np.asarray(present)][:5]))
        out["token"] = tok

    protocol = dict(protocol or {})
    defaults = dict(defaults or {})
    if token_logprobs_col is not None:
        defaults.setdefault("readout", readout)
    for col in PROTOCOL_AXES:
        if col in df.columns:
            out[col] = df[col].astype(str)
            provided.append(col)
        elif col in protocol:
            out[col] = str(protocol[col])
            provided.append(col)
        else:
            out[col] = str(defaults.get(col, UNSPECIFIED))
            if col in defaults:  # e.g. the readout that turned log-probabilities into a probability
                provided.append(col)
    extra = []
    for col in extra_axes:
        if col not in df.columns:
            raise InputError(f"protocol axis column {col!r} not found")
        out[col] = df[col].astype(str)
        extra.append(col)
        provided.append(col)
    unknown = set(protocol) - set(PROTOCOL_AXES)
    if unknown:
        raise InputError(f"unknown protocol field(s) {sorted(unknown)}; expected among {PROTOCOL_AXES}")

    keep = out[["correct", "verbal", "token"]].notna().all(axis=1)
    out = out[keep].copy()
    out["correct"] = out["correct"].astype(int)
    if origin is not None:  # index labels -> file lines
        for reason, ex in log.examples.items():
            k = before.get(reason, 0)
            log.examples[reason] = ex[:k] + [origin.place(x) for x in ex[k:]]
    return ConfidenceRecords(out, log, tuple(extra), tuple(provided))


def concat(records: list[ConfidenceRecords]) -> ConfidenceRecords:
    """Stack several record sets (exclusion counts are summed)."""
    log = ExclusionLog()
    for r in records:
        for reason, n in r.exclusions.counts.items():
            log.add(reason, n, r.exclusions.examples.get(reason, []))
    extra = tuple(dict.fromkeys(a for r in records for a in r.extra_axes))
    frame = pd.concat([r.frame for r in records], ignore_index=True)
    if any(r.provided is None for r in records):
        provided = None
    else:  # a column counts as provided only if every part provided it
        provided = tuple(c for c in frame.columns if all(c in r.provided for r in records))
    return ConfidenceRecords(frame, log, extra, provided)
