"""One validated type for pairwise outcomes: ``Comparisons``.

Every row is one comparison (or ``weight`` exchangeable comparisons) between ``model_a`` and
``model_b`` with outcome ``"a"`` (a wins), ``"b"`` (b wins) or ``"tie"``; optional ``judge``,
``weight`` (a non-negative frequency weight) and any extra metadata columns are carried along.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.data.origin import Origin
from bayesrank.errors import ExclusionLog, InputError

OUTCOMES = ("a", "b", "tie")
#: what an ``outcome_map`` may map a raw value to: a wins, b wins, a tie, or an invalid row
TARGETS = ("a", "b", "tie", "invalid")
#: outcome words read without a map (compared case-insensitively, surrounding spaces ignored).
#: Numbers are never guessed here: 0/1, 1/2 and 0/1/2 mean different things in different files
#: (``bayesrank.data.columns.infer_outcome_map`` reads the one unambiguous numeric code, 1/0.5/0).
WORDS = {
    "a": "a", "model_a": "a", "left": "a", "win": "a", "a>b": "a", "won": "a",
    "b": "b", "model_b": "b", "right": "b", "loss": "b", "b>a": "b", "lost": "b",
    "tie": "tie", "draw": "tie", "tie (bothbad)": "tie", "both_bad": "tie", "a=b": "tie", "tied": "tie",
}
EXCLUDE_FLAG = "--exclude-invalid (on_invalid='exclude' in Python) excludes and counts them"


def column_codes(col: pd.Series):
    """(integer codes, distinct values) of a column: its categorical codes when it is one."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return np.asarray(col.cat.codes), np.asarray(col.cat.categories, dtype=object)
    codes, uniques = pd.factorize(col)
    return codes, np.asarray(uniques, dtype=object)


def _rows_where(mask: np.ndarray, index: pd.Index, limit: int = 5) -> list:
    return list(index[np.flatnonzero(mask)[:limit]])


def _key(v) -> str:
    """An outcome value as compared with the vocabulary: stripped, lower case, integral numbers
    without a decimal point (``1``, ``1.0`` and the JSON number 1 are the same value)."""
    text = str(v).strip().lower()
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number.is_integer() and abs(number) < 1e15 else text


def map_outcomes(values: pd.Series, mapping: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Raw outcome values -> (codes, distinct values): codes 0 (``a``), 1 (``b``), 2 (``tie``),
    -1 unknown or missing, -2 mapped to ``invalid``. Only the distinct values are looked up."""
    table = dict(WORDS)
    if mapping:
        for k, v in mapping.items():
            if v not in TARGETS:
                raise InputError(f"outcome map sends {k!r} to {v!r}; targets are {', '.join(TARGETS)}")
            table[_key(k)] = v
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    lookup = {"a": 0, "b": 1, "tie": 2, "invalid": -2}
    per_unique = np.array([lookup.get(table.get(_key(u)), -1) for u in uniques] + [-1], dtype=np.int8)
    return per_unique[codes], np.asarray(uniques, dtype=object)


def outcome_codes(values: pd.Series, mapping: dict | None = None, column: str = "outcome", rows=None) -> np.ndarray:
    """Map raw outcome labels to codes 0 (``a``), 1 (``b``), 2 (``tie``) as ``int8``; unknown labels
    raise, naming the labels (``rows``: boolean mask of the rows that count)."""
    codes, _ = map_outcomes(values, mapping)
    bad = codes < 0
    if rows is not None:
        bad &= rows
    if bad.any():
        labels = sorted(set(map(str, values[bad].unique().tolist())))[:10]
        raise InputError(f"column {column!r}: {int(bad.sum())} rows have outcome values {labels} that are not "
                         f"a/b/tie; map them with --outcome-map VALUE=a|b|tie|invalid")
    return codes


#: id(validated frame) -> (weak reference to it, origin, positions of its rows in the source)
_PLACES: dict = {}


def carry_places(source: pd.DataFrame, frame: pd.DataFrame, rows) -> pd.DataFrame:
    """Remember that ``frame``'s rows are ``source``'s rows ``rows`` (for :func:`describe_rows`)."""
    ref, origin, positions = _PLACES.get(id(source), (None, None, None))
    if ref is not None and ref() is source and positions is not None:
        _PLACES[id(frame)] = (weakref.ref(frame), origin, positions[np.asarray(rows, dtype=np.int64)])
        weakref.finalize(frame, _PLACES.pop, id(frame), None)
    return frame


def describe_rows(frame: pd.DataFrame, rows, limit: int = 5) -> str:
    """Rows of a validated comparisons frame (0-based positions) as the places a user finds them:
    ``lines 4, 9 of votes.csv`` for a frame built by :meth:`Comparisons.from_frame` from a file
    (its origin is remembered for as long as the frame lives), else ``rows 3, 8``."""
    rows = [int(r) for r in list(rows)]
    ref, origin, positions = _PLACES.get(id(frame), (None, None, None))
    if ref is None or ref() is not frame:
        origin = positions = None
    if origin is None or positions is None or len(positions) != len(frame):
        shown = ", ".join(map(str, rows[:limit])) + (f" and {len(rows) - limit} more" if len(rows) > limit else "")
        return f"{'row' if len(rows) == 1 else 'rows'} {shown}"
    return origin.describe(positions[rows], limit=limit)


def _labels(values, limit: int = 6) -> str:
    u = pd.unique(pd.Series(values, dtype=object).map(lambda v: "(missing)" if pd.isna(v) else str(v)))
    shown = ", ".join(repr(x) if x != "(missing)" else x for x in u[:limit])
    return shown + (f" and {len(u) - limit} more" if len(u) > limit else "")


@dataclass
class _Invalid:
    """Rows found invalid while validating, in order: (mask, reason counted, message detail, group).
    Entries of one group (e.g. every unknown outcome value) make one error message together."""

    order: list = field(default_factory=list)
    groups: dict = field(default_factory=dict)

    def add(self, mask: np.ndarray, reason: str, detail: str, group: str | None = None) -> None:
        if mask.any():
            self.order.append((mask, reason, detail, group))

    def first_error(self, keep: np.ndarray):
        """(mask, detail) of the first group with a row still kept, all its entries together."""
        for mask, _reason, detail, group in self.order:
            if not (mask & keep).any():
                continue
            if group is None:
                return mask & keep, detail
            union = np.zeros_like(mask)
            for m, _, _, g in self.order:
                if g == group:
                    union |= m
            return union & keep, self.groups.get(group, detail)
        return None


@dataclass
class Comparisons:
    """Validated pairwise comparisons (see module docstring). Build with :meth:`from_frame`."""

    frame: pd.DataFrame
    excluded: ExclusionLog = field(default_factory=ExclusionLog)
    source: str = "<frame>"
    #: notes from reading (encoding or delimiter detected, the column mapping assumed, files skipped)
    notes: list = field(default_factory=list)
    #: vocabulary key -> column of the file it was read from (``a``, ``b``, ``outcome``, ``judge`` ...)
    mapping: dict = field(default_factory=dict)

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
        origin: Origin | None = None,
        invalid: pd.Series | None = None,
        outcome_label: str | None = None,
        notes=None,
        mapping: dict | None = None,
        display: dict | None = None,
    ) -> Comparisons:
        """Validate a DataFrame of comparisons.

        Invalid rows — a missing or empty player name, a self-comparison, an outcome that is neither
        a/b/tie nor mapped (``outcome_map``: raw value -> ``a``/``b``/``tie``/``invalid``), a missing
        judge, or a reason given in ``invalid`` (one string or None per row, e.g. missing points) —
        raise one :class:`InputError` naming where they are (file lines through ``origin``, else the
        DataFrame's index labels), the column, the value and the flag that excludes them
        (``on_invalid="raise"``, the default), or are dropped and counted by reason in ``excluded``
        (``on_invalid="exclude"``). Bad weights, missing columns and empty data always raise.
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
        origin = origin or Origin(source=source)
        log = excluded if excluded is not None else ExclusionLog()
        log.unit = origin.plural
        found = _Invalid()
        shown = {model_a: repr(model_a), model_b: repr(model_b), **(display or {})}
        factorized = {}
        for col in (model_a, model_b):
            codes, uniques = pd.factorize(df[col], use_na_sentinel=True)  # strip the distinct names, not every row
            clean = np.append(np.asarray(pd.Index(uniques).astype(str).str.strip(), dtype=object), "")
            factorized[col] = (codes, clean)
        none_a, none_b = ((clean == "")[codes] for codes, clean in (factorized[model_a], factorized[model_b]))
        sa, sb = shown[model_a], shown[model_b]
        found.add(none_a & none_b, "row without players", f"columns {sa} and {sb} are both empty "
                  "(a section title or a blank line inside the data?)")
        found.add(none_a & ~none_b, f"missing name in {sa}", f"column {sa} has no player name")
        found.add(none_b & ~none_a, f"missing name in {sb}", f"column {sb} has no player name")
        # one sorted category set for both columns: rows hold integer codes, not 1M strings
        categories = pd.Index(sorted(set(factorized[model_a][1]) | set(factorized[model_b][1]) - {""}), dtype=object)
        player_codes = {col: categories.get_indexer(clean)[codes] for col, (codes, clean) in factorized.items()}
        named = (player_codes[model_a] >= 0) & (player_codes[model_b] >= 0)
        found.add((player_codes[model_a] == player_codes[model_b]) & named, "self-comparison",
                  f"columns {sa}/{sb} name the same player twice (a player cannot be compared with itself)")
        if invalid is not None:
            reasons = pd.Series(invalid, index=df.index)
            for reason in pd.unique(reasons.dropna()):
                found.add((reasons == reason).to_numpy(), str(reason), str(reason))

        oc, uniques = map_outcomes(df[outcome], outcome_map)
        column = outcome_label or repr(outcome)
        for target in (-2, -1):
            bad = oc == target
            if not bad.any():
                continue
            vals = df[outcome][bad].map(lambda v: "(missing)" if pd.isna(v) else str(v).strip())
            distinct = [v for v in pd.unique(vals)]
            group = f"outcome{target}"
            if target == -2:
                found.groups[group] = (f"column {column} has outcome value(s) {_labels(vals)}, which the outcome map "
                                       "sends to invalid")
            else:
                unknown = [v for v in distinct if v != "(missing)"]
                example = ",".join(f"{v}=a|b|tie|invalid" for v in unknown[:2])
                found.groups[group] = (f"column {column} has outcome value(s) {_labels(vals)}, which are not a/b/tie"
                                       + (f"; map them with --outcome-map {example}" if unknown else "")
                                       if unknown else f"column {column} is empty (expected an outcome: a, b or tie)")
            if len(distinct) > 10:  # free text: one reason, not one per value
                found.add(bad, "unknown outcome value" if target == -1 else "outcome mapped to invalid", "", group)
                continue
            for v in distinct:
                mask = bad.copy()
                mask[bad] = (vals == v).to_numpy()
                reason = (f"outcome {v!r} (mapped to invalid)" if target == -2
                          else "missing outcome" if v == "(missing)" else f"unknown outcome {v!r}")
                found.add(mask, reason, "", group)
        if judge is not None:
            sj = shown.get(judge, repr(judge))
            no_judge = df[judge].isna().to_numpy() | (df[judge].astype(str).str.strip() == "").to_numpy()
            found.add(no_judge, f"missing judge in {sj}", f"column {sj} has no judge (an empty cell)")

        keep = np.ones(len(df), dtype=bool)
        if on_invalid == "raise":
            first = found.first_error(keep)
            if first is not None:
                hit, detail = first
                n = int(hit.sum())
                raise InputError(f"{origin.describe(df.index[hit])}: {detail}"
                                 + (f" ({n:,} rows)" if n > 1 else "") + f"; {EXCLUDE_FLAG}")
        for mask, reason, _detail, _group in found.order:
            hit = mask & keep
            if hit.any():
                log.add(reason, int(hit.sum()), origin.places(df.index[hit]))
                keep &= ~hit

        out = pd.DataFrame(index=df.index)
        out["model_a"] = pd.Categorical.from_codes(player_codes[model_a], categories=categories, ordered=True)
        out["model_b"] = pd.Categorical.from_codes(player_codes[model_b], categories=categories, ordered=True)
        out["outcome"] = pd.Categorical.from_codes(np.where(oc < 0, 2, oc), categories=list(OUTCOMES))
        if weight is not None:
            w = pd.to_numeric(df[weight], errors="coerce").to_numpy(dtype=float)
            bad = ~np.isfinite(w) | (w < 0)
            if bad.any():
                raise InputError(
                    f"{origin.describe(df.index[bad])}: column {weight!r} has a negative, missing or non-finite "
                    f"weight ({int(bad.sum())} rows); expected finite weights >= 0"
                )
            if not (w[keep] > 0).any():
                raise InputError(f"column {weight!r}: every weight is 0, so there is nothing to fit; "
                                 "expected positive frequency weights")
            out["weight"] = w
        else:
            out["weight"] = 1.0
        if judge is not None:
            out["judge"] = df[judge].astype("string")
        extra = [c for c in df.columns if c not in needed and c not in out.columns]
        for c in extra:
            out[c] = df[c]
        positions = np.asarray(df.index[keep])
        out = out[keep].reset_index(drop=True) if not keep.all() else out.reset_index(drop=True)
        if len(out) == 0:
            raise InputError(f"no comparisons left after exclusions: {log.report()}")
        _PLACES[id(out)] = (weakref.ref(out), origin, positions)  # rows -> file places (describe_rows)
        weakref.finalize(out, _PLACES.pop, id(out), None)
        return cls(frame=out, excluded=log, source=source, notes=list(notes or []), mapping=dict(mapping or {}))

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

    def subset(self, mask) -> Comparisons:
        """Rows where ``mask`` is true (players absent from the subset disappear; messages about the
        kept rows still name their file lines)."""
        mask = np.asarray(mask)
        frame = carry_places(self.frame, self.frame[mask].reset_index(drop=True),
                             np.flatnonzero(mask) if mask.dtype == bool else mask)
        return Comparisons(frame, self.excluded.copy(), self.source, list(self.notes), dict(self.mapping))

    def exclude(self, mask, reason: str) -> Comparisons:
        """The comparisons without the rows where ``mask`` is true, which are counted in ``excluded``
        under ``reason`` (with up to five of their file lines)."""
        mask = np.asarray(mask, dtype=bool)
        out = self.subset(~mask)
        rows = np.flatnonzero(mask)
        ref, origin, positions = _PLACES.get(id(self.frame), (None, None, None))
        known = ref is not None and ref() is self.frame and origin is not None and positions is not None
        out.excluded.add(reason, len(rows), origin.places(positions[rows]) if known else [int(r) for r in rows[:5]])
        return out

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
