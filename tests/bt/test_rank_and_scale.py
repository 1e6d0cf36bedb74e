"""Ranks against independent references: rank_ub (LMArena's marginal rule) against a naive double
loop; rank_ci and contrast() against statsmodels' Wald tests on the same logistic regression;
point rank against pandas; Elo display scale against arena-rank's convention."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from bayesrank.bt import BradleyTerry, rank_ub, to_elo
from bayesrank.bt.result import point_rank

from .conftest import design_rows


def _naive_rank_ub(lower, upper):
    return np.array([1 + sum(lower[j] > upper[i] for j in range(len(lower))) for i in range(len(lower))])


def test_rank_ub_naive_loop():
    rng = np.random.default_rng(0)
    for _ in range(20):
        c = rng.normal(0, 1, 15)
        h = rng.uniform(0.05, 1.0, 15)
        np.testing.assert_array_equal(rank_ub(c - h, c + h), _naive_rank_ub(c - h, c + h))
    # ties at the boundary do not count (strictly greater)
    np.testing.assert_array_equal(rank_ub(np.array([0.0, 1.0]), np.array([1.0, 2.0])), [1, 1])


def test_point_rank_ties_share_the_smaller_rank():
    s = np.array([0.3, 1.2, 0.3, -0.5, 1.2, 0.0])
    ref = pd.Series(s).rank(ascending=False, method="min").astype(int).to_numpy()
    np.testing.assert_array_equal(point_rank(s), ref)
    np.testing.assert_array_equal(point_rank(s), [3, 1, 3, 6, 1, 5])


@pytest.fixture(scope="module")
def nba_glm():
    """statsmodels GLM on the ±1 design (first team as reference): an independent Fisher covariance."""
    from bayesrank.datasets import path

    raw = pd.read_csv(path("sports/nba_games_2023_24_tidy.csv"))
    fit = BradleyTerry(path("sports/nba_games_2023_24_tidy.csv")).fit("mle", ci="fisher")
    x = design_rows(raw["home_team"], raw["away_team"], fit.players)
    y = (raw["home_pts"] > raw["away_pts"]).to_numpy(dtype=float)
    glm = sm.GLM(y, x[:, 1:], family=sm.families.Binomial()).fit(method="newton", tol=1e-12, maxiter=50)
    return fit, glm


def _contrast_vector(k, a, b):
    """Row vector of θ_a − θ_b in the GLM's parameters (β = θ − θ_0 for players 1..K−1)."""
    r = np.zeros(k)
    r[a] += 1.0
    r[b] -= 1.0
    return r[None, 1:]


def test_contrast_equals_statsmodels_wald_test(nba_glm):
    fit, glm = nba_glm
    k = len(fit.players)
    for a, b in [(0, 1), (3, 17), (29, 2), (12, 13)]:
        c = fit.contrast(fit.players[a], fit.players[b])
        t = glm.t_test(_contrast_vector(k, a, b))
        assert c.estimate == pytest.approx(float(t.effect[0]), abs=1e-7)
        assert c.se == pytest.approx(float(t.sd[0, 0]), rel=1e-6)
        assert c.p_value == pytest.approx(float(t.pvalue), rel=1e-5, abs=1e-12)
        lo, hi = t.conf_int(alpha=0.05)[0]
        assert (c.lower, c.upper) == pytest.approx((lo, hi), abs=1e-6)


def test_rank_ci_equals_count_of_significant_statsmodels_contrasts(nba_glm):
    """rank_ci = 1 + #{b : θ_b − θ_a > 0 with two-sided Wald p < 0.05}, p from statsmodels."""
    fit, glm = nba_glm
    k = len(fit.players)
    ref = np.ones(k, dtype=int)
    for a in range(k):
        for b in range(k):
            if a != b:
                t = glm.t_test(_contrast_vector(k, b, a))
                ref[a] += int(float(t.effect[0]) > 0 and float(t.pvalue) < 0.05)
    np.testing.assert_array_equal(fit.rank_ci, ref)
    sig = fit.significance()
    np.testing.assert_array_equal(1 + sig.sum(axis=1).to_numpy(), ref)
    assert sig.index.name == "player" and sig.columns.name == "player_b"
    assert 1 < ref.max() < k  # the check is not vacuous: some but not all contrasts are significant


def test_rank_ci_is_never_better_than_rank_ub_and_differs_on_llmfao(llmfao):
    """Non-overlapping Wald intervals imply a significant contrast (sd(θ_b − θ_a) ≤ sd_a + sd_b), so
    rank_ci ≥ rank_ub for every Wald fit; the pairwise rule separates more players on real data."""
    for ci in ("fisher", "sandwich"):
        f = BradleyTerry(llmfao, ties="half").fit("mle", ci=ci)
        assert (f.rank_ci >= f.rank_ub).all()
        assert (f.rank_ci > f.rank_ub).sum() >= 5, ci


def test_leaderboard_table_columns_and_ranks_on_llmfao(llmfao, llmfao_counts):
    f = BradleyTerry(llmfao).fit("mle")
    t = f.table()
    assert list(t.columns) == ["player", "score", "lower", "upper", "rank", "rank_ci", "rank_ub", "n_matches"]
    np.testing.assert_array_equal(t["rank"], t["score"].rank(ascending=False, method="min").astype(int))
    np.testing.assert_array_equal(t["rank_ub"], _naive_rank_ub(t["lower"].to_numpy(), t["upper"].to_numpy()))
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
