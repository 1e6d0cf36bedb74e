"""The one audit engine on the model variants: Davidson ties, a position effect and whole-cluster
drops. Exact refits are checked against INDEPENDENT fits — a hand-written Davidson log-likelihood
maximised by scipy.optimize, statsmodels' logistic GLM with an intercept on the ±1 design, the
GLM of the rows without the dropped clusters — and the one-step Newton predictions against those
exact refits; greedy breaks are replayed on the data here (not with the package's ``apply``)."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.stats import spearmanr

from bayesrank.bt.simulate import simulate_style_battles
from bayesrank.data.aggregate import pair_rows
from bayesrank.data.comparisons import Comparisons
from bayesrank.influence import audit
from bayesrank.influence.actions import apply, candidates
from bayesrank.influence.greedy import greedy_audit
from bayesrank.influence.objectives import TopK, parse_objective
from bayesrank.influence.state import BTState

STYLE = "s0_a:s0_b,s1_a:s1_b"


def _frame(tie_rate=0.2, seed=4, n=1500, k=6):
    frame, _, _ = simulate_style_battles(n_players=k, n_battles=n, beta=(0.6, -0.3), tie_rate=tie_rate, seed=seed,
                                         theta_sd=0.5)
    return frame


# ------------------------------------------------------------------------------------ Davidson
def davidson_scipy(i, j, counts, k, X=None):
    """(θ on Σθ = 0, β, λ) maximising the Davidson log-likelihood written here:
    P(i) = e^{η/2}/Z, P(j) = e^{−η/2}/Z, P(tie) = e^λ/Z, Z = e^{η/2} + e^{−η/2} + e^λ,
    η = θ_i − θ_j + Xβ (θ_0 = 0 as reference, centred afterwards), by BFGS on its gradient."""
    p = 0 if X is None else X.shape[1]

    def unpack(z):
        theta = np.concatenate([[0.0], z[: k - 1]])
        return theta, z[k - 1:k - 1 + p], z[-1]

    def nll(z):
        theta, beta, lam = unpack(z)
        eta = theta[i] - theta[j] + (0.0 if X is None else X @ beta)
        a = np.column_stack([eta / 2, -eta / 2, np.full(len(eta), lam)])
        m = a.max(axis=1, keepdims=True)
        lse = m[:, 0] + np.log(np.exp(a - m).sum(axis=1))
        prob = np.exp(a - lse[:, None])
        value = -(counts * a).sum() + (counts.sum(axis=1) * lse).sum()
        resid = counts.sum(axis=1)[:, None] * prob - counts  # d(value)/d(a)
        g_eta = 0.5 * (resid[:, 0] - resid[:, 1])
        g_theta = np.bincount(i, g_eta, k) - np.bincount(j, g_eta, k)
        grad = np.concatenate([g_theta[1:], [] if X is None else X.T @ g_eta, [resid[:, 2].sum()]])
        return value, grad

    res = minimize(nll, np.zeros(k - 1 + p + 1), jac=True, method="BFGS", options={"gtol": 1e-10, "maxiter": 5000})
    theta, beta, lam = unpack(res.x)
    return theta - theta.mean(), beta, lam


@pytest.fixture(scope="module")
def davidson():
    comps = Comparisons.from_frame(_frame())
    return BTState.fit(comps.aggregate(), ties="davidson")


def test_davidson_fit_equals_scipy(davidson):
    c = davidson.counts
    theta, _, lam = davidson_scipy(c.i, c.j, c.counts, c.n_players)
    np.testing.assert_allclose(davidson.theta, theta, atol=1e-6)
    assert davidson.params[-1] == pytest.approx(lam, abs=1e-6)


@pytest.mark.parametrize("kind", ["drop", "flip", "add"])
def test_davidson_refits_equal_scipy_and_1sn_predicts_them(davidson, kind):
    """Exact refits of 12 perturbed count tables = scipy's maximisation of the hand-written Davidson
    likelihood (1e-6); the 1sN of the top-1 gap (Woodbury with the (η, λ) curvature) tracks the exact
    change over 120 single actions (Spearman ≥ 0.99, max error ≤ 5% of the spread, better than first order)."""
    from bayesrank.influence.greedy import state_for

    st = state_for(davidson, kind)
    cand = candidates(st, kind)
    rng = np.random.default_rng(0)
    c = st.counts
    for idx in rng.choice(len(cand), 12, replace=False):
        new = apply(c.counts, cand, idx, 3.0 if kind == "add" else 1.0)
        refit = st.refit(c.with_counts(new))
        theta, _, lam = davidson_scipy(c.i, c.j, new, c.n_players)
        np.testing.assert_allclose(refit.theta, theta, atol=1e-6)
        assert refit.params[-1] == pytest.approx(lam, abs=1e-6)
    obj = TopK(st, 1)
    f0 = obj.value(st.theta)
    idx = rng.choice(len(cand), min(120, len(cand)), replace=False)
    exact = np.array([obj.value(st.refit(c.with_counts(apply(c.counts, cand, n, 1.0))).theta) - f0 for n in idx])
    sub = cand.take(idx)
    one, first = obj.delta(st, sub, 1.0, "1sN"), obj.delta(st, sub, 1.0, "first")
    assert spearmanr(one, exact).statistic >= 0.99
    assert np.max(np.abs(one - exact)) <= 0.05 * np.ptp(exact)
    assert np.max(np.abs(one - exact)) <= np.max(np.abs(first - exact)) + 1e-15


def _replay_cells(c, actions):
    """Re-apply a pair-count audit's logged actions (pair, outcome, count, flips' ``to``) here."""
    table = c.counts.copy()
    names = list(map(str, c.players))
    cell = {"a_wins": 0, "b_wins": 1, "tie": 2}
    for a in actions.to_dict(orient="records"):
        i, j = names.index(a["player_a"]), names.index(a["player_b"])
        r = int(np.flatnonzero((c.i == i) & (c.j == j))[0])
        o, m = cell[a["outcome"]], a["count"]
        if a["kind"] == "drop":
            table[r, o] -= m
        elif a["kind"] == "flip":
            table[r, o] -= m
            table[r, cell[a["to"]]] += m
        else:
            table[r, o] += m
    assert (table >= 0).all()
    return table


def _assert_break_is_minimal_by_scipy(davidson, c, actions):
    """The logged actions replayed on the counts ``c``: scipy's Davidson refit has another #1; with one
    action fewer the #1 stays."""
    top = int(np.argmax(davidson.theta))
    after = _replay_cells(c, actions)
    assert int(np.argmax(davidson_scipy(c.i, c.j, after, c.n_players)[0])) != top
    last = actions.iloc[[-1]].assign(count=actions["count"].iloc[-1] - 1)
    before = _replay_cells(c, pd.concat([actions.iloc[:-1], last]))
    assert int(np.argmax(davidson_scipy(c.i, c.j, before, c.n_players)[0])) == top


@pytest.mark.parametrize("kind", ["drop", "flip", "add"])
def test_davidson_top1_break_verified_by_scipy(davidson, kind):
    """The verified Davidson top-1 break, replayed on the counts and refitted by scipy: another player
    is #1; with one action fewer the #1 stays."""
    from bayesrank.influence.greedy import state_for

    res = greedy_audit(davidson, "top1", kind)
    assert res.broken and res.verified, res.reason
    assert "ties=davidson" in res.model
    c = state_for(davidson, kind).counts
    _assert_break_is_minimal_by_scipy(davidson, c, res.actions)


def test_davidson_with_features_and_its_audit():
    """Davidson ties with style features on comparison rows: the fit equals scipy's maximisation
    with the features (1e-6), and the verified flip break changes the #1 in scipy's refit of the
    replayed rows (the package's refit of the same rows agrees to 1e-6)."""
    from tests.influence.style_reference import replay

    rows = pair_rows(Comparisons.from_frame(_frame()), STYLE, ordered=True, per_comparison=True)
    st = BTState.fit(rows, ties="davidson")
    theta, beta, lam = davidson_scipy(rows.i, rows.j, rows.counts, rows.n_players, rows.X)
    np.testing.assert_allclose(st.theta, theta, atol=1e-6)
    np.testing.assert_allclose(st.params[st.n_players:-1], beta, atol=1e-6)
    res = greedy_audit(st, "top1", "flip")
    assert res.broken and res.verified, res.reason
    b = replay(rows, res.actions)
    counts = _counts_of(rows, b)
    theta_after = davidson_scipy(b.i, b.j, counts, rows.n_players, b.X)[0]
    assert int(np.argmax(theta_after)) != int(np.argmax(st.theta))
    assert str(rows.players[np.argmax(theta_after)]) == res.final_top[0]


def _counts_of(_rows, b):
    """(n,3) outcome counts of replayed comparison rows: shares 1/0 are wins, ½ a tie."""
    out = np.zeros((len(b.share), 3))
    tie = np.isclose(b.share, 0.5)
    out[~tie, 0] = b.share[~tie] * b.total[~tie]
    out[~tie, 1] = (1 - b.share[~tie]) * b.total[~tie]
    out[tie, 2] = b.total[tie]
    return out


# ------------------------------------------------------------------------------------ position effect
def glm_position(i, j, y, total, k):
    """statsmodels' logistic GLM with an intercept (first-listed side) on the ±1 player design:
    (θ on Σθ = 0, α)."""
    import statsmodels.api as sm

    z = np.zeros((len(i), k))
    z[np.arange(len(i)), i] += 1
    z[np.arange(len(i)), j] -= 1
    keep = total > 0
    res = sm.GLM(y[keep], np.column_stack([np.ones(keep.sum()), z[keep, 1:]]), family=sm.families.Binomial(),
                 freq_weights=total[keep]).fit(tol=1e-13)
    theta = np.concatenate([[0.0], res.params[1:]])
    return theta - theta.mean(), res.params[0]


@pytest.fixture(scope="module")
def position_state():
    frame = _frame(tie_rate=0.0, seed=7)
    frame["model_a"], frame["model_b"] = frame["model_a"].astype(str), frame["model_b"].astype(str)
    return BTState.fit(pair_rows(Comparisons.from_frame(frame), (), ordered=True, per_comparison=True),
                       position=True)


def test_position_fit_and_refits_equal_statsmodels(position_state):
    st = position_state
    d = st.counts
    theta, alpha = glm_position(d.i, d.j, d.share, d.total, d.n_players)
    np.testing.assert_allclose(st.theta, theta, atol=1e-6)
    assert st.params[st.n_players] == pytest.approx(alpha, abs=1e-6)
    for kind in ("drop", "flip", "add"):
        cand = candidates(st, kind)
        for idx in np.random.default_rng(1).choice(len(cand), 4, replace=False):
            new = apply(d, cand, idx, 1.0)
            refit = st.refit(new)
            theta, alpha = glm_position(new.i, new.j, new.share, new.total, new.n_players)
            np.testing.assert_allclose(refit.theta, theta, atol=1e-6)
            assert refit.params[st.n_players] == pytest.approx(alpha, abs=1e-6)


@pytest.mark.parametrize("kind", ["drop", "flip", "add"])
def test_position_audit_break_verified_by_statsmodels(position_state, kind):
    from tests.influence.style_reference import replay

    st = position_state
    res = greedy_audit(st, "top1", kind)
    assert res.broken and res.verified, res.reason and "position effect" in res.model
    b = replay(st.counts, res.actions)
    theta, _ = glm_position(b.i, b.j, b.share, b.total, b.n_players)
    assert str(st.players[np.argmax(theta)]) == res.final_top[0] != res.reference_top[0]


# ------------------------------------------------------------------------------------ clusters
@pytest.fixture(scope="module")
def prompts():
    """Simulated comparisons with a ``prompt`` column of 80 integer labels (one comparison per row)."""
    frame = _frame(tie_rate=0.0, seed=5, n=1200, k=5)
    frame["prompt"] = np.random.default_rng(2).integers(0, 80, len(frame))
    return frame


@pytest.fixture(scope="module")
def clustered(prompts):
    rows = pair_rows(Comparisons.from_frame(prompts), (), cluster="prompt", ordered=True, per_comparison=True)
    return BTState.fit(rows)


def _glm_theta(i, j, y, total, k):
    import statsmodels.api as sm

    z = np.zeros((len(i), k))
    z[np.arange(len(i)), i] += 1
    z[np.arange(len(i)), j] -= 1
    keep = total > 0
    res = sm.GLM(y[keep], z[keep, 1:], family=sm.families.Binomial(), freq_weights=total[keep]).fit(tol=1e-13)
    theta = np.concatenate([[0.0], res.params])
    return theta - theta.mean()


def test_cluster_drop_refit_equals_a_fit_without_the_cluster(clustered):
    """Dropping one cluster = statsmodels' GLM of the rows of the other clusters (1e-6); the 1sN of
    a whole-cluster drop (Woodbury over the cluster's rows) tracks the exact refits over every
    cluster (Spearman ≥ 0.99 for the top-1 gap)."""
    st = clustered
    d = st.counts
    cand = candidates(st, "drop-cluster")
    assert len(cand) == d.n_clusters
    obj = TopK(st, 1)
    f0 = obj.value(st.theta)
    exact = []
    for n in range(len(cand)):
        refit = st.refit(apply(d, cand, n, 1.0))
        exact.append(obj.value(refit.theta) - f0)
        if n < 5:
            keep = d.cluster != cand.r[n]
            np.testing.assert_allclose(refit.theta, _glm_theta(d.i[keep], d.j[keep], d.share[keep], d.total[keep],
                                                               d.n_players), atol=1e-6)
    one = obj.delta(st, cand, 1.0, "1sN")
    assert spearmanr(one, exact).statistic >= 0.99
    assert np.max(np.abs(one - np.array(exact))) <= np.max(np.abs(obj.delta(st, cand, 1.0, "first") - exact)) + 1e-15


def test_drop_cluster_audit_counts_clusters_and_is_verified(clustered, prompts):
    """How many prompts must be removed: the budget counts clusters, the witnesses name the prompts
    by their labels in the data, the break is confirmed by statsmodels on the rows of the remaining
    prompts, and keeping the last dropped prompt keeps the #1."""
    st = clustered
    d = st.counts
    rep = audit(st, "top1", ["drop-cluster"], budget=40)
    res = rep["drop-cluster"]
    assert res.broken and res.verified, res.reason
    assert res.unit == "clusters" and res.n_matches == d.n_clusters and res.budget == len(res.actions)
    gone = res.actions["cluster"].to_numpy()
    label = prompts["prompt"].to_numpy()  # the rows are the comparisons in the frame's order
    assert set(gone) <= set(label)
    keep = ~np.isin(label, gone)
    theta = _glm_theta(d.i[keep], d.j[keep], d.share[keep], d.total[keep], d.n_players)
    assert str(d.players[np.argmax(theta)]) == res.final_top[0] != res.reference_top[0]
    keep = ~np.isin(label, gone[:-1])
    theta = _glm_theta(d.i[keep], d.j[keep], d.share[keep], d.total[keep], d.n_players)
    assert str(d.players[np.argmax(theta)]) == res.reference_top[0]
    from bayesrank.protocol import validate

    validate(rep.to_dict(), "audit")


def test_zero_feature_rows_audit_equals_the_pair_count_audit():
    """Comparison rows without features (one-hot outcomes) and their pair counts are the same model:
    the same top-1 budgets for drop and flip."""
    frame = _frame(tie_rate=0.0, seed=4, n=2000, k=7)
    comps = Comparisons.from_frame(frame)
    rows = BTState.fit(pair_rows(comps, (), per_comparison=True))
    cells = BTState.fit(comps.aggregate())
    np.testing.assert_allclose(rows.theta, cells.theta, atol=1e-9)
    for kind in ("drop", "flip"):
        a, b = greedy_audit(rows, "top1", kind), greedy_audit(cells, "top1", kind)
        assert a.broken and b.broken and a.budget == b.budget, (kind, a.budget, b.budget)


# ------------------------------------------------------------------------------------ Davidson CI objectives
def davidson_covariance(i, j, counts, k, X=None):
    """(θ on Σθ = 0, its covariance) of the Davidson MLE: scipy's maximisation (:func:`davidson_scipy`)
    and the inverse of the numerical Hessian (central differences of the gradient written here) in
    the free parameters (θ_1..θ_{K-1}, β, λ), mapped to the centred θ by ``A = I − 11ᵀ/K``."""
    p = 0 if X is None else X.shape[1]
    theta, beta, lam = davidson_scipy(i, j, counts, k, X)
    z0 = np.concatenate([theta[1:] - theta[0], beta, [lam]])

    def grad(z):
        th = np.concatenate([[0.0], z[: k - 1]])
        eta = th[i] - th[j] + (0.0 if X is None else X @ z[k - 1:k - 1 + p])
        a = np.column_stack([eta / 2, -eta / 2, np.full(len(eta), z[-1])])
        prob = np.exp(a - a.max(axis=1, keepdims=True))
        prob /= prob.sum(axis=1, keepdims=True)
        resid = counts.sum(axis=1)[:, None] * prob - counts
        g_eta = 0.5 * (resid[:, 0] - resid[:, 1])
        g_theta = np.bincount(i, g_eta, k) - np.bincount(j, g_eta, k)
        return np.concatenate([g_theta[1:], [] if X is None else X.T @ g_eta, [resid[:, 2].sum()]])

    h = 1e-5
    hess = np.column_stack([(grad(z0 + h * e) - grad(z0 - h * e)) / (2 * h) for e in np.eye(len(z0))])
    cov = np.linalg.inv(0.5 * (hess + hess.T))
    a = np.eye(k) - 1.0 / k
    c = np.zeros((k, k))
    c[1:, 1:] = cov[: k - 1, : k - 1]
    return theta, a @ c @ a


@pytest.fixture(scope="module")
def davidson_small():
    """A small Davidson panel (600 comparisons, 6 players, 20% ties) as pair counts and as comparison
    rows with two style features."""
    comps = Comparisons.from_frame(_frame(n=600))
    cells = BTState.fit(comps.aggregate(), ties="davidson")
    rows = BTState.fit(pair_rows(comps, STYLE, ordered=True, per_comparison=True), ties="davidson")
    return {"cells": cells, "rows": rows}


def _davidson_variance(b, objective, k, features):
    """The objective's variance (ci-player: θ_t's, ci-trace: Σ_t) of scipy's refit of replayed data
    ``b`` (a count table on pair cells, or replayed comparison rows)."""
    if isinstance(b, tuple):
        c, table = b
        _, cov = davidson_covariance(c.i, c.j, table, k)
    else:
        _, cov = davidson_covariance(b.i, b.j, _counts_of(None, b), k, b.X if features else None)
    if objective == "ci-trace":
        return float(np.trace(cov))
    return float(cov[objective[1], objective[1]])


def _replayed(data, st, actions):
    from tests.influence.style_reference import replay

    return (st.counts, _replay_cells(st.counts, actions)) if data == "cells" else replay(st.counts, actions)


@pytest.mark.parametrize("data", ["cells", "rows"])
@pytest.mark.parametrize("target", ["leader", "trace"])
def test_davidson_ci_breaks_verified_by_scipy_refits(davidson_small, data, target):
    """CI objectives under Davidson ties (pair counts; comparison rows with features): the audit's
    reference variance equals the inverse numerical Hessian of scipy's maximisation (1e-6 relative);
    every reported break (drops and flips inflating the variance to 1.15×, adds reducing it to
    0.9×), replayed on the data here and refitted by scipy, reaches the ratio, and with the last
    action one comparison smaller it does not."""
    st = davidson_small[data]
    k = st.n_players
    lead = int(np.argmax(st.theta))
    spec = "ci-trace" if target == "trace" else f"ci-player:{st.players[lead]}"
    which = "ci-trace" if target == "trace" else ("ci-player", lead)
    features = data == "rows"
    c0 = st.counts
    base = (c0, c0.counts) if data == "cells" else SimpleNamespace(i=c0.i, j=c0.j, X=c0.X, share=c0.share,
                                                                   total=c0.total)
    v0 = _davidson_variance(base, which, k, features)
    for kind, mode, ratio in (("drop", "inflate", 1.15), ("flip", "inflate", 1.15), ("add", "reduce", 0.9)):
        res = greedy_audit(st, spec, kind, budget=60, ci_mode=mode, ci_ratio=ratio)
        assert res.objective_details["v0"] == pytest.approx(v0, rel=1e-6)
        assert res.broken and res.verified, (kind, res.reason)
        after = _davidson_variance(_replayed(data, st, res.actions), which, k, features) / v0
        last = res.actions.iloc[[-1]].assign(count=res.actions["count"].iloc[-1] - 1)
        fewer = pd.concat([res.actions.iloc[:-1], last]) if last["count"].iloc[0] > 0 else res.actions.iloc[:-1]
        before = _davidson_variance(_replayed(data, st, fewer), which, k, features) / v0
        if mode == "inflate":
            assert after >= ratio - 1e-6 and before < ratio + 1e-6, (kind, before, after)
        else:
            assert after <= ratio + 1e-6 and before > ratio - 1e-6, (kind, before, after)


def test_davidson_ci_screen_ranks_flips_like_exact_refits(davidson_small):
    """Under Davidson ties a flip leaves the curvature at φ̂ unchanged (the softmax Hessian does not
    depend on the outcome): the CI objectives' linear screen must carry the φ-shift term
    ``−qᵀΔφ`` (third derivatives of the tie model), else it ranks flips at random. Over 40 flips of
    the feature model: Spearman ≥ 0.99 against exact refits."""
    st = davidson_small["rows"]
    lead = str(st.players[np.argmax(st.theta)])
    cand = candidates(st, "flip")
    sub = cand.take(np.random.default_rng(0).choice(len(cand), 40, replace=False))
    for spec in ("ci-trace", f"ci-player:{lead}"):
        obj = parse_objective(spec, st)
        f0 = obj.value_at(st)
        exact = np.array([obj.value_at(st.refit(apply(st.counts, sub, n, 1.0))) - f0 for n in range(len(sub))])
        assert spearmanr(obj.delta(st, sub, 1.0, "linear"), exact).statistic >= 0.99


def _nba_leader_without(dates):
    """statsmodels' logistic GLM of the raw NBA file (read here with pandas: the home team wins when
    it scored more) without the games of ``dates``: the leader's name."""
    import statsmodels.api as sm

    from bayesrank.datasets import path

    games = pd.read_csv(path("nba"))
    games = games[~games["date"].isin(list(dates))]
    teams = sorted(set(games["home_team"]) | set(games["away_team"]))
    idx = {t: n for n, t in enumerate(teams)}
    z = np.zeros((len(games), len(teams)))
    z[np.arange(len(games)), games["home_team"].map(idx)] += 1
    z[np.arange(len(games)), games["away_team"].map(idx)] -= 1
    y = (games["home_pts"] > games["away_pts"]).to_numpy(float)
    res = sm.GLM(y, z[:, 1:], family=sm.families.Binomial()).fit(tol=1e-13)
    return teams[int(np.argmax(np.concatenate([[0.0], res.params])))]


def test_drop_cluster_witnesses_name_string_cluster_labels(tmp_path, capsys):
    """A real file with string cluster ids (NBA 2023-24 clustered by game day, ``date``): the CLI's
    drop-cluster witnesses — its table, its JSON (schema-valid) — name the dates of the file, not
    integer codes; removing those days' games from the raw file and refitting with statsmodels
    changes the leader, keeping the last day keeps it."""
    import json

    from bayesrank.cli import main
    from bayesrank.datasets import path
    from bayesrank.protocol import validate

    out = tmp_path / "audit.json"
    assert main(["audit", "nba", "--cluster", "date", "--actions", "drop-cluster", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    d = json.loads(out.read_text())
    validate(d, "audit")
    res = d["audits"]["drop-cluster"]
    assert res["broken"] and res["verified"] and res["unit"] == "clusters"
    gone = [a["cluster"] for a in res["actions"]]
    days = set(pd.read_csv(path("nba"))["date"])
    assert len(gone) == res["budget"] and all(isinstance(g, str) and g in days for g in gone)
    assert all(g in printed for g in gone)
    assert _nba_leader_without(gone) == res["final_top"][0] != res["reference_top"][0]
    assert _nba_leader_without(gone[:-1]) == res["reference_top"][0]


# ------------------------------------------------------------------ sampled adds under Davidson
def _davidson_probs(st):
    """[i wins, j wins, tie] of each row at the state's (θ, λ), by the Davidson formula written in
    :func:`davidson_scipy`."""
    c = st.counts
    eta = st.theta[c.i] - st.theta[c.j]
    a = np.column_stack([eta / 2, -eta / 2, np.full(len(eta), st.params[-1])])
    return np.exp(a) / np.exp(a).sum(axis=1, keepdims=True)


def test_davidson_sampled_adds_draw_ties_with_the_model_probability(davidson):
    """The n-th comparison added to row r: i wins iff U < P(i), a tie iff U ≥ 1 − P(tie),
    U = numpy.random.default_rng([seed, r]).random(n) (the documented rule, regenerated here); the
    tie frequency over all rows follows the Davidson tie probabilities (within 3 binomial SEs)."""
    from bayesrank.influence.actions import OutcomeStream
    from bayesrank.influence.greedy import state_for

    st = state_for(davidson, "add_sampled")
    prob = _davidson_probs(st)
    stream = OutcomeStream(st.model.outcome_probs(st.eta(), st.params[-1:]), seed=3)
    n = 400
    got = np.array([stream.outcomes(r, n)[:n] for r in range(st.counts.n_rows)])
    u = np.array([np.random.default_rng([3, r]).random(n) for r in range(st.counts.n_rows)])
    ref = np.where(u < prob[:, :1], 0, np.where(u >= 1 - prob[:, 2:], 2, 1))
    np.testing.assert_array_equal(got, ref)
    for o in range(3):
        z = ((got == o).sum() - n * prob[:, o].sum()) / np.sqrt(n * (prob[:, o] * (1 - prob[:, o])).sum())
        assert abs(z) < 3, (o, z)


@pytest.fixture(scope="module")
def davidson_close():
    """Davidson on 30 nearly equal players (skill SD 0.1, 435 pairs): a leader that sampled adds can
    unseat (the actor picks among many rows whose next drawn outcome works against the #1; with a
    handful of pairs every row's next draw can favour the leader and the audit stops)."""
    frame, _, _ = simulate_style_battles(n_players=30, n_battles=4000, beta=(0.6, -0.3), tie_rate=0.2, seed=4,
                                         theta_sd=0.1)
    return BTState.fit(Comparisons.from_frame(frame).aggregate(), ties="davidson")


def test_davidson_sampled_add_audit_verified_by_scipy(davidson_close):
    """A Davidson ``add_sampled`` top-1 audit follows the three-outcome stream in order, and its break,
    replayed on the counts, is confirmed by scipy's refit (one comparison fewer keeps the #1)."""
    from bayesrank.influence.greedy import state_for

    seed, davidson = 2, davidson_close
    res = greedy_audit(davidson, "top1", "add_sampled", seed=seed)
    assert res.broken and res.verified, res.reason
    st = state_for(davidson, "add_sampled")
    c, prob = st.counts, _davidson_probs(st)
    names = list(map(str, c.players))
    pos: dict[int, int] = {}
    code = {"a_wins": 0, "b_wins": 1, "tie": 2}
    for row in res.actions.itertuples():
        i, j = names.index(row.player_a), names.index(row.player_b)
        r = int(np.flatnonzero((c.i == i) & (c.j == j))[0])
        start, m = pos.get(r, 0), int(row.count)
        u = np.random.default_rng([seed, r]).random(start + m)[start:]
        drawn = np.where(u < prob[r, 0], 0, np.where(u >= 1 - prob[r, 2], 2, 1))
        assert (drawn == code[row.outcome]).all()
        pos[r] = start + m
    _assert_break_is_minimal_by_scipy(davidson, c, res.actions)


def test_davidson_weighted_adds_are_the_expected_outcome_and_leave_the_mle(davidson):
    """``add_weighted`` under Davidson adds the model's expected outcome (P_i, P_j, P_tie) — the
    formula written here — and, as for binary models, leaves the MLE where it is: 50 expected
    comparisons on each of three rows, refitted by scipy, give the same θ̂ and λ̂."""
    from bayesrank.influence.greedy import state_for

    st = state_for(davidson, "add_weighted")
    cand = candidates(st, "add_weighted")
    prob = _davidson_probs(st)
    np.testing.assert_allclose(cand.delta, prob[cand.r], atol=1e-12)
    c = st.counts
    table = c.counts.astype(float).copy()
    for r in (0, 5, 9):
        table[r] += 50 * prob[r]
    theta, _, lam = davidson_scipy(c.i, c.j, table, c.n_players)
    np.testing.assert_allclose(theta, st.theta, atol=1e-5)
    assert lam == pytest.approx(st.params[-1], abs=1e-5)
    res = greedy_audit(davidson, "top1", "add_weighted", budget=50)
    assert not res.broken and "unchanged" in res.reason
