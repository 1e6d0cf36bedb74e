"""CI-aware rank against a naive double loop; Elo display scale against arena-rank's convention."""

import numpy as np
import pytest

from bayesrank.bt import BradleyTerry, ci_aware_rank, to_elo


def _naive_rank(lower, upper):
    return np.array([1 + sum(lower[j] > upper[i] for j in range(len(lower))) for i in range(len(lower))])


def test_ci_aware_rank_naive_loop():
    rng = np.random.default_rng(0)
    for _ in range(20):
        c = rng.normal(0, 1, 15)
        h = rng.uniform(0.05, 1.0, 15)
        np.testing.assert_array_equal(ci_aware_rank(c - h, c + h), _naive_rank(c - h, c + h))
    # ties at the boundary do not count (strictly greater)
    np.testing.assert_array_equal(ci_aware_rank(np.array([0.0, 1.0]), np.array([1.0, 2.0])), [1, 1])


def test_leaderboard_rank_and_table_on_llmfao(llmfao, llmfao_counts):
    f = BradleyTerry(llmfao).fit("mle")
    np.testing.assert_array_equal(f.rank, _naive_rank(f.lower, f.upper))
    t = f.table()
    assert list(t.columns[:6]) == ["player", "score", "lower", "upper", "rank", "n_matches"]
    m = dict(zip(llmfao_counts.players, llmfao_counts.matches_per_player()))
    assert all(m[p] == n for p, n in zip(t["player"], t["n_matches"]))
    assert t["score"].is_monotonic_decreasing
    assert f.n_comparisons == 8931 and f.n_excluded == 0


def test_elo_scale_matches_arena_rank_convention(llmfao_counts):
    """arena-rank displays 1000 + 400/ln(10)·θ for sum-to-zero θ; an anchor shifts all ratings equally."""
    f = BradleyTerry(llmfao_counts).fit("mle")
    elo = to_elo(f.score)
    np.testing.assert_allclose(elo, 1000 + 400 / np.log(10) * f.score, rtol=1e-12)
    assert elo.mean() == pytest.approx(1000.0)
    name = str(f.players[3])
    anchored = to_elo(f.score, players=list(f.players), anchor=(name, 1200.0))
    assert anchored[3] == pytest.approx(1200.0)
    np.testing.assert_allclose(np.diff(anchored), np.diff(elo), atol=1e-9)


def test_exclusions_reach_the_result():
    """Rows excluded at read time and ties dropped by ties='drop' are both counted in the fit result."""
    import pandas as pd

    from bayesrank.data import read_comparisons

    df = pd.DataFrame({
        "model_a": ["a", "b", "c", "a", "b", "c", "a", None, "c"],
        "model_b": ["b", "c", "a", "c", "a", "b", "a", "b", "a"],
        "outcome": ["a", "a", "a", "b", "b", "tie", "a", "a", "tie"],
    })
    c = read_comparisons(df, on_invalid="exclude")
    assert c.excluded.total == 2  # one self-comparison, one missing name
    f = BradleyTerry(c, ties="half").fit("mle")
    assert f.n_excluded == 2 and f.n_comparisons == 7
    g = BradleyTerry(c, ties="drop").fit("mle")
    assert g.n_excluded == 2 + 2  # + the two ties


def test_atp_finite_core_matches_choix():
    """Real data with no finite MLE as a whole: the finite core of ATP 2024 fits, and equals choix's ILSR."""
    import choix
    import pandas as pd

    from bayesrank.bt.mle import fit_newton
    from bayesrank.data import finite_core, read_comparisons
    from bayesrank.datasets import path

    core = finite_core(read_comparisons(path("tennis/atp_matches_2024.csv")), min_matches=5)
    counts = core.aggregate()
    params, _, _, res = fit_newton(counts, ties="drop")
    assert res.converged.all()
    idx = pd.Index(counts.players)
    data = list(zip(idx.get_indexer(core.frame["model_a"]).tolist(), idx.get_indexer(core.frame["model_b"]).tolist()))
    ref = choix.ilsr_pairwise(counts.n_players, data, tol=1e-9, max_iter=10_000)
    np.testing.assert_allclose(params, ref - ref.mean(), atol=1e-6)
