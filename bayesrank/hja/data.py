"""Sufficient statistics for judge-aware ranking: counts per (judge, unordered pair).

Row ``r`` holds judge ``k[r]``, items ``i[r] < j[r]`` and, under the half-tie convention
(a tie is half a win for each side, as in :mod:`bayesrank.bt.likelihood`), the effective number
of wins of ``i``, ``y[r] = wins_i + ties/2``, out of ``n[r] = wins_i + wins_j + ties``. Every
HJA likelihood (NumPy and PyMC) is the binomial ``Σ_r y log σ(η_r) + (n − y) log σ(−η_r)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from bayesrank.errors import ExclusionLog, InputError


@dataclass
class JudgePairCounts:
    """Aggregated multi-judge comparisons (see module docstring)."""

    judges: np.ndarray
    items: np.ndarray
    k: np.ndarray
    i: np.ndarray
    j: np.ndarray
    y: np.ndarray
    n: np.ndarray
    excluded: ExclusionLog = field(default_factory=ExclusionLog)

    @property
    def n_judges(self) -> int:
        return len(self.judges)

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_rows(self) -> int:
        return len(self.k)

    @property
    def total(self) -> float:
        return float(self.n.sum())

    def per_judge(self) -> pd.Series:
        return pd.Series(np.bincount(self.k, self.n, self.n_judges), index=self.judges, name="n_comparisons")

    def with_counts(self, y: np.ndarray, n: np.ndarray) -> JudgePairCounts:
        """Same rows, new counts (rows with n = 0 are kept; they carry no likelihood)."""
        return JudgePairCounts(self.judges, self.items, self.k, self.i, self.j, np.asarray(y, float),
                               np.asarray(n, float), self.excluded)

    def pooled(self):
        """Pool all judges: :class:`bayesrank.data.PairCounts` (for pooled Bradley-Terry)."""
        from bayesrank.data.aggregate import PairCounts

        m = self.n_items
        code = self.i * m + self.j
        uniq, inv = np.unique(code, return_inverse=True)
        y = np.bincount(inv, self.y, len(uniq))
        n = np.bincount(inv, self.n, len(uniq))
        # half-tie counts: y = wins_i + t/2 is all the binary likelihood needs; store as wins
        return PairCounts(self.items, (uniq // m).astype(np.int64), (uniq % m).astype(np.int64), y, n - y,
                          np.zeros(len(uniq)))

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"judge": self.judges[self.k], "item_i": self.items[self.i],
                             "item_j": self.items[self.j], "y": self.y, "n": self.n})


def from_comparisons(comparisons, judges=None, items=None) -> JudgePairCounts:
    """Aggregate :class:`bayesrank.data.Comparisons` with a ``judge`` column to :class:`JudgePairCounts`."""
    f = comparisons.frame
    if "judge" not in f:
        raise InputError("HJA needs a judge column: read the data with judge=<column> (CLI: --judge-col COL)")
    judges = np.asarray(judges if judges is not None else comparisons.judges, dtype=object)
    items = np.asarray(items if items is not None else comparisons.players, dtype=object)
    jk = pd.Index(judges).get_indexer(f["judge"].astype(object))
    ia = pd.Index(items).get_indexer(f["model_a"].astype(object))
    ib = pd.Index(items).get_indexer(f["model_b"].astype(object))
    if (jk < 0).any() or (ia < 0).any() or (ib < 0).any():
        raise InputError("judges=/items= do not contain every judge/item in the comparisons")
    lo, hi = np.minimum(ia, ib), np.maximum(ia, ib)
    swapped = ia > ib
    out = f["outcome"].to_numpy(dtype=object)
    w = f["weight"].to_numpy(dtype=float)
    win_lo = ((out == "a") & ~swapped) | ((out == "b") & swapped)
    tie = out == "tie"
    m = len(items)
    code = (jk.astype(np.int64) * m + lo) * m + hi
    uniq, inv = np.unique(code, return_inverse=True)
    y = np.bincount(inv, w * (win_lo + 0.5 * tie), len(uniq))
    n = np.bincount(inv, w, len(uniq))
    counts = JudgePairCounts(
        judges=judges, items=items, k=(uniq // (m * m)).astype(np.int64), i=((uniq // m) % m).astype(np.int64),
        j=(uniq % m).astype(np.int64), y=y, n=n,
        excluded=ExclusionLog(dict(comparisons.excluded.counts), dict(comparisons.excluded.examples)),
    )
    return counts


def validate(counts: JudgePairCounts, rank: int, min_per_judge: float = 20.0) -> None:
    """Raise :class:`InputError` for data on which HJA of rank ``rank`` is not identified.

    Checks: at least 2 judges and 3 items; every judge has at least ``min_per_judge`` comparisons;
    every judge's comparison graph connects all items it rates and the pooled graph is connected;
    the number of free parameters ``(N+K−2) + r(N+K−3−r)`` does not exceed the number of distinct
    (judge, pair) cells; ``r ≤ min(K−1, N−2)``.
    """
    K, N = counts.n_judges, counts.n_items
    if K < 2:
        raise InputError(f"HJA needs at least 2 judges; the data have {K} ({list(counts.judges)})")
    if N < 3:
        raise InputError(f"HJA needs at least 3 items; the data have {N}")
    if rank < 0:
        raise InputError(f"rank must be >= 0, got {rank}")
    max_rank = min(K - 1, N - 2)
    if rank > max_rank:
        raise InputError(
            f"rank {rank} is too large for {K} judges and {N} items: the residual U Vᵀ has judge rows summing to "
            f"zero and item columns orthogonal to 1 and μ, so its rank is at most min(K−1, N−2) = {max_rank}"
        )
    per = counts.per_judge()
    few = per[per < min_per_judge]
    if len(few):
        raise InputError(
            f"judge(s) with too few comparisons (< {min_per_judge:g}): "
            + ", ".join(f"{j!r} ({v:g})" for j, v in few.items())
            + "; drop them, pool them into one judge, or lower min_per_judge"
        )
    cells = int((counts.n > 0).sum())
    n_par = (N + K - 2) + rank * (N + K - 3 - rank)
    if n_par > cells:
        raise InputError(
            f"rank {rank} needs {n_par} free parameters but the data have only {cells} distinct (judge, pair) cells; "
            "use a smaller --rank"
        )
    seen = counts.n > 0
    und = coo_matrix((np.ones(int(seen.sum())), (counts.i[seen], counts.j[seen])), shape=(N, N))
    n_comp, lab = connected_components(und, directed=False)
    if n_comp > 1:
        sizes = np.bincount(lab).tolist()
        raise InputError(f"the pooled comparison graph has {n_comp} disconnected components (sizes {sizes}); "
                         "consensus scores are not comparable across components")
    for kk, name in enumerate(counts.judges):
        sel = seen & (counts.k == kk)
        rated = np.unique(np.concatenate([counts.i[sel], counts.j[sel]]))
        g = coo_matrix((np.ones(int(sel.sum())), (counts.i[sel], counts.j[sel])), shape=(N, N))
        nc, lab = connected_components(g, directed=False)
        comps = len(np.unique(lab[rated]))
        if comps > 1:
            raise InputError(
                f"judge {name!r}: its comparison graph is disconnected ({comps} components over the {len(rated)} "
                "items it rated); its scores on different components are not comparable — merge it with another "
                "judge or drop it"
            )


def items_seen_by_one_judge(counts: JudgePairCounts) -> list:
    """Players compared by exactly one judge (with HJA of rank ≥ 1 their residual is not identified)."""
    seen = counts.n > 0
    k = np.concatenate([counts.k[seen], counts.k[seen]])
    item = np.concatenate([counts.i[seen], counts.j[seen]])
    pairs = np.unique(item * counts.n_judges + k)
    n_judges = np.bincount(pairs // counts.n_judges, minlength=counts.n_items)
    return [counts.items[i] for i in np.flatnonzero(n_judges == 1)]


def thin_split(counts: JudgePairCounts, frac: float, seed: int) -> tuple[JudgePairCounts, JudgePairCounts]:
    """Random train/test split of the individual comparisons in every cell (binomial thinning).

    Integer cells are split exactly (hypergeometric on wins and losses); fractional (soft) counts are
    split proportionally in expectation. Returns (train, test) on the same rows.
    """
    rng = np.random.default_rng(seed)
    n_int = np.round(counts.n)
    integer = np.allclose(counts.n, n_int) and np.allclose(2 * counts.y, np.round(2 * counts.y))
    if integer:
        n_i = n_int.astype(np.int64)
        take = rng.binomial(n_i, frac)
        if np.allclose(counts.y, np.round(counts.y)):  # no ties: split whole comparisons exactly
            w = np.round(counts.y).astype(np.int64)
            y_test = rng.hypergeometric(w, n_i - w, take).astype(float)
        else:  # ties present: split half-wins (2 per comparison)
            wins2 = np.round(2 * counts.y).astype(np.int64)
            y_test = rng.hypergeometric(wins2, 2 * n_i - wins2, 2 * take) / 2.0
        n_test = take.astype(float)
    else:
        n_test = counts.n * frac
        y_test = counts.y * frac
    test = counts.with_counts(y_test, n_test)
    train = counts.with_counts(counts.y - y_test, counts.n - n_test)
    return train, test
