"""arena-rank (LMArena's package) on the same data: identical ratings/ranking and sandwich CIs.

arena-rank conventions (read from its source, v0.1.1): ratings start at 0 and are fitted by
L-BFGS on the mean half-tie loss (tie = outcome 0.5), so they stay sum-to-zero; display is
``1000 + 400/ln(10)·θ``; its sandwich is ``(H + εI)⁻¹ M (H + εI)⁻¹`` with ``ε = hessian_reg·N``
and ``M = Σ counts·(y − p)² x xᵀ`` over (pair, outcome) cells — our sandwich when ε → 0.
"""

import numpy as np
import pandas as pd
import pytest

from bayesrank.bt.mle import fit_newton, sandwich_covariance

ALPHA = 400 / np.log(10)


def _arena_frame(raw):
    return pd.DataFrame({"model_a": raw["left"], "model_b": raw["right"],
                         "winner": raw["winner"].map({"left": "model_a", "right": "model_b", "tie": "tie"})})


@pytest.fixture(scope="module")
def arena_fit(llmfao_raw):
    from arena_rank.models.bradley_terry import BradleyTerry as ArenaBT
    from arena_rank.utils.data_utils import PairDataset

    ds = PairDataset.from_pandas(_arena_frame(llmfao_raw))
    bt = ArenaBT(len(ds.competitors), hessian_reg=1e-8, ftol=1e-14, gtol=1e-13, max_iter=5000)
    bt.fit(ds)
    return bt, ds


def test_arena_rank_ratings_equal_and_rank_identical(arena_fit, llmfao_counts):
    bt, ds = arena_fit
    params, _, _, _ = fit_newton(llmfao_counts, ties="half")
    theta = pd.Series(np.asarray(bt.params["ratings"]), index=ds.competitors).loc[llmfao_counts.players]
    assert abs(theta.sum()) < 1e-8  # arena-rank's fit is sum-to-zero too
    np.testing.assert_allclose(theta.to_numpy(), params, atol=1e-6)
    ours = pd.Series(params, index=llmfao_counts.players).sort_values(ascending=False)
    assert list(theta.sort_values(ascending=False).index) == list(ours.index)


@pytest.mark.slow
def test_arena_rank_sandwich_cis(arena_fit, llmfao_counts):
    bt, ds = arena_fit
    params, hess, model, _ = fit_newton(llmfao_counts, ties="half")
    out = bt.compute_ratings_and_cis(ds, ci_method="sandwich")
    comp = pd.Index(out["competitors"])
    idx = comp.get_indexer(llmfao_counts.players)
    elo = np.asarray(out["ratings"])[idx]
    np.testing.assert_allclose((elo - 1000) / ALPHA, params, atol=1e-6)  # display scale 1000 + 400/ln10·θ
    sd_arena = np.sqrt(np.asarray(out["variances"])[idx]) / ALPHA
    sd_ours = np.sqrt(np.diag(sandwich_covariance(model, llmfao_counts, params, hess)))
    np.testing.assert_allclose(sd_arena, sd_ours, rtol=1e-4)
    half = (np.asarray(out["rating_upper"])[idx] - np.asarray(out["rating_lower"])[idx]) / 2 / ALPHA
    np.testing.assert_allclose(half, 1.959963984540054 * sd_ours, rtol=1e-4)


@pytest.mark.slow
def test_arena_rank_default_settings_rank_identical(llmfao_raw, llmfao_counts):
    """With its defaults (hessian_reg=1e-5, ftol=gtol=1e-9) ratings differ by ~1e-4 logits; the ranking is identical."""
    from arena_rank.models.bradley_terry import BradleyTerry as ArenaBT
    from arena_rank.utils.data_utils import PairDataset

    ds = PairDataset.from_pandas(_arena_frame(llmfao_raw))
    bt = ArenaBT(len(ds.competitors))
    out = bt.compute_ratings_and_cis(ds)
    params, hess, model, _ = fit_newton(llmfao_counts, ties="half")
    elo = pd.Series(np.asarray(out["ratings"]), index=out["competitors"]).loc[llmfao_counts.players]
    np.testing.assert_allclose((elo.to_numpy() - 1000) / ALPHA, params, atol=1e-3)
    assert list(elo.sort_values(ascending=False).index) == list(pd.Series(params, index=llmfao_counts.players).sort_values(ascending=False).index)
    # the default ε = 1e-5·N ridge on H shrinks the sandwich SDs by < 1%
    sd_ours = np.sqrt(np.diag(sandwich_covariance(model, llmfao_counts, params, hess)))
    sd_arena = np.sqrt(np.asarray(out["variances"])) / ALPHA
    sd_arena = pd.Series(sd_arena, index=out["competitors"]).loc[llmfao_counts.players].to_numpy()
    assert np.abs(sd_arena / sd_ours - 1).max() < 0.01
