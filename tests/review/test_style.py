"""Claims under style control beside the plain ones, on battles with known truth: a verbose player
wins by length alone; the plain leader is the verbose player, the style-controlled leader is not."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.special import expit

from bayesrank.cli import main
from bayesrank.review import review

PLAYERS = ["solid", "verbose", "p2", "p3", "p4"]
THETA = np.array([0.6, 0.0, 0.1, -0.3, -0.4])  # true strengths: solid is the best
BETA = 1.2


@pytest.fixture(scope="module")
def battles(tmp_path_factory):
    rng = np.random.default_rng(7)
    n = 3000
    a = rng.integers(0, 5, n)
    b = (a + rng.integers(1, 5, n)) % 5
    def length(idx):
        return np.where(idx == 1, rng.lognormal(6.6, 0.25, n), rng.lognormal(5.6, 0.25, n))
    la, lb = length(a), length(b)
    raw = (la - lb) / (la + lb)
    d = (raw - raw.mean()) / raw.std()
    y = rng.random(n) < expit(THETA[a] - THETA[b] + BETA * d)
    df = pd.DataFrame({"model_a": np.array(PLAYERS)[a], "model_b": np.array(PLAYERS)[b],
                       "outcome": np.where(y, "a", "b"), "len_a": la.round(1), "len_b": lb.round(1)})
    path = tmp_path_factory.mktemp("style") / "battles.csv"
    df.to_csv(path, index=False)
    return path, df


@pytest.fixture(scope="module")
def report(battles):
    path, _ = battles
    return review(path, fast=True, claims=["top1", "solid>p2", "p3>p4"], style="len_a:len_b", budget=60)


def test_each_claim_sits_beside_its_style_controlled_twin(report):
    texts = [c.claim.text for c in report.claims]
    assert texts == ["top1", "top1 [style-controlled]", "solid>p2", "solid>p2 [style-controlled]",
                     "p3>p4", "p3>p4 [style-controlled]"]
    assert report.leaderboard["player"].iloc[0] == "verbose"  # length wins the plain leaderboard
    plain, styled = report.claims[0], report.claims[1]
    assert plain.frequentist["contrast"].startswith("verbose")
    # under style control the plain leader is not #1: the claim is false at the point estimate
    assert styled.verdict == "unsupported" and styled.frequentist["estimate"] < 0
    assert all(p["broken"] is None for p in styled.perturbation.values())
    # pair claims are audited under style control too (row-level style audit): p3 vs p4 is close
    # (true gap 0.1), so 60 flipped battles overturn it, each break confirmed by a cold-start refit
    pair = report.claims[5].perturbation
    assert set(pair) == {"drop", "flip", "add"}
    assert pair["flip"]["broken"] and pair["flip"]["verified"] and pair["flip"]["budget"] <= 60
    assert pair["flip"]["budget"] == sum(a["count"] for a in pair["flip"]["actions"])
    style = next(s for s in report.sections if s.key == "style")
    lb = pd.DataFrame(style.data["leaderboard"])
    assert lb.sort_values("score", ascending=False)["player"].iloc[0] == "solid"


def _style_design(df) -> np.ndarray:
    """The independent reference's design: ±1 player columns (the last player as baseline) and the
    standardised normalised length difference."""
    idx = {p: i for i, p in enumerate(PLAYERS)}
    x = np.zeros((len(df), len(PLAYERS)))
    x[np.arange(len(df)), df.model_a.map(idx)] = 1
    x[np.arange(len(df)), df.model_b.map(idx)] = -1
    raw = (df.len_a - df.len_b) / (df.len_a + df.len_b)
    d = ((raw - raw.mean()) / raw.std(ddof=0)).to_numpy()
    return np.column_stack([x[:, :-1], d])


def test_style_contrast_equals_a_statsmodels_glm_with_the_feature(report, battles):
    """solid − p2 under style control: statsmodels logistic GLM with ±1 player columns and the
    standardised normalised length difference (Fisher covariance: no ties)."""
    _, df = battles
    design = _style_design(df)
    idx = {p: i for i, p in enumerate(PLAYERS)}
    fit = sm.GLM((df.outcome == "a").to_numpy(float), design, family=sm.families.Binomial()).fit(tol=1e-13)
    params, cov = np.asarray(fit.params), np.asarray(fit.cov_params())
    c = np.zeros(design.shape[1])
    c[idx["solid"]], c[idx["p2"]] = 1, -1
    est, se = float(c @ params), float(np.sqrt(c @ cov @ c))
    f = report.claims[3].frequentist
    assert f["interval"] == "fisher (style-controlled)"
    assert f["estimate"] == pytest.approx(est, abs=1e-6)
    # "solid>p2" named in advance: one-sided, lower = est − Φ⁻¹(0.95)·se, p = Φ(−est/se) (scipy)
    from scipy.stats import norm

    assert f["sided"] == "one-sided" and f["upper"] is None
    assert f["estimate"] - f["lower"] == pytest.approx(norm.ppf(0.95) * se, rel=1e-5)
    assert f["p_value"] == pytest.approx(norm.sf(est / se), rel=1e-4)
    beta = pd.DataFrame(next(s for s in report.sections if s.key == "style").data["style"])["coef"].iloc[0]
    assert beta == pytest.approx(params[-1], abs=1e-6)
    assert abs(beta - BETA) < 0.25  # known truth, ~5 standard errors of the estimate


def test_style_flag_is_for_pairwise_data_only(battles, tmp_path, capsys):
    grid = tmp_path / "grid.csv"
    pd.DataFrame({"model": ["a", "b"] * 3, "benchmark": "x", "score": [0.5, 0.4, 0.6, 0.3, 0.55, 0.5],
                  "fewshot": [0, 0, 1, 1, 2, 2]}).to_csv(grid, index=False)
    assert main(["review", str(grid), "--fast", "--style", "len_a:len_b"]) == 2
    assert "--style applies to pairwise battles only" in capsys.readouterr().err


def test_order_claim_false_under_style_control_is_not_audited(battles):
    """The reported order puts the verbose player first; under style control it drops, so the order
    claim (Kendall τ > 0.9 to the reported order) is false at the point estimate: τ of the
    style-controlled point estimate vs the plain order, recomputed with scipy, is ≤ 0.9."""
    from scipy.stats import kendalltau

    path, _ = battles
    rep = review(path, fast=True, claims=["order"], style="len_a:len_b", budget=60)
    _, styled = rep.claims
    assert styled.claim.text == "order [style-controlled]"
    lb = pd.DataFrame(next(s for s in rep.sections if s.key == "style").data["leaderboard"])
    ref = rep.leaderboard.set_index("player")["score"]
    tau = kendalltau(lb["score"], ref.loc[lb["player"]].to_numpy()).statistic
    assert tau <= 0.9
    assert all(p["broken"] is None and "false under style control" in p["reason"]
               for p in styled.perturbation.values())
    assert styled.verdict == "unsupported" and styled.bayesian["probability"] < 0.5


@pytest.fixture(scope="module")
def balanced(tmp_path_factory):
    """Battles where length is unrelated to the player: the order survives style control."""
    rng = np.random.default_rng(21)
    theta = np.array([0.45, 0.3, 0.15, 0.0, -0.15, -0.3, -0.45])
    n, k = 4000, len(theta)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    la, lb = rng.lognormal(6.0, 0.3, n), rng.lognormal(6.0, 0.3, n)
    raw = (la - lb) / (la + lb)
    y = rng.random(n) < expit(theta[a] - theta[b] + 0.8 * (raw - raw.mean()) / raw.std())
    names = np.array([f"m{i}" for i in range(k)])
    df = pd.DataFrame({"model_a": names[a], "model_b": names[b], "outcome": np.where(y, "a", "b"),
                       "len_a": la.round(1), "len_b": lb.round(1)})
    path = tmp_path_factory.mktemp("balanced") / "battles.csv"
    df.to_csv(path, index=False)
    return path


def test_order_claim_audited_under_style_control(balanced):
    """The order holds under style control at the point estimate, so the τ audit runs on the
    style-controlled model against the *reported* (plain) order: each verified break, replayed on
    the battles and refitted by statsmodels (player contrasts + the length feature), has scipy
    Kendall τ ≤ 0.9 to the reported order."""
    from scipy.stats import kendalltau

    from bayesrank.bt import BradleyTerry
    from tests.influence.style_reference import glm, replay

    rep = review(balanced, fast=True, claims=["order"], style="len_a:len_b", budget=200)
    _, styled = rep.claims
    ref = rep.leaderboard.set_index("player")["score"]
    assert styled.frequentist["contrast"] == "Kendall τ > 0.9" and styled.frequentist["estimate"] > 0.5
    assert 0 <= styled.bayesian["probability"] <= 1
    broken = {a: p for a, p in styled.perturbation.items() if p["broken"]}
    assert broken, styled.perturbation
    data = BradleyTerry(balanced, style="len_a:len_b").rows
    for action, p in broken.items():
        assert p["verified"] and p["budget"] == sum(x["count"] for x in p["actions"])
        theta = glm(replay(data, p["actions"]))[0]
        assert kendalltau(theta, ref.loc[[str(q) for q in data.players]].to_numpy()).statistic <= 0.9, action


def test_significant_style_claim_gets_a_verified_loss_of_significance(report, battles):
    """Under style control "solid > p2" is significant (known truth: 0.6 vs 0.1); the review lists the
    smallest drop/flip/add that removes its significance: replayed on the battles and refitted by
    statsmodels (Fisher: no ties) the contrast is no longer significant by the claim's one-sided test
    (z = Φ⁻¹(0.95)), with one battle fewer it is."""
    from scipy.stats import norm

    from bayesrank.bt import BradleyTerry
    from tests.influence.style_reference import replay, weakest_significance_margin
    from tests.influence.test_covariate_objectives import without_last_battle

    styled = next(c for c in report.claims if c.claim.text == "solid>p2 [style-controlled]")
    assert styled.frequentist["supported"]
    data = BradleyTerry(battles[0], style="len_a:len_b").rows
    pair = [(data.index_of("solid"), data.index_of("p2"))]
    audited = {a: p for a, p in styled.significance_perturbation.items() if p["broken"]}
    assert audited, styled.significance_perturbation
    for action, p in audited.items():
        assert p["verified"] and p["objective"] == "solid>p2+sig"
        assert p["objective_details"]["mode"] == "significance" and p["objective_details"]["covariance"] == "auto"
        actions = pd.DataFrame(p["actions"])
        z = norm.ppf(0.95)
        assert p["objective_details"]["z"] == pytest.approx(z)
        assert weakest_significance_margin(replay(data, actions), pair, z=z) < 0, action
        assert weakest_significance_margin(without_last_battle(data, actions), pair, z=z) > 0, action
    # a claim that is false under style control has no significance to lose
    top1 = next(c for c in report.claims if c.claim.text == "top1 [style-controlled]")
    assert all(p["broken"] is None and "not significant" in p["reason"] for p in top1.significance_perturbation.values())
    from bayesrank.protocol import validate

    validate(report.to_dict(), "review")
    assert "to lose significance" in report.to_html()


def test_style_feature_options_reach_the_review(battles, tmp_path, capsys):
    """``--style-standardize scale`` (the fix the centring warning names) and ``--style-transform``
    are review flags too: the style section's β equals ``bayesrank fit --style`` with the same
    options (statsmodels GLM on the raw length difference scaled by its RMS)."""
    path, df = battles
    rep = review(path, fast=True, claims=["solid>p2"], style="len_a:len_b", style_transform="diff",
                 style_standardize="scale", budget=30)
    sec = next(s for s in rep.sections if s.key == "style")
    assert "differences x_a − x_b, scaled, not centred" in sec.text[0]
    raw = (df.len_a - df.len_b).to_numpy()
    d = raw / np.sqrt(np.mean(raw**2))
    idx = {p: i for i, p in enumerate(PLAYERS)}
    x = np.zeros((len(df), len(PLAYERS)))
    x[np.arange(len(df)), df.model_a.map(idx)] = 1
    x[np.arange(len(df)), df.model_b.map(idx)] = -1
    fit = sm.GLM((df.outcome == "a").to_numpy(float), np.column_stack([x[:, :-1], d]),
                 family=sm.families.Binomial()).fit(tol=1e-13)
    beta = pd.DataFrame(sec.data["style"])["coef"].iloc[0]
    assert beta == pytest.approx(fit.params[-1], abs=1e-6)
    assert main(["review", str(path), "--fast", "--style-standardize", "scale"]) == 2
    assert "need --style" in capsys.readouterr().err


def test_style_posterior_with_ties_is_the_half_win_one_with_davidson_beside(battles, tmp_path):
    """With ties (30% here) the style-controlled answers share one estimand: the deciding posterior
    is the half-win one (the style leaderboard's scoring) adjusted to the sandwich — its contrast
    variance is statsmodels' HC0 GLM on y ∈ {1, ½, 0} with the feature — and the tie-aware Davidson
    style posterior is reported beside it (it used to be the Davidson posterior rescaled to the
    half-win sandwich: two estimands in one answer)."""
    _, df = battles
    rng = np.random.default_rng(11)
    df = df.copy()
    df.loc[rng.random(len(df)) < 0.3, "outcome"] = "tie"
    path = tmp_path / "ties.csv"
    df.to_csv(path, index=False)
    rep = review(path, fast=True, claims=["solid>p2", "p3>p4"], style="len_a:len_b", budget=5)
    design = _style_design(df)
    idx = {p: i for i, p in enumerate(PLAYERS)}
    y = df.outcome.map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    fit = sm.GLM(y, design, family=sm.families.Binomial()).fit(tol=1e-13, cov_type="HC0")
    from scipy.stats import norm

    for styled, (a, b) in ((rep.claims[1], ("solid", "p2")), (rep.claims[3], ("p3", "p4"))):
        bay = styled.bayesian
        assert "half-win, adjusted to the sandwich" in bay["method"] and bay["ties"] == "half"
        assert bay["other_tie_model"]["ties"] == "davidson"
        c = np.zeros(design.shape[1])
        for player, sign in ((a, 1), (b, -1)):
            if idx[player] < len(PLAYERS) - 1:  # the last player is the GLM's reference
                c[idx[player]] = sign
        se = float(np.sqrt(c @ np.asarray(fit.cov_params()) @ c))
        f = styled.frequentist
        assert f["estimate"] == pytest.approx(float(c @ np.asarray(fit.params)), abs=1e-6)
        assert f["estimate"] - f["lower"] == pytest.approx(norm.ppf(0.95) * se, rel=1e-5)
        # the Gaussian (Laplace) posterior adjusted to the sandwich: P ≈ Φ(est / se) (its centre is the
        # ridge MLE of a weak prior), within 4 Monte Carlo SEs of the draws
        p_gauss = norm.cdf(f["estimate"] / se)
        assert abs(bay["probability"] - p_gauss) < 4 * np.sqrt(max(p_gauss * (1 - p_gauss), 1e-4) / bay["n_draws"]) + 0.005
    t = rep.claims[3].frequentist["estimate"] / ((rep.claims[3].frequentist["estimate"] - rep.claims[3].frequentist["lower"]) / norm.ppf(0.95))
    assert 0.3 < t < 2.5  # a claim whose posterior share discriminates (Davidson-scale draws would give Φ(~1.4 t))


def test_style_review_in_elo_points_is_the_logit_one_times_400_over_ln10(battles, report):
    """--scale elo: each style-controlled twin's estimate and interval and the style section's
    coefficients and scores are the logit ones × 400/ln 10; verdicts and p-values do not change."""
    import math

    elo_per_logit = 400 / math.log(10)
    path, _ = battles
    elo = review(path, fast=True, claims=["top1", "solid>p2", "p3>p4"], style="len_a:len_b", budget=60, scale="elo")
    for a, b in zip(report.claims, elo.claims):
        assert (a.claim.text, a.verdict, a.frequentist["p_value"]) == (b.claim.text, b.verdict, b.frequentist["p_value"])
        assert b.frequentist["unit"] == "Elo points"
        assert b.frequentist["estimate"] == pytest.approx(elo_per_logit * a.frequentist["estimate"], rel=1e-12)
        assert b.frequentist["lower"] == pytest.approx(elo_per_logit * a.frequentist["lower"], rel=1e-12)
    tl = dict(next(s for s in report.sections if s.key == "style").tables)
    te = dict(next(s for s in elo.sections if s.key == "style").tables)
    for caption, cols in (("style coefficients β", ("coef", "lower", "upper")),
                          ("leaderboard under style control", ("score", "lower", "upper", "plain_score"))):
        for col in cols:
            np.testing.assert_allclose(te[caption][col], elo_per_logit * tl[caption][col], rtol=1e-12, atol=1e-12)
