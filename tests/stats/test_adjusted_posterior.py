"""Curvature-adjusted posterior draws (bayesrank.stats.adjusted_posterior): the construction, and the
coverage of the adjusted Bayesian intervals by simulation with clustered truth.

Clustered truth (PandaLM-like): 400 items, each a comparison of one pair of 5 players judged by 5
judges; an item shifts the logit of its pair by u ~ N(0, 1.5²) shared by its judges, so the five
judgments of an item are correlated. The Bradley–Terry MLE estimates the pseudo-true θ* (the
marginal, attenuated scores: BT fitted to the exact marginal probabilities E σ(θ_a − θ_b + u),
Gauss–Hermite). The independence posterior (N(θ̂, H⁻¹), the flat-prior Laplace approximation)
under-covers θ*_0 − θ*_1; adjusted to the cluster-robust sandwich H⁻¹ B_cl H⁻¹ · G/(G − 1) (B_cl from
per-item score sums; = statsmodels' GLM cluster covariance, checked on one data set) its 95%
credible interval covers within 3 Monte Carlo SEs over 4,000 simulated panels.
"""

import numpy as np
import pytest
from scipy.special import expit

from bayesrank.stats.adjusted_posterior import adjust_draws, sum_to_zero_basis

K, G, M, TAU = 5, 400, 5, 1.5
THETA = np.array([0.6, 0.3, 0.0, -0.3, -0.6])


def test_adjusted_draws_have_the_target_covariance_and_keep_their_shape():
    rng = np.random.default_rng(0)
    k = 4
    q = sum_to_zero_basis(k)
    assert np.allclose(q.T @ q, np.eye(k - 1)) and np.allclose(q.sum(axis=0), 0)
    # skewed draws on the sum-to-zero space (gamma coordinates), target: a random covariance there
    z = rng.gamma(2.0, 1.0, size=(20000, k - 1))
    draws = 0.3 + z @ q.T
    a = rng.normal(size=(k - 1, k - 1))
    target = q @ (a @ a.T) @ q.T
    adj = adjust_draws(draws, target, n_players=k)
    np.testing.assert_allclose(np.cov(adj.T), target, atol=1e-10)
    np.testing.assert_allclose(adj.mean(axis=0), draws.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(adj.sum(axis=1), draws.sum(axis=1), atol=1e-10)  # stays on the Σθ = const plane
    # an affine map: standardised third moments of any linear functional are the posterior's
    from scipy.stats import skew

    w = rng.normal(size=k)
    lam = np.linalg.cholesky(q.T @ target @ q) @ np.linalg.inv(np.linalg.cholesky(np.cov((draws @ q).T)))
    before = (draws - draws.mean(0)) @ q @ lam.T @ q.T @ w  # the same functional through the map
    assert skew(adj @ w) == pytest.approx(skew(before), abs=1e-9)
    # an extra (tie) parameter is rescaled as it is
    extra = np.column_stack([draws, rng.normal(1.0, 0.1, len(draws))])
    t2 = np.zeros((k + 1, k + 1))
    t2[:k, :k] = target
    t2[k, k] = 0.04
    adj2 = adjust_draws(extra, t2, n_players=k)
    assert np.var(adj2[:, k], ddof=1) == pytest.approx(0.04, rel=1e-9)


def test_batched_adjustment_equals_one_at_a_time():
    from bayesrank.stats.adjusted_posterior import adjust_draws_batch

    rng = np.random.default_rng(5)
    k, r = 4, 3
    q = sum_to_zero_basis(k)
    draws = 0.2 + rng.gamma(2.0, 1.0, size=(r, 500, k - 1)) @ q.T
    targets = np.stack([q @ (a @ a.T) @ q.T for a in rng.normal(size=(r, k - 1, k - 1))])
    batch = adjust_draws_batch(draws, targets, n_players=k)
    for i in range(r):
        np.testing.assert_allclose(batch[i], adjust_draws(draws[i], targets[i], n_players=k), atol=1e-10)


def _design(seed):
    """Item → pair (fixed design) of 400 items over the 10 pairs."""
    rng = np.random.default_rng(seed)
    i, j = np.triu_indices(K, 1)
    return rng.integers(0, len(i), G), i, j


def pseudo_true(item_pair, i, j):
    """θ*: BT fitted to the marginal win probabilities E σ(θ_a − θ_b + u), weighted by the design."""
    from bayesrank.bt.likelihood import tie_model
    from bayesrank.bt.mle import newton
    from bayesrank.data.aggregate import PairCounts

    x, w = np.polynomial.hermite_e.hermegauss(80)
    p = (expit(THETA[i][:, None] - THETA[j][:, None] + TAU * x[None, :]) * w).sum(axis=1) / w.sum()
    n = np.bincount(item_pair, minlength=len(i)) * M
    pc = PairCounts(np.array([f"p{a}" for a in range(K)], dtype=object), i, j, n * p, n * (1 - p), 0 * n)
    return newton(tie_model("half"), pc, tol=1e-13).params[0]


def simulate(n_rep, seed, item_pair, i, j):
    """Per replicate: MLE θ̂ (R, K), Fisher H⁻¹ and the cluster-robust sandwich (R, K, K)."""
    from bayesrank.bt.likelihood import tie_model
    from bayesrank.bt.mle import constrained_covariance, newton
    from bayesrank.data.aggregate import PairCounts

    rng = np.random.default_rng(seed)
    d = THETA[i][item_pair] - THETA[j][item_pair]
    wins = rng.binomial(M, expit(d[None, :] + TAU * rng.standard_normal((n_rep, G))))  # (R, G)
    npair = len(i)
    a_wins = np.stack([np.bincount(item_pair, weights=w, minlength=npair) for w in wins])
    n = np.bincount(item_pair, minlength=npair) * M
    tpl = PairCounts(np.array([f"p{a}" for a in range(K)], dtype=object), i, j, n.astype(float), 0 * n, 0 * n)
    batch = np.stack([a_wins, n - a_wins, np.zeros_like(a_wins)], axis=-1).astype(float)
    res = newton(tie_model("half"), tpl, batch_counts=batch, tol=1e-11)
    est = res.params
    fisher = np.stack([constrained_covariance(h, K) for h in res.hessian])
    # per item score sum s_g = (M σ(d̂) − wins_g) x_pair(g): B_cl = Σ_pairs x xᵀ Σ_{g ∈ pair} s_g²
    dhat = est[:, i] - est[:, j]
    resid = M * expit(dhat[:, item_pair]) - wins  # (R, G)
    ss = np.stack([np.bincount(item_pair, weights=r**2, minlength=npair) for r in resid])  # (R, pairs)
    x = np.zeros((npair, K))
    x[np.arange(npair), i], x[np.arange(npair), j] = 1, -1
    meat = np.einsum("rp,pa,pb->rab", ss, x, x)
    robust = fisher @ meat @ fisher * G / (G - 1)
    return est, fisher, robust, wins


def test_cluster_sandwich_equals_statsmodels():
    """The per-item score-sum sandwich = statsmodels' logistic GLM with cov_type='cluster' (groups =
    items; its default small-sample correction G/(G−1)·(N−1)/(N−p), here undone to G/(G−1))."""
    import statsmodels.api as sm

    item_pair, i, j = _design(1)
    est, fisher, robust, wins = simulate(1, 2, item_pair, i, j)
    rows_x, rows_y, groups = [], [], []
    for g in range(G):
        x = np.zeros(K)
        x[i[item_pair[g]]], x[j[item_pair[g]]] = 1, -1
        for m in range(M):
            rows_x.append(x)
            rows_y.append(float(m < wins[0, g]))
            groups.append(g)
    xx = np.array(rows_x)[:, 1:]  # player 0 is the reference
    fit = sm.GLM(np.array(rows_y), xx, family=sm.families.Binomial()).fit(
        tol=1e-13, cov_type="cluster", cov_kwds={"groups": np.array(groups), "use_correction": True})
    n_obs, p = xx.shape
    cov_sm = np.asarray(fit.cov_params()) / ((n_obs - 1) / (n_obs - p))
    c = np.zeros(K - 1)
    c[0] = -1  # θ_0 − θ_1 = −β_1 in statsmodels' parametrisation
    v = robust[0, 0, 0] + robust[0, 1, 1] - 2 * robust[0, 0, 1]
    assert v == pytest.approx(float(c @ cov_sm @ c), rel=1e-6)
    np.testing.assert_allclose(est[0, 1:] - est[0, 0], fit.params, atol=1e-7)


@pytest.mark.slow
def test_adjusted_posterior_covers_under_clustered_truth():
    item_pair, i, j = _design(1)
    target = pseudo_true(item_pair, i, j)
    truth = target[0] - target[1]
    n_rep, n_draws = 4000, 2000
    est, fisher, robust, _ = simulate(n_rep, 3, item_pair, i, j)
    from bayesrank.stats.adjusted_posterior import adjust_draws_batch

    rng = np.random.default_rng(4)
    plain, adjusted = np.zeros(n_rep, bool), np.zeros(n_rep, bool)
    for lo_r in range(0, n_rep, 250):  # batches of panels: (R, draws, K)
        r = slice(lo_r, min(n_rep, lo_r + 250))
        w, v = np.linalg.eigh(fisher[r])
        root = v * np.sqrt(np.clip(w, 0, None))[:, None, :]
        draws = est[r, None, :] + rng.standard_normal((len(w), n_draws, K)) @ np.swapaxes(root, 1, 2)  # N(θ̂, H⁻¹)
        adj = adjust_draws_batch(draws, robust[r], n_players=K)
        for hits, dd in ((plain, draws), (adjusted, adj)):
            lo, hi = np.quantile(dd[..., 0] - dd[..., 1], [0.025, 0.975], axis=1)
            hits[r] = (lo <= truth) & (truth <= hi)
    se = np.sqrt(0.95 * 0.05 / n_rep)
    print(f"independence posterior: {plain.mean():.4f}; adjusted: {adjusted.mean():.4f} over {n_rep} panels "
          f"(nominal 0.95, MC SE {se:.4f})")
    assert abs(adjusted.mean() - 0.95) <= 3 * se
    assert plain.mean() < 0.95 - 10 * se  # the problem it fixes: judgments of one item are not independent
