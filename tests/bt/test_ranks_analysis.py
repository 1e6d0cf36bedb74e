"""RankAnalysis on real fits: pairwise Wald tests equal statsmodels' logistic regression, the JSON
follows bayesrank/schemas/ranks.json (and the schema rejects malformed output), plots draw."""

import json

import matplotlib
import numpy as np
import pandas as pd
import pytest
from jsonschema import ValidationError
from scipy.special import expit
from scipy.stats import norm

from bayesrank.bt import BradleyTerry
from bayesrank.bt.ranks import (
    RankAnalysis,
    analyze_ranks,
    pairwise_matrix,
    pairwise_table,
    plot_pairwise,
    rank_probabilities,
)
from bayesrank.errors import InputError
from bayesrank.protocol import validate

matplotlib.use("Agg")

NAMES = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]


@pytest.fixture(scope="module")
def battles():
    """Binary battles (no ties) from a known BT model, unbalanced pair sampling."""
    rng = np.random.default_rng(42)
    theta = np.array([0.9, 0.6, 0.5, 0.0, -0.4, -1.6])
    n = 3000
    a = rng.integers(0, 6, n)
    b = (a + rng.integers(1, 6, n)) % 6
    win_a = rng.random(n) < expit(theta[a] - theta[b])
    return pd.DataFrame({"model_a": np.array(NAMES)[a], "model_b": np.array(NAMES)[b],
                         "winner": np.where(win_a, "model_a", "model_b")})


@pytest.fixture(scope="module")
def bt(battles):
    return BradleyTerry(battles)


@pytest.fixture(scope="module")
def mle_fit(bt):
    return bt.fit("mle", ci="fisher")


@pytest.fixture(scope="module")
def boot_fit(bt):
    return bt.fit("bootstrap", n_boot=400, seed=3)


def test_pairwise_tests_equal_statsmodels_logit(battles, mle_fit):
    """Logit of P(model_a wins) on x = e_a − e_b (first player dropped): θ_a − θ_b is a contrast
    of its coefficients; its Wald z and p-value equal the pairwise table's."""
    import statsmodels.api as sm

    players = list(mle_fit.players)
    x = np.zeros((len(battles), len(players)))
    x[np.arange(len(battles)), pd.Index(players).get_indexer(battles["model_a"])] += 1
    x[np.arange(len(battles)), pd.Index(players).get_indexer(battles["model_b"])] -= 1
    y = (battles["winner"] == "model_a").astype(float).to_numpy()
    res = sm.Logit(y, x[:, 1:]).fit(disp=0, tol=1e-12)
    tab = pairwise_table(mle_fit)
    assert len(tab) == 15
    for row in tab.itertuples():
        r = np.zeros(len(players))
        r[players.index(row.player_a)] += 1
        r[players.index(row.player_b)] -= 1
        t = res.t_test(r[1:])
        assert row.diff == pytest.approx(float(np.squeeze(t.effect)), abs=1e-6)
        assert row.sd == pytest.approx(float(np.squeeze(t.sd)), rel=1e-6)
        assert row.p_value == pytest.approx(float(np.squeeze(t.pvalue)), rel=1e-5, abs=1e-300)
        assert row.diff >= 0  # player_a is the one ahead by score
    z = norm.ppf(0.975)
    np.testing.assert_allclose(tab["p_win"], expit(tab["diff"]), rtol=0, atol=0)
    np.testing.assert_allclose(tab["p_win_lower"], expit(tab["diff"] - z * tab["sd"]), rtol=1e-15)
    np.testing.assert_allclose(tab["p_win_upper"], expit(tab["diff"] + z * tab["sd"]), rtol=1e-15)
    assert tab["p_ahead"].isna().all()  # an MLE fit has no draws


def test_pairwise_matrix_is_labelled_and_complementary(mle_fit, boot_fit):
    m = pairwise_matrix(mle_fit)
    assert m.index.name == "player_a" and m.columns.name == "player_b"
    assert list(m.index) == list(m.columns) == list(mle_fit.table()["player"])  # ordered by score
    v = m.to_numpy()
    assert np.isnan(np.diag(v)).all()
    off = ~np.eye(len(v), dtype=bool)
    np.testing.assert_allclose((v + v.T)[off], 1.0)
    lo = pairwise_matrix(mle_fit, value="p_win_lower").to_numpy()
    hi = pairwise_matrix(mle_fit, value="p_win_upper").to_numpy()
    np.testing.assert_allclose(lo[off], 1 - hi.T[off])
    assert (lo[off] < v[off]).all() and (v[off] < hi[off]).all()
    sub = pairwise_matrix(boot_fit, players=["echo", "alpha", "delta"], value="p_ahead")
    d = boot_fit.draws[:, :6]
    ia, ie = list(boot_fit.players).index("alpha"), list(boot_fit.players).index("echo")
    assert sub.loc["alpha", "echo"] == pytest.approx(np.mean(d[:, ia] > d[:, ie]))
    assert list(sub.index) == ["alpha", "delta", "echo"]
    with pytest.raises(InputError):
        pairwise_matrix(mle_fit, players=["alpha", "nobody"])


def test_holm_family_is_the_requested_players(mle_fit):
    from statsmodels.stats.multitest import multipletests

    sub = pairwise_table(mle_fit, players=["alpha", "bravo", "charlie", "delta"])
    assert len(sub) == 6
    np.testing.assert_array_equal(sub["p_holm"], multipletests(sub["p_value"], method="holm")[1])
    np.testing.assert_array_equal(sub["p_bh"], multipletests(sub["p_value"], method="fdr_bh")[1])


def test_analysis_of_an_mle_fit(mle_fit):
    ra = analyze_ranks(mle_fit, seed=1)
    assert isinstance(ra, RankAnalysis)
    t = ra.table()
    assert list(t.columns) == [
        "player", "score", "lower", "upper", "rank", "rank_lower", "rank_upper", "marginal_rank_lower",
        "marginal_rank_upper", "draws_rank_lower", "draws_rank_upper", "p_top1", "p_rank_le_3", "tier_holm", "tier_bh",
    ]  # top_k (3, 10) keeps only k < K = 6
    assert (t["score"].diff().dropna() <= 0).all()
    assert ((t["rank_lower"] <= t["rank"]) & (t["rank"] <= t["rank_upper"])).all()
    # marginal sets are never wider than simultaneous ones
    assert ((t["marginal_rank_lower"] >= t["rank_lower"]) & (t["marginal_rank_upper"] <= t["rank_upper"])).all()
    assert t["p_top1"].sum() == pytest.approx(1.0)
    assert t["p_rank_le_3"].sum() == pytest.approx(3.0)
    assert ra.settings["critical"] == "gaussian" and "Gaussian N(θ̂, Σ) draws" == ra.draws_source
    assert "simultaneous" in t.attrs["methods"]["rank_lower/rank_upper"]
    # the draws are N(θ̂, Σ): P(θ_a > θ_b) is close to Φ(diff / sd) (4,000 draws: 3 MC SEs)
    pairs = ra.pairs
    want = norm.cdf(pairs["diff"] / pairs["sd"])
    assert (np.abs(pairs["p_ahead"] - want) <= 3 * np.sqrt(want * (1 - want) / 4000) + 1e-12).all()
    data = json.loads(ra.to_json())
    assert data["schema"] == "ranks" and data["n_players"] == 6
    assert [p["player"] for p in data["players"]] == list(t["player"])
    assert data["pairwise"]["n_pairs"] == 15
    assert "rank" in ra.summary()
    assert data["level"] == data["fit_level"] == 0.95
    for entry in data["top_k_confidence_sets"]:  # {a : rank_lower(a) ≤ k}, best first
        assert entry["players"] == list(t.loc[t["rank_lower"] <= entry["k"], "player"])
    assert [e["k"] for e in data["top_k_confidence_sets"]] == [1, 3]
    # a lower analysis level: the fit's intervals stay at 0.95, the sets can only shrink
    ra90 = analyze_ranks(mle_fit, level=0.9, seed=1)
    t90 = ra90.table()
    assert ra90.to_dict()["fit_level"] == 0.95 and ra90.level == 0.9
    np.testing.assert_array_equal(t90["lower"], t["lower"])
    assert (t90["rank_lower"] >= t["rank_lower"]).all() and (t90["rank_upper"] <= t["rank_upper"]).all()
    assert ra90.simultaneous.critical_values[0] < ra.simultaneous.critical_values[0]


def test_analysis_without_marginal_sets_keeps_everything_else(mle_fit):
    """``marginal=False`` (the review's page) drops the marginal columns only: the same simultaneous
    sets, draws and tiers as the full analysis, and schema-valid JSON."""
    full, lean = analyze_ranks(mle_fit, seed=1), analyze_ranks(mle_fit, seed=1, marginal=False)
    assert lean.marginal is None
    t_full, t_lean = full.table(), lean.table()
    assert list(t_lean.columns) == [c for c in t_full.columns if not c.startswith("marginal_")]
    pd.testing.assert_frame_equal(t_lean, t_full[t_lean.columns])
    data = json.loads(lean.to_json())  # validated against the schema
    assert set(data["rank_sets"]) == {"simultaneous"} and "marginal_rank_lower" not in data["players"][0]


def test_analysis_without_p_ahead_keeps_everything_else(mle_fit):
    """``pairs_ahead=False`` (the review's page) leaves only the pairwise table's P(ahead) empty."""
    full, lean = analyze_ranks(mle_fit, seed=1), analyze_ranks(mle_fit, seed=1, pairs_ahead=False)
    assert full.pairs["p_ahead"].notna().all() and lean.pairs["p_ahead"].isna().all()
    pd.testing.assert_frame_equal(lean.pairs.drop(columns="p_ahead"), full.pairs.drop(columns="p_ahead"))
    pd.testing.assert_frame_equal(lean.table(), full.table())


def test_pairwise_table_is_computed_when_first_read(mle_fit):
    """The K(K−1)/2-row pairwise table is built on first use (tiers, JSON, summary), not by the
    leaderboard's columns or the rank-spread plot; the same table either way."""
    ra = analyze_ranks(mle_fit, seed=1)
    lean = ra.table(tiers=False)
    ra.plot()
    assert ra.pair_table is None
    full = ra.table()
    assert ra.pair_table is not None
    assert list(lean.columns) == [c for c in full.columns if not c.startswith("tier_")]
    pd.testing.assert_frame_equal(lean, full[lean.columns])
    ref = pairwise_table(mle_fit, None, ra.level, ahead=False)
    pd.testing.assert_frame_equal(ra.pairs.drop(columns="p_ahead"), ref.drop(columns="p_ahead"))
    assert ra.pairs["p_ahead"].between(0, 1).all()


def test_analysis_of_a_bootstrap_fit_uses_bootstrap_critical_values(boot_fit):
    ra = analyze_ranks(boot_fit)
    assert ra.simultaneous.critical == "bootstrap" and ra.simultaneous.n_errors == 400
    assert ra.draws_source == "bootstrap replicates" and ra.n_draws == 400
    probs = rank_probabilities(boot_fit.draws[:, :6], boot_fit.players)
    t = ra.table().set_index("player")
    np.testing.assert_allclose(t["p_top1"], probs.loc[t.index, 1])
    validate(json.loads(ra.to_json()), "ranks")
    with pytest.raises(InputError):
        analyze_ranks(boot_fit, critical="nonsense")


def test_gaussian_critical_value_for_a_bootstrap_fit_is_available(boot_fit, mle_fit):
    ra = analyze_ranks(boot_fit, critical="gaussian", n_sim=2000)
    assert ra.simultaneous.critical == "gaussian"
    with pytest.raises(InputError):
        analyze_ranks(mle_fit, critical="bootstrap")


def test_schema_rejects_malformed_output(mle_fit):
    good = json.loads(analyze_ranks(mle_fit, n_sim=2000).to_json())
    validate(good, "ranks")
    bad_cases = []
    d = json.loads(json.dumps(good))
    del d["players"][0]["rank_lower"]
    bad_cases.append(d)
    d = json.loads(json.dumps(good))
    d["rank_sets"]["simultaneous"]["critical"] = "magic"
    bad_cases.append(d)
    d = json.loads(json.dumps(good))
    d["rank_sets"]["marginal"]["kind"] = "simultaneous"
    bad_cases.append(d)
    d = json.loads(json.dumps(good))
    d["players"][0]["p_top1"] = 1.5
    bad_cases.append(d)
    d = json.loads(json.dumps(good))
    d["players"][0]["p_rank_le"]["top"] = 0.5
    bad_cases.append(d)
    d = json.loads(json.dumps(good))
    d["unexpected"] = 1
    bad_cases.append(d)
    for d in bad_cases:
        with pytest.raises(ValidationError):
            validate(d, "ranks")


def test_plots_draw(mle_fit):
    ra = analyze_ranks(mle_fit, n_sim=2000)
    fig = ra.plot()
    assert len(fig.axes[0].get_yticklabels()) == 6
    fig2 = plot_pairwise(mle_fit, top=4)
    assert fig2.axes[0].get_images()[0].get_array().shape == (4, 4)
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.mark.slow
def test_arena_bootstrap_and_gaussian_rank_probabilities_agree(arena_counts):
    """Bundled Chatbot Arena (129 models, 1.67M battles): P(#1), P(rank ≤ 3), P(rank ≤ 10) from 500
    bootstrap replicates and from 4,000 N(θ̂, Σ_sandwich) draws agree within 4 combined Monte Carlo
    SEs for every player (p clipped to [1/500, 1 − 1/500] in the SE so that 0 vs 0 is exact but a
    rare event is not an infinite z). How many simultaneous sets differ is printed, not asserted."""
    bt = BradleyTerry(arena_counts)
    boot = analyze_ranks(bt.fit("bootstrap", n_boot=500, seed=0), n_sim=2000)
    gauss = analyze_ranks(bt.fit("mle"), n_sim=10_000, n_draws=4000, seed=0)
    assert gauss.settings["critical"] == "gaussian" and boot.settings["critical"] == "bootstrap"
    tb = boot.table().set_index("player")
    tg = gauss.table().set_index("player").loc[tb.index]
    worst = 0.0
    for col in ("p_top1", "p_rank_le_3", "p_rank_le_10"):
        p = np.clip((tb[col] + tg[col]) / 2, 1 / 500, 1 - 1 / 500)
        z = np.abs(tb[col] - tg[col]) / np.sqrt(p * (1 - p) * (1 / 500 + 1 / 4000))
        worst = max(worst, float(z.max()))
    print(f"max |z| of P(rank <= k) differences, bootstrap vs Gaussian: {worst:.2f}")
    assert worst <= 4
    differ = int(((tb["rank_lower"] != tg["rank_lower"]) | (tb["rank_upper"] != tg["rank_upper"])).sum())
    print(f"simultaneous sets differ for {differ} of {len(tb)} players (critical values "
          f"{boot.simultaneous.critical_values[0]:.3f} bootstrap vs {gauss.simultaneous.critical_values[0]:.3f} Gaussian)")


def test_style_controlled_fit_is_analysed_on_its_theta_block():
    """A style-controlled fit's covariance covers (θ, β): the rank analysis must use the θ block only. The
    unadjusted pairwise tests reproduce the fit's own rank_ci (1 + players significantly ahead)."""
    from bayesrank.bt.simulate import simulate_style_battles

    frame, theta, beta = simulate_style_battles(n_players=6, n_battles=4000, beta=(0.6,), seed=5)
    fit = BradleyTerry(frame, style="s0_a:s0_b").fit("mle")
    k = len(fit.players)
    assert fit.cov.shape[0] > k  # β is in the covariance
    ra = analyze_ranks(fit, n_sim=2000)
    pairs = ra.pairs
    cov = fit.cov[:k, :k]
    idx = {p: i for i, p in enumerate(map(str, fit.players))}
    for row in pairs.itertuples():
        a, b = idx[row.player_a], idx[row.player_b]
        assert row.sd == pytest.approx(np.sqrt(cov[a, a] + cov[b, b] - 2 * cov[a, b]), rel=1e-12)
    ahead = {p: 0 for p in idx}
    for row in pairs.itertuples():
        if row.p_value < 1 - fit.level:
            ahead[row.player_b] += 1
    np.testing.assert_array_equal([1 + ahead[str(p)] for p in fit.players], fit.rank_ci)
    validate(json.loads(ra.to_json()), "ranks")
