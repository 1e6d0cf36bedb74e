"""The one Bradley–Terry core against independent references, for the model terms that the plain
and style-controlled wings did not have before it:

* Davidson ties with features (and a position effect): an independent maximisation (scipy.optimize
  on a log-likelihood written here) and its numerical Hessian (statsmodels' numdiff), 1e-6;
* the position effect: statsmodels' GLM with an intercept on the ±1 design (Fisher and HC0), 1e-6;
* clusters: statsmodels' GLM ``cov_type="cluster"`` (its default CRV1 small-sample factor), for the
  plain model (aggregated cluster × pair rows), the style-controlled one and with a position effect, 1e-6;
* coverage of the cluster-robust interval by simulation with clustered truth (slow).
"""

import numpy as np
import pytest
import statsmodels.api as sm

from bayesrank.bt import BradleyTerry
from bayesrank.bt.simulate import simulate_style_battles
from tests.bt.test_style import _to_sum_to_zero  # (θ_2..θ_K, extra) with θ_1 = 0 → (centred θ, extra)

STYLE = "s0_a:s0_b"


@pytest.fixture(scope="module")
def battles():
    frame, _, _ = simulate_style_battles(n_players=5, n_battles=1500, beta=(0.5,), tie_rate=0.2, seed=7,
                                         position=0.25)
    return frame.assign(prompt=np.arange(len(frame)) % 60)


def _players(frame):
    return np.array(sorted(set(frame["model_a"]) | set(frame["model_b"])), dtype=object)


def _design(frame, players, features=(), intercept=False):
    """±1 player columns (player 0 the reference, dropped), then an intercept, then the features."""
    idx = {p: k for k, p in enumerate(players)}
    z = np.zeros((len(frame), len(players)))
    z[np.arange(len(frame)), frame["model_a"].map(idx)] += 1
    z[np.arange(len(frame)), frame["model_b"].map(idx)] -= 1
    cols = [z[:, 1:]]
    if intercept:
        cols.append(np.ones((len(frame), 1)))
    cols += [np.asarray(f, dtype=float)[:, None] for f in features]
    return np.column_stack(cols)


def _style_column(frame):
    """The default feature: (x_a − x_b)/(x_a + x_b), centred and scaled (population SD) — numpy here."""
    r = (frame["s0_a"] - frame["s0_b"]) / (frame["s0_a"] + frame["s0_b"])
    return ((r - r.mean()) / r.std(ddof=0)).to_numpy()


# ------------------------------------------------------------------------------ Davidson with features
def _davidson_nll(free, codes_a, codes_b, outcome, k, x, position):
    """−log L of Davidson's model written out: θ = (0, free[:k−1]); η = θ_a − θ_b [+ α] + βx;
    P(a) ∝ e^{η/2}, P(b) ∝ e^{−η/2}, P(tie) ∝ e^{λ}."""
    theta = np.r_[0.0, free[: k - 1]]
    o = k - 1
    alpha = free[o] if position else 0.0
    o += int(position)
    beta, lam = free[o], free[o + 1]
    eta = theta[codes_a] - theta[codes_b] + alpha + beta * x
    logits = np.column_stack([eta / 2, -eta / 2, np.full(len(eta), lam)])
    m = logits.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(logits - m).sum(axis=1))
    return -(logits[np.arange(len(eta)), outcome] - lse).sum()


@pytest.mark.parametrize("position", [False, True])
def test_davidson_with_features_equals_independent_maximisation(battles, position):
    from scipy.optimize import minimize
    from statsmodels.tools.numdiff import approx_hess3

    players = _players(battles)
    k = len(players)
    idx = {p: q for q, p in enumerate(players)}
    a, b = battles["model_a"].map(idx).to_numpy(), battles["model_b"].map(idx).to_numpy()
    outcome = battles["outcome"].map({"a": 0, "b": 1, "tie": 2}).to_numpy()
    x = _style_column(battles)
    args = (a, b, outcome, k, x, position)
    start = np.zeros(k + 1 + int(position))
    ref = minimize(_davidson_nll, start, args=args, method="BFGS", options={"gtol": 1e-10, "maxiter": 10_000})
    ref = minimize(_davidson_nll, ref.x, args=args, method="Nelder-Mead",
                   options={"xatol": 1e-12, "fatol": 1e-13, "maxiter": 40_000, "maxfev": 40_000})
    ref_cov = np.linalg.inv(approx_hess3(ref.x, _davidson_nll, args=args))
    fit = BradleyTerry(battles, STYLE, ties="davidson", position_effect=position).fit("mle", ci="fisher")
    m = _to_sum_to_zero(k, 2 + int(position))
    ours = np.r_[fit.score, [fit.position["coef"]] if position else [], fit.coef, fit.extra["log_nu"]]
    np.testing.assert_allclose(ours, m @ ref.x, atol=1e-6)
    np.testing.assert_allclose(fit.cov, m @ ref_cov @ m.T, atol=1e-6)
    assert fit.diagnostics.converged


# ------------------------------------------------------------------------------ position effect
def test_position_effect_equals_statsmodels_glm_with_intercept(battles):
    """Plain BT + α on ordered pair counts = statsmodels' logistic GLM with an intercept on the ±1
    design of the battles (ties as half-wins: point estimate and HC0 = our sandwich; without ties,
    the Fisher covariance)."""
    players = _players(battles)
    k = len(players)
    y = battles["outcome"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    glm = sm.GLM(y, _design(battles, players, intercept=True), family=sm.families.Binomial())
    hc0 = glm.fit(tol=1e-13, cov_type="HC0")
    bt = BradleyTerry(battles, position_effect=True)
    assert bt.rows.ordered and not bt.rows.unit and bt.rows.n_rows <= k * (k - 1)  # one row per ordered pair
    fit = bt.fit("mle")
    assert fit.interval == "sandwich" and fit.plain_score is not None
    m = _to_sum_to_zero(k, 1)
    np.testing.assert_allclose(np.r_[fit.score, fit.position["coef"]], m @ hc0.params, atol=1e-6)
    np.testing.assert_allclose(fit.cov, m @ hc0.cov_params() @ m.T, atol=1e-6)
    decisive = battles[battles["outcome"] != "tie"]
    fisher = sm.GLM((decisive["outcome"] == "a").to_numpy(float), _design(decisive, players, intercept=True),
                    family=sm.families.Binomial()).fit(tol=1e-13)
    dfit = BradleyTerry(decisive, position_effect=True).fit("mle")
    assert dfit.interval == "fisher"
    np.testing.assert_allclose(np.r_[dfit.score, dfit.position["coef"]], m @ fisher.params, atol=1e-6)
    np.testing.assert_allclose(dfit.cov, m @ fisher.cov_params() @ m.T, atol=1e-6)
    lo, hi = fisher.conf_int()[-1]
    assert dfit.position["lower"] == pytest.approx(lo, abs=1e-6) and dfit.position["upper"] == pytest.approx(hi, abs=1e-6)
    d = dfit.to_dict()
    assert set(d["position"]) == {"coef", "lower", "upper"}
    dfit.to_json()


def test_position_effect_with_features_equals_statsmodels(battles):
    players = _players(battles)
    y = battles["outcome"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    ref = sm.GLM(y, _design(battles, players, [_style_column(battles)], intercept=True),
                 family=sm.families.Binomial()).fit(tol=1e-13, cov_type="HC0")
    fit = BradleyTerry(battles, STYLE, position_effect=True).fit("mle", ci="sandwich")
    m = _to_sum_to_zero(len(players), 2)
    np.testing.assert_allclose(np.r_[fit.score, fit.position["coef"], fit.coef], m @ ref.params, atol=1e-6)
    np.testing.assert_allclose(fit.cov, m @ ref.cov_params() @ m.T, atol=1e-6)


def test_position_needs_the_listed_order(battles):
    from bayesrank.errors import InputError

    counts = BradleyTerry(battles).rows  # unordered pair counts
    with pytest.raises(InputError, match="listed"):
        BradleyTerry(counts, position_effect=True)


# ------------------------------------------------------------------------------ clusters
@pytest.mark.parametrize("style, position", [(None, False), (None, True), (STYLE, False), (STYLE, True)])
def test_cluster_covariance_equals_statsmodels_cluster(battles, style, position):
    """statsmodels' GLM ``cov_type="cluster"`` (default ``use_correction=True``: G/(G−1)·(N−1)/(N−k))
    on one row per battle = our cluster-robust sandwich — on aggregated (cluster, pair) rows for the
    plain model, on battle rows with features."""
    players = _players(battles)
    k = len(players)
    y = battles["outcome"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    feats = [_style_column(battles)] if style else []
    ref = sm.GLM(y, _design(battles, players, feats, intercept=position), family=sm.families.Binomial()).fit(
        tol=1e-13, cov_type="cluster", cov_kwds={"groups": battles["prompt"].to_numpy()})
    bt = BradleyTerry(battles, style or (), cluster="prompt", position_effect=position)
    fit = bt.fit("mle")
    assert fit.interval == "cluster-robust sandwich" and fit.settings["n_clusters"] == 60
    if style is None:
        assert not bt.rows.unit and bt.rows.n_rows < len(battles)  # aggregated per cluster and pair
    m = _to_sum_to_zero(k, int(position) + len(feats))
    theta = np.r_[fit.score, [fit.position["coef"]] if position else [], fit.coef]
    np.testing.assert_allclose(theta, m @ ref.params, atol=1e-6)
    np.testing.assert_allclose(fit.cov, m @ ref.cov_params() @ m.T, atol=1e-6)
    fit.to_json()


def test_cluster_bootstrap_resamples_clusters(battles):
    """Whole clusters are resampled: a replicate's counts are each cluster's counts times how often
    it was drawn (G draws), and the bootstrap SDs agree with the cluster-robust sandwich."""
    from bayesrank.bt.mle import bootstrap_counts

    rows = BradleyTerry(battles, cluster="prompt").rows
    table = bootstrap_counts(rows, 50, seed=1)
    per_cluster = np.stack([np.bincount(rows.cluster, t.sum(axis=1), rows.n_clusters) for t in table])
    base = np.bincount(rows.cluster, rows.total, rows.n_clusters)
    times = per_cluster / base
    np.testing.assert_allclose(times, np.round(times), atol=1e-9)
    np.testing.assert_allclose(times.sum(axis=1), rows.n_clusters)


# ------------------------------------------------------------------------------ coverage with clustered truth
def _clustered_simulation(n_rep, seed, k=6, n_clusters=150, per_cluster=6, copy=0.6):
    """Clusters (prompts) of ``per_cluster`` judgments of one pair: with probability ``copy`` every
    judgment of a cluster repeats one draw, else they are independent. Every judgment is marginally
    Bradley–Terry with the true θ, but judgments of a cluster are dependent. Returns the rows (one
    per cluster: its pair and counts) with ``n_rep`` count tables and θ."""
    from bayesrank.data.rows import PairRows

    rng = np.random.default_rng(seed)
    theta = np.linspace(0.6, -0.6, k)
    i = rng.integers(0, k, n_clusters)
    j = (i + rng.integers(1, k, n_clusters)) % k
    p = 1 / (1 + np.exp(-(theta[i] - theta[j])))
    copied = rng.random((n_rep, n_clusters)) < copy
    one = (rng.random((n_rep, n_clusters)) < p).astype(float) * per_cluster
    wins = np.where(copied, one, rng.binomial(per_cluster, np.broadcast_to(p, (n_rep, n_clusters))))
    table = np.stack([wins, per_cluster - wins, np.zeros_like(wins)], axis=-1)
    rows = PairRows([f"p{q}" for q in range(k)], i, j, counts=table[0], cluster=np.arange(n_clusters),
                    cluster_name="prompt", ordered=True)
    return rows, table, theta


@pytest.mark.slow
def test_cluster_robust_interval_covers_with_clustered_truth():
    """4,200 simulated leaderboards with clustered judgments (150 prompts of 6 judgments, 60% of the
    prompts' judgments copies of one draw): the cluster-robust 95% interval of θ_0 − θ_1 covers the
    truth within 3 Monte Carlo SEs of 95% (two-sided); the per-comparison sandwich, which treats the
    judgments as independent, under-covers (the test can tell the two apart)."""
    from bayesrank.bt.likelihood import tie_model
    from bayesrank.bt.mle import covariance, newton, replicate_has_finite_mle

    rows, table, theta = _clustered_simulation(4200, seed=0)
    tm = tie_model("half")
    ok = replicate_has_finite_mle(rows, table, "half")
    res = newton(tm, rows, batch_counts=table[ok])
    ok_fit = res.converged
    params, hess, counts = res.params[ok_fit], res.hessian[ok_fit], table[ok][ok_fit]
    assert len(params) >= 4000
    z = 1.959963984540054
    truth = theta[0] - theta[1]
    cover = {}
    for kind in ("cluster", "sandwich"):
        cov = covariance(tm, rows, params, hess, kind, batch_counts=counts)
        sd = np.sqrt(cov[:, 0, 0] + cov[:, 1, 1] - 2 * cov[:, 0, 1])
        cover[kind] = float(np.mean(np.abs(params[:, 0] - params[:, 1] - truth) <= z * sd))
    se = np.sqrt(0.95 * 0.05 / len(params))
    assert abs(cover["cluster"] - 0.95) <= 3 * se, cover
    assert cover["sandwich"] < 0.95 - 6 * se, cover
