"""Bradley-Terry MLE and Fisher covariance against independent references on real data:
statsmodels GLM on the ±1 design, evalica's LLMFAO golden file, choix."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from bayesrank.bt.mle import constrained_covariance, fit_newton
from bayesrank.datasets import path

from .conftest import design_rows


def _glm_sum_to_zero(x_full, y, freq_weights):
    """Unpenalised logistic regression with the first player as reference (β_0 = 0), mapped to Σθ = 0."""
    k = x_full.shape[1]
    res = sm.GLM(y, x_full[:, 1:], family=sm.families.Binomial(), freq_weights=freq_weights).fit(method="newton", tol=1e-12, maxiter=50)
    beta = np.concatenate([[0.0], res.params])
    a = np.eye(k) - 1.0 / k  # centring map θ = A β
    cov_ref = np.zeros((k, k))
    cov_ref[1:, 1:] = res.cov_params()
    return a @ beta, a @ cov_ref @ a.T


def test_mle_equals_glm_ties_dropped(llmfao_raw, llmfao_counts):
    raw = llmfao_raw[llmfao_raw["winner"] != "tie"]
    x = design_rows(raw["left"], raw["right"], llmfao_counts.players)
    y = (raw["winner"] == "left").to_numpy(dtype=float)
    theta_ref, cov_ref = _glm_sum_to_zero(x, y, np.ones(len(y)))
    params, hess, model, res = fit_newton(llmfao_counts, ties="drop")
    assert res.converged.all()
    np.testing.assert_allclose(params, theta_ref, atol=1e-6, rtol=0)
    cov = constrained_covariance(hess, llmfao_counts.n_players)
    np.testing.assert_allclose(cov, cov_ref, atol=1e-8, rtol=1e-6)
    assert abs(params.sum()) < 1e-10


def test_mle_equals_glm_half_ties_fractional_binomial(llmfao_raw, llmfao_counts):
    """Half ties: one fractional Binomial row per comparison, y ∈ {0, ½, 1}."""
    raw = llmfao_raw
    x = design_rows(raw["left"], raw["right"], llmfao_counts.players)
    y = raw["winner"].map({"left": 1.0, "right": 0.0, "tie": 0.5}).to_numpy()
    theta_ref, cov_ref = _glm_sum_to_zero(x, y, np.ones(len(y)))
    params, hess, _, _ = fit_newton(llmfao_counts, ties="half")
    np.testing.assert_allclose(params, theta_ref, atol=1e-6, rtol=0)
    np.testing.assert_allclose(constrained_covariance(hess, llmfao_counts.n_players), cov_ref, atol=1e-8, rtol=1e-6)


def test_mle_equals_glm_on_aggregated_arena_counts(arena_counts):
    """Arena counts (1.67M battles) as a Binomial GLM on pair proportions with freq_weights = pair totals."""
    c = arena_counts
    k = c.n_players
    x = np.zeros((c.n_pairs, k))
    x[np.arange(c.n_pairs), c.i] = 1.0
    x[np.arange(c.n_pairs), c.j] = -1.0
    n = c.total
    y = (c.wins_i + 0.5 * c.ties) / n
    theta_ref, cov_ref = _glm_sum_to_zero(x, y, n)
    params, hess, _, _ = fit_newton(c, ties="half")
    np.testing.assert_allclose(params, theta_ref, atol=1e-6, rtol=0)
    np.testing.assert_allclose(constrained_covariance(hess, k), cov_ref, rtol=1e-5, atol=1e-10)


def test_scores_match_evalica_golden_file(llmfao_counts):
    """evalica's golden BT scores are strengths π = e^θ normalised to Σπ = 1 (ties = draws, half weight)."""
    gold = pd.read_csv(path("evalica/llmfao-golden.csv"))
    g = gold[gold["algorithm"] == "bradley_terry"].set_index("item")["score"]
    assert len(g) == 59 and g.sum() == pytest.approx(1.0, abs=1e-12)
    params, _, _, _ = fit_newton(llmfao_counts, ties="half")
    strength = pd.Series(np.exp(params) / np.exp(params).sum(), index=llmfao_counts.players)
    np.testing.assert_allclose(strength.loc[g.index].to_numpy(), g.to_numpy(), rtol=1e-8, atol=0)
    # equivalently log(score) centred = our sum-to-zero θ
    lg = np.log(g.loc[llmfao_counts.players].to_numpy())
    np.testing.assert_allclose(lg - lg.mean(), params, atol=1e-8)
    # rank identity
    assert list(strength.sort_values(ascending=False).index) == list(g.sort_values(ascending=False).index)


def test_scores_match_evalica_live(llmfao_raw, llmfao_counts):
    """Current evalica (geometric-mean normalisation: log-scores sum to zero) at a tight tolerance."""
    import evalica

    w = llmfao_raw["winner"].map({"left": evalica.Winner.X, "right": evalica.Winner.Y, "tie": evalica.Winner.Draw})
    r = evalica.bradley_terry(llmfao_raw["left"], llmfao_raw["right"], w, tolerance=1e-12, limit=10_000)
    params, _, _, _ = fit_newton(llmfao_counts, ties="half")
    np.testing.assert_allclose(np.log(r.scores.loc[llmfao_counts.players].to_numpy()), params, atol=1e-9)


@pytest.mark.parametrize("name", ["simple", "food"])
def test_evalica_small_golden_files(name):
    """evalica's small golden files (integer-coded / named items), same normalisation."""
    from bayesrank.data import read_comparisons

    raw = pd.read_csv(path(f"evalica/{name}.csv"))
    gold = pd.read_csv(path(f"evalica/{name}-golden.csv"))
    g = gold[gold["algorithm"] == "bradley_terry"].set_index("item")["score"]
    df = raw.assign(left=raw["left"].astype(str), right=raw["right"].astype(str))
    counts = read_comparisons(df).aggregate()
    params, _, _, _ = fit_newton(counts, ties="half")
    s = pd.Series(np.exp(params) / np.exp(params).sum(), index=counts.players)
    g.index = g.index.astype(str)
    np.testing.assert_allclose(s.loc[g.index].to_numpy(), g.to_numpy(), rtol=1e-6, atol=1e-9)


def _choix_data(raw, players):
    idx = pd.Index(players)
    dec = raw[raw["winner"] != "tie"]
    win = np.where(dec["winner"] == "left", idx.get_indexer(dec["left"]), idx.get_indexer(dec["right"]))
    lose = np.where(dec["winner"] == "left", idx.get_indexer(dec["right"]), idx.get_indexer(dec["left"]))
    return list(zip(win.tolist(), lose.tolist()))


def test_mle_matches_choix_ilsr(llmfao_raw, llmfao_counts):
    import choix

    data = _choix_data(llmfao_raw, llmfao_counts.players)
    ref = choix.ilsr_pairwise(llmfao_counts.n_players, data, alpha=0.0, tol=1e-12, max_iter=10_000)
    params, _, _, _ = fit_newton(llmfao_counts, ties="drop")
    np.testing.assert_allclose(params, ref - ref.mean(), atol=1e-7)


def test_ridge_matches_choix_map(nba_counts):
    """choix penalises alpha·‖θ‖² (its docstring says prior variance 1/alpha; the code gives 1/(2 alpha)),
    i.e. our ridge = 2 alpha. NBA 2023-24 (1231 games, 30 teams) keeps choix's Python loop fast."""
    import choix

    c = nba_counts
    data = [(int(i), int(j)) for i, j, n in zip(c.i, c.j, c.wins_i) for _ in range(int(n))]
    data += [(int(j), int(i)) for i, j, n in zip(c.i, c.j, c.wins_j) for _ in range(int(n))]
    assert len(data) == 1231
    ref = choix.opt_pairwise(c.n_players, data, alpha=0.5, tol=1e-10)
    params, _, _, _ = fit_newton(c, ties="drop", ridge=1.0)
    np.testing.assert_allclose(params, ref, atol=1e-6)
    assert abs(params.sum()) < 1e-10  # the ridge optimum is automatically centred
