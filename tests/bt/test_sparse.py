"""The large-board path (bayesrank.bt.sparse) against the dense path and the anchor packages.

The sparse path is taken from SPARSE_ABOVE players on a sparse graph; here it is forced on a
simulated 300-player tournament (each player ~200 games against nearby-ranked opponents, a third of
all pairs compared) and its numbers are compared with the dense Newton, the dense bootstrap and
evalica / choix on the same data."""

import numpy as np
import pandas as pd
import pytest

from bayesrank.bt import sparse
from bayesrank.bt.mle import bootstrap_fits, constrained_covariance, fit_newton
from bayesrank.bt.simulate import simulate_tournament
from bayesrank.data import read_comparisons


@pytest.fixture(scope="module")
def board():
    frame, theta = simulate_tournament(300, games_per_player=200, spread=40, tie_rate=0.1, seed=3)
    return frame, theta, read_comparisons(frame).aggregate()


def force(monkeypatch, on: bool):
    monkeypatch.setattr(sparse, "SPARSE_ABOVE", 2 if on else 10**9)
    monkeypatch.setattr(sparse, "MAX_DENSITY", 1.0)


def test_simulated_tournament_is_sparse_and_banded_in_rank():
    frame, theta = simulate_tournament(3000, seed=1)
    assert len(frame) == 300_000
    games = pd.concat([frame["model_a"], frame["model_b"]]).value_counts()
    assert games.mean() == pytest.approx(200) and games.min() > 120
    rank = theta.rank(ascending=False)
    gap = (rank.loc[frame["model_a"]].to_numpy() - rank.loc[frame["model_b"]].to_numpy())
    assert np.quantile(np.abs(gap), 0.95) < 100  # opponents of nearby rank (spread 40)
    pairs = pd.MultiIndex.from_arrays(np.sort(frame[["model_a", "model_b"]].to_numpy(), axis=1).T).nunique()
    assert pairs < 0.05 * 3000 * 2999 / 2


@pytest.mark.parametrize("ties", ["half", "drop"])
@pytest.mark.parametrize("ridge", [0.0, 0.5])
def test_sparse_newton_equals_dense(board, monkeypatch, ties, ridge):
    _, _, counts = board
    force(monkeypatch, False)
    p_d, h_d, _, r_d = fit_newton(counts, ties, ridge=ridge)
    force(monkeypatch, True)
    p_s, h_s, _, r_s = fit_newton(counts, ties, ridge=ridge)
    assert r_d.factor is None and r_s.factor is not None
    np.testing.assert_allclose(p_s, p_d, atol=1e-11, rtol=0)
    np.testing.assert_allclose(h_s, h_d, atol=1e-10, rtol=1e-12)
    np.testing.assert_allclose(r_s.gradient, r_d.gradient, atol=1e-8)
    k = counts.n_players
    cov = constrained_covariance(h_d, k)
    np.testing.assert_allclose(r_s.factor.dense_inverse(), cov, atol=1e-12, rtol=1e-9)
    g = np.random.default_rng(0).normal(size=(k, 3))
    np.testing.assert_allclose(r_s.factor.solve(g), cov @ g, atol=1e-11, rtol=1e-9)


def test_sparse_bootstrap_equals_dense(board, monkeypatch):
    """The chord iteration's fixed points are the dense batched Newton's MLEs of the same resamples."""
    _, _, counts = board
    force(monkeypatch, False)
    start = fit_newton(counts, "half")[0]
    dense = bootstrap_fits(counts, "half", n_boot=40, seed=7, start=start)
    force(monkeypatch, True)
    fast = bootstrap_fits(counts, "half", n_boot=40, seed=7, start=start)
    assert dense.n_failed == fast.n_failed == 0
    np.testing.assert_allclose(fast.params, dense.params, atol=1e-9, rtol=0)


def test_chord_plain_and_anderson_agree_and_flag_non_convergence(board):
    _, _, counts = board
    k = counts.n_players
    fit = sparse.newton(counts.i, counts.j, k, counts.counts, "half")
    from bayesrank.bt.mle import bootstrap_counts

    tables = bootstrap_counts(counts, 6, seed=1)
    a, ok_a = sparse.chord(counts.i, counts.j, k, tables, "half", fit.factor, fit.theta)
    b, ok_b = sparse.chord(counts.i, counts.j, k, tables, "half", fit.factor, fit.theta, memory=0, max_iter=200)
    assert ok_a.all() and ok_b.all()
    np.testing.assert_allclose(a, b, atol=1e-9)
    for t, th in zip(tables, a):  # each is the table's own MLE (its gradient vanishes)
        ref = sparse.newton(counts.i, counts.j, k, t, "half", start=th)
        np.testing.assert_allclose(th, ref.theta, atol=1e-9)
    _, ok = sparse.chord(counts.i, counts.j, k, tables, "half", fit.factor, fit.theta, memory=0, max_iter=2)
    assert not ok.any()


def test_sparse_mle_matches_evalica_and_choix(board, monkeypatch):
    import choix
    import evalica

    frame, _, counts = board
    force(monkeypatch, True)
    theta = pd.Series(fit_newton(counts, "half")[0], index=counts.players)
    w = frame["outcome"].map({"a": evalica.Winner.X, "b": evalica.Winner.Y, "tie": evalica.Winner.Draw})
    ref = evalica.bradley_terry(frame["model_a"], frame["model_b"], w, tolerance=1e-13, limit=100_000)
    np.testing.assert_allclose(np.log(ref.scores.loc[theta.index].to_numpy()), theta.to_numpy(), atol=1e-7)
    dropped = pd.Series(fit_newton(counts, "drop")[0], index=counts.players)
    idx = pd.Index(counts.players)
    dec = frame[frame["outcome"] != "tie"]
    win = np.where(dec["outcome"] == "a", idx.get_indexer(dec["model_a"]), idx.get_indexer(dec["model_b"]))
    lose = np.where(dec["outcome"] == "a", idx.get_indexer(dec["model_b"]), idx.get_indexer(dec["model_a"]))
    c = choix.ilsr_pairwise(len(idx), list(zip(win.tolist(), lose.tolist())), alpha=0.0, tol=1e-13, max_iter=10_000)
    np.testing.assert_allclose(dropped.to_numpy(), c - c.mean(), atol=1e-7)


def test_applies_only_to_large_sparse_plain_boards():
    assert sparse.applies(3000, 164_000)
    assert not sparse.applies(300, 15_000)  # below SPARSE_ABOVE
    assert not sparse.applies(3000, 2_000_000)  # dense graph: the factor would fill in
    assert not sparse.applies(3000, 164_000, covariates=1)
    assert not sparse.applies(3000, 164_000, binary=False)  # Davidson ties


def test_banded_and_superlu_factors_agree(board, monkeypatch):
    """A tournament's Hessian is a narrow band in the reverse Cuthill–McKee order (banded Cholesky);
    SuperLU (forced by BAND_FILL = 0, taken by a wide-band graph) gives the same solves."""
    _, _, counts = board
    k = counts.n_players
    fit = sparse.newton(counts.i, counts.j, k, counts.counts, "half")
    h = fit.curvature
    g = np.random.default_rng(11).normal(size=(k, 4))
    for ridge in (0.0, 0.5):
        lap = sparse.laplacian(counts.i, counts.j, k, h, ridge)
        band = sparse.HessianFactor(lap, ridge)
        assert band.band is not None and band.lu is None
        rows = sparse.HessianFactor.of_rows(counts.i, counts.j, k, h, ridge)  # the band filled from the rows
        assert rows.band is not None and (rows.perm == band.perm).all()
        np.testing.assert_allclose(rows.band, band.band, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose((rows.matrix - lap).toarray(), 0, atol=1e-12)
        monkeypatch.setattr(sparse, "BAND_FILL", 0.0)
        lu = sparse.HessianFactor(lap, ridge)
        monkeypatch.undo()
        assert lu.band is None and lu.lu is not None
        np.testing.assert_allclose(band.solve(g), lu.solve(g), atol=1e-12, rtol=1e-10)
        np.testing.assert_allclose(band.dense_inverse(), lu.dense_inverse(), atol=1e-12, rtol=1e-10)
        dense = np.linalg.pinv(lap.toarray()) if ridge == 0 else np.linalg.inv(lap.toarray())
        pg = g - g.mean(axis=0)
        np.testing.assert_allclose(band.solve(g), dense @ pg - (dense @ pg).mean(axis=0), atol=1e-10)


def test_wide_band_graph_goes_to_superlu():
    """A random graph (every player against random opponents) has no narrow band: SuperLU."""
    rng = np.random.default_rng(12)
    k, r = 400, 8000
    i = rng.integers(0, k, r)
    j = (i + rng.integers(1, k, r)) % k
    lap_h = rng.random(r) + 0.1
    lap = sparse.laplacian(i, j, k, lap_h)
    g = rng.normal(size=k)
    for f in (sparse.HessianFactor(lap), sparse.HessianFactor.of_rows(i, j, k, lap_h)):
        assert f.band is None and f.lu is not None
        np.testing.assert_allclose(lap @ f.solve(g), g - g.mean(), atol=1e-9)


@pytest.mark.parametrize("ci", ["fisher", "sandwich"])
def test_large_board_covariances_equal_dense(board, monkeypatch, ci):
    """The MLE's Fisher covariance by K solves with the sparse factor and the sandwich with the meat as
    a sparse Laplacian equal the dense inverse and the dense meat (a board with ties: the sandwich
    differs from Fisher)."""
    from bayesrank.bt import BradleyTerry

    _, _, counts = board
    force(monkeypatch, False)
    dense = BradleyTerry(counts).fit("mle", ci=ci)
    force(monkeypatch, True)
    from bayesrank.bt import mle

    def dense_route(*a, **kw):
        raise AssertionError("the large board took the dense route")

    monkeypatch.setattr(mle, "meat", dense_route)  # neither the dense meat nor the dense inverse is formed
    monkeypatch.setattr(mle, "constrained_covariance", dense_route)
    fast = BradleyTerry(counts).fit("mle", ci=ci)
    np.testing.assert_allclose(fast.score, dense.score, atol=1e-11)
    np.testing.assert_allclose(fast.cov, dense.cov, atol=1e-13, rtol=1e-9)
    np.testing.assert_allclose(fast.lower, dense.lower, atol=1e-11)
