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

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def axes(self) -> tuple[str, ...]:
        return PROTOCOL_AXES + tuple(self.extra_axes)

    def groups(self, by) -> list[tuple[tuple, pd.DataFrame]]:
        by = list(by or [])
        if not by:
            return [((), self.frame)]
        for col in by:
            if col not in self.frame.columns:
                raise InputError(f"--by column {col!r} not in records; available: {', '.join(self.frame.columns)}")
        return [((k if isinstance(k, tuple) else (k,)), g) for k, g in self.frame.groupby(by, sort=True, dropna=False)]

    def summary(self) -> str:
        return f"{len(self.frame)} paired items; {self.exclusions.report()}"


def _as_correct(values: pd.Series, col: str, log: ExclusionLog) -> pd.Series:
    """Map booleans / 0-1 / 'true'-'false' strings to 0/1; NaN is counted, anything else is an error."""
    mapping = {"true": 1.0, "false": 0.0, "1": 1.0, "0": 0.0, "1.0": 1.0, "0.0": 0.0, "yes": 1.0, "no": 0.0}
    out = []
    for idx, v in values.items():
        if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA:
            out.append(np.nan)
        elif isinstance(v, (bool, np.bool_)):
            out.append(float(v))
        elif isinstance(v, (int, float, np.integer, np.floating)):
            if v not in (0, 1):
                raise InputError(f"column {col!r}, row {idx}: correctness {float(v):g}; expected binary 0/1 or True/False")
            out.append(float(v))
        else:
            key = str(v).strip().lower()
            if key not in mapping:
                raise InputError(f"column {col!r}, row {idx}: correctness {v!r}; expected binary 0/1 or True/False")
            out.append(mapping[key])
    s = pd.Series(out, index=values.index, dtype=float)
    log.add(f"missing correctness ({col})", int(s.isna().sum()), list(s.index[s.isna()][:5]))
    return s


def _check_unit_interval(s: pd.Series, col: str) -> None:
    bad = s.notna() & ((s < 0) | (s > 1) | ~np.isfinite(s.fillna(0.5)))
    if bad.any():
        idx = s.index[bad][0]
        raise InputError(f"column {col!r}, row {idx}: confidence {float(s[idx]):g} outside [0, 1]; expected a probability")


def _parse_logprob_cell(v, idx, col):
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except json.JSONDecodeError:
            raise InputError(f"column {col!r}, row {idx}: {v[:40]!r} is not a JSON list of log-probabilities") from None
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
) -> ConfidenceRecords:
    """Validate a table into :class:`ConfidenceRecords`.

    ``token_col`` holds probabilities; ``token_logprobs_col`` holds per-token log-probability lists
    (Python lists or JSON strings) of the answer span, turned into a probability by ``readout``.
    Protocol fields come from columns named ``provenance``/``scored_answer``/``readout``/``context``
    when present, else from ``protocol`` (constants), else ``defaults``, else ``"unspecified"``.
    Verbal values may be numbers or text (parsed by :func:`bayesrank.calibration.verbal.parse_verbal`).
    """
    if len(df) == 0:
        raise InputError("no rows: the confidence table is empty")
    for col in [correct_col, verbal_col] + [c for c in (token_col, token_logprobs_col) if c]:
        if col not in df.columns:
            raise InputError(f"column {col!r} not found; available columns: {', '.join(map(str, df.columns))}")
    if (token_col is None) == (token_logprobs_col is None):
        raise InputError("give exactly one of token_col (probabilities) or token_logprobs_col (per-token log-probabilities)")
    log = ExclusionLog()
    out = pd.DataFrame(index=df.index)
    out["model"] = df[model_col].astype(str) if model_col in df.columns else UNSPECIFIED
    out["dataset"] = df[dataset_col].astype(str) if dataset_col in df.columns else UNSPECIFIED
    out["item_id"] = df[item_col].astype(str) if item_col and item_col in df.columns else df.index.astype(str)
    out["correct"] = _as_correct(df[correct_col], correct_col, log)

    raw_v = df[verbal_col]
    if pd.api.types.is_numeric_dtype(raw_v):
        verbal = raw_v.astype(float)
        _check_unit_interval(verbal, verbal_col)
        log.add(f"missing verbal confidence ({verbal_col})", int(verbal.isna().sum()), list(verbal.index[verbal.isna()][:5]))
    else:
        numeric = pd.to_numeric(raw_v, errors="coerce")
        _check_unit_interval(numeric, verbal_col)
        verbal = parse_verbal_series(raw_v, word_map, integer_scale, log, reason=f"unparsable verbal confidence ({verbal_col})")
    out["verbal"] = verbal

    if token_col is not None:
        tok = pd.to_numeric(df[token_col], errors="coerce")
        nonnum = tok.isna() & df[token_col].notna()
        if nonnum.any():
            idx = df.index[nonnum][0]
            raise InputError(f"column {token_col!r}, row {idx}: {df[token_col][idx]!r} is not a probability")
        _check_unit_interval(tok, token_col)
        log.add(f"missing token probability ({token_col})", int(tok.isna().sum()), list(tok.index[tok.isna()][:5]))
        out["token"] = tok.astype(float)
    else:
        cells = [_parse_logprob_cell(v, i, token_logprobs_col) for i, v in df[token_logprobs_col].items()]
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
        elif col in protocol:
            out[col] = str(protocol[col])
        else:
            out[col] = str(defaults.get(col, UNSPECIFIED))
    extra = []
    for col in extra_axes:
        if col not in df.columns:
            raise InputError(f"protocol axis column {col!r} not found")
        out[col] = df[col].astype(str)
        extra.append(col)
    unknown = set(protocol) - set(PROTOCOL_AXES)
    if unknown:
        raise InputError(f"unknown protocol field(s) {sorted(unknown)}; expected among {PROTOCOL_AXES}")

    keep = out[["correct", "verbal", "token"]].notna().all(axis=1)
    out = out[keep].copy()
    out["correct"] = out["correct"].astype(int)
    return ConfidenceRecords(out, log, tuple(extra))


def concat(records: list[ConfidenceRecords]) -> ConfidenceRecords:
    """Stack several record sets (exclusion counts are summed)."""
    log = ExclusionLog()
    for r in records:
        for reason, n in r.exclusions.counts.items():
            log.add(reason, n, r.exclusions.examples.get(reason, []))
    extra = tuple(dict.fromkeys(a for r in records for a in r.extra_axes))
    return ConfidenceRecords(pd.concat([r.frame for r in records], ignore_index=True), log, extra)
