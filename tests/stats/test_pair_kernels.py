"""The large-board kernels of the rank analysis against the NumPy loops they replace:
the compiled max-t over pairs (bayesrank.stats.pair_kernels), the compiled pairwise P(ahead), and
the Cholesky sampler of sum-to-zero normals (bayesrank.stats.gaussian)."""

import numpy as np
import pytest

from bayesrank.stats import pair_kernels, ranksets
from bayesrank.stats.gaussian import sum_to_zero_normal


def laplacian_cov(k, seed):
    """The sum-to-zero covariance of a random sparse weighted graph's Laplacian (a BT board's H⁻¹)."""
    rng = np.random.default_rng(seed)
    w = np.triu(rng.random((k, k)) < 0.1, 1) * rng.gamma(2.0, 5.0, (k, k))
    w = w + w.T + np.diag(np.full(k - 1, 5.0), 1) + np.diag(np.full(k - 1, 5.0), -1)  # connected
    lap = np.diag(w.sum(axis=1)) - w
    return np.linalg.inv(lap + 1.0 / k) - 1.0 / k


@pytest.mark.parametrize("mask_kind", ["full", "random", "upper", "empty_row"])
def test_compiled_max_t_equals_blocked(mask_kind):
    k = 120
    cov = laplacian_cov(k, 1)
    sd = ranksets.contrast_sd(cov)
    rng = np.random.default_rng(2)
    z = rng.multivariate_normal(np.zeros(k), cov, size=400, method="eigh")
    off = ~np.eye(k, dtype=bool)
    mask = {"full": off, "random": off & (rng.random((k, k)) < 0.5), "upper": np.triu(off, 1),
            "empty_row": off & (np.arange(k)[:, None] > 100)}[mask_kind]
    m1, a1 = ranksets._max_t_blocked(z, sd, mask)
    m2, a2 = pair_kernels.max_t_argmax(z, sd, mask)
    np.testing.assert_allclose(m2, m1, rtol=1e-14, atol=0)
    assert (a1 == a2).all()


def test_compiled_max_t_all_negative_falls_back():
    """Only 'a ahead of b' directions active and every draw ordered against them: maxima < 0."""
    k = 30
    sd = np.ones((k, k))
    z = np.tile(np.arange(k, dtype=float), (5, 1))  # Z_a − Z_b < 0 for a < b
    mask = np.triu(np.ones((k, k), bool), 1)
    m1, a1 = ranksets._max_t_blocked(z, sd, mask)
    m2, a2 = pair_kernels.max_t_argmax(z, sd, mask)
    assert (m1 < 0).all()
    np.testing.assert_array_equal(m2, m1)
    np.testing.assert_array_equal(a2, a1)


def test_rank_sets_equal_with_the_compiled_loop(monkeypatch):
    k = 150
    cov = laplacian_cov(k, 3)
    score = np.sort(np.random.default_rng(4).normal(0, 0.5, k))[::-1]
    score -= score.mean()
    monkeypatch.setattr(ranksets, "COMPILED_ABOVE", 10**9)
    ref = ranksets.rank_confidence_sets(score, cov, n_sim=2000, seed=5)
    monkeypatch.setattr(ranksets, "COMPILED_ABOVE", 2)
    got = ranksets.rank_confidence_sets(score, cov, n_sim=2000, seed=5)
    np.testing.assert_array_equal(got.rank_lower, ref.rank_lower)
    np.testing.assert_array_equal(got.rank_upper, ref.rank_upper)
    np.testing.assert_allclose(got.critical_values, ref.critical_values, rtol=1e-14)
    assert len(ref.critical_values) > 1  # the stepdown ran (stale draws recomputed by the kernel)


def test_ahead_share_equals_numpy():
    d = np.random.default_rng(6).normal(size=(300, 90))
    d[:, 5] = d[:, 7]  # exact ties count as not ahead
    d[:, 20:40] += 10.0 * np.arange(20)  # players whose draws do not overlap (counted without the loop)
    d[:, 41] = d[:, 42] + 1.0  # ranges overlapping, a always ahead
    d[:, 44] = d[:, 43].max()  # a's draws equal to the top of b's (hi(b) = lo(a)): never ahead
    ref = np.concatenate([np.count_nonzero(d[:, i:i + 1] > d[:, i + 1:], axis=0) for i in range(89)]) / 300
    np.testing.assert_array_equal(pair_kernels.ahead_share(d), ref)


def test_sum_to_zero_normal_small_boards_keep_numpys_draws():
    cov = laplacian_cov(50, 7)
    a = sum_to_zero_normal(np.arange(50.0), cov, 100, np.random.default_rng(8))
    b = np.random.default_rng(8).multivariate_normal(np.arange(50.0), cov, size=100, method="eigh")
    np.testing.assert_array_equal(a, b)


def test_sum_to_zero_normal_large_board_has_the_law(monkeypatch):
    """Cholesky route: draws sum to the mean's sum, and the sample covariance of 20,000 draws matches
    Σ within Monte Carlo error (entrywise SE of a covariance estimate: sqrt((Σ_ab² + Σ_aa Σ_bb)/n))."""
    import bayesrank.stats.gaussian as g

    monkeypatch.setattr(g, "CHOLESKY_ABOVE", 10)
    k, n = 60, 20_000
    cov = laplacian_cov(k, 9)
    mean = np.linspace(-1, 1, k)
    x = sum_to_zero_normal(mean, cov, n, np.random.default_rng(10))
    np.testing.assert_allclose(x.sum(axis=1), mean.sum(), atol=1e-10)
    emp = np.cov(x.T)
    se = np.sqrt((cov**2 + np.outer(np.diag(cov), np.diag(cov))) / n)
    assert np.abs(emp - cov).max() < 5 * se.max()
    assert np.abs((emp - cov) / se).mean() < 1.0  # ≈ 0.8 for a correct law
    np.testing.assert_allclose(x.mean(axis=0), mean, atol=5 * np.sqrt(np.diag(cov).max() / n))
