"""Player removal, ``--certify`` and the robustness scores on comparison rows (style features, a
position effect, clusters; Davidson ties), against independent exact refits: a batched logistic
Newton written here (θ_0 = 0 as reference, the intercept α for the first-listed side and β for the
features; checked against statsmodels' GLM), enumerating every action set of up to S rows (or
clusters) itself, and scipy's maximisation of the Davidson likelihood."""

from itertools import combinations

import numpy as np
import pytest
from scipy.stats import kendalltau

from bayesrank.data.comparisons import Comparisons
from bayesrank.influence import audit
from bayesrank.influence.state import BTState

from .style_reference import replay
from .test_models_audit import STYLE, _counts_of, _frame, davidson_scipy

S = 2  # certification size


def logistic_refits(i, j, X, y, w, k):
    """Batched Newton MLE of ``logit P(i beats j) = θ_i − θ_j + α + X β`` for B weight / outcome
    vectors (``y``, ``w`` (B, n): share won by i, comparisons per row). Returns (θ centred (B, K),
    Fisher covariance of the centred θ (B, K, K), converged (B,)); a set without a finite MLE does
    not converge."""
    n = len(i)
    z = np.zeros((n, k))
    z[np.arange(n), i] += 1
    z[np.arange(n), j] -= 1
    d = np.column_stack([z[:, 1:], np.ones(n), X])
    y, w = np.atleast_2d(y), np.atleast_2d(w)
    b = max(len(y), len(w))
    y, w = np.broadcast_to(y, (b, n)), np.broadcast_to(w, (b, n))
    par = np.zeros((b, d.shape[1]))
    ok = np.zeros(b, bool)
    for _ in range(100):
        p = 1 / (1 + np.exp(-(par @ d.T)))
        g = np.einsum("bn,nq->bq", w * (p - y), d)
        h = np.einsum("bn,nq,nr->bqr", w * p * (1 - p), d, d)
        step = np.linalg.solve(h + 1e-300 * np.eye(d.shape[1]), g[..., None])[..., 0]
        par = par - step
        ok = np.abs(step).max(axis=1) < 1e-11
        if ok.all():
            break
    ok &= np.abs(par).max(axis=1) < 15  # separation: the estimate runs off
    a = np.eye(k) - 1.0 / k
    theta = np.einsum("kl,bl->bk", a, np.column_stack([np.zeros(b), par[:, : k - 1]]))
    cov = np.zeros((b, k, k))
    with np.errstate(all="ignore"):
        cov[:, 1:, 1:] = np.linalg.pinv(h)[:, : k - 1, : k - 1]
    return theta, a @ cov @ a, ok


@pytest.fixture(scope="module")
def board():
    """80 simulated comparisons of 4 players with two style features and a ``prompt`` column of
    12 string labels; the model with features, a position effect and the prompts as clusters."""
    f = _frame(tie_rate=0.0, seed=0, n=80, k=4)
    f["prompt"] = [f"q{n:02d}" for n in np.random.default_rng(0).integers(0, 12, len(f))]
    comps = Comparisons.from_frame(f)
    rep = audit(comps, "top1", ["drop", "flip", "drop-cluster", "remove-player"], style=STYLE, position_effect=True,
                cluster="prompt", certify=S, robustness=True, budget=10)
    return f, rep


def _broken(score, theta, cov, ref):
    theta0, cov0 = ref
    if score == "R_top1":
        return np.argmax(theta) != np.argmax(theta0)
    if score == "R_tau":
        return kendalltau(np.round(theta, 9), np.round(theta0, 9)).statistic <= 0.9
    return np.trace(cov) >= 1.5 * np.trace(cov0)


def test_the_reference_refit_is_statsmodels_glm(board):
    import statsmodels.api as sm

    _, rep = board
    d = rep.state.counts
    theta, _, ok = logistic_refits(d.i, d.j, d.X, d.share, d.total, d.n_players)
    z = np.zeros((d.n_rows, d.n_players))
    z[np.arange(d.n_rows), d.i] += 1
    z[np.arange(d.n_rows), d.j] -= 1
    res = sm.GLM(d.share, np.column_stack([z[:, 1:], np.ones(d.n_rows), d.X]), family=sm.families.Binomial()).fit(
        tol=1e-13)
    th = np.concatenate([[0.0], res.params[: d.n_players - 1]])
    assert ok[0]
    np.testing.assert_allclose(theta[0], th - th.mean(), atol=1e-8)
    np.testing.assert_allclose(rep.state.theta, theta[0], atol=1e-8)


def test_player_removal_on_rows_equals_independent_refits(board):
    """remove-player on the feature + position + cluster model: for every player, the refit of the
    rows without that player (the reference Newton here) gives the table's displacement, top-10
    changes and largest score change (1e-6)."""
    _, rep = board
    d = rep.state.counts
    k = d.n_players
    theta0 = logistic_refits(d.i, d.j, d.X, d.share, d.total, k)[0][0]
    table = rep.player_removal
    assert len(table) == k and table["finite_mle"].all()
    for p in range(k):
        keep = (d.i != p) & (d.j != p)
        others = np.delete(np.arange(k), p)
        new = np.full(k, -1)
        new[others] = np.arange(k - 1)
        th, _, ok = logistic_refits(new[d.i[keep]], new[d.j[keep]], d.X[keep], d.share[keep], d.total[keep], k - 1)
        assert ok[0]
        ref = theta0[others] - theta0[others].mean()
        r0, r1 = np.argsort(np.argsort(-ref)), np.argsort(np.argsort(-th[0]))
        row = table.iloc[p]
        assert row["player"] == str(d.players[p])
        assert row["displaced"] == int((r0 != r1).sum())
        assert row["top10_changes"] == 0  # 3 others: all in the top 10
        assert row["max_abs_change"] == pytest.approx(np.abs(th[0] - ref).max(), abs=1e-6)


def _smallest_breaking(score, d, ref, unit_sets):
    """Smallest size ≤ S of a set of units (rows or clusters) whose action breaks the score's
    property by the reference refit; None when no set of ≤ S units does. ``unit_sets(size)`` yields
    (y, w) per set."""
    for size in range(1, S + 1):
        ys, ws = zip(*unit_sets(size))
        theta, cov, ok = logistic_refits(d.i, d.j, d.X, np.array(ys), np.array(ws), d.n_players)
        if any(_broken(score, theta[q], cov[q], ref) for q in np.flatnonzero(ok)):
            return size
    return None


def _sets(d, kind):
    """(y, w) of every set of rows dropped / flipped, or of clusters dropped, of one size."""
    def gen(size):
        units = range(d.n_clusters) if kind == "drop-cluster" else range(d.n_rows)
        for s in combinations(units, size):
            y, w = d.share.copy(), d.total.copy()
            if kind == "drop-cluster":
                w[np.isin(d.cluster, s)] = 0.0
            elif kind == "drop":
                w[list(s)] = 0.0
            else:
                y[list(s)] = 1 - y[list(s)]
            yield y, w
    return gen


def test_certify_and_robustness_on_rows_against_exhaustive_reference(board):
    """--certify S and --robustness on the feature + position + cluster model. For every audit with
    a certificate (the top-1 audits of drop, flip and drop-cluster — whole prompts —, and R_top1,
    R_tau, R_CI of drops and flips): the reference enumerates every set of up to S rows (clusters)
    here and refits it: the certified lower bound is the smallest breaking size it finds (or S + 1
    when none breaks), a certified minimum is that size, and the verified greedy budget is never
    below it; every verified greedy break, replayed on the rows and refitted, breaks the property."""
    _, rep = board
    d = rep.state.counts
    theta0, cov0, _ = logistic_refits(d.i, d.j, d.X, d.share, d.total, d.n_players)
    ref = (theta0[0], cov0[0])
    checked = [("R_top1", r) for r in rep.audits.values()] + list(rep.robustness_audits)
    assert {(s, r.action) for s, r in rep.robustness_audits} == {(s, a) for s in ("R_top1", "R_tau", "R_CI")
                                                                 for a in ("drop", "flip")}
    seen = set()
    for score, res in checked:
        if (score, res.action) in seen:
            continue
        seen.add((score, res.action))
        cert = res.certified
        smallest = _smallest_breaking(score, d, ref, _sets(d, res.action))
        assert cert["lower_bound"] == (smallest if smallest is not None else S + 1), (score, res.action)
        if cert["minimum"] is not None:
            assert cert["minimum"] == cert["lower_bound"]
        if res.broken and res.verified:
            assert res.budget >= cert["lower_bound"]
            if res.action == "drop-cluster":
                gone = res.actions["cluster"].tolist()
                w = np.where(np.isin(d.cluster_labels[d.cluster], gone), 0.0, d.total)
                theta, cov, ok = logistic_refits(d.i, d.j, d.X, d.share, w, d.n_players)
            else:
                b = replay(d, res.actions)
                theta, cov, ok = logistic_refits(b.i, b.j, b.X, b.share, b.total, d.n_players)
            assert ok[0] and _broken(score, theta[0], cov[0], ref), (score, res.action)
    table = rep.robustness
    for _, row in table.iterrows():
        assert row["fraction"] is None or row["fraction"] == pytest.approx(row["budget"] / d.n_comparisons)


def test_davidson_rows_removal_and_certificate_against_scipy():
    """Davidson ties: remove-player on comparison rows with features equals scipy's maximisation of
    the Davidson likelihood without the player's rows (largest score change, displacement), and the
    certificate of a top-1 drop audit on pair counts (S = 1) is what scipy finds over every single
    dropped comparison."""
    frame = _frame(tie_rate=0.25, seed=3, n=300, k=4)
    comps = Comparisons.from_frame(frame)
    rep = audit(comps, "top1", ["remove-player"], style=STYLE, ties="davidson")
    d = rep.state.counts
    k = d.n_players
    counts = _counts_of(None, d)
    theta0 = davidson_scipy(d.i, d.j, counts, k, d.X)[0]
    for p in range(k):
        keep = (d.i != p) & (d.j != p)
        others = np.delete(np.arange(k), p)
        new = np.full(k, -1)
        new[others] = np.arange(k - 1)
        th = davidson_scipy(new[d.i[keep]], new[d.j[keep]], counts[keep], k - 1, d.X[keep])[0]
        ref = theta0[others] - theta0[others].mean()
        row = rep.player_removal.iloc[p]
        assert row["max_abs_change"] == pytest.approx(np.abs(th - ref).max(), abs=1e-6)
        assert row["displaced"] == int((np.argsort(np.argsort(-ref)) != np.argsort(np.argsort(-th))).sum())
    cells = BTState.fit(comps.aggregate(), ties="davidson")
    res = audit(cells, "top1", ["drop"], certify=1, budget=40)["drop"]
    c = cells.counts
    lead = int(np.argmax(davidson_scipy(c.i, c.j, c.counts, k)[0]))
    breaks = False
    for r, o in zip(*np.nonzero(c.counts)):
        table = c.counts.copy()
        table[r, o] -= 1
        if (table[:, 2].sum() > 0) and int(np.argmax(davidson_scipy(c.i, c.j, table, k)[0])) != lead:
            breaks = True
    assert res.certified["lower_bound"] == (1 if breaks else 2)
    assert res.certified["minimum"] == (1 if breaks else (res.budget if res.budget == 2 else None))
