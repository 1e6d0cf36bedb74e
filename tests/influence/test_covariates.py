"""Audits of the style-controlled BT (the one audit engine on comparison rows): the 1sN formula equals one
explicit Newton step on the perturbed loss, influence scores agree with exact refits, greedy
breaks are verified by cold-start refits (and by statsmodels), JSON schema."""

import json

import jsonschema
import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from bayesrank.bt.likelihood import tie_model
from bayesrank.bt.mle import objective
from bayesrank.bt.simulate import simulate_style_battles
from bayesrank.data.aggregate import pair_rows as battle_data
from bayesrank.data.comparisons import Comparisons
from bayesrank.influence import audit
from bayesrank.influence.actions import apply, candidates
from bayesrank.influence.greedy import greedy_audit
from bayesrank.influence.objectives import PairMargin, TopK
from bayesrank.influence.scores import influence_table
from bayesrank.influence.state import BTState
from bayesrank.protocol import validate
from tests.influence.style_reference import glm, replay

STYLE = "s0_a:s0_b,s1_a:s1_b"


@pytest.fixture(scope="module")
def state():
    frame, _, _ = simulate_style_battles(n_players=6, n_battles=1500, beta=(0.6, -0.3), tie_rate=0.1, seed=4,
                                         theta_sd=0.5)
    return BTState.fit(battle_data(Comparisons.from_frame(frame), STYLE))


@pytest.mark.parametrize("kind", ["drop", "flip", "add"])
def test_one_step_newton_is_one_newton_step(state, kind):
    """Sherman–Morrison 1sN = φ̂ − (H' + uuᵀ/K)⁻¹ ∇L'(φ̂) computed on the perturbed data."""
    cand = candidates(state, kind)
    k = state.n_players
    u = np.zeros(len(state.params))
    u[:k] = 1.0
    rng = np.random.default_rng(0)
    for idx in rng.choice(len(cand), 5, replace=False):
        m = 1.0 if kind != "add" else 3.0
        new = apply(state.counts, cand, idx, m)
        _, g, h = objective(tie_model("half"), new, state.params[None])
        step = np.linalg.solve(h[0] + np.outer(u, u) / k, g[0])
        np.testing.assert_allclose(state.params + state.shift(cand, m, "1sN", [idx])[0], state.params - step, atol=1e-10)


@pytest.mark.parametrize("kind", ["drop", "flip", "add"])
def test_influence_scores_match_exact_refits(state, kind):
    """Predicted change of the top-1 gap vs the exact refit for 150 single-battle actions:
    Spearman ≥ 0.99 and absolute error ≤ 2% of the spread for the 1sN (better than first order)."""
    cand = candidates(state, kind)
    obj = TopK(state, 1)
    f0 = obj.value(state.theta)
    idx = np.random.default_rng(1).choice(len(cand), 150, replace=False)
    exact = np.array([obj.value(state.refit(apply(state.counts, cand, n, 1.0)).theta) - f0
                      for n in idx])
    sub = cand.take(idx)
    one = obj.delta(state, sub, 1.0, "1sN")
    first = obj.delta(state, sub, 1.0, "first")
    spread = exact.max() - exact.min()
    assert spearmanr(one, exact).statistic >= 0.99
    assert np.max(np.abs(one - exact)) <= 0.02 * spread
    assert np.max(np.abs(one - exact)) <= np.max(np.abs(first - exact)) + 1e-15


def test_row_influence_table(state):
    t = influence_table(state, TopK(state, 1), "drop")
    assert {"player_a", "player_b", "first_order", "one_step_newton", "leverage"} <= set(t.columns)
    assert t["one_step_newton"].is_monotonic_increasing and len(t) == state.counts.n_rows


@pytest.mark.parametrize("kind", ["flip", "drop", "add"])
def test_greedy_audit_breaks_top1_verified(state, kind, tmp_path):
    res = greedy_audit(state, "top1", kind)
    assert res.broken and res.verified, res.reason
    assert res.budget == int(res.actions["count"].sum())
    assert res.final_top != res.reference_top
    # one battle fewer (the last action shortened by one) does not break: the budget is tight at the last step
    # (statsmodels' refit of the independently replayed battles)
    last = res.actions.iloc[-1]
    data = state.counts
    for _, a in res.actions.iloc[:-1].iterrows():
        data = _redo(data, a, a["count"])
    if last["count"] > 1:
        data = _redo(data, last, last["count"] - 1)
    assert not TopK(state, 1).broken(glm(data)[0])
    json.dumps(res.to_dict(), allow_nan=False)
    assert "BROKEN" in res.summary()


def _redo(data, a, m):
    """Re-apply a logged action, ``m`` times."""
    return replay(data, [dict(a, count=m)])


def test_top1_break_confirmed_by_statsmodels(state):
    """Independent check of a verified break: statsmodels' logistic GLM on the perturbed battles
    (player contrasts + features) ranks a different player first."""
    res = greedy_audit(state, "top1", "flip")
    data = replay(state.counts, res.actions)
    assert str(data.players[np.argmax(glm(data)[0])]) == res.final_top[0] != res.reference_top[0]


def test_not_broken_within_budget_reported_honestly(state):
    rep = audit(state, "top1", ["flip"], budget=1)
    res = rep["flip"]
    assert not res.broken and res.budget is None and res.fraction is None and not res.verified
    assert "not broken" in res.reason
    d = rep.to_dict()
    validate(d, "audit")
    d["audits"]["flip"]["budget"] = 3
    with pytest.raises(jsonschema.ValidationError):
        validate(d, "audit")  # a budget without a break is invalid


def test_plain_model_audit_equals_aggregated_bt_refits():
    """Without features the row-level audit state is the plain BT fit on pair counts."""
    from bayesrank.bt.mle import fit_newton

    frame, _, _ = simulate_style_battles(n_players=5, n_battles=600, beta=(0.3,), seed=9)
    d = battle_data(Comparisons.from_frame(frame), per_comparison=True)
    st = BTState.fit(d)
    np.testing.assert_allclose(st.params, fit_newton(d.pairs(), "half")[0], atol=1e-9)
    res = greedy_audit(st, "top1", "flip", budget=300)
    assert res.broken and res.verified, res.reason
    assert res.model == "BT (ties=half)" and isinstance(res.actions, pd.DataFrame)


def test_ci_aware_audit_break_is_significant(state, tmp_path):
    """CI-aware top-1: the verified break leaves an outsider *significantly* ahead of the reference
    #1 (pairwise contrast with the cold refit's own Fisher covariance), hence also ahead in the
    point estimates; it needs more flips than the point-estimate audit here."""
    from statistics import NormalDist

    point = greedy_audit(state, "top1", "flip")
    res = greedy_audit(state, "top1", "flip", ci_aware=True, budget=2000)
    assert res.objective == "top1+ci" and res.broken and res.verified, res.reason
    theta, h = glm(replay(state.counts, res.actions))  # statsmodels' Fisher covariance of the replayed battles
    top = int(np.flatnonzero(state.players == res.reference_top[0])[0])
    z = NormalDist().inv_cdf(0.975)
    sd = np.sqrt(h[top, top] + np.diag(h) - 2 * h[top])
    ahead = (theta - theta[top]) > z * np.where(np.arange(state.n_players) == top, np.inf, sd)
    assert ahead.any()
    assert res.budget > point.budget
    json.dumps(res.to_dict(), allow_nan=False)


def test_audit_plot(state):
    fig = greedy_audit(state, "top1", "flip").plot()
    assert fig.axes[0].get_xlabel() == "comparisons (flip)"


@pytest.mark.parametrize("goal", ["demote", "promote"])
def test_targeted_audit(state, goal, tmp_path):
    """Demote the #1 out of the top 2 / promote the #4 into it: the cold refit puts the target
    out of / into the top 2."""
    order = state.ranking()
    target = str(state.players[order[0] if goal == "demote" else order[3]])
    res = greedy_audit(state, "topk:2", "flip", target=target, goal=goal)
    assert res.objective == f"{goal}:{target}@top2" and res.broken and res.verified, res.reason
    in_top = target in [str(p) for p in state.players[np.argsort(-res.final_theta)[:2]]]
    assert in_top == (goal == "promote")
    json.dumps(res.to_dict(), allow_nan=False)
    with pytest.raises(Exception, match="nothing to"):
        greedy_audit(state, "topk:2", "flip", target=target, goal="promote" if goal == "demote" else "demote")


@pytest.mark.parametrize("kind", ["drop", "flip"])
def test_pair_claim_audit_verified_and_tight(state, kind):
    """"A is ahead of B" on the style-adjusted fit (2nd vs 3rd player): the verified break reverses
    the pair on an exact refit, and one battle fewer does not."""
    order = [str(p) for p in state.players[state.ranking()]]
    a, b = order[1], order[2]
    res = greedy_audit(state, f"pair:{a}>{b}", kind)
    assert res.broken and res.verified, res.reason
    assert res.objective == f"{a}>{b}" and res.reference_top == [a, b] and res.final_top == [b, a]
    data = state.counts
    for _, act in res.actions.iloc[:-1].iterrows():
        data = _redo(data, act, act["count"])
    last = res.actions.iloc[-1]
    ia, ib = state.counts.index_of(a), state.counts.index_of(b)
    full = glm(_redo(data, last, last["count"]))[0]  # statsmodels on the independently replayed battles
    assert full[ia] < full[ib]
    if last["count"] > 1:
        short = glm(_redo(data, last, last["count"] - 1))[0]
        assert not PairMargin(state, a, b).broken(short)
    with pytest.raises(Exception, match="does not hold"):
        PairMargin(state, b, a)
