"""The MLE path's graph checks are numpy (no SciPy import at start-up); they must agree exactly with
``scipy.sparse.csgraph.connected_components`` (weak labels, strong connectivity) on many graphs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from bayesrank.data.aggregate import PairCounts, comparison_graph, win_edges


def _random_counts(rng, k: int, n_pairs: int) -> PairCounts:
    i = rng.integers(0, k, n_pairs)
    j = rng.integers(0, k, n_pairs)
    keep = i != j
    lo, hi = np.minimum(i, j)[keep], np.maximum(i, j)[keep]
    key = np.unique(lo * k + hi)
    c = rng.poisson(rng.choice([0.2, 1.0, 3.0]), size=(len(key), 3)).astype(float)
    c[rng.random(len(key)) < 0.7, 2] = 0.0  # ties on a few pairs only
    return PairCounts(np.array([f"p{n:03d}" for n in range(k)], dtype=object), key // k, key % k,
                      c[:, 0], c[:, 1], c[:, 2])


@pytest.mark.parametrize("ties", ["half", "drop"])
def test_components_and_strong_connectivity_equal_scipy(ties):
    rng = np.random.default_rng(20240814)
    n_strong_true = n_split = 0
    for _ in range(400):  # sparse to dense graphs, 2..60 players
        k = int(rng.integers(2, 60))
        counts = _random_counts(rng, k, int(rng.integers(0, 3 * k)))
        rep = comparison_graph(counts, ties)
        seen = counts.total > 0
        und = coo_matrix((np.ones(int(seen.sum())), (counts.i[seen], counts.j[seen])), shape=(k, k))
        n_ref, lab_ref = connected_components(und, directed=False)
        src, dst = win_edges(counts, ties)
        n_strong, _ = connected_components(coo_matrix((np.ones(len(src)), (src, dst)), shape=(k, k)),
                                           directed=True, connection="strong")
        assert rep.n_components == n_ref
        np.testing.assert_array_equal(rep.component_of.to_numpy(), lab_ref)
        assert rep.strongly_connected == (n_strong == 1)
        n_strong_true += n_strong == 1
        n_split += n_ref > 1
    assert n_strong_true > 40 and n_split > 40  # both outcomes were exercised
