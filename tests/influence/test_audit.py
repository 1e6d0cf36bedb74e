"""Greedy audits: verified breaks replayed and refitted independently, minimality of the last step,
brute-force and baseline comparisons, budgets, CI-aware significance by the leaderboard's rule."""

from statistics import NormalDist

import numpy as np
import pytest

from bayesrank.bt.mle import constrained_covariance, fit_newton
from bayesrank.influence.actions import candidates
from bayesrank.influence.baselines import active_sampling, exact_greedy_audit, random_audit, rigging_audit
from bayesrank.influence.greedy import WEIGHTED_ADD_NOTE, greedy_audit
from bayesrank.influence.objectives import CIObjective, PairMargin, SmoothTau, TopK
from bayesrank.influence.robustness import robustness_table

Z95 = 1.959963984540054
OUTCOME = {"a_wins": 0, "b_wins": 1, "tie": 2}


def replay_table(counts, records):
    """Apply reported action records to the original counts (by player names), independently of
    the audit's candidate bookkeeping; unobserved pairs are appended."""
    names = list(map(str, counts.players))
    i, j, table = list(counts.i), list(counts.j), counts.counts.copy()
    for row in records:
        a, b = names.index(row["player_a"]), names.index(row["player_b"])
        hit = np.flatnonzero((np.asarray(i) == a) & (np.asarray(j) == b))
        if len(hit) == 0:
            i.append(a), j.append(b)
            table = np.vstack([table, np.zeros(3)])
            hit = [len(table) - 1]
        r, o = hit[0], OUTCOME[row["outcome"]]
        if row["kind"] == "drop":
            table[r, o] -= row["count"]
        elif row["kind"] == "flip":
            table[r, o] -= row["count"]
            table[r, OUTCOME[row["to"]]] += row["count"]
        elif row["kind"] == "add_weighted":  # a fractional expected match: (p, 1 − p) per match
            table[r, 0] += row["expected_a_wins"]
            table[r, 1] += row["count"] - row["expected_a_wins"]
        else:
            table[r, o] += row["count"]
    from bayesrank.data.aggregate import PairCounts

    return PairCounts(counts.players, np.array(i), np.array(j), table[:, 0], table[:, 1], table[:, 2])


def _replay(state, result, drop_last: int = 0):
    """Independent refit after the audit's actions (optionally without the last ``drop_last`` matches)."""
    recs = result.actions.to_dict(orient="records")
    if drop_last:
        recs[-1] = dict(recs[-1], count=recs[-1]["count"] - drop_last)
        if recs[-1]["count"] == 0:
            recs = recs[:-1]
    counts = replay_table(state.counts, recs)
    theta, hess, _, _ = fit_newton(counts, ties=state.ties)
    return theta, constrained_covariance(hess, state.n_players), counts


@pytest.mark.parametrize("kind", ["drop", "flip"])
def test_top1_break_is_real_minimal_and_matches_brute_force(nba, kind):
    res = greedy_audit(nba, TopK(nba, 1), kind)
    assert res.broken and res.verified and res.budget == res.actions["count"].sum()
    theta, _, counts = _replay(nba, res)
    leader = nba.ranking()[0]
    assert np.argmax(theta) != leader  # independent refit: the leader changed
    assert counts.counts.sum() == pytest.approx(nba.n_matches - (res.budget if kind == "drop" else 0))
    # minimality of the trimmed last step: one match fewer leaves the leader in place
    theta_less, _, _ = _replay(nba, res, drop_last=1)
    assert np.argmax(theta_less) == leader
    brute = exact_greedy_audit(nba, TopK(nba, 1), kind, budget=res.budget + 3)
    assert brute["broken"]
    assert res.budget <= brute["budget"] + 1  # influence greedy within one action of exact greedy
    rand = [random_audit(nba, TopK(nba, 1), kind, budget=5 * res.budget, seed=s)["budget"] for s in range(3)]
    assert min(np.inf if b is None else b for b in rand) > res.budget


def test_budget_never_reached_is_not_a_break(nba):
    res = greedy_audit(nba, TopK(nba, 1), "drop", budget=2)
    assert not res.broken and res.budget is None and res.fraction is None and not res.verified
    assert "not broken within budget" in res.reason
    rob = robustness_table([("R_top1", res)])
    assert rob["fraction"].isna().all() and rob["bound"].tolist() == ["none: not broken within the budget"]


def test_weighted_add_leaves_the_mle_exactly_in_place(nba):
    """An expected-outcome add on any pair: gradient σ(d̂) − p = 0 at θ̂, so an independent refit
    of the data with 50 such matches on each of 10 pairs returns θ̂ to 1e-9."""
    from bayesrank.influence.greedy import _state_for

    st = _state_for(nba, "add_weighted")
    cand = candidates(st, "add_weighted")
    table = st.counts.counts.copy()
    for r in range(0, len(cand), len(cand) // 10)[:10]:
        table[cand.r[r]] += 50 * cand.delta[r]
    theta = fit_newton(st.counts.with_counts(table))[0]
    np.testing.assert_allclose(theta, nba.theta, atol=1e-9)
    assert np.abs(table - st.counts.counts).sum() == pytest.approx(500)  # the data did change
    res = greedy_audit(nba, TopK(nba, 1), "add_weighted", budget=50)
    assert not res.broken and res.budget is None and res.reason == WEIGHTED_ADD_NOTE


def _bt_rank_ci(counts, level=0.95):
    """rank_ci and rank_ub of the leaderboard's own table (bt.BradleyTerry, Fisher = H⁻¹ intervals,
    the covariance the CI-aware audit uses), by player name."""
    from bayesrank.bt import BradleyTerry

    t = BradleyTerry(counts, ties="half", level=level).fit("mle", ci="fisher").table()
    return dict(zip(t["player"], t["rank_ci"])), dict(zip(t["player"], t["rank_ub"]))


def test_ci_aware_top1_break_is_significant_by_the_leaderboard_rule(llmfao):
    """A CI-aware top-1 break (llmfao, drops): after the reported actions the old leader has a
    player significantly ahead by the pairwise-contrast test with the refit's H⁻¹, so the
    leaderboard's rank_ci (same rule, computed by bt) puts it below 1; the point-mode break needs
    fewer actions and is not significant."""
    point = greedy_audit(llmfao, TopK(llmfao, 1), "drop")
    aware = greedy_audit(llmfao, TopK(llmfao, 1, ci_aware=True), "drop")
    assert point.verified and aware.verified
    assert aware.budget > point.budget
    leader = llmfao.ranking()[0]
    name = str(llmfao.players[leader])
    theta, cov, counts = _replay(llmfao, aware)
    sd = np.sqrt(np.maximum(cov[leader, leader] + np.diag(cov) - 2 * cov[leader], 0))
    ahead = (theta - theta[leader]) > Z95 * sd  # independent pairwise-contrast test
    assert ahead.any()
    rank_ci, _ = _bt_rank_ci(counts)
    assert rank_ci[name] == 1 + ahead.sum() and rank_ci[name] >= 2
    # the point-mode break only overturns the point estimate: nobody is significantly ahead
    theta_p, cov_p, counts_p = _replay(llmfao, point)
    assert np.argmax(theta_p) != leader
    assert _bt_rank_ci(counts_p)[0][name] == 1


def test_pair_claim_point_and_ci_aware(nba):
    """The claim "A is ahead of B" for the 2nd and 3rd players: point break = B ahead after an
    independent refit (and not with one match fewer); CI-aware break = B significantly ahead by the
    leaderboard's rank_ci rule at the same level (0.95 and 0.8), and not with one flip fewer."""
    order = nba.ranking()
    a, b = str(nba.players[order[1]]), str(nba.players[order[2]])
    ia, ib = order[1], order[2]
    for kind in ("drop", "flip", "add"):
        res = greedy_audit(nba, PairMargin(nba, a, b), kind)
        assert res.broken and res.verified, kind
        theta, _, _ = _replay(nba, res)
        assert theta[ib] > theta[ia]
        theta_less, _, _ = _replay(nba, res, drop_last=1)
        assert theta_less[ia] > theta_less[ib]
    for level in (0.95, 0.8):
        z = NormalDist().inv_cdf(0.5 + level / 2)
        res = greedy_audit(nba, PairMargin(nba, a, b, ci_aware=True, z=z), "flip")
        assert res.broken and res.verified
        theta, cov, counts = _replay(nba, res)
        assert theta[ib] - theta[ia] > z * np.sqrt(cov[ia, ia] + cov[ib, ib] - 2 * cov[ia, ib])
        rank_ci, _ = _bt_rank_ci(counts, level)
        assert rank_ci[a] > rank_ci[b]  # B is among the players significantly ahead of A
        theta_less, cov_less, _ = _replay(nba, res, drop_last=1)  # one flip fewer: not significant
        sd_less = np.sqrt(cov_less[ia, ia] + cov_less[ib, ib] - 2 * cov_less[ia, ib])
        assert theta_less[ib] - theta_less[ia] <= z * sd_less


def test_targeted_promotion_beats_rigging(nba):
    target = str(nba.players[nba.ranking()[4]])
    obj = TopK(nba, 1, target=target, goal="promote")
    res = greedy_audit(nba, obj, "add")
    assert res.broken and res.verified
    theta, _, _ = _replay(nba, res)
    assert np.argmax(theta) == nba.counts.index_of(target)
    rig = rigging_audit(nba, obj, budget=300, variant="target_only", seed=0)
    assert (np.inf if rig["budget"] is None else rig["budget"]) > res.budget
    bt_diff = rigging_audit(nba, obj, budget=3 * res.budget, variant="bt_diff", seed=0)
    assert (np.inf if bt_diff["budget"] is None else bt_diff["budget"]) > res.budget


def test_demote_and_topk_and_tau(llmfao):
    from scipy.stats import kendalltau

    order = llmfao.ranking()
    res = greedy_audit(llmfao, TopK(llmfao, 5, target=str(llmfao.players[order[2]]), goal="demote"), "flip")
    theta, _, _ = _replay(llmfao, res)
    assert res.verified and order[2] not in np.argsort(-theta)[:5]
    tau = SmoothTau(llmfao, threshold=0.95)
    res = greedy_audit(llmfao, tau, "flip")
    theta, _, _ = _replay(llmfao, res)
    assert res.verified and kendalltau(theta, llmfao.theta).statistic <= 0.95  # scipy, independently


def test_constructive_ci_reduction_beats_active_sampling(nba):
    target = str(nba.players[nba.ranking()[0]])
    obj = CIObjective(nba, target, mode="reduce", ratio=0.8)
    res = greedy_audit(nba, obj, "add_weighted", budget=200)
    assert res.broken and res.verified
    _, cov, _ = _replay(nba, res)
    t = nba.counts.index_of(target)
    assert cov[t, t] <= 0.8 * obj.v0  # independent refit's Fisher variance
    active = active_sampling(nba, target, budget=res.budget)
    assert active["variance"].iloc[-1] > 0.8 * obj.v0  # uncertainty sampling has not reached it yet


def test_ci_aware_promotion_is_significant(nba):
    """CI-aware promote into the top-3: at the verified end the target is above all but 2 others
    by more than 1.96 sd of the difference (independent refit and Fisher covariance)."""
    target = "Los Angeles Clippers"
    res = greedy_audit(nba, TopK(nba, 3, target=target, goal="promote", ci_aware=True), "flip")
    assert res.broken and res.verified
    theta, cov, _ = _replay(nba, res)
    t = nba.counts.index_of(target)
    others = [b for b in range(nba.n_players) if b != t]
    sd = np.sqrt([cov[t, t] + cov[b, b] - 2 * cov[t, b] for b in others])
    significantly_below = (theta[t] - theta[others]) > Z95 * sd
    assert significantly_below.sum() >= nba.n_players - 3
    point = greedy_audit(nba, TopK(nba, 3, target=target, goal="promote"), "flip")
    assert point.budget < res.budget


def test_action_set_one_step_newton(llmfao):
    """1sN for a whole action set (the audit's drops) vs exact refit: closer than first order."""
    from bayesrank.influence.scores import action_set_prediction

    res = greedy_audit(llmfao, TopK(llmfao, 1), "drop")
    theta, _, counts = _replay(llmfao, res)
    first = action_set_prediction(llmfao, counts.counts, "first")
    newton = action_set_prediction(llmfao, counts.counts, "1sN")
    err_first = np.abs(first - theta).max()
    err_newton = np.abs(newton - theta).max()
    assert err_newton < err_first
    assert err_newton < 0.1 * np.abs(theta - llmfao.theta).max()
