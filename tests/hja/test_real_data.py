"""Real multi-judge panels: LLMFAO (crowd / GPT-3.5 / GPT-4 on the same pairs) and AlpacaEval annotators."""

import warnings

import numpy as np
import pytest

from bayesrank.bt.mle import fit_newton
from bayesrank.errors import InputError
from bayesrank.hja.data import JudgePairCounts, from_comparisons
from bayesrank.hja.datasets import load_alpaca_eval, load_llmfao
from bayesrank.hja.evaluation import held_out_prediction, rank_stability
from bayesrank.hja.model import HJA


@pytest.fixture(scope="module")
def llmfao():
    return load_llmfao()


def test_llmfao_panel_is_the_three_bundled_files(llmfao):
    counts = from_comparisons(llmfao)
    # crowd: 8,931 votes pooled into one judge; GPT-3.5 and GPT-4 judged the same 2,139 pairs each
    assert counts.per_judge().to_dict() == {"crowd": 8931.0, "gpt3": 2139.0, "gpt4": 2139.0}
    assert counts.n_items == 59


def test_llmfao_held_out_prediction_hja_beats_ja_and_pooled_bt(llmfao):
    tab = held_out_prediction(llmfao, rank=1, group_col="id", seed=0).set_index("method")
    hja, ja, bt = tab.loc["HJA (rank 1)"], tab.loc["JA-Ranking"], tab.loc["pooled BT"]
    # measured: log-loss 0.6301 (HJA) < 0.6347 (JA) < 0.6446 (pooled BT) on 2,641 held-out comparisons
    assert hja.logloss < ja.logloss < bt.logloss
    assert bt.logloss - hja.logloss > 0.01
    assert hja.accuracy > bt.accuracy
    # near-tie pairs (pooled training win rate within 0.5 ± 0.1): 831 comparisons
    assert hja.near_tie_accuracy > bt.near_tie_accuracy


def test_llmfao_judge_table_matches_per_judge_bradley_terry_spread(llmfao):
    """Rank-0 sensitivities γ_k are the judges' score scales: compare with per-judge BT fits (bayesrank.bt)."""
    counts = from_comparisons(llmfao)
    fit = HJA(counts, rank=0).fit()
    spreads = []
    for k in range(3):
        sel = counts.k == k
        one = JudgePairCounts(counts.judges[[k]], counts.items, counts.k[sel] * 0, counts.i[sel], counts.j[sel],
                              counts.y[sel], counts.n[sel])
        theta, *_ = fit_newton(one.pooled(), ties="half", ridge=0.01)
        spreads.append(theta @ fit.params.mu / (fit.params.mu @ fit.params.mu))  # regression slope on μ
    spreads = 3 * np.array(spreads) / np.sum(spreads)  # same normalisation Σ = K
    jt = fit.judge_table().set_index("judge")
    # two-stage per-judge slopes (measured 0.55, 0.63, 1.83) agree with the joint γ (0.55, 0.50, 1.96)
    # to 0.15; both single out GPT-4 as far sharper than the crowd and GPT-3.5
    np.testing.assert_allclose(spreads, jt.gamma.to_numpy(), atol=0.15)
    assert np.argmax(spreads) == np.argmax(jt.gamma.to_numpy()) == 2
    assert jt.gamma["gpt4"] > 1.5 and jt.gamma["crowd"] < 0.8 and jt.gamma["gpt3"] < 0.8
    fit1 = HJA(counts, rank=1).fit()
    j1 = fit1.judge_table().set_index("judge")
    assert bool(j1.flagged["gpt4"]) and not j1.flagged[["crowd", "gpt3"]].any()
    assert fit1.converged and max(fit1.constraint_check().values()) < 1e-10


def test_alpaca_eval_subset_rank0_fits_rank1_is_rejected():
    comps = load_alpaca_eval()
    assert comps.excluded.counts == {"missing preference": 1}
    with pytest.raises(InputError, match="rank 1 needs 14 free parameters but the data have only 13"):
        HJA(comps, rank=1)
    fit = HJA(comps, rank=0).fit()
    cons = fit.consensus()
    # the reference generator gpt4_1106_preview wins most of its comparisons: top of the consensus
    assert cons.player.iloc[0] == "gpt4_1106_preview"
    assert cons.player.iloc[-1] == "alpaca-7b"
    assert np.allclose(fit.params.gamma.sum(), 3.0)


def test_llmfao_rank_stability_with_injected_noisy_judges():
    counts = from_comparisons(load_llmfao())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tau = rank_stability(counts, rank=1, n_noisy=(1, 2, 3), noise_scale=0.0, seed=0)
    # coin-flip judges get γ ≈ 0: HJA consensus keeps Kendall τ ≥ 0.98; pooled BT drops (measured 0.95/0.85/0.82)
    assert (tau["HJA"] >= 0.98).all(), tau
    assert (tau["HJA"] > tau["pooled BT"]).all(), tau


def test_llmfao_top_workers_as_separate_judges():
    comps = load_llmfao(crowd="top", min_worker_votes=200)
    per = from_comparisons(comps).per_judge()
    # no vote lost: workers with >= 200 votes become judges, the rest is pooled into crowd_rest
    assert per.sum() == 8931 + 2 * 2139
    workers = [j for j in per.index if j.startswith("worker")]
    assert workers and all(per[w] >= 200 for w in workers)
    assert {"crowd_rest", "gpt3", "gpt4"} <= set(per.index)


def test_consensus_beside_pooled_bt_on_llmfao(llmfao):
    """The review's table: HJA consensus next to pooled Bradley–Terry (choix's independent MM fit of the
    pooled half-win counts as the reference for the pooled scores)."""
    import choix

    counts = from_comparisons(llmfao)
    fit = HJA(counts, rank=1).fit()
    tab = fit.beside_pooled_bt().set_index("player")
    assert list(tab.index) == fit.table().player.tolist()
    pooled = counts.pooled()
    # choix: pairwise data with half wins as weights -> duplicate each comparison twice (2·y wins of i)
    data = []
    for a, b, w, n in zip(pooled.i, pooled.j, pooled.wins_i, pooled.total):
        data += [(a, b)] * int(round(2 * w)) + [(b, a)] * int(round(2 * (n - w)))
    ref = choix.ilsr_pairwise(counts.n_items, data, alpha=0.0, tol=1e-12)
    ref = ref - ref.mean()
    np.testing.assert_allclose(tab.loc[counts.items, "pooled_bt_score"].to_numpy(), ref, atol=1e-5)
    assert (tab.pooled_bt_rank - tab.consensus_rank == tab.rank_shift).all()
    assert (tab.consensus_lower <= tab.consensus_score).all() and (tab.pooled_bt_upper >= tab.pooled_bt_score).all()
    # the contrast the review reports, with its Wald p-value
    ct = fit.contrast("GPT 4", "Claude v2")
    assert ct.lower < ct.estimate < ct.upper and 0 < ct.p_value < 1
    assert ct.p_value == pytest.approx(2 * (1 - __import__("scipy").stats.norm.cdf(abs(ct.estimate) / ct.se)))
