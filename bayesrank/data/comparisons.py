"""One validated type for pairwise outcomes: ``Comparisons``.

Every row is one comparison (or ``weight`` exchangeable comparisons) between ``model_a`` and
``model_b`` with outcome ``"a"`` (a wins), ``"b"`` (b wins) or ``"tie"``; optional ``judge``,
``weight`` (a non-negative frequency weight) and any extra metadata columns are carried along.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.errors import ExclusionLog, InputError

OUTCOMES = ("a", "b", "tie")
_CANONICAL_OUTCOMES = {
    "a": "a", "model_a": "a", "left": "a", "1": "a", "1.0": "a", "win": "a", "a>b": "a",
    "b": "b", "model_b": "b", "right": "b", "0": "b", "0.0": "b", "loss": "b", "b>a": "b",
    "tie": "tie", "draw": "tie", "tie (bothbad)": "tie", "0.5": "tie", "both_bad": "tie", "a=b": "tie",
}


def column_codes(col: pd.Series):
    """(integer codes, distinct values) of a column: its categorical codes when it is one."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return np.asarray(col.cat.codes), np.asarray(col.cat.categories, dtype=object)
    codes, uniques = pd.factorize(col)
    return codes, np.asarray(uniques, dtype=object)


def _rows_where(mask: np.ndarray, index: pd.Index, limit: int = 5) -> list:
    return list(index[np.flatnonzero(mask)[:limit]])


def outcome_codes(values: pd.Series, mapping: dict | None = None, column: str = "outcome", rows=None) -> np.ndarray:
    """Map raw outcome labels to codes 0 (``a``), 1 (``b``), 2 (``tie``) as ``int8``.

    Only the distinct labels are looked up (one ``factorize``); unknown labels raise, naming rows
    and labels. ``rows`` (boolean mask) restricts the check to rows that are kept.
    """
    table = dict(_CANONICAL_OUTCOMES)
    if mapping:
        table.update({str(k).strip().lower(): v for k, v in mapping.items()})
    for v in set(table.values()):
        if v not in OUTCOMES:
            raise InputError(f"outcome_map maps to {v!r}; targets must be one of {OUTCOMES}")
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    keys = pd.Index(uniques).astype(str).str.strip().str.lower()
    lookup = {o: c for c, o in enumerate(OUTCOMES)}
    mapped_u = np.array([lookup.get(table.get(key), -1) for key in keys] + [-1], dtype=np.int8)  # last: missing
    mapped = mapped_u[codes]
    bad = mapped < 0
    if rows is not None:
        bad &= rows
    if bad.any():
        labels = sorted(set(map(str, values[bad].unique().tolist())))[:10]
        raise InputError(
            f"column {column!r}: {int(bad.sum())} rows have unknown outcome labels {labels} "
            f"(0-based rows {_rows_where(bad, values.index)}); expected one of a/b/tie "
            f"(also accepted: model_a/model_b/tie/tie (bothbad), left/right, 1/0/0.5) or pass outcome_map="
        )
    return mapped


@dataclass
class Comparisons:
    """Validated pairwise comparisons (see module docstring). Build with :meth:`from_frame`."""

    frame: pd.DataFrame
    excluded: ExclusionLog = field(default_factory=ExclusionLog)
    source: str = "<frame>"

    # ---------------------------------------------------------------- construction
    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        model_a: str = "model_a",
        model_b: str = "model_b",
        outcome: str = "outcome",
        judge: str | None = None,
        weight: str | None = None,
        outcome_map: dict | None = None,
        on_invalid: str = "raise",
        source: str = "<frame>",
        excluded: ExclusionLog | None = None,
    ) -> "Comparisons":
        """Validate a DataFrame of comparisons.

        ``on_invalid="raise"`` (default) turns self-comparisons and missing names into an
        :class:`InputError` naming the rows; ``"exclude"`` drops them and counts each in
        ``excluded``. Unknown outcomes, bad weights, missing columns and empty data always raise.
        """
        if not isinstance(df, pd.DataFrame):
            raise InputError(f"expected a pandas DataFrame, got {type(df).__name__}")
        if on_invalid not in ("raise", "exclude"):
            raise InputError(f"on_invalid must be 'raise' or 'exclude', got {on_invalid!r}")
        needed = [c for c in (model_a, model_b, outcome, judge, weight) if c is not None]
        missing = [c for c in needed if c not in df.columns]
        if missing:
            raise InputError(f"missing column(s) {missing}; the data have columns {list(df.columns)}")
        if len(df) == 0:
            raise InputError("no comparisons: the data have 0 rows")
        log = excluded if excluded is not None else ExclusionLog()

        keep = np.ones(len(df), dtype=bool)
        factorized = {}
        for col in (model_a, model_b):
            codes, uniques = pd.factorize(df[col], use_na_sentinel=True)  # strip the distinct names, not every row
            clean = np.append(np.asarray(pd.Index(uniques).astype(str).str.strip(), dtype=object), "")
            factorized[col] = (codes, clean)
            na = (clean == "")[codes]  # missing names (code -1) map to the "" slot; compare distinct names only
            if na.any():
                if on_invalid == "raise":
                    raise InputError(
                        f"column {col!r}: {int(na.sum())} rows have a missing player name "
                        f"(0-based rows {_rows_where(na, df.index)}); expected a non-empty name"
                    )
                log.add(f"missing name in {col!r}", int((na & keep).sum()), _rows_where(na & keep, df.index))
                keep &= ~na
        # one sorted category set for both columns: rows hold integer codes, not 1M strings
        categories = pd.Index(sorted(set(factorized[model_a][1]) | set(factorized[model_b][1]) - {""}), dtype=object)
        player_codes = {}
        for col, (codes, clean) in factorized.items():
            player_codes[col] = categories.get_indexer(clean)[codes]  # "" -> -1 (missing)
        same = (player_codes[model_a] == player_codes[model_b]) & keep
        if same.any():
            if on_invalid == "raise":
                raise InputError(
                    f"columns {model_a!r}/{model_b!r}: {int(same.sum())} self-comparisons "
                    f"(0-based rows {_rows_where(same, df.index)}); a player cannot be compared with itself "
                    "(pass on_invalid='exclude' to drop and count them)"
                )
            log.add("self-comparison", int(same.sum()), _rows_where(same, df.index))
            keep &= ~same

        out = pd.DataFrame(index=df.index)
        out["model_a"] = pd.Categorical.from_codes(player_codes[model_a], categories=categories, ordered=True)
        out["model_b"] = pd.Categorical.from_codes(player_codes[model_b], categories=categories, ordered=True)
        oc = outcome_codes(df[outcome], outcome_map, outcome, rows=None if keep.all() else keep)
        out["outcome"] = pd.Categorical.from_codes(np.where(oc < 0, 2, oc), categories=list(OUTCOMES))
        if weight is not None:
            w = pd.to_numeric(df[weight], errors="coerce").to_numpy(dtype=float)
            bad = ~np.isfinite(w) | (w < 0)
            if bad.any():
                raise InputError(
                    f"column {weight!r}: {int(bad.sum())} rows have a negative, missing or non-finite "
                    f"weight (0-based rows {_rows_where(bad, df.index)}); expected finite weights >= 0"
                )
            out["weight"] = w
        else:
            out["weight"] = 1.0
        if judge is not None:
            jn = df[judge].isna().to_numpy() & keep
            if jn.any():
                if on_invalid == "raise":
                    raise InputError(
                        f"column {judge!r}: {int(jn.sum())} rows have no judge (0-based rows {_rows_where(jn, df.index)})"
                    )
                log.add(f"missing judge in {judge!r}", int(jn.sum()), _rows_where(jn, df.index))
                keep &= ~jn
            out["judge"] = df[judge].astype("string")
        extra = [c for c in df.columns if c not in needed and c not in out.columns]
        for c in extra:
            out[c] = df[c]
        out = out[keep].reset_index(drop=True) if not keep.all() else out.reset_index(drop=True)
        if len(out) == 0:
            raise InputError(f"no comparisons left after exclusions: {log.report()}")
        return cls(frame=out, excluded=log, source=source)

    # ---------------------------------------------------------------- accessors
    def __len__(self) -> int:
        return len(self.frame)

    @property
    def players(self) -> np.ndarray:
        """Sorted names of the players that occur (on integer codes, not on every row's string)."""
        used = set()
        for col in ("model_a", "model_b"):
            codes, values = column_codes(self.frame[col])
            used |= set(values[np.bincount(codes, minlength=len(values)) > 0])
        return np.array(sorted(used), dtype=object)

    @property
    def judges(self) -> np.ndarray:
        if "judge" not in self.frame:
            raise InputError("these comparisons have no judge column (pass judge=... when reading)")
        return np.array(sorted(self.frame["judge"].unique()), dtype=object)

    @property
    def n_comparisons(self) -> float:
        """Total comparison count (sum of frequency weights)."""
        return float(self.frame["weight"].sum())

    def subset(self, mask) -> "Comparisons":
        """Rows where ``mask`` is true (players absent from the subset disappear)."""
        log = ExclusionLog(dict(self.excluded.counts), {k: list(v) for k, v in self.excluded.examples.items()})
        return Comparisons(self.frame[np.asarray(mask)].reset_index(drop=True), log, self.source)

    def aggregate(self, players=None):
        """Sufficient statistics: weighted counts per unordered pair and outcome (see :mod:`.aggregate`)."""
        from bayesrank.data.aggregate import aggregate

        return aggregate(self, players=players)

    def __repr__(self) -> str:
        f = self.frame
        judges = f", {f['judge'].nunique()} judges" if "judge" in f else ""
        return (
            f"Comparisons({len(f)} rows, {self.n_comparisons:g} comparisons, {len(self.players)} players{judges}; "
            f"{self.excluded.report()}; source={self.source})"
        )
