"""Davidson ties and ridge against direct scipy.optimize maximisation of independently coded likelihoods."""

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import log_expit, logsumexp, softmax

from bayesrank.bt.mle import fit_newton

from .conftest import design_rows


def _rows(raw, players):
    x = design_rows(raw["left"], raw["right"], players)
    o = raw["winner"].map({"left": 0, "right": 1, "tie": 2}).to_numpy()
    return x, o


def davidson_row_loss(phi, x, o):
    """Per-row Davidson negative log-likelihood; phi = (θ_1..θ_K, λ)."""
    d = x @ phi[:-1]
    logits = np.column_stack([d / 2, -d / 2, np.full_like(d, phi[-1])])
    return logsumexp(logits, axis=1) - logits[np.arange(len(o)), o]


def davidson_loss_grad(phi, x, o):
    d = x @ phi[:-1]
    logits = np.column_stack([d / 2, -d / 2, np.full_like(d, phi[-1])])
    p = softmax(logits, axis=1)
    e = np.zeros_like(p)
    e[np.arange(len(o)), o] = 1.0
    r = p - e  # d loss / d logits
    g_d = 0.5 * (r[:, 0] - r[:, 1])
    return (logsumexp(logits, axis=1) - logits[np.arange(len(o)), o]).sum(), np.concatenate([x.T @ g_d, [r[:, 2].sum()]])


def test_davidson_equals_scipy_maximisation(llmfao_raw, llmfao_counts):
    x, o = _rows(llmfao_raw, llmfao_counts.players)
    k = x.shape[1]
    # free parameters: θ_2..θ_K (θ_1 = 0) and λ; centred afterwards
    def f(free):
        phi = np.concatenate([[0.0], free])
        val, g = davidson_loss_grad(phi, x, o)
        return val, g[1:]

    res = minimize(f, np.zeros(k), jac=True, method="BFGS", options={"gtol": 1e-9, "maxiter": 5000})
    theta_ref = np.concatenate([[0.0], res.x[:-1]])
    theta_ref -= theta_ref.mean()
    params, hess, model, nres = fit_newton(llmfao_counts, ties="davidson")
    assert model.n_extra == 1 and nres.converged.all()
    np.testing.assert_allclose(params[:k], theta_ref, atol=1e-5)
    assert params[k] == pytest.approx(res.x[-1], abs=1e-5)
    # score equation for λ: fitted tie probabilities add up to the observed 3471 ties
    d = x @ params[:k]
    logits = np.column_stack([d / 2, -d / 2, np.full_like(d, params[k])])
    assert softmax(logits, axis=1)[:, 2].sum() == pytest.approx((o == 2).sum(), rel=1e-8)
    assert (o == 2).sum() == 3471
    # loss at optimum equals the independent row loss
    assert nres.loss[0] == pytest.approx(davidson_row_loss(params, x, o).sum(), rel=1e-12)


def test_ridge_half_ties_equals_scipy(llmfao_raw, llmfao_counts):
    x = design_rows(llmfao_raw["left"], llmfao_raw["right"], llmfao_counts.players)
    y = llmfao_raw["winner"].map({"left": 1.0, "right": 0.0, "tie": 0.5}).to_numpy()
    ridge = 2.0

    def f(theta):
        d = x @ theta
        val = -(y * log_expit(d) + (1 - y) * log_expit(-d)).sum() + 0.5 * ridge * theta @ theta
        g = x.T @ (1 / (1 + np.exp(-d)) - y) + ridge * theta
        return val, g

    res = minimize(f, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B", options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 5000})
    params, _, _, _ = fit_newton(llmfao_counts, ties="half", ridge=ridge)
    np.testing.assert_allclose(params, res.x, atol=1e-6)
    # shrinkage: every |θ| smaller than the unpenalised MLE's
    mle, _, _, _ = fit_newton(llmfao_counts, ties="half")
    assert np.abs(params).sum() < np.abs(mle).sum()


def test_drop_ties_ignores_ties(llmfao_raw, llmfao_counts):
    """ties='drop' on all rows equals ties='half' on the data with tie rows removed."""
    from bayesrank.data import read_comparisons

    dec = read_comparisons(llmfao_raw[llmfao_raw["winner"] != "tie"]).aggregate(players=llmfao_counts.players)
    a, _, _, _ = fit_newton(llmfao_counts, ties="drop")
    b, _, _, _ = fit_newton(dec, ties="half")
    np.testing.assert_allclose(a, b, atol=1e-10)


def test_no_finite_mle_raises_and_ridge_fixes():
    from bayesrank.data import read_comparisons
    from bayesrank.errors import NoFiniteEstimateError

    df = pd.DataFrame({"model_a": ["a", "a", "b", "c"], "model_b": ["b", "c", "c", "b"], "outcome": ["a"] * 4})
    counts = read_comparisons(df).aggregate()
    with pytest.raises(NoFiniteEstimateError, match="never lost"):
        fit_newton(counts)
    params, _, _, res = fit_newton(counts, ridge=0.5)
    assert res.converged.all() and np.isfinite(params).all() and params[0] == params.max()
