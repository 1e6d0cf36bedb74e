"""Protocol-shift analysis and provenance analysis.

Protocol shift. Given a long table of gaps (one row per protocol cell: model, dataset, the
protocol axes, estimator, ``gap``), for each axis A:

* the *shift table*: for every setting of all other columns that has ≥ 2 levels of A, the shift
  ``g(level) − g(reference level)`` (reference = first level in ``levels[A]`` or sorted order);
* the *mean absolute shift* of A: the mean over those settings and over all level pairs of
  ``|g(level_j) − g(level_k)|`` (for a two-level axis simply the mean |shift|).

Axes are protocol axes (conditioning context, readout, estimator, prompt variant, …) or the
*spread* axes ``model``/``dataset``, computed the same way, so that e.g. "conditioning 0.28 vs family
0.37" of the seed is one table. This is a sensitivity analysis, not a causal decomposition.

Provenance. Mean confidence for supplied-gold vs supplied-plausible-wrong vs type-incompatible
answers per (model, dataset), with the differences gold − plausible-wrong and gold − type-incompatible.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from bayesrank.errors import InputError

SPREAD_AXES = ("model", "dataset")


def protocol_shift(
    table: pd.DataFrame,
    axes,
    *,
    value: str = "gap",
    columns=None,
    levels: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return ``(shifts, summary)``.

    ``columns`` are all identifying columns of a cell (default: every non-numeric column of
    ``table`` except ``value``); for axis A the other columns define the settings held fixed.
    ``summary`` has per axis: kind (protocol / spread), levels, n_settings, n_pairs,
    mean_abs_shift, median_abs_shift, max_abs_shift, mean_signed_shift (vs the reference level).
    """
    if value not in table.columns:
        raise InputError(f"column {value!r} not in the gap table")
    levels = dict(levels or {})
    if columns is None:
        columns = [c for c in table.columns if c != value and not pd.api.types.is_numeric_dtype(table[c])]
    columns = list(columns)
    for a in axes:
        if a not in columns:
            raise InputError(f"axis {a!r} is not a column of the gap table; columns: {columns}")
    dup = table.duplicated(subset=columns)
    if dup.any():
        raise InputError(f"gap table has {int(dup.sum())} duplicate cells over {columns}; one value per cell expected")
    shift_rows, summary_rows = [], []
    for axis in axes:
        others = [c for c in columns if c != axis]
        lv = levels.get(axis) or sorted(table[axis].astype(str).unique())
        ref = str(lv[0])
        pair_abs, signed = [], []
        n_settings = 0
        grouped = table.groupby(others, dropna=False) if others else [((), table)]
        for key, g in grouped:
            vals = dict(zip(g[axis].astype(str), g[value].astype(float)))
            if len(vals) < 2:
                continue
            n_settings += 1
            for a_, b_ in combinations(sorted(vals), 2):
                pair_abs.append(abs(vals[a_] - vals[b_]))
            if ref in vals:
                key = key if isinstance(key, tuple) else (key,)
                for lvl, v in vals.items():
                    if lvl == ref:
                        continue
                    shift_rows.append({"axis": axis, **dict(zip(others, key)), "reference": ref, "level": lvl,
                                       "value_reference": vals[ref], "value_level": v, "shift": v - vals[ref]})
                    signed.append(v - vals[ref])
        pair_abs = np.asarray(pair_abs)
        summary_rows.append({
            "axis": axis,
            "kind": "spread" if axis in SPREAD_AXES else "protocol",
            "levels": ",".join(map(str, lv)),
            "n_settings": n_settings,
            "n_pairs": int(pair_abs.size),
            "mean_abs_shift": float(pair_abs.mean()) if pair_abs.size else np.nan,
            "median_abs_shift": float(np.median(pair_abs)) if pair_abs.size else np.nan,
            "max_abs_shift": float(pair_abs.max()) if pair_abs.size else np.nan,
            "mean_signed_shift_vs_reference": float(np.mean(signed)) if signed else np.nan,
        })
    return pd.DataFrame(shift_rows), pd.DataFrame(summary_rows)


PROVENANCE_CONTRASTS = (
    ("supplied_gold", "supplied_plausible_wrong"),
    ("supplied_gold", "supplied_type_incompatible"),
    ("supplied_plausible_wrong", "supplied_type_incompatible"),
)


def provenance_analysis(frame: pd.DataFrame, signal: str = "verbal", by=("model", "dataset"), n_boot: int = 1000, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Mean ``signal`` confidence per provenance level and group, and the contrasts
    gold − plausible-wrong, gold − type-incompatible, plausible-wrong − type-incompatible with
    bootstrap CIs (items resampled within level). Returns ``(means, contrasts)``."""
    if "provenance" not in frame.columns:
        raise InputError("records have no 'provenance' column")
    by = [b for b in by if b in frame.columns]
    rng = np.random.default_rng(seed)
    means = frame.groupby([*by, "provenance"], dropna=False)[signal].agg(["mean", "count"]).reset_index()
    rows = []
    for key, g in (frame.groupby(by, dropna=False) if by else [((), frame)]):
        key = key if isinstance(key, tuple) else (key,)
        vals = {lvl: gg[signal].to_numpy(float) for lvl, gg in g.groupby("provenance")}
        for a, b in PROVENANCE_CONTRASTS:
            if a not in vals or b not in vals:
                continue
            xa, xb = vals[a], vals[b]
            boots = np.array([rng.choice(xa, xa.size).mean() - rng.choice(xb, xb.size).mean() for _ in range(n_boot)])
            rows.append({**dict(zip(by, key)), "contrast": f"{a} - {b}", "difference": xa.mean() - xb.mean(),
                         "lo": float(np.quantile(boots, 0.025)), "hi": float(np.quantile(boots, 0.975)),
                         "n_a": xa.size, "n_b": xb.size})
    return means, pd.DataFrame(rows)
