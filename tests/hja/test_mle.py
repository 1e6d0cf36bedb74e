"""Constrained MLE (alternating proximal + re-anchoring) against independent references."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import log_expit

from bayesrank.bt.mle import fit_newton
from bayesrank.hja.anchor import HJAParams, constraint_violations, reanchor, sign_anchors
from bayesrank.hja.data import JudgePairCounts
from bayesrank.hja.fisher import constraint_jacobian, eta_jacobian
from bayesrank.hja.mle import (
    NotConvergedWarning,
    StartsDisagreeWarning,
    fit_constrained_mle,
    linear_predictor,
    neg_loglik,
)
from bayesrank.hja.simulate import sample_counts, simulate_panel, simulate_truth


def test_mle_equals_generic_optimizer_on_unconstrained_parametrisation():
    """A plain BFGS on (γ, μ, U, V) with no constraints reaches the same optimum (loss and S)."""
    sim = simulate_panel(800, seed=5, n_judges=5, n_items=7, rank=1, heterogeneity=1.5)
    c = sim.counts
    K, N, r = 5, 7, 1
    ours = fit_constrained_mle(c, r, n_starts=3, seed=0).best

    def f(theta):
        p = HJAParams.from_vector(theta, K, N, r)
        eta = linear_predictor(c, p)
        return -(c.y * log_expit(eta) + (c.n - c.y) * log_expit(-eta)).sum()

    def g(theta):
        p = HJAParams.from_vector(theta, K, N, r)
        from scipy.special import expit
        resid = c.n * expit(linear_predictor(c, p)) - c.y
        return eta_jacobian(c, p).T @ resid

    rng = np.random.default_rng(1)
    x0 = sim.truth.to_vector() + 0.3 * rng.normal(size=(N + K) * (1 + r))
    res = minimize(f, x0, jac=g, method="BFGS", options={"gtol": 1e-8, "maxiter": 10000})
    assert ours.loss <= res.fun + 1e-6
    assert ours.loss == pytest.approx(res.fun, abs=1e-5)
    other = reanchor(HJAParams.from_vector(res.x, K, N, r), sign_anchors(ours.params.V))
    np.testing.assert_allclose(other.scores, ours.params.scores, atol=2e-4)


def test_rank0_on_duplicated_judge_equals_bradley_terry():
    """Two judges with identical counts: JA has γ = (1, 1) and μ = the Bradley–Terry MLE of bayesrank.bt."""
    sim = simulate_panel(3000, seed=2, n_judges=2, n_items=6, rank=0, sd_gamma=0.0)
    c = sim.counts
    first = c.k == 0
    k = np.concatenate([np.zeros(first.sum(), int), np.ones(first.sum(), int)])
    dup = JudgePairCounts(c.judges, c.items, k, np.tile(c.i[first], 2), np.tile(c.j[first], 2),
                          np.tile(c.y[first], 2), np.tile(c.n[first], 2))
    p = fit_constrained_mle(dup, 0).best.params
    single = JudgePairCounts(c.judges[:1], c.items, c.k[first], c.i[first], c.j[first], c.y[first], c.n[first])
    theta, *_ = fit_newton(single.pooled(), ties="half")
    np.testing.assert_allclose(p.gamma, [1.0, 1.0], atol=1e-7)
    np.testing.assert_allclose(p.mu, theta, atol=1e-6)


def test_kkt_stationary_on_manifold_and_constraints_hold():
    sim = simulate_panel(1500, seed=7, n_judges=6, n_items=9, rank=2, heterogeneity=2.0)
    res = fit_constrained_mle(sim.counts, 2, n_starts=3)
    p = res.best.params
    assert res.best.converged and not res.disagree
    viol = constraint_violations(p.gamma, p.mu, p.U, p.V, sign_anchors(p.V))
    assert max(viol.values()) < 1e-10
    from scipy.linalg import null_space
    from scipy.special import expit
    T = null_space(constraint_jacobian(p))
    grad = eta_jacobian(sim.counts, p).T @ (sim.counts.n * expit(linear_predictor(sim.counts, p)) - sim.counts.y)
    assert np.abs(T.T @ grad).max() < 1e-9  # vs gradient scale ~ sqrt(9000) per coordinate at the truth
    # the full over-parametrised gradient vanishes too (the loss is constant along the gauge orbits)
    assert np.linalg.norm(grad) < 1e-9 and res.gradient_norm == pytest.approx(np.linalg.norm(grad), abs=1e-12)
    assert res.best.loss <= neg_loglik(sim.counts, sim.truth)
    # all starts reached the same optimum
    assert max(r.loss for r in res.starts) - res.best.loss < 1e-4


def _subspace_error(V_hat, V_true):
    """sin of the largest principal angle between column spaces."""
    s = np.linalg.svd(V_hat.T @ V_true, compute_uv=False)
    return float(np.sqrt(max(0.0, 1 - s.min() ** 2)))


def test_recovery_error_shrinks_with_comparisons():
    truth, _ = simulate_truth(n_judges=6, n_items=10, rank=1, heterogeneity=1.5, seed=11)
    errs = []
    for m in (200, 2000, 20000):
        e = np.zeros(3)
        for rep in range(3):
            c = sample_counts(truth, m, seed=100 * rep + m)
            p = fit_constrained_mle(c, 1, n_starts=1, seed=rep, warn=False).best.params
            e += [np.abs(p.mu - truth.mu).max(), np.abs(p.gamma - truth.gamma).max(), _subspace_error(p.V, truth.V)]
        errs.append(e / 3)
    errs = np.array(errs)
    # every error decreases monotonically; a 100× larger panel cuts it by at least 4× (√100 = 10 expected)
    assert (np.diff(errs, axis=0) < 0).all(), errs
    assert (errs[0] / errs[-1] > 4).all(), errs
    assert errs[-1, 0] < 0.05 and errs[-1, 2] < 0.2  # truth: singular value 0.84, 20,000 comparisons per judge


def test_not_converged_warning_and_newton_polish():
    sim = simulate_panel(1000, seed=4, n_judges=5, n_items=8, rank=2, heterogeneity=2.0)
    with pytest.warns(NotConvergedWarning, match="did not converge in 1 sweeps"):
        res = fit_constrained_mle(sim.counts, 2, n_starts=1, max_iter=1, polish=False)
    assert not res.best.converged and res.gradient_norm > 1e-3
    # the manifold Newton polish takes the same one-sweep start to a stationary point: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", NotConvergedWarning)
        polished = fit_constrained_mle(sim.counts, 2, n_starts=1, max_iter=1, polish=True)
    assert polished.newton_converged and polished.gradient_norm <= 1e-9
    full = fit_constrained_mle(sim.counts, 2, n_starts=3, polish=True)
    np.testing.assert_allclose(polished.best.params.scores, full.best.params.scores, atol=1e-8)


def test_starts_disagree_warning():
    """Starts stopped after one sweep sit at different losses: the disagreement is detected and warned."""
    sim = simulate_panel(1000, seed=4, n_judges=5, n_items=8, rank=2, heterogeneity=2.0)
    with pytest.warns(StartsDisagreeWarning, match="HJA starts disagree"):
        res = fit_constrained_mle(sim.counts, 2, n_starts=4, seed=1, max_iter=1, agree_tol=1e-9, warn=True)
    losses = [r.loss for r in res.starts]
    assert res.disagree and max(losses) - min(losses) > 1e-9 * sim.counts.total / 1000


def test_rank_selection_recovers_true_rank():
    """Held-out rule (models/hja.md) picks the simulated rank: 0 without heterogeneity, 1 and 2 with it."""
    from bayesrank.hja.model import select_rank

    for rank, het, seed in ((0, 0.0, 1), (1, 2.0, 1), (2, 2.5, 1)):
        sim = simulate_panel(2000, seed=seed, n_judges=6, n_items=10, rank=rank, heterogeneity=het)
        tab = select_rank(sim.counts, seed=seed)
        assert int(tab.loc[tab.chosen, "rank"].iloc[0]) == rank, tab
