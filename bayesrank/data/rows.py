"""The one data type of every Bradley–Terry fit: :class:`PairRows`.

Row ``r`` compares player ``i_r`` (listed first) with player ``j_r`` and holds

- ``counts[r] = [i wins, j wins, tie]`` in weighted comparison units (frequency weights summed),
- ``X[r]`` (p ≥ 0 columns) transformed feature differences (named ``features``; ``transform``
  records how each was built, see :mod:`bayesrank.data.features`),
- an importance weight ``weight[r]`` (1 unless reweighted: it multiplies the row's loss, and
  squared, its sandwich meat), and optionally a cluster code ``cluster[r]`` (a prompt, a user, an item;
  ``cluster_labels[code]`` its value in the cluster column).

Two kinds of rows:

- **cells** (``unit=False``): aggregated outcome counts, e.g. one row per unordered pair ``i < j``
  (the zero-feature case, ``PairCounts``), per ordered pair (position effects) or per
  (cluster, pair). Each comparison in a cell is an independent unit: the sandwich meat is
  ``Σ_o C_o s_o s_oᵀ`` and the bootstrap resamples comparisons (cells multinomially).
- **units** (``unit=True``): one row per comparison (or per ``f`` identical comparisons), whose
  outcome may be split in shares ``y = counts/f`` (AlpacaEval's weighted judge). The row is
  resampled as a whole and its meat is ``f (Σ_o y_o s_o)(Σ_o y_o s_o)ᵀ``; for one-hot rows both
  kinds give the same numbers.

``ordered`` says whether the orientation is data (``i`` was listed first, as a position effect
needs) or a convention (``i < j``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.errors import ExclusionLog, InputError


class PairRows:
    """Comparisons as pair rows (module docstring). ``PairRows(players, i, j, wins_i, wins_j, ties)``
    builds the zero-feature aggregated case (the ``PairCounts`` of earlier versions); ``counts=``
    (R, 3) may be passed instead of the three columns."""

    def __init__(self, players, i, j, wins_i=None, wins_j=None, ties=None, *, counts=None, X=None, features=None,
                 transform=None, weight=None, cluster=None, cluster_name=None, cluster_labels=None,
                 unit: bool = False, ordered: bool = False, excluded: ExclusionLog | None = None):
        self.players = np.asarray(players, dtype=object) if not isinstance(players, np.ndarray) else players
        self.i = np.asarray(i, dtype=np.int64)
        self.j = np.asarray(j, dtype=np.int64)
        if counts is None:
            counts = np.column_stack([np.asarray(wins_i, float), np.asarray(wins_j, float), np.asarray(ties, float)])
        self._counts = np.array(counts, dtype=float).reshape(len(self.i), 3)
        r = len(self.i)
        self.X = np.zeros((r, 0)) if X is None else np.asarray(X, dtype=float).reshape(r, -1)
        self.features = list(features) if features is not None else [f"x{q}" for q in range(self.X.shape[1])]
        if len(self.features) != self.X.shape[1]:
            raise ValueError(f"{self.X.shape[1]} feature columns but {len(self.features)} feature names")
        self.transform = dict(transform or {})
        self._weight = None if weight is None else np.asarray(weight, dtype=float)
        self.cluster = None if cluster is None else np.asarray(cluster, dtype=np.int64)
        self.cluster_name = cluster_name
        self.cluster_labels = None if cluster_labels is None else np.asarray(cluster_labels, dtype=object)
        self.unit = bool(unit)
        self.ordered = bool(ordered)
        self.excluded = excluded if excluded is not None else ExclusionLog()

    # ------------------------------------------------------------------ sizes
    @property
    def n_players(self) -> int:
        return len(self.players)

    @property
    def n_rows(self) -> int:
        return len(self.i)

    n_pairs = n_rows  # the aggregated case: one row per pair

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_clusters(self) -> int:
        return 0 if self.cluster is None else int(self.cluster.max()) + 1 if len(self.cluster) else 0

    def cluster_label(self, code: int):
        """The value in the cluster column of cluster ``code`` (as a plain str / int / float); the code
        itself where no label is known (clusters of appended rows, codes passed in by hand)."""
        code = int(code)
        if self.cluster_labels is None or not 0 <= code < len(self.cluster_labels):
            return code
        label = self.cluster_labels[code]
        return label.item() if isinstance(label, np.generic) else label

    # ------------------------------------------------------------------ outcomes
    @property
    def counts(self) -> np.ndarray:
        """(R, 3) array of [i wins, j wins, ties]."""
        return self._counts

    @property
    def wins_i(self) -> np.ndarray:
        return self._counts[:, 0]

    @property
    def wins_j(self) -> np.ndarray:
        return self._counts[:, 1]

    @property
    def ties(self) -> np.ndarray:
        return self._counts[:, 2]

    @property
    def total(self) -> np.ndarray:
        """(R,) comparisons per row."""
        return self._counts.sum(axis=1)

    @property
    def n_comparisons(self) -> float:
        return float(self._counts.sum())

    @property
    def weight(self) -> np.ndarray:
        """(R,) importance weights (ones unless reweighted)."""
        return np.ones(self.n_rows) if self._weight is None else self._weight

    @property
    def weighted(self) -> bool:
        return self._weight is not None

    def weighted_counts(self, counts: np.ndarray | None = None) -> np.ndarray:
        """``counts · v`` (the loss is linear in the counts): (…, R, 3)."""
        c = self._counts if counts is None else counts
        return c if self._weight is None else c * self._weight[:, None]

    @property
    def share(self) -> np.ndarray:
        """(R,) share of the row won by player i, a tie counting half: (i wins + ties/2) / total."""
        tot = self.total
        return np.divide(self._counts[:, 0] + 0.5 * self._counts[:, 2], tot, out=np.full(len(tot), 0.5), where=tot > 0)

    @property
    def has_ties(self) -> bool:
        return bool(self._counts[:, 2].sum() > 0)

    @property
    def fractional(self) -> bool:
        """Some comparison's outcome is split in shares (a unit row with more than one outcome)."""
        return self.unit and bool(((self._counts > 0).sum(axis=1) > 1).any())

    # ------------------------------------------------------------------ design
    def covariates(self, position: bool = False) -> np.ndarray:
        """``Z`` (R, q): a column of ones for the position effect (player i listed first), then ``X``."""
        if not position:
            return self.X
        return np.column_stack([np.ones(self.n_rows), self.X]) if self.n_features else np.ones((self.n_rows, 1))

    # ------------------------------------------------------------------ derived data
    def replace(self, **changes) -> PairRows:
        """A copy with some fields replaced (``counts=``, ``X=``, ``weight=``, ``cluster=``, ``i=``, ``j=``, …)."""
        kw = dict(players=self.players, i=self.i, j=self.j, counts=self._counts, X=self.X, features=self.features,
                  transform=self.transform, weight=self._weight, cluster=self.cluster, cluster_name=self.cluster_name,
                  cluster_labels=self.cluster_labels, unit=self.unit, ordered=self.ordered, excluded=self.excluded)
        kw.update(changes)
        return PairRows(**kw)

    def with_counts(self, counts: np.ndarray) -> PairRows:
        """Same rows, new (R, 3) counts."""
        return self.replace(counts=counts)

    def append(self, i, j, counts, X=None, weight=None) -> PairRows:
        """Rows added at the end (e.g. an audit's added comparisons); each gets a cluster of its own."""
        i, j = np.atleast_1d(i).astype(np.int64), np.atleast_1d(j).astype(np.int64)
        n = len(i)
        X = np.zeros((n, self.n_features)) if X is None else np.asarray(X, dtype=float).reshape(n, self.n_features)
        w = None
        if self._weight is not None or weight is not None:
            w = np.concatenate([self.weight, np.ones(n) if weight is None else np.broadcast_to(weight, (n,))])
        cl = None if self.cluster is None else np.concatenate([self.cluster, self.n_clusters + np.arange(n)])
        return self.replace(i=np.concatenate([self.i, i]), j=np.concatenate([self.j, j]),
                            counts=np.vstack([self._counts, np.asarray(counts, dtype=float).reshape(n, 3)]),
                            X=np.vstack([self.X, X]), weight=w, cluster=cl)

    @classmethod
    def from_shares(cls, players, i, j, share, total=None, *, X=None, features=None, weight=None, cluster=None,
                    cluster_name=None, transform=None) -> PairRows:
        """Comparison rows (``unit=True``, ordered) from the share of each row won by player ``i``
        (``share`` ∈ [0, 1]) and its number of comparisons ``total`` (default 1): counts
        ``[y·f, (1 − y)·f, 0]`` (a share of ½ is a tie under half-wins)."""
        y = np.asarray(share, dtype=float)
        f = np.ones(len(y)) if total is None else np.asarray(total, dtype=float)
        return cls(players, i, j, counts=np.column_stack([y * f, (1 - y) * f, np.zeros(len(y))]), X=X,
                   features=features, weight=weight, cluster=cluster, cluster_name=cluster_name, transform=transform,
                   unit=True, ordered=True)

    def with_totals(self, total) -> PairRows:
        """The same rows with ``total[r]`` comparisons each (outcome shares kept)."""
        f = np.asarray(total, dtype=float)
        old = self.total
        if ((old == 0) & (f > 0)).any():
            raise ValueError("a row without comparisons has no outcome shares to scale up")
        return self.with_counts(self._counts * np.divide(f, old, out=np.zeros_like(f), where=old > 0)[:, None])

    def with_shares(self, share) -> PairRows:
        """The same rows with outcome shares ``share`` won by player i (counts ``[y·f, (1 − y)·f, 0]``)."""
        y, f = np.asarray(share, dtype=float), self.total
        return self.with_counts(np.column_stack([y * f, (1 - y) * f, np.zeros(len(y))]))

    def without_features(self) -> PairRows:
        """The same rows without feature columns (the plain model on the same comparisons)."""
        return self.replace(X=np.zeros((self.n_rows, 0)), features=[], transform={})

    def subset(self, mask) -> PairRows:
        """The rows where ``mask`` is true (cluster codes and players kept)."""
        m = np.asarray(mask)
        return self.replace(i=self.i[m], j=self.j[m], counts=self._counts[m], X=self.X[m],
                            weight=None if self._weight is None else self._weight[m],
                            cluster=None if self.cluster is None else self.cluster[m])

    def without_ties(self) -> PairRows:
        """Tie counts removed (comparison rows that held only ties are dropped), counted in
        ``excluded`` as ``tie (ties='drop')``."""
        log = ExclusionLog(dict(self.excluded.counts), {k: list(v) for k, v in self.excluded.examples.items()})
        tie = self._counts[:, 2] > 0
        log.add("tie (ties='drop')", int(round(float(self._counts[:, 2].sum()))),
                [int(r) for r in np.flatnonzero(tie)[:5]])
        counts = self._counts.copy()
        counts[:, 2] = 0.0
        out = self.replace(counts=counts, excluded=log)
        return out.subset(counts.sum(axis=1) > 0) if self.unit else out

    def pairs(self, weighted: bool = False) -> PairRows:
        """The zero-feature aggregate: one row per unordered pair ``i < j`` with the summed counts
        (importance weights multiplied in when ``weighted``): the plain Bradley–Terry data (cached)."""
        cache = self.__dict__.setdefault("_pairs_cache", {})
        key = bool(weighted and self._weight is not None)
        if key not in cache:
            cache[key] = self._aggregate_pairs(key)
        return cache[key]

    def _aggregate_pairs(self, weighted: bool) -> PairRows:
        k = self.n_players
        swap = self.i > self.j
        c = self.weighted_counts() if weighted else self._counts
        c = np.where(swap[:, None], c[:, [1, 0, 2]], c)
        code = np.minimum(self.i, self.j) * k + np.maximum(self.i, self.j)
        if k * k <= 50_000_000:
            seen = np.bincount(code, minlength=k * k) > 0
            tab = np.column_stack([np.bincount(code, c[:, o], k * k) for o in range(3)])[seen]
            uniq = np.flatnonzero(seen)
        else:
            uniq, inv = np.unique(code, return_inverse=True)
            tab = np.zeros((len(uniq), 3))
            np.add.at(tab, inv, c)
        return PairRows(self.players, uniq // k, uniq % k, counts=tab, excluded=self.excluded)

    def matches_per_player(self) -> np.ndarray:
        """Weighted number of comparisons each player took part in."""
        k = self.n_players
        tot = self.total
        return np.bincount(self.i, tot, k) + np.bincount(self.j, tot, k)

    def frame(self) -> pd.DataFrame:
        """One row per row: player_a, player_b (the glossary's names), wins_a, wins_b, ties (+ features, cluster)."""
        df = pd.DataFrame({"player_a": self.players[self.i], "player_b": self.players[self.j],
                           "wins_a": self.wins_i, "wins_b": self.wins_j, "ties": self.ties})
        for q, name in enumerate(self.features):
            df[name] = self.X[:, q]
        if self._weight is not None:
            df["weight"] = self._weight
        if self.cluster is not None:
            df[self.cluster_name or "cluster"] = self.cluster
        return df

    def index_of(self, name: str) -> int:
        hit = np.flatnonzero(self.players == name)
        if len(hit) == 0:
            close = [p for p in self.players if str(name).lower() in str(p).lower()][:5]
            raise InputError(f"unknown player {name!r}" + (f"; did you mean one of {close}?" if close else ""))
        return int(hit[0])

    def __repr__(self) -> str:
        kind = "comparison rows" if self.unit else "count rows"
        extra = [f"{self.n_features} features"] if self.n_features else []
        if self.cluster is not None:
            extra.append(f"{self.n_clusters} clusters of {self.cluster_name}")
        return (f"PairRows({self.n_rows} {kind}, {self.n_comparisons:g} comparisons, {self.n_players} players"
                + "".join(f", {e}" for e in extra) + ")")


#: The zero-feature, one-row-per-unordered-pair case keeps its earlier name.
PairCounts = PairRows


def share_rows(frame: pd.DataFrame, model_a: str, model_b: str, share_a: str, style=(), cluster: str | None = None,
               transform: str = "normalized_diff", standardize: str = "center_scale") -> PairRows:
    """Unit :class:`PairRows` with *fractional* outcomes: ``share_a`` ∈ [0, 1] is the share of the
    comparison won by ``model_a`` (e.g. AlpacaEval's weighted judge: ``2 − preference``); counts are
    ``[y, 1 − y, 0]``. One row per comparison (frequency 1), so drops/flips, the bootstrap and the
    sandwich act on whole comparisons. Rows with a missing share are excluded and counted;
    self-comparisons and shares outside [0, 1] raise. ``style``/``cluster`` as
    :func:`bayesrank.data.aggregate.pair_rows`."""
    from bayesrank.data import features as feat

    feat.check_options(transform, standardize)
    for col in (model_a, model_b, share_a):
        if col not in frame.columns:
            raise InputError(f"no column {col!r}; the data have columns {list(frame.columns)}")
    log = ExclusionLog()
    y = pd.to_numeric(frame[share_a], errors="coerce").to_numpy(dtype=float)
    missing = ~np.isfinite(y)
    log.add(f"missing {share_a}", int(missing.sum()), [int(r) for r in np.flatnonzero(missing)[:5]])
    out = (~missing) & ((y < 0) | (y > 1))
    if out.any():
        raise InputError(f"column {share_a!r}: rows {[int(r) for r in np.flatnonzero(out)[:5]]} outside [0, 1]")
    same = (frame[model_a].astype(str) == frame[model_b].astype(str)).to_numpy() & ~missing
    if same.any():
        raise InputError(f"rows {[int(r) for r in np.flatnonzero(same)[:5]]} (DataFrame positions): columns "
                         f"{model_a!r}/{model_b!r} name the same player twice ({int(same.sum())} self-comparisons)")
    f = frame[~missing].reset_index(drop=True)
    codes, players = pd.factorize(pd.concat([f[model_a].astype(str), f[model_b].astype(str)]), sort=True)
    n = len(f)
    y = y[~missing]
    X, names, info = feat.feature_matrix(f, style, np.ones(n), transform, standardize)
    groups, labels = feat.cluster_codes(f, cluster)
    rows = PairRows(np.asarray(players, dtype=object), codes[:n], codes[n:], counts=np.column_stack([y, 1 - y, np.zeros(n)]),
                    X=X, features=names, transform=info, cluster=groups, cluster_name=cluster,
                    cluster_labels=labels, unit=True, ordered=True, excluded=log)
    feat.warn_if_centred_reference(rows, standardize)
    return rows
