"""Style-controlled Bradley–Terry (``BradleyTerry(data, style=...)`` on comparison rows): the one
Newton MLE against statsmodels' logistic GLM (player contrasts + features), closed forms, simulation
with known truth, bootstrap vs sandwich, bad input, JSON schema."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from bayesrank.bt import BradleyTerry
from bayesrank.bt.likelihood import tie_model
from bayesrank.bt.mle import covariance, fit_newton
from bayesrank.bt.simulate import simulate_style_battles
from bayesrank.data.aggregate import pair_rows
from bayesrank.data.comparisons import Comparisons
from bayesrank.data.features import feature_name, parse_style
from bayesrank.errors import InputError, NoFiniteEstimateError
from bayesrank.protocol import validate

STYLE = "s0_a:s0_b,s1_a:s1_b"
HALF = tie_model("half")


def battle_data(comps, style, ties="half", **kw):
    """One row per battle with the style features (ties='drop': tie rows removed and counted)."""
    rows = pair_rows(comps, style, **kw)
    return rows.without_ties() if ties == "drop" else rows


def fit_style_newton(rows, **kw):
    """The Newton result of the (penalised) MLE on the rows."""
    return fit_newton(rows, "half", **kw)[3]


def _first(res):
    return res.params[0], res.hessian[0]


@pytest.fixture(scope="module")
def sim():
    frame, theta, beta = simulate_style_battles(n_players=8, n_battles=4000, beta=(0.6, -0.3), tie_rate=0.1, seed=11)
    return frame, theta, beta


@pytest.fixture(scope="module")
def data(sim):
    return battle_data(Comparisons.from_frame(sim[0]), STYLE)


def _design(d):
    """Treatment-coded player contrasts (player 0 as reference) + features: statsmodels' design."""
    k = d.n_players
    z = np.zeros((d.n_rows, k))
    z[np.arange(d.n_rows), d.i] += 1.0
    z[np.arange(d.n_rows), d.j] -= 1.0
    return np.column_stack([z[:, 1:], d.X])


def _to_sum_to_zero(k, p):
    """Linear map from (θ_2..θ_K, β) with θ_1 = 0 to (centred θ, β)."""
    m = np.zeros((k + p, k - 1 + p))
    m[1:k, : k - 1] = np.eye(k - 1)
    m[:k] -= m[:k].mean(axis=0)
    m[k:, k - 1 :] = np.eye(p)
    return m


@pytest.fixture(scope="module")
def glm(data):
    import statsmodels.api as sm

    model = sm.GLM(data.share, _design(data), family=sm.families.Binomial(), freq_weights=data.total)
    return model.fit(tol=1e-13), model.fit(tol=1e-13, cov_type="HC0")


def test_mle_equals_statsmodels_glm(data, glm):
    fisher, hc0 = glm
    res = fit_style_newton(data)
    params, hess = _first(res)
    k, p = data.n_players, data.n_features
    m = _to_sum_to_zero(k, p)
    np.testing.assert_allclose(params, m @ fisher.params, atol=1e-6)
    np.testing.assert_allclose(covariance(HALF, data, params, hess, "fisher"), m @ fisher.cov_params() @ m.T,
                               atol=1e-6)
    np.testing.assert_allclose(covariance(HALF, data, params, hess, "sandwich"), m @ hc0.cov_params() @ m.T,
                               atol=1e-6)
    assert res.gradient_norm[0] < 1e-8


def test_no_features_equals_aggregated_bt(data):
    """Without style features the row-level fit is the plain BT MLE on pair counts (bt.mle)."""
    plain = data.replace(X=np.zeros((data.n_rows, 0)), features=[], transform={})
    np.testing.assert_allclose(fit_style_newton(plain).params[0], fit_newton(data.pairs(), "half")[0], atol=1e-9)


def test_two_players_closed_form():
    """K = 2, one binary-valued feature: θ_a − θ_b and β from the two 2×2 win tables in closed form.
    With d ∈ {−1, +1} (scale-only standardisation of ±1) the logits are δ ± β, so
    δ + β = logit(win rate | d = +1) and δ − β = logit(win rate | d = −1)."""
    rows = []
    for d, wins, losses in ((1, 30, 10), (-1, 12, 24)):
        xa, xb = (2.0, 1.0) if d == 1 else (1.0, 2.0)
        rows += [("A", "B", o, xa, xb) for o in ["a"] * wins + ["b"] * losses]
    df = pd.DataFrame(rows, columns=["model_a", "model_b", "outcome", "x_a", "x_b"])
    data = battle_data(Comparisons.from_frame(df), "x_a:x_b", standardize="scale")
    params = fit_style_newton(data).params[0]
    assert np.allclose(np.abs(data.X[:, 0]), 1.0)
    lp, lm = np.log(30 / 10), np.log(12 / 24)
    delta, beta = (lp + lm) / 2, (lp - lm) / 2
    np.testing.assert_allclose([params[0] - params[1], params[2]], [delta, beta], atol=1e-10)


def test_known_truth_recovered():
    frame, theta, beta = simulate_style_battles(n_players=10, n_battles=20000, beta=(0.5, -0.25), seed=3)
    fit = BradleyTerry(frame, STYLE).fit("mle")
    z = (fit.coef - beta) / fit.coef_sd
    assert np.all(np.abs(z) < 4), z
    err = fit.score - theta.loc[fit.players].to_numpy()
    assert np.all(np.abs(err / (fit.upper - fit.lower) * 2 * 1.96) < 4)


def test_bootstrap_sd_matches_sandwich(data):
    bt = BradleyTerry(data)
    boot = bt.fit("bootstrap", n_boot=400, seed=5)
    sand = bt.fit("mle", ci="sandwich")
    ratio = np.sqrt(np.diag(boot.cov)) / np.sqrt(np.diag(sand.cov))
    assert boot.diagnostics.converged and boot.diagnostics.n_failed == 0
    # Monte Carlo SE of an SD from 400 resamples ≈ 1/sqrt(800) = 3.5%: 12% is > 3 SE
    assert np.all(np.abs(ratio - 1) < 0.12), ratio
    assert boot.to_dict()["diagnostics"]["n_replicates"] == 400
    boot.to_json()  # schema-validated


def test_result_protocol_and_rank_change(data, tmp_path):
    fit = BradleyTerry(data).fit("mle", ci="sandwich")
    t = fit.table()
    assert list(t.columns) == ["player", "score", "lower", "upper", "rank", "rank_ci", "rank_ub", "plain_score", "plain_rank",
                               "rank_change", "n_matches"]
    np.testing.assert_array_equal(t["rank_change"], t["plain_rank"] - t["rank"])
    assert t["rank"].tolist() == sorted(t["rank"])  # sorted by score
    # rank_ci: 1 + players significantly ahead by the pairwise contrast rule
    z = norm.ppf(0.975)
    s, c = fit.score, fit.cov
    for a in range(len(s)):
        ahead = sum(s[b] - s[a] > z * np.sqrt(c[a, a] + c[b, b] - 2 * c[a, b]) for b in range(len(s)) if b != a)
        assert fit.rank_ci[a] == 1 + ahead
    d = fit.to_dict()
    assert d["schema"] == "fit" and [s["feature"] for s in d["style"]] == ["s0", "s1"]
    fit.to_json(tmp_path / "fit.json")
    bad = dict(d, style=[{"feature": "s0", "coef": "big", "lower": 0, "upper": 1}])
    with pytest.raises(Exception, match="is not of type"):
        validate(bad, "fit")
    assert "rank_change" in fit.summary()
    fit.plot()
    tree = fit.to_datatree()
    assert tree["estimate"]["coef"].dims == ("feature",)


def test_transform_matches_lmarena_definition():
    """(x_a − x_b)/(x_a + x_b), 0 when both are 0, then standardised (mean 0, SD 1 with ddof 0)."""
    df = pd.DataFrame({"model_a": ["A", "B", "A", "B"], "model_b": ["B", "A", "B", "A"], "outcome": ["a", "b", "tie", "a"],
                       "h_a": [3, 0, 1, 5], "h_b": [1, 0, 1, 0]})
    d = battle_data(Comparisons.from_frame(df), "h_a:h_b")
    raw = np.array([0.5, 0.0, 0.0, 1.0])
    np.testing.assert_allclose(d.X[:, 0], (raw - raw.mean()) / raw.std())
    assert d.transform["h"]["mean"] == pytest.approx(raw.mean())
    np.testing.assert_allclose(d.share, [1, 0, 0.5, 1])
    np.testing.assert_allclose(d.counts, [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]])
    assert feature_name("len_output_1", "len_output_2") == "len_output"
    assert feature_name("bold_count_a", "bold_count_b") == "bold_count"
    assert feature_name("tokens", "words") == "tokens-words"


def test_ties_drop_counted(sim):
    frame = sim[0]
    d = battle_data(Comparisons.from_frame(frame), STYLE, ties="drop")
    n_ties = int((frame["outcome"] == "tie").sum())
    assert d.excluded.counts["tie (ties='drop')"] == n_ties and d.n_rows == len(frame) - n_ties


@pytest.mark.parametrize("spec, match", [
    ("s0_a", "not A_COL:B_COL"), ("s0_a:nope", "no column 'nope'"), ("s0_a:s0_b:s1_a", "not A_COL:B_COL"),
])
def test_bad_style_spec(sim, spec, match):
    with pytest.raises(InputError, match=match):
        battle_data(Comparisons.from_frame(sim[0]), spec)


def test_bad_values_and_options(sim):
    frame = sim[0].copy()
    frame.loc[7, "s0_a"] = np.nan
    with pytest.raises(InputError, match=r"^row 7 \(DataFrame index\): column 's0_a' has a missing or non-numeric"):
        battle_data(Comparisons.from_frame(frame), STYLE)
    negative = sim[0].copy()
    negative.loc[[2, 5], "s0_b"] = -1.0  # (x_a - x_b)/(x_a + x_b) is meaningless for signed values
    with pytest.raises(InputError, match=r"^rows 2, 5 \(DataFrame index\): column 's0_b' has negative style values"):
        battle_data(Comparisons.from_frame(negative), STYLE)
    battle_data(Comparisons.from_frame(negative), STYLE, transform="diff")  # the signed transform takes them
    with pytest.raises(InputError, match="ties"):
        BradleyTerry(sim[0], STYLE, ties="davidsen")
    with pytest.raises(InputError, match="method"):
        BradleyTerry(sim[0], STYLE).fit("em")
    assert parse_style("a:b, c:d") == [("a", "b"), ("c", "d")]


def test_no_finite_mle_raises():
    df = pd.DataFrame({"model_a": ["A", "A", "B", "C"], "model_b": ["B", "C", "C", "A"], "outcome": ["a", "a", "a", "b"],
                       "x_a": [1, 2, 3, 4], "x_b": [2, 2, 1, 1]})
    with pytest.raises(NoFiniteEstimateError, match="finite"):
        BradleyTerry(df, "x_a:x_b").fit()  # A never loses


def test_cluster_sandwich_equals_statsmodels_cluster(sim):
    """Cluster-robust sandwich = statsmodels' GLM cov_type='cluster' with its default small-sample
    factor G/(G−1)·(N−1)/(N−k) (and without it, the raw meat)."""
    import statsmodels.api as sm

    frame = sim[0].assign(prompt=np.arange(len(sim[0])) % 97)
    d = battle_data(Comparisons.from_frame(frame), STYLE, cluster="prompt")
    bt = BradleyTerry(d)
    fit = bt.fit("mle")
    assert fit.interval == "cluster-robust sandwich" and fit.settings["n_clusters"] == 97
    glm = sm.GLM(d.share, _design(d), family=sm.families.Binomial())
    ref = glm.fit(tol=1e-13, cov_type="cluster", cov_kwds={"groups": d.cluster})
    raw = glm.fit(tol=1e-13, cov_type="cluster", cov_kwds={"groups": d.cluster, "use_correction": False})
    m = _to_sum_to_zero(d.n_players, d.n_features)
    np.testing.assert_allclose(fit.cov, m @ ref.cov_params() @ m.T, atol=1e-6)
    params, hess, tm, _ = bt.newton_fit()
    from bayesrank.bt.mle import constrained_covariance, meat

    hinv = constrained_covariance(hess, d.n_players)
    np.testing.assert_allclose(hinv @ meat(tm, d, params, cluster=True) @ hinv, m @ raw.cov_params() @ m.T, atol=1e-6)


def test_soft_outcomes_equal_split_rows():
    """A battle with fractional outcome y (AlpacaEval's weighted judge) has the same likelihood as
    two rows (a wins with weight y, b wins with weight 1 − y): same point estimate."""
    from bayesrank.data.rows import share_rows

    frame, _, _ = simulate_style_battles(n_players=5, n_battles=500, beta=(0.4,), seed=2)
    rng = np.random.default_rng(0)
    frame["p_a"] = np.clip(np.where(frame["outcome"] == "a", 0.8, 0.2) + rng.normal(0, 0.1, len(frame)), 0, 1)
    soft = share_rows(frame, "model_a", "model_b", "p_a", "s0_a:s0_b")
    split = pd.concat([frame.assign(outcome="a", weight=frame["p_a"]), frame.assign(outcome="b", weight=1 - frame["p_a"])])
    hard = battle_data(Comparisons.from_frame(split, weight="weight"), "s0_a:s0_b")
    np.testing.assert_allclose(fit_style_newton(soft).params, fit_style_newton(hard).params, atol=1e-9)
    assert soft.n_rows == len(frame) and soft.n_comparisons == len(frame) and soft.fractional
    with pytest.raises(InputError, match="shares"):
        BradleyTerry(soft, ties="davidson")


def test_zero_weight_rows_counted():
    df = pd.DataFrame({"model_a": ["A", "B", "A", "B"], "model_b": ["B", "A", "B", "A"], "outcome": ["a", "a", "b", "b"],
                       "w": [1.0, 0.0, 2.0, 1.0], "x_a": [1, 2, 3, 4], "x_b": [2, 2, 1, 1]})
    d = battle_data(Comparisons.from_frame(df, weight="w"), "x_a:x_b")
    assert d.excluded.counts == {"zero weight": 1} and d.n_rows == 3 and d.n_comparisons == 4.0


def test_cluster_bootstrap_matches_cluster_sandwich(sim):
    """Resampling whole clusters (prompts) estimates the same SDs as the cluster-robust sandwich."""
    frame = sim[0].assign(prompt=np.arange(len(sim[0])) % 150)
    bt = BradleyTerry(battle_data(Comparisons.from_frame(frame), STYLE, cluster="prompt"))
    boot = bt.fit("bootstrap", n_boot=300, seed=2)
    sand = bt.fit("mle", ci="cluster")
    assert boot.settings["resampled"] == "clusters of prompt"
    ratio = np.sqrt(np.diag(boot.cov)) / np.sqrt(np.diag(sand.cov))
    # MC SE of an SD from 300 resamples ≈ 4.1%; 150 clusters add O(1/150) bias: 15% is > 3 SE
    assert np.all(np.abs(ratio - 1) < 0.15), ratio


def test_share_rows_bad_input():
    from bayesrank.data.rows import share_rows

    df = pd.DataFrame({"g": ["A", "B", "A"], "r": ["R", "R", "R"], "p": [0.2, np.nan, 0.9], "la": [1, 2, 3], "lb": [2, 2, 2]})
    d = share_rows(df, "g", "r", "p", "la:lb")
    assert d.excluded.counts == {"missing p": 1} and d.n_rows == 2
    with pytest.raises(InputError, match=r"outside \[0, 1\]"):
        share_rows(df.assign(p=[0.2, 1.5, 0.3]), "g", "r", "p")
    with pytest.raises(InputError, match="self-comparisons"):
        share_rows(df.assign(r=["A", "R", "R"]), "g", "r", "p")
    with pytest.raises(InputError, match="no column 'q'"):
        share_rows(df, "g", "r", "q")


def test_separating_feature_raises():
    """The outcome is decided by the feature (a wins iff x_a > x_b): β̂ → ∞, no finite MLE (exit code 3)."""
    rng = np.random.default_rng(0)
    n = 400
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    xa, xb = rng.random(n) + 0.1, rng.random(n) + 0.1
    df = pd.DataFrame({"model_a": [f"p{i}" for i in a], "model_b": [f"p{i}" for i in b],
                       "outcome": np.where(xa > xb, "a", "b"), "x_a": xa, "x_b": xb})
    with pytest.raises(NoFiniteEstimateError, match="separate"):
        BradleyTerry(df, "x_a:x_b").fit()
    fit = BradleyTerry(df, "x_a:x_b", beta_ridge=1.0).fit()  # a ridge on β gives a finite answer
    assert np.isfinite(fit.coef).all() and fit.coef[0] > 3


def test_centring_with_a_reference_in_every_battle_warns():
    """AlpacaEval-shaped data (one reference player in every battle): centred features act as a
    position effect that moves only the reference, so pair_rows warns and names the fix; scaled
    features and data without such a player do not warn."""
    import warnings

    from bayesrank.data.features import CentredReferenceWarning

    rng = np.random.default_rng(0)
    n = 300
    other = rng.choice(["m1", "m2", "m3"], n)
    ref_first = rng.random(n) < 0.5
    frame = pd.DataFrame({"model_a": np.where(ref_first, "ref", other), "model_b": np.where(ref_first, other, "ref"),
                          "outcome": rng.choice(["a", "b"], n), "len_a": rng.lognormal(5, 0.5, n),
                          "len_b": rng.lognormal(5, 0.5, n)})
    with pytest.warns(CentredReferenceWarning, match="every battle involves 'ref'.*standardize='scale'"):
        battle_data(Comparisons.from_frame(frame), "len_a:len_b")
    spread, _, _ = simulate_style_battles(n_players=4, n_battles=300, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CentredReferenceWarning)
        battle_data(Comparisons.from_frame(frame), "len_a:len_b", standardize="scale")
        battle_data(Comparisons.from_frame(spread), "s0_a:s0_b")


def test_feature_without_variation_is_bad_input_naming_it():
    """A style pair whose difference is the same in every comparison (equal lengths everywhere) has no
    coefficient to estimate: bad input (exit 2) naming the pair, not 'no finite MLE' (exit 3); so is
    a feature that copies another one."""
    rng = np.random.default_rng(3)
    n = 120
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    df = pd.DataFrame({"model_a": [f"p{i}" for i in a], "model_b": [f"p{i}" for i in b],
                       "outcome": rng.choice(["a", "b"], n), "len_a": 100, "len_b": 100,
                       "x_a": rng.random(n) + 0.1, "x_b": rng.random(n) + 0.1})
    for transform in ("normalized_diff", "diff"):
        with pytest.raises(InputError, match=r"^--style len_a:len_b: the feature has no variation"):
            BradleyTerry(df, "x_a:x_b,len_a:len_b", transform=transform)
    with pytest.raises(InputError, match=r"^--style y_a:y_b: the feature is a linear combination of x_a:x_b"):
        BradleyTerry(df.assign(y_a=df["x_a"], y_b=df["x_b"]), "x_a:x_b,y_a:y_b")
    assert np.isfinite(BradleyTerry(df, "x_a:x_b").fit().coef).all()
