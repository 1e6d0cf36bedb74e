"""Evaluation grids: one score per (model, benchmark, configuration) cell, or per-item correctness.

A *configuration* is one combination of levels of the named axis columns (template, decoding,
few-shot, scoring, harness, ...). The grid is validated on construction: missing columns, non-numeric
or out-of-range scores and duplicate cells raise :class:`~bayesrank.errors.InputError` naming the
rows; cells missing from the fully crossed design are *reported* (``missing_cells``), never imputed.
"""

from __future__ import annotations

import hashlib
import itertools
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.errors import ExclusionLog, InputError

MODEL, BENCHMARK, SCORE = "model", "benchmark", "score"
N_ITEMS, N_CORRECT = "n_items", "n_correct"
RESERVED = {MODEL, BENCHMARK, SCORE, N_ITEMS, N_CORRECT, "stderr", "item", "correct"}


def _rows(index, limit: int = 8) -> str:
    idx = list(index)
    shown = ", ".join(str(i) for i in idx[:limit])
    return shown + (f", ... ({len(idx)} rows)" if len(idx) > limit else "")


def _require_names(df: pd.DataFrame, model: str, benchmark: str | None) -> None:
    """The player (model) and benchmark names must be present in every row (never the string 'None')."""
    for col in [model] + ([benchmark] if benchmark else []):
        empty = df[col].isna()
        if empty.any():
            raise InputError(f"column {col!r} is empty in rows {_rows(df.index[empty])} (e.g. lm-eval samples JSONL "
                             "files do not name the model: put the rows in a CSV with a model column)")


def config_label(values, axes) -> str:
    """Human-readable configuration key, e.g. ``template=cot|decoding=greedy``."""
    return "|".join(f"{a}={v}" for a, v in zip(axes, values))


@dataclass
class EvalGrid:
    """Validated grid. ``data`` has columns model, benchmark, *axes, score (+ n_items, n_correct, stderr).

    ``items`` (optional) holds per-item correctness: model, benchmark, *axes, item, correct.
    """

    data: pd.DataFrame
    axes: tuple[str, ...]
    score_range: tuple[float, float] | None = (0.0, 1.0)
    items: pd.DataFrame | None = None
    exclusions: ExclusionLog = field(default_factory=ExclusionLog)
    _wide_cache: dict = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_scores(
        cls,
        df: pd.DataFrame,
        *,
        model: str = MODEL,
        benchmark: str | None = BENCHMARK,
        axes: list[str] | tuple[str, ...] | None = None,
        score: str = SCORE,
        n_items: str | None = None,
        stderr: str | None = None,
        score_range: tuple[float, float] | None = (0.0, 1.0),
    ) -> EvalGrid:
        """Tidy table -> grid. ``axes=None`` takes every column that is not model/benchmark/score/n.

        ``benchmark=None`` treats the whole table as one benchmark named ``"all"``.
        """
        if not isinstance(df, pd.DataFrame):
            raise InputError(f"expected a pandas DataFrame, got {type(df).__name__}")
        needed = [model, score] + ([benchmark] if benchmark else [])
        missing = [c for c in needed if c not in df.columns]
        if missing:
            raise InputError(f"grid table lacks column(s) {missing}; columns present: {list(df.columns)}")
        if axes is None:
            skip = {model, score, benchmark, n_items, stderr} | RESERVED
            axes = [c for c in df.columns if c not in skip]
        axes = tuple(axes)
        if not axes:
            raise InputError("no configuration axis columns: pass axes=[...] (e.g. template, decoding, num_fewshot)")
        bad_axes = [a for a in axes if a not in df.columns]
        if bad_axes:
            raise InputError(f"axis column(s) {bad_axes} not in the table; columns present: {list(df.columns)}")
        clash = [a for a in axes if a in (model, score, benchmark)]
        if clash:
            raise InputError(f"axis column(s) {clash} are also the model/benchmark/score column")

        _require_names(df, model, benchmark)
        out = pd.DataFrame({MODEL: df[model].astype(str).to_numpy()}, index=df.index)
        out[BENCHMARK] = df[benchmark].astype(str).to_numpy() if benchmark else "all"
        for a in axes:
            if df[a].isna().any():
                raise InputError(f"axis column {a!r} is empty in rows {_rows(df.index[df[a].isna()])}")
            out[a] = df[a].astype(str).to_numpy()
        values = pd.to_numeric(df[score], errors="coerce")
        nonnum = values.isna() & df[score].notna()
        if nonnum.any():
            raise InputError(f"score column {score!r} is not numeric in rows {_rows(df.index[nonnum])} "
                             f"(e.g. {df.loc[nonnum, score].iloc[0]!r})")
        if values.isna().any():
            raise InputError(f"score column {score!r} is missing (NaN) in rows {_rows(df.index[values.isna()])}; "
                             "drop those cells explicitly — they are then reported as missing cells")
        out[SCORE] = values.astype(float).to_numpy()
        if score_range is not None:
            lo, hi = score_range
            bad = (out[SCORE] < lo) | (out[SCORE] > hi)
            if bad.any():
                raise InputError(f"score outside [{lo}, {hi}] in rows {_rows(out.index[bad])} "
                                 f"(e.g. {out.loc[bad, SCORE].iloc[0]!r}); rescale (percent -> fraction?) "
                                 "or pass score_range=None")
        if n_items:
            n = pd.to_numeric(df[n_items], errors="coerce")
            if n.isna().any() or (n <= 0).any() or (n % 1 != 0).any():
                bad = n.isna() | (n <= 0) | (n % 1 != 0)
                raise InputError(f"{n_items!r} must be a positive integer item count; bad rows {_rows(df.index[bad])}")
            out[N_ITEMS] = n.astype(int).to_numpy()
            out[N_CORRECT] = np.rint(out[SCORE] * out[N_ITEMS]).astype(int)
        if stderr:
            out["stderr"] = pd.to_numeric(df[stderr], errors="coerce").to_numpy()
        grid = cls(out.reset_index(drop=True), axes, score_range)
        grid._check_duplicates(df.index)
        grid._warn_missing()
        return grid

    @classmethod
    def from_items(
        cls,
        df: pd.DataFrame,
        *,
        model: str = MODEL,
        benchmark: str | None = BENCHMARK,
        axes: list[str] | tuple[str, ...],
        item: str = "item",
        correct: str = "correct",
        keep: list[str] | tuple[str, ...] = (),
    ) -> EvalGrid:
        """Per-item correctness (0/1, or a fraction in [0, 1]) -> grid of accuracies with item counts.

        ``keep``: further per-item columns carried in ``items`` (e.g. a cluster column for paired tests)."""
        keep = [k for k in keep if k]
        needed = [model, item, correct, *axes, *keep] + ([benchmark] if benchmark else [])
        missing = [c for c in needed if c not in df.columns]
        if missing:
            raise InputError(f"item table lacks column(s) {missing}; columns present: {list(df.columns)}")
        _require_names(df, model, benchmark)
        c = pd.to_numeric(df[correct], errors="coerce")
        bad = c.isna() | (c < 0) | (c > 1)
        if bad.any():
            raise InputError(f"{correct!r} must be in [0, 1] (1 = correct); bad rows {_rows(df.index[bad])}")
        items = pd.DataFrame({MODEL: df[model].astype(str).to_numpy()})
        items[BENCHMARK] = df[benchmark].astype(str).to_numpy() if benchmark else "all"
        for a in axes:
            items[a] = df[a].astype(str).to_numpy()
        items["item"] = df[item].astype(str).to_numpy()
        items["correct"] = c.to_numpy(dtype=float)
        for k in keep:
            if df[k].isna().any():
                raise InputError(f"column {k!r} is empty in rows {_rows(df.index[df[k].isna()])}")
            items[k] = df[k].astype(str).to_numpy()
        keys = [MODEL, BENCHMARK, *axes, "item"]
        dup = items.duplicated(keys, keep=False)
        if dup.any():
            raise InputError(f"duplicate (model, benchmark, configuration, item) rows {_rows(df.index[dup])}: "
                             "each item may be scored once per cell")
        cell = items.groupby([MODEL, BENCHMARK, *axes], sort=False, observed=True)["correct"]
        agg = cell.agg(score="mean", n_items="size", n_correct="sum").reset_index()
        agg[N_CORRECT] = np.rint(agg[N_CORRECT]).astype(int)
        grid = cls(agg, tuple(axes), (0.0, 1.0), items=items)
        grid._warn_missing()
        return grid

    # ------------------------------------------------------------------ validation
    def _check_duplicates(self, original_index) -> None:
        keys = [MODEL, BENCHMARK, *self.axes]
        dup = self.data.duplicated(keys, keep=False)
        if dup.any():
            first = self.data.loc[dup, keys].iloc[0].to_dict()
            raise InputError(f"duplicate cells: rows {_rows(np.asarray(original_index)[dup.to_numpy()])} share "
                             f"(model, benchmark, configuration), e.g. {first}; add the axis that tells them "
                             "apart or aggregate them first")

    def _warn_missing(self) -> None:
        miss = self.missing_cells()
        if len(miss):
            warnings.warn(f"unbalanced grid: {len(miss)} (model, configuration) cells are missing from the fully "
                          f"crossed design (not imputed; see EvalGrid.missing_cells()). First: "
                          f"{miss.iloc[0].to_dict()}", UserWarning, stacklevel=3)

    # ------------------------------------------------------------------ structure
    @property
    def models(self) -> list[str]:
        return list(pd.unique(self.data[MODEL]))

    @property
    def benchmarks(self) -> list[str]:
        return list(pd.unique(self.data[BENCHMARK]))

    def levels(self, benchmark: str | None = None) -> dict[str, list[str]]:
        d = self.data if benchmark is None else self.data[self.data[BENCHMARK] == benchmark]
        return {a: list(pd.unique(d[a])) for a in self.axes}

    def benchmark(self, name: str) -> EvalGrid:
        if name not in self.benchmarks:
            raise InputError(f"no benchmark {name!r}; benchmarks: {self.benchmarks}")
        d = self.data[self.data[BENCHMARK] == name].reset_index(drop=True)
        items = None if self.items is None else self.items[self.items[BENCHMARK] == name].reset_index(drop=True)
        return EvalGrid(d, self.axes, self.score_range, items, self.exclusions)

    def configurations(self, benchmark: str | None = None) -> pd.DataFrame:
        """Distinct observed configurations (axis-level combinations) with a ``config`` label column."""
        d = self.data if benchmark is None else self.data[self.data[BENCHMARK] == benchmark]
        conf = d[list(self.axes)].drop_duplicates().reset_index(drop=True)
        conf["config"] = [config_label(r, self.axes) for r in conf[list(self.axes)].itertuples(index=False)]
        return conf

    def missing_cells(self) -> pd.DataFrame:
        """(benchmark, model, configuration) cells absent from the fully crossed design, per benchmark.

        The design of benchmark b is models(b) x product of the axis levels observed in b.
        """
        rows = []
        for b, d in self.data.groupby(BENCHMARK, sort=False):
            models = list(pd.unique(d[MODEL]))
            levels = [list(pd.unique(d[a])) for a in self.axes]
            have = set(map(tuple, d[[MODEL, *self.axes]].to_numpy().tolist()))
            for m in models:
                for combo in itertools.product(*levels):
                    if (m, *combo) not in have:
                        rows.append({BENCHMARK: b, MODEL: m, **dict(zip(self.axes, combo))})
        return pd.DataFrame(rows, columns=[BENCHMARK, MODEL, *self.axes])

    def wide(self, benchmark: str) -> pd.DataFrame:
        """Scores of one benchmark as a (configuration x model) table; NaN marks a missing cell.

        Configurations and models keep their first-seen order. Cached (the grid's data are not mutated)."""
        if benchmark not in self._wide_cache:
            d = self.data[self.data[BENCHMARK] == benchmark]
            labels = [config_label(r, self.axes) for r in zip(*(d[a] for a in self.axes))]
            configs, models = pd.unique(pd.Series(labels)), pd.unique(d[MODEL])
            mat = np.full((len(configs), len(models)), np.nan)
            mat[pd.Index(configs).get_indexer(labels), pd.Index(models).get_indexer(d[MODEL])] = d[SCORE].to_numpy()
            self._wide_cache[benchmark] = pd.DataFrame(mat, index=pd.Index(configs, name="config"),
                                                       columns=pd.Index(models, name=MODEL))
        return self._wide_cache[benchmark].copy()

    def item_subset_hash(self, benchmark: str | None = None) -> str | None:
        """sha256 of the sorted item ids scored (per benchmark); None without per-item data."""
        if self.items is None:
            return None
        d = self.items if benchmark is None else self.items[self.items[BENCHMARK] == benchmark]
        ids = sorted(pd.unique(d["item"]))
        return hashlib.sha256("\n".join(ids).encode()).hexdigest()

    def filter(self, mask: pd.Series) -> EvalGrid:
        d = self.data[mask.to_numpy()].reset_index(drop=True)
        items = None
        if self.items is not None:
            keep = d[[MODEL, BENCHMARK, *self.axes]].drop_duplicates()
            items = self.items.merge(keep, on=[MODEL, BENCHMARK, *self.axes], how="inner")
        return EvalGrid(d, self.axes, self.score_range, items, self.exclusions)

    def __repr__(self) -> str:
        return (f"EvalGrid({len(self.data)} cells, {len(self.models)} players, {len(self.benchmarks)} benchmarks, "
                f"axes={list(self.axes)}, per-item={'yes' if self.items is not None else 'no'})")
