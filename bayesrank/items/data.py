"""One validated type for benchmark results per item: :class:`ItemScores`, a models × items matrix.

Rows ``(model, item, score)`` with scores in [0, 1] (0/1 correctness, or a fractional grade);
optionally a ``cluster`` per item (task family, repository, passage) and repeated measures (Inspect
epochs, several samples per item), which are **averaged within the item** and counted as one item
(``trials`` keeps how many were averaged; ``successes`` their sum when every repeat is 0/1).

The analyses compare models on the same items, so the matrix is complete: an item that some model
has no score for is excluded for every model and counted (reason ``item not scored by every
model``); nothing is dropped silently.

0/1 scores with one trial per cell are held compactly: ``scores`` as int8 (one byte per model and
item), ``successes`` the same array and ``trials`` a read-only broadcast of 1 (no memory), so a
matrix of 5,000 models × 20,000 items takes 100 MB.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.errors import ExclusionLog, InputError

MISSING_ITEM = "item not scored by every model"
BLOCK_CELLS = 2**25  # cells per block of the float32 products (:meth:`ItemScores.both`): 128 MB


def _compact_binary(d) -> bool:
    """Whether ``d`` holds single 0/1 outcomes; if so, put it in the compact form (int8 scores,
    successes = scores, trials a broadcast 1)."""
    y, r = d.scores, d.trials
    if not (r.strides == (0, 0) and r.size and r.flat[0] == 1) and not (np.asarray(r) == 1).all():
        return False
    ok = bool((y.view(np.uint8) <= 1).all()) if y.dtype == np.int8 else bool(((y == 0) | (y == 1)).all())
    if not ok:
        return False
    if y.dtype != np.int8:
        d.scores = y.astype(np.int8)
    d.trials = np.broadcast_to(np.int8(1), d.scores.shape)
    d.successes = d.scores
    return True


@dataclass
class ItemScores:
    """Scores of ``models`` (M) on ``items`` (N): ``scores`` (M, N) in [0, 1] (mean over repeats),
    ``trials`` (M, N) repeats averaged, ``successes`` (M, N) their 0/1 sum (None when some repeat
    is fractional), ``clusters`` (N,) labels or None, and the exclusions made while reading."""

    models: np.ndarray
    items: np.ndarray
    scores: np.ndarray
    trials: np.ndarray
    successes: np.ndarray | None = None
    clusters: np.ndarray | None = None
    cluster_name: str | None = None
    exclusions: ExclusionLog = field(default_factory=ExclusionLog)
    n_rows: int = 0
    source: str = "<frame>"
    benchmark: str | None = None
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # derived (scores are not mutated)

    def __post_init__(self):
        m, n = self.scores.shape
        self._cache["binary"] = _compact_binary(self)
        if m < 2:
            raise InputError(f"{self.source}: per-item results of at least two models are needed (got {m})")
        if n < 2:
            raise InputError(f"{self.source}: at least two items scored by every model are needed (got {n}); "
                             f"{self.exclusions.report()}")

    # ------------------------------------------------------------------ shape
    @property
    def n_models(self) -> int:
        return len(self.models)

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def binary(self) -> bool:
        """Every model's score on every item is a single 0/1 outcome (no repeats, no fractions); such
        scores are held as int8 (module docstring)."""
        return self._cache["binary"]

    def both(self) -> np.ndarray:
        """(M, M) integer counts, 0/1 scores: [a, b] = items both a and b solved, ``(y yᵀ)_ab`` by
        float32 products over blocks of items (exact: every partial sum is an integer below 2^24;
        float64 beyond 2^24 items); memory O(M² + M · block)."""
        if "both" not in self._cache:
            y = self.scores
            m, n = y.shape
            dtype = np.float32 if n < 2**24 else np.float64
            acc = np.zeros((m, m), dtype=dtype)
            step = max(1, BLOCK_CELLS // max(m, 1))
            for s in range(0, n, step):
                blk = y[:, s:s + step].astype(dtype)
                acc += blk @ blk.T
            self._cache["both"] = np.rint(acc).astype(np.int64)
        return self._cache["both"]

    def wins(self) -> np.ndarray:
        """(M, M) integer counts, 0/1 scores: [a, b] = items a solved and b did not (McNemar's n10),
        ``S_a − (y yᵀ)_ab`` (:meth:`both`)."""
        if "wins" not in self._cache:
            both = self.both()
            self._cache["wins"] = np.diag(both)[:, None] - both
        return self._cache["wins"]

    @property
    def repeated(self) -> bool:
        return bool((self.trials > 1).any())

    @property
    def cluster_codes(self) -> np.ndarray | None:
        return None if self.clusters is None else pd.factorize(self.clusters)[0]

    @property
    def n_clusters(self) -> int | None:
        return None if self.clusters is None else int(len(pd.unique(self.clusters)))

    def means(self) -> np.ndarray:
        """Each model's mean score over the items."""
        if "means" not in self._cache:
            self._cache["means"] = self.scores.mean(axis=1)
        return self._cache["means"].copy()

    def index(self, model: str) -> int:
        names = [str(m) for m in self.models]
        try:
            return names.index(str(model))
        except ValueError:
            raise InputError(f"unknown model {model!r}; models: {names[:20]}") from None

    def subset(self, models) -> ItemScores:
        """The same items for a subset of the models (keeps the order given)."""
        idx = [self.index(m) for m in models]
        trials = np.broadcast_to(np.int8(1), (len(idx), self.n_items)) if self.binary else self.trials[idx]
        scores = self.scores[idx]
        successes = scores if self.binary else None if self.successes is None else self.successes[idx]
        return ItemScores(self.models[idx], self.items, scores, trials, successes, self.clusters, self.cluster_name,
                          self.exclusions, self.n_rows, self.source, self.benchmark)

    def long(self) -> pd.DataFrame:
        """The matrix as long rows ``model, item, score, trials[, cluster]``."""
        m, n = self.scores.shape
        d = {"model": np.repeat(self.models, n), "item": np.tile(self.items, m), "score": self.scores.ravel(),
             "trials": self.trials.ravel()}
        if self.clusters is not None:
            d[self.cluster_name or "cluster"] = np.tile(self.clusters, m)
        return pd.DataFrame(d)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_long(cls, df: pd.DataFrame, *, model: str = "model", item: str = "item", score: str = "score",
                  cluster: str | None = None, on_invalid: str = "raise", source: str = "<frame>",
                  benchmark: str | None = None, excluded: ExclusionLog | None = None,
                  row_offset: int | None = 2) -> ItemScores:
        """Validated matrix from long rows. Bad rows (missing model/item name, score missing, not a
        number or outside [0, 1]) raise an :class:`InputError` naming their rows (``row_offset``: the
        file line of the first data row, 2 for a CSV with a header; None: a DataFrame's rows, named by their
        index labels) or, with ``on_invalid="exclude"``,
        are dropped and counted. Repeated (model, item) rows are averaged; items not scored by every
        model are dropped for all models and counted."""
        log = excluded if excluded is not None else ExclusionLog()
        mnames, inames, vals, cl = cls.valid_rows(df, model=model, item=item, score=score, cluster=cluster,
                                                  on_invalid=on_invalid, source=source, log=log,
                                                  row_offset=row_offset)
        mcodes, models = pd.factorize(mnames, sort=False)
        icodes, items = pd.factorize(inames, sort=False)
        lab = None
        if cluster:
            first = np.full(len(items), -1)
            first[icodes[::-1]] = np.arange(len(icodes))[::-1]
            lab = cl[first]
            if (cl != lab[icodes]).any():
                where = int(np.flatnonzero(cl != lab[icodes])[0])
                it = items[icodes[where]]
                raise InputError(f"{source}: item {it!r} has several values of cluster column {cluster!r} "
                                 f"({sorted(set(cl[icodes == icodes[where]]))[:5]}); "
                                 "a cluster groups items, so it must be constant within an item")
        m_, n_ = len(models), len(items)
        flat = mcodes * n_ + icodes
        trials = np.bincount(flat, minlength=m_ * n_).reshape(m_, n_)
        total = np.bincount(flat, weights=vals, minlength=m_ * n_).reshape(m_, n_)
        return cls.from_cells(models, items, total, trials, all_binary=bool(np.isin(vals, (0.0, 1.0)).all()),
                              clusters=lab, cluster_name=cluster, exclusions=log, n_rows=len(df), source=source,
                              benchmark=benchmark)

    @staticmethod
    def valid_rows(df: pd.DataFrame, *, model: str = "model", item: str = "item", score: str = "score",
                   cluster: str | None = None, on_invalid: str = "raise", source: str = "<frame>",
                   log: ExclusionLog, row_offset: int | None = 2):
        """(model names, item names, scores, cluster labels or None) of the valid rows of a long table,
        as arrays; the checks of :meth:`from_long` (bad rows raise, naming them, or are counted in
        ``log`` with ``on_invalid="exclude"``)."""
        missing = [c for c in (model, item, score) if c not in df.columns]
        if cluster is not None and cluster not in df.columns:
            missing.append(cluster)
        if missing:
            raise InputError(f"{source}: per-item results need columns {model!r}, {item!r}, {score!r}"
                             + (f", {cluster!r}" if cluster else "") + f"; missing {missing}; columns: "
                             f"{list(df.columns)[:20]}")
        n_rows = len(df)
        raw = df[[model, item, score] + ([cluster] if cluster else [])].copy()
        raw.columns = ["model", "item", "score"] + (["cluster"] if cluster else [])
        line = np.asarray(df.index) if row_offset is None else np.arange(n_rows) + row_offset
        unit = "rows (DataFrame index)" if row_offset is None else "lines"
        s = raw["score"]
        if s.dtype == bool or str(s.dtype) == "boolean":
            values = s.astype(float)
        elif pd.api.types.is_numeric_dtype(s):
            values = s.astype(float)
        else:
            values = pd.to_numeric(s.map(_bool_text), errors="coerce")
        names = {}
        for col in ("model", "item"):
            v = raw[col]
            if not (pd.api.types.is_object_dtype(v) or pd.api.types.is_string_dtype(v)):
                names[col] = v.astype(str)  # ids that are numbers become text
            else:
                names[col] = v.where(v.isna(), v.astype(str).str.strip())
        reasons = {
            f"missing {model!r}": names["model"].isna() | (names["model"] == ""),
            f"missing {item!r}": names["item"].isna() | (names["item"] == ""),
            f"{score!r} missing or not a number": values.isna(),
            f"{score!r} outside [0, 1]": values.notna() & ((values < 0) | (values > 1)),
        }
        bad = np.zeros(n_rows, dtype=bool)
        for why, mask in reasons.items():
            mask = np.asarray(mask) & ~bad
            if mask.any():
                if on_invalid != "exclude":
                    raise InputError(f"{source}: {why} in {int(mask.sum())} row(s), {unit} {line[mask][:5].tolist()}"
                                     f" (scores must be numbers in [0, 1]; --exclude-invalid drops and counts them)")
                log.add(why, int(mask.sum()), line[mask][:5].tolist())
                bad |= mask
        ok = ~bad
        return (names["model"][ok].to_numpy(dtype=object), names["item"][ok].to_numpy(dtype=object),
                values[ok].to_numpy(dtype=float), raw["cluster"][ok].astype(str).to_numpy() if cluster else None)

    @classmethod
    def from_cells(cls, models, items, total: np.ndarray, trials: np.ndarray, *, all_binary: bool,
                   clusters: np.ndarray | None = None, cluster_name: str | None = None,
                   exclusions: ExclusionLog | None = None, n_rows: int = 0, source: str = "<frame>",
                   benchmark: str | None = None) -> ItemScores:
        """The matrix from per-cell sums: ``total`` (M, N) the sum of each cell's scores, ``trials`` (M, N)
        how many (0 where a model has no score for an item); the score of a cell is their mean. Items
        not scored by every model are dropped for all models and counted; ``all_binary``: every score
        summed was 0 or 1 (then ``successes`` = ``total``)."""
        log = exclusions if exclusions is not None else ExclusionLog()
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = np.where(trials > 0, total / np.maximum(trials, 1), np.nan)
        complete = (trials > 0).all(axis=0)
        items = np.asarray(items)
        if not complete.all():
            rows_lost = int(trials[:, ~complete].sum())
            log.add(MISSING_ITEM, rows_lost, [str(x) for x in items[~complete][:5]])
        keep = np.flatnonzero(complete)
        return cls(models=np.asarray(models, dtype=object), items=np.asarray(items[keep], dtype=object),
                   scores=scores[:, keep], trials=trials[:, keep],
                   successes=np.rint(total[:, keep]).astype(np.int64) if all_binary else None,
                   clusters=None if clusters is None else clusters[keep], cluster_name=cluster_name, exclusions=log,
                   n_rows=n_rows, source=source, benchmark=benchmark)

    @classmethod
    def from_wide(cls, df: pd.DataFrame, *, item: str | None = None, cluster: str | None = None,
                  on_invalid: str = "raise", source: str = "<frame>", benchmark: str | None = None,
                  row_offset: int | None = 2) -> ItemScores:
        """Items × models matrix: one row per item, one column per model (``item``: the item-id
        column, default the first column when it is not numeric, else the row number). Bad cells are
        named by file line (``row_offset``: the line of the first data row) and model column, or with
        ``row_offset=None`` by the DataFrame's index label."""
        cols = list(df.columns)
        if item is None:
            first = cols[0]
            item = first if not pd.api.types.is_numeric_dtype(df[first]) else None
        id_cols = [c for c in (item, cluster) if c is not None]
        ids = df[item].astype(str) if item is not None else pd.Series([str(i + 1) for i in range(len(df))])
        model_cols = [c for c in cols if c not in id_cols]
        if cluster is not None and cluster not in df.columns:
            raise InputError(f"{source}: per-item results need the cluster column {cluster!r}; columns: "
                             f"{list(df.columns)[:20]}")
        names = [str(c).strip() for c in model_cols]
        if (model_cols and all(n != "" for n in names) and len(set(names)) == len(names) and ids.is_unique
                and all(_numeric(df[c]) for c in model_cols)):
            return cls._from_numeric_wide(df, model_cols, names, ids.to_numpy(dtype=object), cluster, on_invalid,
                                          source, benchmark, row_offset)
        long = df.assign(_item=ids.to_numpy()).melt(id_vars=["_item"] + ([cluster] if cluster else []),
                                                     value_vars=model_cols, var_name="model", value_name="score")
        long["_line"] = np.tile(np.arange(len(df)) + 2, len(model_cols))
        return cls.from_long(long, item="_item", cluster=cluster, on_invalid=on_invalid, source=source,
                             benchmark=benchmark)


    @classmethod
    def _from_numeric_wide(cls, df, model_cols, names, ids, cluster, on_invalid, source, benchmark,
                           row_offset: int | None = 2) -> ItemScores:
        """:meth:`from_wide` for numeric score columns, unique model names and item ids: the matrix is
        built column by column (int8 for 0/1 scores, no long rows); the same validation, exclusions
        and results as the long route, with bad cells named by file line and model column."""
        n, m = len(df), len(model_cols)
        log = ExclusionLog(unit="")  # examples name the line and the model column
        cols = [df[c] for c in model_cols]
        binary = True
        for c in cols:
            v = c.to_numpy()
            if v.dtype.kind == "b":
                continue
            if v.dtype.kind in "iu":
                if v.size and (v.min() < 0 or v.max() > 1):
                    binary = False
                continue
            binary = False
            break
        if binary:
            y = np.empty((m, n), dtype=np.int8)
            for j, c in enumerate(cols):
                y[j] = c.to_numpy()
            trials = np.broadcast_to(np.int8(1), (m, n))
            keep = np.ones(n, dtype=bool)
        else:
            y = np.empty((m, n), dtype=float)
            for j, c in enumerate(cols):
                y[j] = c.to_numpy(dtype=float, na_value=np.nan)
            reasons = {"'score' missing or not a number": np.isnan(y),
                       "'score' outside [0, 1]": (y < 0) | (y > 1)}
            bad = np.zeros(y.shape, dtype=bool)
            for why, mask in reasons.items():
                mask &= ~bad
                if mask.any():
                    j, i = np.nonzero(mask)
                    where = [(f"line {i_ + row_offset}" if row_offset is not None else f"row {df.index[i_]!r}")
                             + f" column {names[j_]!r}" for j_, i_ in zip(j[:5], i[:5], strict=True)]
                    if on_invalid != "exclude":
                        raise InputError(f"{source}: {why} in {int(mask.sum())} cell(s), {', '.join(where)} (scores "
                                         "must be numbers in [0, 1]; --exclude-invalid drops and counts them)")
                    log.add(why, int(mask.sum()), where)
                    bad |= mask
            keep = ~bad.any(axis=0)
            if not keep.all():
                log.add(MISSING_ITEM, int((~bad[:, ~keep]).sum()), [str(x) for x in ids[~keep][:5]])
            trials = np.ones((m, n), dtype=np.int64)
        if not keep.all():
            y, trials = y[:, keep], trials[:, keep]
        clusters = None if cluster is None else df[cluster].astype(str).to_numpy()[keep]
        return cls(models=np.asarray(names, dtype=object), items=np.asarray(ids[keep], dtype=object), scores=y,
                   trials=trials, successes=None, clusters=clusters, cluster_name=cluster, exclusions=log,
                   n_rows=n * m, source=source, benchmark=benchmark)


def _numeric(s: pd.Series) -> bool:
    """A score column read as numbers or booleans (text columns take the long route)."""
    return s.dtype.kind in "biuf"


def _bool_text(v):
    """true/false/yes/no/correct/incorrect (any case) as 1/0; everything else unchanged."""
    if isinstance(v, str):
        t = v.strip().lower()
        return {"true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0, "correct": 1.0, "incorrect": 0.0}.get(t, v)
    if isinstance(v, (bool, np.bool_)):
        return float(v)
    return v
