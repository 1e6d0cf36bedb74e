"""One validated type for benchmark results per item: :class:`ItemScores`, a models × items matrix.

Rows ``(model, item, score)`` with scores in [0, 1] (0/1 correctness, or a fractional grade);
optionally a ``cluster`` per item (task family, repository, passage) and repeated measures (Inspect
epochs, several samples per item), which are **averaged within the item** and counted as one item
(``trials`` keeps how many were averaged; ``successes`` their sum when every repeat is 0/1).

The analyses compare models on the same items, so the matrix is complete: an item that some model
has no score for is excluded for every model and counted (reason ``item not scored by every
model``); nothing is dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.errors import ExclusionLog, InputError

MISSING_ITEM = "item not scored by every model"


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
        """Every model's score on every item is a single 0/1 outcome (no repeats, no fractions)."""
        if "binary" not in self._cache:
            self._cache["binary"] = bool((self.trials == 1).all() and np.isin(self.scores, (0.0, 1.0)).all())
        return self._cache["binary"]

    def wins(self) -> np.ndarray:
        """(M, M) integer counts, 0/1 scores: [a, b] = items a solved and b did not (McNemar's n10),
        ``S_a − (y yᵀ)_ab`` (one float32 product: exact for counts below 2^24)."""
        if "wins" not in self._cache:
            y = self.scores.astype(np.float32)
            both = np.rint(y @ y.T).astype(np.int64)
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
        return self.scores.mean(axis=1)

    def index(self, model: str) -> int:
        names = [str(m) for m in self.models]
        try:
            return names.index(str(model))
        except ValueError:
            raise InputError(f"unknown model {model!r}; models: {names[:20]}") from None

    def subset(self, models) -> ItemScores:
        """The same items for a subset of the models (keeps the order given)."""
        idx = [self.index(m) for m in models]
        return ItemScores(self.models[idx], self.items, self.scores[idx], self.trials[idx],
                          None if self.successes is None else self.successes[idx], self.clusters, self.cluster_name,
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
        mcodes, models = pd.factorize(names["model"][ok], sort=False)
        icodes, items = pd.factorize(names["item"][ok], sort=False)
        vals = values[ok].to_numpy(dtype=float)
        if cluster:
            cl = raw["cluster"][ok].astype(str).to_numpy()
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
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = np.where(trials > 0, total / np.maximum(trials, 1), np.nan)
        all_binary = bool(np.isin(vals, (0.0, 1.0)).all())
        complete = (trials > 0).all(axis=0)
        if not complete.all():
            rows_lost = int(trials[:, ~complete].sum())
            log.add(MISSING_ITEM, rows_lost, [str(x) for x in items[~complete][:5]])
        keep = np.flatnonzero(complete)
        items = np.asarray(items)
        clusters = lab[keep] if cluster else None
        return cls(models=np.asarray(models, dtype=object), items=np.asarray(items[keep], dtype=object),
                   scores=scores[:, keep], trials=trials[:, keep],
                   successes=np.rint(total[:, keep]).astype(np.int64) if all_binary else None,
                   clusters=clusters, cluster_name=cluster, exclusions=log, n_rows=n_rows, source=source,
                   benchmark=benchmark)

    @classmethod
    def from_wide(cls, df: pd.DataFrame, *, item: str | None = None, cluster: str | None = None,
                  on_invalid: str = "raise", source: str = "<frame>", benchmark: str | None = None) -> ItemScores:
        """Items × models matrix: one row per item, one column per model (``item``: the item-id
        column, default the first column when it is not numeric, else the row number)."""
        cols = list(df.columns)
        if item is None:
            first = cols[0]
            item = first if not pd.api.types.is_numeric_dtype(df[first]) else None
        id_cols = [c for c in (item, cluster) if c is not None]
        ids = df[item].astype(str) if item is not None else pd.Series([str(i + 1) for i in range(len(df))])
        model_cols = [c for c in cols if c not in id_cols]
        long = df.assign(_item=ids.to_numpy()).melt(id_vars=["_item"] + ([cluster] if cluster else []),
                                                     value_vars=model_cols, var_name="model", value_name="score")
        long["_line"] = np.tile(np.arange(len(df)) + 2, len(model_cols))
        return cls.from_long(long, item="_item", cluster=cluster, on_invalid=on_invalid, source=source,
                             benchmark=benchmark)


def _bool_text(v):
    """true/false/yes/no/correct/incorrect (any case) as 1/0; everything else unchanged."""
    if isinstance(v, str):
        t = v.strip().lower()
        return {"true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0, "correct": 1.0, "incorrect": 0.0}.get(t, v)
    if isinstance(v, (bool, np.bool_)):
        return float(v)
    return v
