"""Published results tables: one row per model (and benchmark), the numbers a paper or a model card
prints — not comparisons, not per-item results.

Two layouts, recognised from the column names (or named with ``--columns KEY=COL``):

* **accuracy** tables: ``model``, ``benchmark`` (optional: one benchmark), ``correct`` and ``n``, or
  ``accuracy`` and ``n`` (then ``correct = round(accuracy·n)``, stated); optional ``stderr``.
  Accuracies given as percentages (some value above 1, none above 100) are detected, divided by 100
  and the report says so (their ``stderr`` too).
* **score** tables (arena-style): ``model``, ``score`` with ``lower`` and ``upper`` (a published
  interval at ``interval_level``, default 95%: ``se = (upper − lower)/(2·z)``) or ``stderr``;
  optional ``votes``. Asymmetric intervals (half-widths differing by more than 10%) are noted: the
  SE then rests on the interval's full width.

Bad rows are one-line errors naming the file line and column: ``correct`` above ``n``, a negative
or fractional count, an accuracy outside [0, 1] (or [0, 100] as percentages), a missing value, one
model listed twice for a benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.errors import InputError

TABLE_KEYS = ("model", "benchmark", "correct", "n", "accuracy", "stderr", "score", "lower", "upper", "votes")
ALIASES = {
    "model": ("model", "model_name", "name", "player", "system"),
    "benchmark": ("benchmark", "task", "dataset", "eval"),
    "correct": ("correct", "n_correct", "num_correct", "hits"),
    "n": ("n", "n_items", "items", "n_total", "total", "num_items", "size"),
    "accuracy": ("accuracy", "acc", "value", "win_rate", "pass_rate", "pass@1"),
    "stderr": ("stderr", "se", "std_err", "standard_error", "acc_stderr"),
    "score": ("score", "rating", "elo", "arena_score"),
    "lower": ("lower", "ci_lower", "lower_bound", "lo"),
    "upper": ("upper", "ci_upper", "upper_bound", "hi"),
    "votes": ("votes", "n_votes", "battles", "num_battles"),
}
ASYMMETRY = 0.10


@dataclass
class ResultsTable:
    """A validated published table: ``frame`` with columns model, benchmark and (accuracy tables)
    correct, n, accuracy, stderr or (score tables) score, se, votes; ``layout`` accuracy | score."""

    frame: pd.DataFrame
    layout: str
    source: str
    notes: list[str] = field(default_factory=list)
    n_rows: int = 0

    @property
    def benchmarks(self) -> list[str]:
        return list(dict.fromkeys(self.frame["benchmark"]))

    def rows(self, benchmark: str) -> pd.DataFrame:
        return self.frame[self.frame["benchmark"] == benchmark].reset_index(drop=True)


def table_columns(names, columns=None) -> dict:
    """key -> column of the file: the ``columns`` mapping first, then the aliases (case-insensitive)."""
    from bayesrank.data.columns import parse_columns

    given = parse_columns(columns, keys=TABLE_KEYS)
    lower = {str(c).strip().lower(): str(c) for c in names}
    out = {}
    for key, col in given.items():
        if col not in names:
            raise InputError(f"--columns {key}={col}: no column {col!r}; columns: {', '.join(map(str, names))}")
        out[key] = col
    taken = set(out.values())
    for key, aliases in ALIASES.items():
        if key in out:
            continue
        hit = next((lower[a] for a in aliases if a in lower and lower[a] not in taken), None)
        if hit is not None:
            out[key] = hit
            taken.add(hit)
    return out


GRID_AXES = ("template", "decoding", "num_fewshot", "fewshot", "metric", "scoring", "harness", "config")


def looks_like_table(names, columns=None) -> bool:
    """A published table: a model column and correct + n, accuracy + n, or score + lower/upper/stderr,
    and no item column (per-item results) nor a configuration axis (an evaluation grid)."""
    try:
        keys = set(table_columns(names, columns))
    except InputError:
        return False
    low = {str(c).strip().lower() for c in names}
    if "item" in low or low & set(GRID_AXES) or "model" not in keys:
        return False
    return bool({"correct", "n"} <= keys or {"accuracy", "n"} <= keys
                or ("score" in keys and ({"lower", "upper"} <= keys or "stderr" in keys)))


THOUSANDS = r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$"


def _numbers(table, col, where, origin) -> pd.Series:
    """The column as numbers, read from its text: '71.2%' (a percent sign, stripped; the column's
    values are then percentages) and '1,319' (thousands separators) as printed in papers."""
    text = table.text([col])[col]
    s = text.astype("string").str.strip()
    pct = s.str.endswith("%").fillna(False)
    s = s.str.rstrip("%").str.strip()
    s = s.where(~s.str.match(THOUSANDS).fillna(False), s.str.replace(",", "", regex=False))
    v = pd.to_numeric(s, errors="coerce").astype(float)
    bad = v.isna() | ~np.isfinite(v.fillna(0))
    if bad.any():
        shown = text[bad].iloc[0]
        raise InputError(f"column {col!r} needs a number on every row; not on {origin.describe(text.index[bad])} "
                         f"(got {'an empty cell' if pd.isna(shown) or str(shown).strip() == '' else repr(str(shown))})")
    v.attrs["percent_sign"] = bool(pct.any())
    return v


def _counts(v: pd.Series, col, where, origin) -> pd.Series:
    bad = (v < 0) | (v != v.round())
    if bad.any():
        raise InputError(f"column {col!r} must hold whole numbers ≥ 0; not on "
                         f"{origin.describe(v.index[bad])} (got {v[bad].iloc[0]:g})")
    return v.astype(np.int64)


def read_results_table(path, columns=None, interval_level: float = 0.95, encoding=None) -> ResultsTable:
    """Read and validate a published results table (module docstring)."""
    from bayesrank.data.tables import read_table

    t = read_table(path, encoding=encoding)
    frame, origin, where = t.frame, t.origin, t.source
    keys = table_columns(t.columns, columns)
    if "model" not in keys:
        raise InputError(f"{where}: a results table needs a model column (or --columns model=COL); "
                         f"columns: {', '.join(t.columns)}")
    notes = list(t.notes)
    out = pd.DataFrame(index=frame.index)
    out["model"] = t.text([keys["model"]])[keys["model"]].astype(str).str.strip()
    if "benchmark" in keys:
        out["benchmark"] = t.text([keys["benchmark"]])[keys["benchmark"]].astype(str).str.strip()
    else:
        out["benchmark"] = "benchmark"
    if "correct" in keys or "accuracy" in keys:
        layout = "accuracy"
        if "n" not in keys:
            raise InputError(f"{where}: an accuracy table needs the number of items n (a column n, n_items or "
                             f"total, or --columns n=COL)")
        n = _counts(_numbers(t, keys["n"], where, origin), keys["n"], where, origin)
        if (n == 0).any():
            raise InputError(f"column {keys['n']!r}: n must be ≥ 1; 0 on {origin.describe(n.index[n == 0])}")
        scale = 1.0
        if "correct" in keys:
            correct = _counts(_numbers(t, keys["correct"], where, origin), keys["correct"], where, origin)
            acc = correct / n
            if "accuracy" in keys:  # both given: the counts are used; say where they disagree
                given = pd.to_numeric(frame[keys["accuracy"]], errors="coerce")
                given = given / 100 if (given > 1).any() else given
                off = (given * n - correct).abs() > 1
                if off.any():
                    notes.append(f"column {keys['accuracy']!r} disagrees with correct / n by more than one item on "
                                 f"{origin.describe(off.index[off])}: the counts are used")
        else:
            acc = _numbers(t, keys["accuracy"], where, origin)
            col = keys["accuracy"]
            if (acc < 0).any():
                raise InputError(f"column {col!r}: accuracies outside [0, 1] (negative) on "
                                 f"{origin.describe(acc.index[acc < 0])}")
            if (acc > 1).any() or acc.attrs.get("percent_sign"):
                if (acc > 100).any():
                    raise InputError(f"column {col!r}: accuracies outside [0, 1] (and above 100, so not "
                                     f"percentages) on {origin.describe(acc.index[acc > 100])}")
                scale = 100.0
                acc = acc / 100
                notes.append(f"column {col!r} holds percentages (values up to {acc.max() * 100:g}"
                             + (", written with %" if acc.attrs.get("percent_sign") else "") + "): divided by 100")
            correct = (acc * n).round().astype(np.int64)
            worst = float(np.max(np.abs(acc * n - correct)))
            notes.append(f"correct = round(accuracy × n) (the largest rounding: {worst:.2f} items)")
        over = correct > n
        if over.any():
            raise InputError(f"correct > n on {origin.describe(correct.index[over])} "
                             f"({int(correct[over].iloc[0])} correct of n = {int(n[over].iloc[0])})")
        out["correct"], out["n"], out["accuracy"] = correct, n, correct / n
        if "stderr" in keys:
            out["stderr"] = pd.to_numeric(frame[keys["stderr"]], errors="coerce") / scale
    elif "score" in keys:
        layout = "score"
        out["score"] = _numbers(t, keys["score"], where, origin)
        if "stderr" in keys:
            se = _numbers(t, keys["stderr"], where, origin)
            src = f"column {keys['stderr']!r}"
        elif {"lower", "upper"} <= set(keys):
            from bayesrank.stats.margins import se_from_interval

            lo = _numbers(t, keys["lower"], where, origin)
            hi = _numbers(t, keys["upper"], where, origin)
            bad = (lo > out["score"]) | (hi < out["score"])
            if bad.any():
                raise InputError(f"the interval [lower, upper] must contain the score; not on "
                                 f"{origin.describe(lo.index[bad])}")
            se = se_from_interval(lo, hi, interval_level)
            left, right = out["score"] - lo, hi - out["score"]
            asym = (left - right).abs() > ASYMMETRY * (left + right) / 2
            if asym.any():
                notes.append(f"{int(asym.sum())} of {len(asym)} published intervals are asymmetric (half-widths "
                             f"differ by more than {ASYMMETRY:.0%}; e.g. {out['model'][asym].iloc[0]}: −"
                             f"{left[asym].iloc[0]:.3g} / +{right[asym].iloc[0]:.3g}): the standard error is taken "
                             f"from the full width, (upper − lower)/(2·{_z(interval_level):.3f})")
            src = f"the published {interval_level:.0%} intervals, se = (upper − lower)/(2·{_z(interval_level):.3f})"
        else:
            raise InputError(f"{where}: a score table needs lower and upper (a published interval) or stderr")
        if (se < 0).any():
            raise InputError(f"negative standard error on {origin.describe(se.index[se < 0])}")
        out["se"] = se
        notes.append(f"standard errors from {src}")
        if "votes" in keys:
            out["votes"] = pd.to_numeric(frame[keys["votes"]], errors="coerce")
    else:
        raise InputError(f"{where}: a results table needs correct and n, accuracy and n, or score with "
                         f"lower/upper or stderr; columns: {', '.join(t.columns)}")
    dup = out.duplicated(["model", "benchmark"], keep=False)
    if dup.any():
        raise InputError(f"model {out['model'][dup].iloc[0]!r} is listed more than once for benchmark "
                         f"{out['benchmark'][dup].iloc[0]!r} ({origin.describe(out.index[dup])})")
    return ResultsTable(out.reset_index(drop=True), layout, str(where), notes, n_rows=len(out))


def _z(level: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + level / 2)
