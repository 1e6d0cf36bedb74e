"""Comparisons → pair rows (sufficient statistics), and the comparison-graph checks.

Without features, Bradley-Terry (and Davidson) likelihoods depend on the data only through, for
each unordered pair ``{i, j}`` (stored with ``i < j``), the weighted counts ``wins_i``, ``wins_j``
and ``ties`` (:func:`aggregate`): a million comparisons among 200 players collapse to at most ~20k
rows. :func:`pair_rows` keeps what a model needs beyond that: the orientation (one row per
*ordered* pair, for a position effect), clusters (one row per cluster and pair) and features (one
row per comparison).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesrank.data.comparisons import OUTCOMES, column_codes
from bayesrank.data.rows import PairCounts, PairRows
from bayesrank.errors import ExclusionLog, InputError

__all__ = ["PairCounts", "PairRows", "aggregate", "pair_rows", "comparison_graph", "GraphReport", "win_edges",
           "win_graph", "split_components", "finite_core"]


def _outcome_codes(col: pd.Series) -> np.ndarray:
    if isinstance(col.dtype, pd.CategoricalDtype) and list(col.cat.categories) == list(OUTCOMES):
        return np.asarray(col.cat.codes)
    return np.asarray(pd.Categorical(col, categories=list(OUTCOMES)).codes)


def aggregate(comparisons, players=None) -> PairCounts:
    """Aggregate :class:`Comparisons` to :class:`PairCounts`.

    One ``np.bincount`` over ordered (a, b, outcome) cells, then the small K × K × 3 table is
    folded to unordered pairs ``i < j``: ``wins_i = T[i,j,a] + T[j,i,b]``, ``wins_j = T[i,j,b] +
    T[j,i,a]``, ``ties = T[i,j,tie] + T[j,i,tie]``.
    """
    f = comparisons.frame
    (ca, ua), (cb, ub) = column_codes(f["model_a"]), column_codes(f["model_b"])
    names = np.asarray(players, dtype=object) if players is not None else comparisons.players
    k = len(names)
    lookup = pd.Index(names)
    ia, ib = lookup.get_indexer(ua)[ca], lookup.get_indexer(ub)[cb]
    if (ia < 0).any() or (ib < 0).any():
        raise InputError("players= does not contain every player in the comparisons")
    w = f["weight"].to_numpy(dtype=float)
    oc = _outcome_codes(f["outcome"])  # 0 a wins, 1 b wins, 2 tie
    if k * k * 3 <= 30_000_000:
        key = ia.astype(np.int64) * (3 * k) + ib * 3 + oc
        t = np.bincount(key, weights=w, minlength=k * k * 3).reshape(k, k, 3)
        n = np.bincount(ia.astype(np.int64) * k + ib, minlength=k * k).reshape(k, k)  # rows per ordered pair
        i, j = np.triu_indices(k, 1)
        seen = (n[i, j] + n[j, i]) > 0
        i, j = i[seen], j[seen]
        c = np.column_stack([t[i, j, 0] + t[j, i, 1], t[i, j, 1] + t[j, i, 0], t[i, j, 2] + t[j, i, 2]])
    else:
        lo, hi = np.minimum(ia, ib), np.maximum(ia, ib)
        cell = np.where(oc == 2, 2, np.where((oc == 0) ^ (ia > ib), 0, 1))  # 0: lower index wins
        uniq, inv = np.unique(lo.astype(np.int64) * k + hi, return_inverse=True)
        c = np.zeros((len(uniq), 3))
        np.add.at(c, (inv, cell), w)
        i, j = uniq // k, uniq % k
    return PairRows(names, i, j, counts=c)


def _codes(comparisons, players=None):
    """(player names, a codes, b codes, weights, outcome codes) of the comparisons' rows."""
    f = comparisons.frame
    (ca, ua), (cb, ub) = column_codes(f["model_a"]), column_codes(f["model_b"])
    names = np.asarray(players, dtype=object) if players is not None else comparisons.players
    lookup = pd.Index(names)
    ia, ib = lookup.get_indexer(ua)[ca], lookup.get_indexer(ub)[cb]
    if (ia < 0).any() or (ib < 0).any():
        raise InputError("players= does not contain every player in the comparisons")
    return names, ia.astype(np.int64), ib.astype(np.int64), f["weight"].to_numpy(dtype=float), _outcome_codes(f["outcome"])


def pair_rows(comparisons, style=(), transform: str = "normalized_diff", standardize: str = "center_scale",
              cluster: str | None = None, ordered: bool = False, per_comparison: bool = False) -> PairRows:
    """:class:`PairRows` of :class:`~bayesrank.data.comparisons.Comparisons` for a model:

    - no features, no ``cluster``, unordered: :func:`aggregate` (one row per unordered pair);
    - ``ordered`` (a position effect): one row per *ordered* pair (player ``i`` listed first);
    - ``cluster`` (a column, e.g. the prompt): one row per cluster and pair, with the cluster codes;
    - ``style`` (feature column pairs ``"A_COL:B_COL,..."``, :mod:`bayesrank.data.features`): one row
      per comparison (``unit=True``) with the feature differences; rows of zero weight are excluded
      and counted. ``per_comparison=True`` gives one row per comparison also without features (the
      row-level audits act on comparisons).
    """
    from bayesrank.data import features as feat

    pairs = feat.parse_style(style)
    log = ExclusionLog(dict(comparisons.excluded.counts), {k: list(v) for k, v in comparisons.excluded.examples.items()})
    if not pairs and cluster is None and not ordered and not per_comparison:
        rows = aggregate(comparisons)
        rows.excluded = log
        return rows
    frame = comparisons.frame
    names, ia, ib, w, oc = _codes(comparisons)
    if pairs or per_comparison:
        feat.check_options(transform, standardize)
        keep = w > 0
        log.add("zero weight", int((~keep).sum()), [int(r) for r in np.flatnonzero(~keep)[:5]])
        if not keep.all():
            from bayesrank.data.comparisons import carry_places

            kept = frame[keep].reset_index(drop=True)
            frame, ia, ib, w, oc = carry_places(frame, kept, np.flatnonzero(keep)), ia[keep], ib[keep], w[keep], oc[keep]
        if len(frame) == 0:
            raise InputError("no battles left after exclusions: " + log.report())
        used = np.unique(np.concatenate([ia, ib]))
        remap = np.full(len(names), -1)
        remap[used] = np.arange(len(used))
        counts = np.zeros((len(frame), 3))
        counts[np.arange(len(frame)), oc] = w
        X, fnames, info = feat.feature_matrix(frame, pairs, w, transform, standardize)
        codes, labels = feat.cluster_codes(frame, cluster)
        rows = PairRows(names[used], remap[ia], remap[ib], counts=counts, X=X, features=fnames, transform=info,
                        cluster=codes, cluster_name=cluster, cluster_labels=labels, unit=True, ordered=True,
                        excluded=log)
        feat.warn_if_centred_reference(rows, standardize)
        return rows
    k = len(names)
    if ordered:
        lo, hi, cell = ia, ib, oc
    else:
        lo, hi = np.minimum(ia, ib), np.maximum(ia, ib)
        cell = np.where(oc == 2, 2, np.where((oc == 0) ^ (ia > ib), 0, 1))  # 0: the lower index wins
    key = lo * k + hi
    codes, labels = feat.cluster_codes(frame, cluster)
    if cluster is not None:
        key = codes * (k * k) + key
    uniq, inv = np.unique(key, return_inverse=True)
    c = np.zeros((len(uniq), 3))
    np.add.at(c, (inv, cell), w)
    pair = uniq % (k * k)
    return PairRows(names, pair // k, pair % k, counts=c, cluster=None if codes is None else uniq // (k * k),
                    cluster_name=cluster, cluster_labels=labels, ordered=ordered, excluded=log)


@dataclass
class GraphReport:
    """Comparison-graph checks: components, degrees, and whether a finite MLE exists."""

    n_components: int
    component_of: pd.Series
    degree: pd.Series
    never_lost: list
    never_won: list
    strongly_connected: bool

    @property
    def finite_mle(self) -> bool:
        return self.n_components == 1 and self.strongly_connected

    def advice(self) -> str:
        msgs = []
        if self.n_components > 1:
            sizes = self.component_of.value_counts().tolist()
            msgs.append(
                f"the comparison graph has {self.n_components} disconnected components (sizes {sizes}); "
                "scores are not comparable across components: fit each component separately "
                "(bayesrank.data.split_components) or add a prior/ridge"
            )
        if self.never_lost:
            msgs.append(f"players who never lost (MLE is +infinity): {self.never_lost[:10]}")
        if self.never_won:
            msgs.append(f"players who never won (MLE is -infinity): {self.never_won[:10]}")
        if self.n_components == 1 and not self.strongly_connected and not (self.never_lost or self.never_won):
            msgs.append("the win graph is not strongly connected (a group of players beat every outsider)")
        if msgs and (self.never_lost or self.never_won or not self.strongly_connected):
            msgs.append("use ridge>0 (or a prior: method='map'/'nuts') for finite scores")
        return "; ".join(msgs) if msgs else "connected; finite MLE exists"


def win_edges(counts: PairCounts, ties: str = "half"):
    """Edges (sources, targets) of the directed win graph: i → j when i beat j at least once (a
    tie, under ``half`` or ``davidson``, is an edge both ways)."""
    tie_edge = counts.ties > 0 if ties in ("half", "davidson") else np.zeros(counts.n_pairs, bool)
    fwd = (counts.wins_i > 0) | tie_edge  # i beat j
    bwd = (counts.wins_j > 0) | tie_edge
    src = np.concatenate([counts.i[fwd], counts.j[bwd]])
    dst = np.concatenate([counts.j[fwd], counts.i[bwd]])
    return src, dst


def win_graph(counts: PairCounts, ties: str = "half"):
    """The win graph (see :func:`win_edges`) as (sparse K × K matrix, sources, targets)."""
    from scipy.sparse import coo_matrix

    k = counts.n_players
    src, dst = win_edges(counts, ties)
    return coo_matrix((np.ones(len(src)), (src, dst)), shape=(k, k)), src, dst


def _components(k: int, a: np.ndarray, b: np.ndarray):
    """Connected components of the undirected graph with edges a–b: (count, labels numbered by each
    component's smallest node, as ``scipy.sparse.csgraph.connected_components`` numbers them)."""
    label = np.arange(k)
    while True:  # minimum-label propagation with pointer jumping
        m = np.minimum(label[a], label[b])
        new = label.copy()
        np.minimum.at(new, a, m)
        np.minimum.at(new, b, m)
        new = new[new]
        if np.array_equal(new, label):
            break
        label = new
    roots, labels = np.unique(label, return_inverse=True)
    return len(roots), labels


def _reaches_all(k: int, src: np.ndarray, dst: np.ndarray) -> bool:
    """Every node is reachable from node 0 along the directed edges src → dst."""
    seen = np.zeros(k, dtype=bool)
    seen[0] = True
    while True:
        new = dst[seen[src] & ~seen[dst]]
        if len(new) == 0:
            return bool(seen.all())
        seen[new] = True


def comparison_graph(counts: PairCounts, ties: str = "half") -> GraphReport:
    """Check connectivity and MLE existence (Zermelo/Ford: the directed win graph must be strongly connected).

    Under ``ties="half"`` or ``"davidson"`` a tie counts as an edge in both directions. Strongly
    connected ⟺ every player is reachable from one player in the win graph and in its reverse.
    """
    k = counts.n_players
    tot = counts.total
    seen = tot > 0
    n_comp, labels = _components(k, counts.i[seen], counts.j[seen])
    src, dst = win_edges(counts, ties)
    strongly = k > 0 and _reaches_all(k, src, dst) and _reaches_all(k, dst, src)
    out_deg = np.bincount(src, minlength=k)
    in_deg = np.bincount(dst, minlength=k)
    names = counts.players
    deg = counts.matches_per_player()
    return GraphReport(
        n_components=int(n_comp),
        component_of=pd.Series(labels, index=names, name="component"),
        degree=pd.Series(deg, index=names, name="n_matches"),
        never_lost=[str(n) for n in names[(in_deg == 0) & (deg > 0)]],
        never_won=[str(n) for n in names[(out_deg == 0) & (deg > 0)]],
        strongly_connected=bool(strongly),
    )


def split_components(comparisons) -> list:
    """One :class:`Comparisons` per connected component of the comparison graph (largest first)."""
    counts = aggregate(comparisons)
    rep = comparison_graph(counts)
    comp = rep.component_of
    f = comparisons.frame
    ca = comp.loc[f["model_a"].astype(object)].to_numpy()
    parts = [comparisons.subset(ca == c) for c in comp.value_counts().index]
    return parts


def finite_core(comparisons, min_matches: int = 1, ties: str = "half"):
    """Largest set of players with a finite MLE: iteratively drop players with fewer than
    ``min_matches`` comparisons, then keep the largest strongly connected component of the win
    graph. Every removed row is counted in the returned comparisons' ``excluded`` log."""
    current = comparisons.subset(np.ones(len(comparisons), dtype=bool))  # copy: never mutate the caller's log
    while True:
        counts = aggregate(current)
        deg = counts.matches_per_player()
        from scipy.sparse.csgraph import connected_components

        n_s, lab = connected_components(win_graph(counts, ties)[0], directed=True, connection="strong")
        biggest = np.bincount(lab).argmax()
        keep_players = set(counts.players[(lab == biggest) & (deg >= min_matches)])
        f = current.frame
        keep = f["model_a"].isin(keep_players).to_numpy() & f["model_b"].isin(keep_players).to_numpy()
        if keep.all():
            return current
        current.excluded.add(
            f"row outside the finite-MLE core (min_matches={min_matches})", int((~keep).sum()),
            [int(r) for r in np.flatnonzero(~keep)[:5]],
        )
        current = current.subset(keep)
