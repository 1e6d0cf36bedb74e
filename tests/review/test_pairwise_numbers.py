"""The pairwise report's numbers against independent references (statsmodels, scipy, independent
refits), and one integration check against the fit command (named test_integration_*)."""

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.stats import norm

from bayesrank.bt import BradleyTerry
from bayesrank.cli import main
from bayesrank.data import read_comparisons
from bayesrank.datasets import path

A, B = "Boston Celtics", "Denver Nuggets"


@pytest.fixture(scope="module")
def nba_glm():
    """Unpenalised logistic regression on the ±1 design (player K is the reference, θ_K = 0)."""
    df = pd.read_csv(path("nba"))
    players = sorted(set(df.home_team) | set(df.away_team))
    x = np.zeros((len(df), len(players)))
    idx = {p: i for i, p in enumerate(players)}
    x[np.arange(len(df)), df.home_team.map(idx)] = 1
    x[np.arange(len(df)), df.away_team.map(idx)] = -1
    y = (df.home_pts > df.away_pts).astype(float)
    res = sm.GLM(y, x[:, :-1], family=sm.families.Binomial()).fit(tol=1e-13)
    return players, res


def _claim(report, text):
    return next(c for c in report.claims if c.claim.text == text)


def test_pair_claim_equals_statsmodels_wald_test(nba_report, nba_glm):
    """A pair claim named with --claim is one-sided: statsmodels' Wald test with alternative 'larger'
    (its one-sided p-value), lower bound est − Φ⁻¹(0.95)·se, no upper bound."""
    players, res = nba_glm
    c = np.zeros(len(players) - 1)
    c[players.index(A)], c[players.index(B)] = 1, -1
    est = float(c @ res.params)
    se = float(np.sqrt(c @ res.cov_params() @ c))
    one_sided = res.t_test(c).summary_frame()  # two-sided: halve for the one-sided test in the estimate's direction
    f = _claim(nba_report, f"{A}>{B}").frequentist
    assert f["interval"] == "fisher" and f["sided"] == "one-sided"  # no ties: the default interval is Fisher
    assert f["estimate"] == pytest.approx(est, abs=1e-8)
    assert f["lower"] == pytest.approx(est - norm.ppf(0.95) * se, abs=1e-7) and f["upper"] is None
    assert f["p_value"] == pytest.approx(float(one_sided["P>|z|"].iloc[0]) / 2 if est > 0 else 1 - float(
        one_sided["P>|z|"].iloc[0]) / 2, rel=1e-6)
    assert f["supported"] == (est - norm.ppf(0.95) * se > 0)
    # the reversed claim: same contrast, one-sided p-value 1 − p
    r = _claim(nba_report, f"{B}>{A}").frequentist
    assert r["estimate"] == pytest.approx(-est) and r["p_value"] == pytest.approx(1 - f["p_value"], rel=1e-9)
    assert _claim(nba_report, f"{A}>{B}").bayesian["threshold"] == 0.95


def test_top1_is_an_intersection_union_test_over_every_rival(nba_report, nba_glm):
    players, res = nba_glm
    theta = np.append(res.params, 0.0)
    cov = np.zeros((len(players), len(players)))
    cov[:-1, :-1] = res.cov_params()
    lead = int(np.argmax(theta))
    p = []
    for b in range(len(players)):
        if b != lead:
            d = theta[lead] - theta[b]
            se = np.sqrt(cov[lead, lead] + cov[b, b] - 2 * cov[lead, b])
            p.append(min(1.0, 2 * norm.sf(d / se)))
    f = _claim(nba_report, "top1").frequentist
    assert f["p_value"] == pytest.approx(max(p), rel=1e-6) and f["sided"] == "two-sided"
    assert f["n_contrasts"] == len(players) - 1
    # the displayed contrast is the binding one: its own p-value is the claim's, its interval is the
    # two-sided 95% Wald interval of that contrast (statsmodels' covariance)
    rival = int(np.argmax(p))
    others = [b for b in range(len(players)) if b != lead]
    b = others[rival]
    assert f["contrast"] == f"{players[lead]} − {players[b]}"
    d = theta[lead] - theta[b]
    se = np.sqrt(cov[lead, lead] + cov[b, b] - 2 * cov[lead, b])
    assert f["estimate"] == pytest.approx(d, abs=1e-8)
    assert f["lower"] == pytest.approx(d - norm.ppf(0.975) * se, abs=1e-7)
    assert f["upper"] == pytest.approx(d + norm.ppf(0.975) * se, abs=1e-7)
    assert _claim(nba_report, "top1").bayesian["threshold"] == 0.975


def test_integration_leaderboard_equals_the_fit_command(nba_report, tmp_path):
    """Integration (bayesrank against itself): the review's leaderboard is `bayesrank fit`'s; the fit
    itself is checked against statsmodels in tests/bt."""
    out = tmp_path / "fit.json"
    assert main(["fit", "nba", "--json", str(out)]) == 0
    fit = json.loads(out.read_text())
    cmd = pd.DataFrame(fit["players"]).set_index("player")
    lb = nba_report.leaderboard.set_index("player")
    for col in ("score", "lower", "upper", "rank"):
        np.testing.assert_allclose(lb[col].to_numpy(dtype=float), cmd.loc[lb.index, col].to_numpy(dtype=float), atol=1e-10)
    assert (lb["rank_lower"] <= lb["rank"]).all() and (lb["rank"] <= lb["rank_upper"]).all()


def test_perturbations_are_verified_by_an_independent_refit(nba_report):
    """Apply each listed drop/flip/add to the games and refit (statsmodels GLM): the claim is overturned."""
    claim = _claim(nba_report, "top1")
    df = pd.read_csv(path("nba"))
    base = read_comparisons(df)
    rows = pd.DataFrame({"model_a": base.frame["model_a"].astype(str), "model_b": base.frame["model_b"].astype(str),
                         "outcome": base.frame["outcome"].astype(str)})
    assert set(rows.outcome) == {"a", "b"}
    leader = nba_report.leaderboard["player"].iloc[0]
    for action, p in claim.perturbation.items():
        assert p["broken"] and p["verified"], action
        d = rows.copy()
        for act in p["actions"]:
            a, b, n = act["player_a"], act["player_b"], int(act["count"])
            winner_is_a = act["outcome"] == "a_wins"
            if action == "add":
                new = pd.DataFrame({"model_a": [a] * n, "model_b": [b] * n, "outcome": ["a" if winner_is_a else "b"] * n})
                d = pd.concat([d, new], ignore_index=True)
                continue
            # matches of this pair with this winner, either orientation
            m = ((d.model_a == a) & (d.model_b == b) & (d.outcome == ("a" if winner_is_a else "b"))) | \
                ((d.model_a == b) & (d.model_b == a) & (d.outcome == ("b" if winner_is_a else "a")))
            hit = d.index[m][:n]
            assert len(hit) == n, (action, act)
            if action == "drop":
                d = d.drop(hit)
            else:
                d.loc[hit, "outcome"] = np.where(d.loc[hit, "outcome"] == "a", "b", "a")
        fit = BradleyTerry(read_comparisons(d.reset_index(drop=True))).fit("mle")
        new_leader = fit.table()["player"].iloc[0]
        assert new_leader != leader, action
        assert p["fraction_of_all"] == pytest.approx(p["budget"] / len(df))
        assert p["fraction"] == pytest.approx(p["budget"] / p["relative_to"]["n"])


def test_bayesian_probability_matches_the_laplace_closed_form(nba_report):
    """--fast: P(A > B) from 2,000 Laplace draws vs Φ(est/sd) of the same Gaussian (MC SE ≤ 0.0112)."""
    lap = BradleyTerry(read_comparisons(path("nba")), ridge=1 / BradleyTerry(path("nba")).prior_sigma ** 2).fit("mle")
    c = lap.contrast(A, B)
    prob = _claim(nba_report, f"{A}>{B}").bayesian
    assert prob["method"] == "laplace" and prob["n_draws"] == 2000
    assert abs(prob["probability"] - norm.cdf(c.estimate / c.se)) < 4 * 0.0112


def test_order_claim_uses_the_tau_bound_of_simultaneous_intervals(nba_report):
    """30 teams with overlapping intervals: few pairs are significantly ordered, the Kendall τ bound is
    far below 0.9 and nothing is supported (p = 1: no set of declarations reaches the threshold)."""
    f = _claim(nba_report, "order").frequentist
    assert f["sided"] == "two-sided" and f["estimate"] == 1.0 and f["upper"] == 1.0
    assert f["lower"] < 0.9 and f["supported"] is False and f["p_value"] == 1.0


@pytest.mark.slow
def test_methods_section_reports_the_nuts_model_checks():
    """The method-agreement section names the posterior predictive check and PSIS-LOO numbers of the
    NUTS fit it holds (NBA, a short NUTS run)."""
    from bayesrank.review.pairwise_report import review_pairwise

    rep = review_pairwise(path("nba"), kind="pairwise", claims=["top1"], level=0.95, fragile_below=0.01, fast=False,
                          seed=0, budget=10, format="auto", exclude_invalid=False, draws=300, chains=2)
    methods = next(s for s in rep.sections if s.key == "methods")
    extra = methods.data["nuts_diagnostics"]["extra"]
    ppc_line = next(t for t in methods.text if t.startswith("Posterior predictive check"))
    assert f"{extra['ppc']['share_outside_95']:.1%}" in ppc_line and f"{extra['ppc']['n_pairs']:,}" in ppc_line
    loo_line = next(t for t in methods.text if t.startswith("PSIS-LOO"))
    assert f"{extra['loo']['elpd']:,.1f}" in loo_line
