"""Exact minimum re-grades and item drops against exhaustive search (every subset of actions on small
matrices, recomputed with plain NumPy and tested with statsmodels' exact McNemar), and the SciQ-like
one-item lead."""

import itertools

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from bayesrank.items.data import ItemScores
from bayesrank.items.perturb import apply_actions, claim_broken, lose_significance, overturn

from .conftest import long_frame, rasch_matrix


def _broken(y, keep, pairs):
    m = y[:, keep].mean(axis=1)
    return any(m[a] <= m[b] for a, b in pairs)


def _brute_regrades(y, pairs, max_k):
    """Smallest k such that re-grading some k cells overturns the claim, by enumerating every set of
    k cells: the leader's scores (first model of every contrast) set to 0, the others' set to 1 (a
    re-grade the other way only helps the claim), fractional scores included."""
    n = y.shape[1]
    lead = pairs[0][0]
    others = sorted({b for _, b in pairs})
    cells = [(lead, i, 0.0) for i in range(n) if y[lead, i] > 0] + \
        [(b, i, 1.0) for b in others for i in range(n) if y[b, i] < 1]
    for k in range(0, max_k + 1):
        for combo in itertools.combinations(cells, k):
            z = y.copy()
            for m, i, v in combo:
                z[m, i] = v
            if _broken(z, np.ones(n, bool), pairs):
                return k
    return None


def _brute_drops(y, pairs, max_k):
    n = y.shape[1]
    for k in range(0, min(max_k, n - 1) + 1):
        for combo in itertools.combinations(range(n), k):
            keep = np.ones(n, bool)
            keep[list(combo)] = False
            if _broken(y, keep, pairs):
                return k
    return None


def _pairs_top1(y):
    lead = int(np.argmax(y.mean(axis=1)))
    return [(lead, b) for b in range(y.shape[0]) if b != lead]


@pytest.mark.parametrize("seed", range(6))
def test_regrades_and_drops_equal_exhaustive_search(seed):
    rng = np.random.default_rng(seed)
    y = (rng.random((3, 9)) < np.array([[0.8], [0.55], [0.4]])).astype(float)
    y[0, :2] = 1.0
    y[1, :2] = 0.0  # model 0 leads
    d = ItemScores.from_long(long_frame(y))
    pairs = _pairs_top1(y)
    flip = overturn(d, pairs, "flip")
    drop = overturn(d, pairs, "drop")
    assert flip["budget"] == _brute_regrades(y, pairs, flip["budget"])
    assert drop["budget"] == _brute_drops(y, pairs, 9)
    for e in (flip, drop):
        z, keep = apply_actions(d, e["actions"])
        assert _broken(z, keep, pairs) and e["verified"]


def test_fractional_scores_regrades_exhaustive():
    y = np.array([[0.9, 0.8, 0.6, 0.7, 1.0], [0.5, 0.6, 0.7, 0.2, 0.9]])
    d = ItemScores.from_long(long_frame(y))
    e = overturn(d, [(0, 1)], "flip")
    # D = Σ(y0 − y1) = 1.1; capacities: y0 (0.9, 0.8, 0.6, 0.7, 1.0) and 1 − y1 (0.5, 0.4, 0.3, 0.8, 0.1)
    assert e["budget"] == 2 == _brute_regrades(y, [(0, 1)], 3)


def test_one_item_lead_is_one_regrade():
    """The SciQ case in miniature: 976 vs 975 correct of 1,000 → one re-grade overturns #1."""
    rng = np.random.default_rng(0)
    y = np.ones((3, 1000))
    y[0, rng.choice(1000, 24, replace=False)] = 0
    y[1, rng.choice(1000, 25, replace=False)] = 0
    y[2, rng.choice(1000, 60, replace=False)] = 0
    d = ItemScores.from_long(long_frame(y))
    pairs = _pairs_top1(y)
    e = overturn(d, pairs, "flip")
    assert e["budget"] == 1 and e["fraction"] == 1 / 1000 and e["binding"] == "llm0 − llm1"
    n10 = int(((y[0] == 1) & (y[1] == 0)).sum())
    n01 = int(((y[0] == 0) & (y[1] == 1)).sum())
    assert overturn(d, pairs, "drop")["budget"] == n10 - n01 == 1


def _mcnemar_p(ya, yb, sided):
    n10 = int(((ya == 1) & (yb == 0)).sum())
    n01 = int(((ya == 0) & (yb == 1)).sum())
    if sided == "two":
        return mcnemar([[0, n10], [n01, 0]], exact=True).pvalue
    from scipy.stats import binomtest

    return binomtest(n10, n10 + n01, 0.5, alternative="greater").pvalue if n10 + n01 else 1.0


@pytest.mark.parametrize("sided", ["two", "one"])
def test_loss_of_significance_equals_exhaustive_search(sided):
    y = rasch_matrix(2, 40, seed=11, spread=1.2)
    d = ItemScores.from_long(long_frame(y))
    assert _mcnemar_p(y[0], y[1], sided) < 0.05
    for action in ("flip", "drop"):
        e = lose_significance(d, [(0, 1)], action, 0.05, sided)
        k = e["budget"]
        z, keep = apply_actions(d, e["actions"])
        assert _mcnemar_p(z[0, keep], z[1, keep], sided) >= 0.05 and e["verified"]
        # no k − 1 actions of the two kinds that matter do it: enumerate every split exhaustively
        win = np.flatnonzero((y[0] == 1) & (y[1] == 0))
        conc = np.flatnonzero(y[0] == y[1])
        for j in range(0, k):
            for l_ in ([0] if action == "drop" else range(0, k - j)):
                if j > len(win) or l_ > len(conc):
                    continue
                z = y.copy()
                keep = np.ones(40, bool)
                if action == "drop":
                    keep[win[:j]] = False
                else:
                    z[0, win[:j]] = 0
                    for i in conc[:l_]:
                        z[0, i], z[1, i] = 0.0, 1.0
                assert _mcnemar_p(z[0, keep], z[1, keep], sided) < 0.05, (action, j, l_)


def test_clusters_are_the_units():
    y = rasch_matrix(2, 60, seed=3, spread=0.8)
    fam = np.repeat([f"f{g}" for g in range(12)], 5)
    d = ItemScores.from_long(long_frame(y, clusters=fam), cluster="family")
    e = overturn(d, [(0, 1)], "drop")
    sums = np.array([(y[0, 5 * g:5 * g + 5] - y[1, 5 * g:5 * g + 5]).sum() for g in range(12)])
    # brute force over sets of clusters
    best = None
    for k in range(0, 12):
        for combo in itertools.combinations(range(12), k):
            if sums.sum() - sums[list(combo)].sum() <= 0:
                best = k
                break
        if best is not None:
            break
    assert e["budget"] == best and all("cluster" in a for a in e["actions"])
    z, keep = apply_actions(d, e["actions"])
    assert claim_broken(z, keep, [(0, 1)])
