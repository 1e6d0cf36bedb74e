"""Greedy audits: verified breaks, brute-force and baseline comparisons, budgets, CI modes."""

import numpy as np
import pytest

from bayesrank.bt.mle import fit_newton
from bayesrank.influence.audit import greedy_audit, robustness_scores
from bayesrank.influence.baselines import active_sampling, exact_greedy_audit, random_audit, rigging_audit
from bayesrank.influence.objectives import CIObjective, SmoothTau, TopK


def _replay(state, result):
    """Apply the audit's reported actions to the original counts and refit independently."""
    c = state.counts
    table = c.counts.copy()
    names = list(map(str, c.players))
    outcome = {"i_wins": 0, "j_wins": 1, "tie": 2}
    for row in result.actions.to_dict(orient="records"):
        i, j = names.index(row["player_i"]), names.index(row["player_j"])
        r = np.flatnonzero((c.i == i) & (c.j == j))
        o = outcome[row["outcome"]]
        if row["kind"] == "drop":
            table[r, o] -= row["count"]
        elif row["kind"] == "flip":
            table[r, o] -= row["count"]
            table[r, 1 - o] += row["count"]
        else:
            table[r, o] += row["count"]
    return fit_newton(c.with_counts(table), ties=state.ties)[0], table


@pytest.mark.parametrize("kind", ["drop", "flip"])
def test_top1_break_is_real_and_matches_brute_force(nba, kind):
    res = greedy_audit(nba, TopK(nba, 1), kind)
    assert res.broken and res.verified and res.budget == res.actions["count"].sum()
    theta, table = _replay(nba, res)
    leader = nba.ranking()[0]
    assert np.argmax(theta) != leader  # independent refit: the leader changed
    assert table.sum() == pytest.approx(nba.counts.counts.sum() - (res.budget if kind == "drop" else 0))
    # one fewer action does not break it (minimality of the trimmed last step)
    brute = exact_greedy_audit(nba, TopK(nba, 1), kind, budget=res.budget + 3)
    assert brute["broken"]
    assert res.budget <= brute["budget"] + 1  # influence greedy within one action of exact greedy
    rand = [random_audit(nba, TopK(nba, 1), kind, budget=5 * res.budget, seed=s)["budget"] for s in range(3)]
    assert all(b is None or b > res.budget for b in rand)


def test_budget_never_reached_is_not_a_break(nba):
    res = greedy_audit(nba, TopK(nba, 1), "drop", budget=2)
    assert not res.broken and res.budget is None and res.fraction is None and not res.verified
    assert "not broken within budget" in res.reason
    assert robustness_scores([res]) == {"R_top1": {"drop": None}}


def test_add_weighted_cannot_move_ranks(nba):
    """Expected-outcome adds have zero first-order effect on θ: reported as not broken."""
    res = greedy_audit(nba, TopK(nba, 1), "add_weighted", budget=50)
    assert not res.broken and res.budget is None


def test_ci_aware_needs_more_actions(llmfao):
    point = greedy_audit(llmfao, TopK(llmfao, 1), "drop")
    aware = greedy_audit(llmfao, TopK(llmfao, 1, ci_aware=True), "drop")
    assert point.verified and aware.verified
    assert aware.budget > point.budget
    # the CI-aware break is significant: challenger above the old leader by > 1.96 sd at the end
    obj = TopK(llmfao, 1, ci_aware=True)
    assert obj.value(aware.final_theta, None) < 0


def test_targeted_promotion_beats_rigging(nba):
    target = str(nba.players[nba.ranking()[4]])
    obj = TopK(nba, 1, target=target, goal="promote")
    res = greedy_audit(nba, obj, "add")
    assert res.broken and res.verified
    theta, _ = _replay(nba, res)
    assert np.argmax(theta) == nba.counts.index_of(target)
    rig = rigging_audit(nba, obj, budget=300, variant="target_only", seed=0)
    assert rig["budget"] is None or rig["budget"] > res.budget
    bt_diff = rigging_audit(nba, obj, budget=3 * res.budget, variant="bt_diff", seed=0)
    assert bt_diff["budget"] is None or bt_diff["budget"] > res.budget


def test_demote_and_topk_and_tau(llmfao):
    order = llmfao.ranking()
    res = greedy_audit(llmfao, TopK(llmfao, 5, target=str(llmfao.players[order[2]]), goal="demote"), "flip")
    theta, _ = _replay(llmfao, res)
    assert res.verified and order[2] not in np.argsort(-theta)[:5]
    tau = SmoothTau(llmfao, threshold=0.95)
    res = greedy_audit(llmfao, tau, "flip")
    theta, _ = _replay(llmfao, res)
    assert res.verified and tau.hard_tau(theta) <= 0.95


def test_constructive_ci_reduction_beats_active_sampling(nba):
    target = str(nba.players[nba.ranking()[0]])
    obj = CIObjective(nba, target, mode="reduce", ratio=0.8)
    res = greedy_audit(nba, obj, "add_weighted", budget=200)
    assert res.broken and res.verified
    active = active_sampling(nba, target, budget=res.budget)
    assert active["variance"].iloc[-1] > 0.8 * obj.v0  # uncertainty sampling has not reached it yet


def test_ci_aware_promotion_is_significant(nba):
    """CI-aware promote into the top-3: at the verified end the target is above all but 2 others
    by more than 1.96 sd of the difference (independent refit and Fisher covariance)."""
    from bayesrank.bt.mle import constrained_covariance

    target = "Los Angeles Clippers"
    res = greedy_audit(nba, TopK(nba, 3, target=target, goal="promote", ci_aware=True), "flip")
    assert res.broken and res.verified
    _, table = _replay(nba, res)
    theta, hess, _, _ = fit_newton(nba.counts.with_counts(table))
    cov = constrained_covariance(hess, nba.n_players)
    t = nba.counts.index_of(target)
    others = [b for b in range(nba.n_players) if b != t]
    sd = np.sqrt([cov[t, t] + cov[b, b] - 2 * cov[t, b] for b in others])
    significantly_below = (theta[t] - theta[others]) > 1.959963984540054 * sd
    assert significantly_below.sum() >= nba.n_players - 3
    point = greedy_audit(nba, TopK(nba, 3, target=target, goal="promote"), "flip")
    assert point.budget < res.budget


def test_action_set_one_step_newton(llmfao):
    """1sN for a whole action set (the audit's drops) vs exact refit: closer than first order."""
    from bayesrank.influence.scores import action_set_prediction

    res = greedy_audit(llmfao, TopK(llmfao, 1), "drop")
    theta, table = _replay(llmfao, res)
    first = action_set_prediction(llmfao, table, "first")
    newton = action_set_prediction(llmfao, table, "1sN")
    err_first = np.abs(first - theta).max()
    err_newton = np.abs(newton - theta).max()
    assert err_newton < err_first and err_newton < 0.1 * np.abs(theta - llmfao.theta).max()
