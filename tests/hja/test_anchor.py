"""Re-anchoring: exact identified representative of a score matrix (closed-form checks)."""

import numpy as np
import pytest

from bayesrank.hja.anchor import HJAParams, constraint_violations, reanchor, sign_anchors
from bayesrank.hja.mle import neg_loglik
from bayesrank.hja.simulate import simulate_panel


@pytest.mark.parametrize("rank", [0, 1, 2, 3])
def test_reanchor_keeps_scores_and_enforces_every_condition(rank):
    rng = np.random.default_rng(rank)
    K, N = 6, 9
    p = HJAParams(rng.normal(size=K), rng.normal(size=N), rng.normal(size=(K, rank)), rng.normal(size=(N, rank)))
    q = reanchor(p)
    S = p.scores - p.scores.mean(axis=1, keepdims=True)  # likelihood sees S only up to row constants
    np.testing.assert_allclose(q.scores, S, atol=1e-12)
    viol = constraint_violations(q.gamma, q.mu, q.U, q.V, sign_anchors(q.V) if rank else None)
    assert max(viol.values()) < 1e-12, viol
    # the judge average of S is exactly the consensus, with mean sensitivity 1
    np.testing.assert_allclose(q.scores.mean(axis=0), q.mu, atol=1e-12)
    assert q.gamma.mean() == pytest.approx(1.0, abs=1e-12)
    # re-anchoring is idempotent
    np.testing.assert_allclose(reanchor(q).to_vector(), q.to_vector(), atol=1e-12)


def test_reanchor_is_a_gauge_move_likelihood_unchanged():
    sim = simulate_panel(300, seed=3, n_judges=4, n_items=7, rank=2)
    rng = np.random.default_rng(0)
    p = sim.truth
    # an arbitrary gauge transformation: mix consensus into the residual, rotate (U, V), add row constants
    c = rng.normal(size=2)
    A = rng.normal(size=(2, 2)) + 2 * np.eye(2)
    moved = HJAParams(2.0 * p.gamma, 0.5 * (p.mu + p.V @ c) + 1.0, (p.U - np.outer(p.gamma, c)) @ np.linalg.inv(A).T, p.V @ A)
    # (γ, μ, U, V) -> (2γ, (μ + Vc)/2 + 1, (U − γcᵀ)A⁻ᵀ, VA) keeps S up to the row constant 2γ·1
    assert neg_loglik(sim.counts, moved) == pytest.approx(neg_loglik(sim.counts, p), rel=1e-12)
    back = reanchor(moved, sign_anchors(p.V))
    np.testing.assert_allclose(back.to_vector(), p.to_vector(), atol=1e-10)
