"""Fisher/Laplace, sandwich and bootstrap uncertainty against direct computations:
finite-difference Hessians of independently coded losses, per-row scores on expanded data,
and a naive row-resampling refit loop."""

import numpy as np
import pandas as pd
from scipy.special import expit, log_expit

from bayesrank.bt.likelihood import tie_model
from bayesrank.bt.mle import (
    bootstrap_counts,
    bootstrap_fits,
    constrained_covariance,
    fit_newton,
    newton,
    sandwich_covariance,
)

from .conftest import design_rows
from .test_tie_models_ridge import davidson_row_loss


def _centred_basis(p, k):
    """Independent orthonormal basis of {φ: Σ_{i<k} φ_i = 0} via QR (not the package's null_space)."""
    m = np.eye(p)
    m[:k, :k] -= 1.0 / k
    q, _ = np.linalg.qr(m[:, 1:])
    return q


def _fd_hessian(f, x0, q, h=1e-3):
    """Central second differences of the scalar f along the columns of q (h = 1e-3 balances the
    O(h²) truncation error against the O(eps·|f|/h²) rounding error for losses of ~1e4)."""
    m = q.shape[1]
    out = np.zeros((m, m))
    for a in range(m):
        for b in range(a, m):
            ea, eb = h * q[:, a], h * q[:, b]
            v = (f(x0 + ea + eb) - f(x0 + ea - eb) - f(x0 - ea + eb) + f(x0 - ea - eb)) / (4 * h * h)
            out[a, b] = out[b, a] = v
    return out


def test_fisher_equals_fd_hessian_nba(nba_counts):
    """Observed information (NBA rows, binary BT) = finite-difference Hessian of the row loss."""
    from bayesrank.datasets import path

    raw = pd.read_csv(path("sports/nba_games_2023_24_tidy.csv"))
    x = design_rows(raw["home_team"], raw["away_team"], nba_counts.players)
    y = (raw["home_pts"] > raw["away_pts"]).to_numpy(dtype=float)

    def loss(theta):
        d = x @ theta
        return -(y * log_expit(d) + (1 - y) * log_expit(-d)).sum()

    params, hess, _, _ = fit_newton(nba_counts, ties="half")
    k = nba_counts.n_players
    q = _centred_basis(k, k)
    fd = _fd_hessian(loss, params, q)
    np.testing.assert_allclose(q.T @ hess @ q, fd, rtol=1e-5, atol=1e-5)
    # covariance: Q (Qᵀ H Q)⁻¹ Qᵀ is basis-independent and equals the FD-based one
    np.testing.assert_allclose(constrained_covariance(hess, k), q @ np.linalg.inv(fd) @ q.T, rtol=1e-4, atol=1e-8)
    # and equals the Moore-Penrose inverse on a connected graph
    np.testing.assert_allclose(constrained_covariance(hess, k), np.linalg.pinv(hess), rtol=1e-8, atol=1e-12)


def test_davidson_information_equals_fd_hessian(llmfao_raw, llmfao_counts):
    x = design_rows(llmfao_raw["left"], llmfao_raw["right"], llmfao_counts.players)
    o = llmfao_raw["winner"].map({"left": 0, "right": 1, "tie": 2}).to_numpy()
    params, hess, _, _ = fit_newton(llmfao_counts, ties="davidson")
    k = llmfao_counts.n_players
    # a subset of directions keeps the FD loop quick: 8 random constraint-space directions + λ
    q_all = _centred_basis(k + 1, k)
    rng = np.random.default_rng(0)
    cols = np.concatenate([rng.choice(k - 1, 7, replace=False), [k - 1]])
    lam_dir = np.zeros((k + 1, 1))
    lam_dir[k] = 1.0
    q = np.column_stack([q_all[:, cols[:-1]], lam_dir])
    fd = _fd_hessian(lambda p: davidson_row_loss(p, x, o).sum(), params, q)
    np.testing.assert_allclose(q.T @ hess @ q, fd, rtol=1e-5, atol=1e-4)


def test_sandwich_equals_direct_row_computation_half(llmfao_raw, llmfao_counts):
    """H⁺ (Σ_n s_n s_nᵀ) H⁺ with per-row scores s_n = (σ(d_n) − y_n) x_n on the 8931 expanded rows."""
    x = design_rows(llmfao_raw["left"], llmfao_raw["right"], llmfao_counts.players)
    y = llmfao_raw["winner"].map({"left": 1.0, "right": 0.0, "tie": 0.5}).to_numpy()
    params, hess, model, _ = fit_newton(llmfao_counts, ties="half")
    p = expit(x @ params)
    s = (p - y)[:, None] * x
    np.testing.assert_allclose(s.sum(axis=0), 0.0, atol=1e-8)  # score equations at the MLE
    h_rows = (x * (p * (1 - p))[:, None]).T @ x
    np.testing.assert_allclose(hess, h_rows, rtol=1e-10, atol=1e-8)
    hp = np.linalg.pinv(h_rows)
    ref = hp @ (s.T @ s) @ hp
    np.testing.assert_allclose(sandwich_covariance(model, llmfao_counts, params, hess), ref, rtol=1e-8, atol=1e-12)
    # ties are under-dispersed relative to the binomial: robust SEs are much smaller than Fisher SEs here
    ratio = np.sqrt(np.diag(ref) / np.diag(hp))
    assert np.median(ratio) < 0.85


def test_sandwich_equals_direct_row_computation_davidson(llmfao_raw, llmfao_counts):
    """Davidson: per-row scores by central finite differences of the row loss."""
    x = design_rows(llmfao_raw["left"], llmfao_raw["right"], llmfao_counts.players)
    o = llmfao_raw["winner"].map({"left": 0, "right": 1, "tie": 2}).to_numpy()
    params, hess, model, _ = fit_newton(llmfao_counts, ties="davidson")
    h = 1e-6
    p = len(params)
    scores = np.empty((len(o), p))
    for a in range(p):
        e = np.zeros(p)
        e[a] = h
        scores[:, a] = (davidson_row_loss(params + e, x, o) - davidson_row_loss(params - e, x, o)) / (2 * h)
    k = llmfao_counts.n_players
    hp = constrained_covariance(hess, k, 1)
    ref = hp @ (scores.T @ scores) @ hp
    got = sandwich_covariance(model, llmfao_counts, params, hess)
    np.testing.assert_allclose(np.sqrt(np.diag(got)), np.sqrt(np.diag(ref)), rtol=1e-5)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-9)


def _naive_bootstrap_sd(raw, counts, n_boot, seed):
    """Resample rows with replacement; aggregate each replicate by np.bincount on (pair, cell); refit one by one."""
    idx = pd.Index(counts.players)
    a = idx.get_indexer(raw["left"])
    b = idx.get_indexer(raw["right"])
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pair_of = pd.Series(np.arange(counts.n_pairs), index=counts.i * counts.n_players + counts.j)
    r = pair_of.loc[lo * counts.n_players + hi].to_numpy()
    w = raw["winner"].to_numpy()
    left_is_i = a < b
    cell = np.where(w == "tie", 2, np.where((w == "left") == left_is_i, 0, 1))
    code = r * 3 + cell
    rng = np.random.default_rng(seed)
    model = tie_model("half")
    fits = []
    for _ in range(n_boot):
        c = np.bincount(code[rng.integers(0, len(code), len(code))], minlength=3 * counts.n_pairs)
        res = newton(model, counts, batch_counts=c.reshape(1, -1, 3).astype(float), ridge=1e-6)
        fits.append(res.params[0])
    return np.asarray(fits).std(axis=0, ddof=1)


def test_bootstrap_matches_naive_row_resampling(llmfao_raw, llmfao_counts):
    params, hess, model, _ = fit_newton(llmfao_counts, ties="half")
    n_boot = 150
    boot = bootstrap_fits(llmfao_counts, "half", n_boot=n_boot, seed=11, start=params)
    assert boot.n_failed == 0  # every LLMFAO resample has a finite MLE
    vec = boot.used.std(axis=0, ddof=1)
    naive = _naive_bootstrap_sd(llmfao_raw, llmfao_counts, n_boot, seed=12)
    ratio = vec / naive
    # SD of a ratio of two independent SD estimates ≈ sqrt(2 / (2(B−1))) ≈ 0.082 for B=150
    assert abs(np.median(ratio) - 1) < 0.06
    assert np.all(np.abs(np.log(ratio)) < 4.5 * 0.082)
    # both estimate the robust (sandwich) SD, not the Fisher SD (ties are under-dispersed)
    sand = np.sqrt(np.diag(sandwich_covariance(model, llmfao_counts, params, hess)))
    assert abs(np.median(vec / sand) - 1) < 0.06
    assert abs(np.median(naive / sand) - 1) < 0.06


def test_bootstrap_reproducible_by_seed(llmfao_counts):
    a = bootstrap_fits(llmfao_counts, "half", n_boot=20, seed=3).params
    b = bootstrap_fits(llmfao_counts, "half", n_boot=20, seed=3).params
    c = bootstrap_fits(llmfao_counts, "half", n_boot=20, seed=4).params
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    # replicate totals preserved: multinomial resampling of all 8931 comparisons
    bc = bootstrap_counts(llmfao_counts, 5, seed=3)
    assert (bc.sum(axis=(1, 2)) == 8931).all()
    # batched refits equal one-by-one refits of the same resampled counts
    model = tie_model("half")
    one = newton(model, llmfao_counts, batch_counts=bc[2:3]).params[0]
    batch = newton(model, llmfao_counts, batch_counts=bc).params[2]
    np.testing.assert_allclose(one, batch, atol=1e-9)
    # the package's replicates are exact (unpenalised) MLEs of the resampled counts
    np.testing.assert_allclose(a[2], fit_newton(llmfao_counts.with_counts(bc[2]), "half")[0], atol=1e-9)


def _never_won_or_lost(counts, batch):
    """Naive no-finite-MLE check for 3 players who all meet: someone with zero wins or zero losses
    (half ties count as both)."""
    k = counts.n_players
    out = []
    for c in batch:
        won = np.bincount(counts.i, c[:, 0] + c[:, 2], k) + np.bincount(counts.j, c[:, 1] + c[:, 2], k)
        lost = np.bincount(counts.i, c[:, 1] + c[:, 2], k) + np.bincount(counts.j, c[:, 0] + c[:, 2], k)
        out.append(bool(((won == 0) | (lost == 0)).any()))
    return np.array(out)


def test_bootstrap_failed_replicates_counted_and_policy_applied():
    from bayesrank.data import read_comparisons

    # every player wins and loses (finite MLE); first-named player wins each row
    df = pd.DataFrame({"model_a": list("abbcacab"), "model_b": list("bacbcabc"), "outcome": ["a"] * 8})
    counts = read_comparisons(df).aggregate()
    n_boot = 300
    bc = bootstrap_counts(counts, n_boot, seed=5)
    naive = _never_won_or_lost(counts, bc)
    assert 20 < naive.sum() < n_boot - 20  # both kinds of replicate occur
    ex = bootstrap_fits(counts, "half", n_boot=n_boot, seed=5, failed="exclude")
    np.testing.assert_array_equal(ex.failed, naive)
    assert ex.n_failed == naive.sum() and ex.used.shape[0] == n_boot - naive.sum()
    assert np.isnan(ex.params[naive]).all() and np.isfinite(ex.used).all()
    # the kept replicates are exact MLEs, refitted one by one
    for b in np.flatnonzero(~naive)[:5]:
        np.testing.assert_allclose(ex.params[b], fit_newton(counts.with_counts(bc[b]), "half")[0], atol=1e-8)
    rg = bootstrap_fits(counts, "half", n_boot=n_boot, seed=5, failed="ridge")
    np.testing.assert_array_equal(rg.failed, naive)
    assert rg.used.shape[0] == n_boot and np.isfinite(rg.used).all()
    b = np.flatnonzero(naive)[0]
    np.testing.assert_allclose(rg.params[b], fit_newton(counts.with_counts(bc[b]), "half", ridge=1e-6)[0], atol=1e-6)
    np.testing.assert_allclose(rg.params[~naive], ex.params[~naive], atol=1e-12)


def test_resample_cells_unit_by_unit_has_the_multinomial_law(monkeypatch):
    """Sparsely filled integer cells (a large tournament's pair cells) are resampled unit by unit: the
    totals are kept, zero cells stay empty, and the moments of 20,000 draws are the multinomial's,
    E = n p and Cov = n (diag p − p pᵀ), within Monte Carlo error; densely filled cells keep NumPy's
    multinomial stream."""
    from bayesrank.bt import mle
    from bayesrank.bt.mle import resample_cells

    monkeypatch.setattr(mle, "UNIT_DRAWS_ABOVE", 1)
    cells = np.array([1.0, 0, 2, 1, 0, 0, 3, 1, 0, 1, 1, 0])
    n, reps = int(cells.sum()), 20_000
    x = resample_cells(cells, reps, np.random.default_rng(0))
    assert (x.sum(axis=1) == n).all() and (x[:, cells == 0] == 0).all()
    p = cells / n
    cov = n * (np.diag(p) - np.outer(p, p))
    se_mean = np.sqrt(np.diag(cov) / reps)
    assert np.all(np.abs(x.mean(axis=0) - n * p) <= 5 * se_mean + 1e-12)
    emp = np.cov(x.T)
    se_cov = np.sqrt((cov**2 + np.outer(np.diag(cov), np.diag(cov))) / reps)
    assert np.abs(emp - cov).max() < 5 * se_cov.max()
    dense = np.array([40.0, 25, 35])  # many units per cell: the multinomial itself
    np.testing.assert_array_equal(resample_cells(dense, 7, np.random.default_rng(1)),
                                  np.random.default_rng(1).multinomial(100, dense / 100, size=7))
