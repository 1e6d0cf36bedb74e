"""Robustness scores R_top1, R_tau, R_CI against certified minima from exhaustive refits on small
data, and which audits may be filed under each score."""

import numpy as np
import pytest
from scipy.stats import kendalltau

from bayesrank.bt.mle import constrained_covariance, fit_newton
from bayesrank.data.aggregate import PairCounts
from bayesrank.errors import InputError, NoFiniteEstimateError
from bayesrank.influence import audit
from bayesrank.influence.baselines import exhaustive_minimum
from bayesrank.influence.objectives import TopK
from bayesrank.influence.robustness import canonical_objective
from bayesrank.influence.state import BTState

from .test_audit import replay_table

K, N_PER_PAIR = 5, 3
N = N_PER_PAIR * K * (K - 1) // 2  # 30 comparisons per board


def _board(seed, k=K, n=N_PER_PAIR):
    """Every pair of k players plays n matches; strengths N(0, 0.8²)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 0.8, k)
    i, j = np.triu_indices(k, 1)
    wins = rng.binomial(n, 1 / (1 + np.exp(-(theta[i] - theta[j])))).astype(float)
    return PairCounts(np.array([f"p{q}" for q in range(k)], dtype=object), i, j, wins, n - wins, np.zeros(len(i)))


def _states(n_boards):
    out = []
    for seed in range(10 * n_boards):
        try:
            out.append(BTState.fit(_board(seed)))
        except NoFiniteEstimateError:  # someone never lost / never won: no finite MLE
            continue
        if len(out) == n_boards:
            return out
    raise AssertionError("too few boards with a finite MLE")


def _broken_independently(score, st, table):
    """Is the property broken after an exact refit of ``table``? Independent of the audit code:
    scipy's Kendall τ and the trace of the Fisher covariance of bt.mle.fit_newton."""
    theta, hess, _, _ = fit_newton(st.counts.with_counts(table))
    if score == "R_top1":
        return np.argmax(theta) != st.ranking()[0]
    if score == "R_tau":  # τ-b; scores equal to 1e-9 are ties (symmetric boards have exact ties)
        return kendalltau(np.round(theta, 9), np.round(st.theta, 9)).statistic <= 0.9
    return np.trace(constrained_covariance(hess, st.n_players)) >= 1.5 * np.trace(st.hinv)


def _apply(st, found):
    table = st.counts.counts.copy()
    cand = found["candidates"]
    for c, m in found["actions"]:
        table[cand.r[c]] += m * cand.delta[c]
    return table


@pytest.fixture(scope="module")
def reports():  # ~25 s: 8 boards × 6 greedy audits, each certified by up to 5-match exhaustive refits
    """audit(..., robustness=True, certify=5) on 8 small boards (5 players, 30 comparisons)."""
    return [audit(st, "top1", "drop,flip", robustness=True, budget=8, certify=5) for st in _states(8)]


@pytest.mark.slow
def test_robustness_scores_against_certified_minima(reports):
    """Every R score (top-1, τ, CI × drop, flip) of every board: the verified greedy budget is never
    below the certified minimum of exhaustive refits (a smaller break would be false) and at most
    one action above it; a minimum action set (the greedy's own when it is minimal, else the one
    the exhaustive search finds), refitted independently, breaks the property."""
    seen, equal = 0, 0
    for rep in reports:
        st = rep.state
        rob = rep.robustness
        assert sorted(zip(rob["score"], rob["action"])) == sorted(
            (s, a) for s in ("R_top1", "R_tau", "R_CI") for a in ("drop", "flip"))
        for row in rob.itertuples():
            res = next(r for name, r in rep.robustness_audits if name == row.score and r.action == row.action)
            assert res.broken and res.verified, (row.score, row.action, res.reason)
            cert = res.certified
            assert cert["minimum"] is not None, (row.score, row.action, cert)  # certified on every board
            m = cert["minimum"]
            assert m <= res.budget <= m + 1, (row.score, row.action, res.budget, m)
            assert row.budget == m and row.fraction == pytest.approx(m / N)
            assert row.bound == "certified minimum (exhaustive refits)"
            if res.budget == m:  # the greedy's own actions are a minimum set: replay them
                table = replay_table(st.counts, res.actions.to_dict(orient="records")).counts
            else:  # the minimum set is another one: find it (sizes 1..m in order)
                found = exhaustive_minimum(st, canonical_objective(row.score, st), row.action, max_size=m)
                assert found["budget"] == m
                table = _apply(st, found)
            assert _broken_independently(row.score, st, table)
            seen += 1
            equal += res.budget == m
    assert seen == 8 * 6
    print(f"greedy = certified minimum in {equal} of {seen} (score, action) audits")


@pytest.mark.slow
def test_greedy_budget_is_the_reported_fraction(reports):
    """fraction = budget / N with N counted from the data (30 comparisons per board)."""
    for rep in reports:
        assert rep.n_comparisons == N
        for r in rep.audits.values():
            assert r.fraction == pytest.approx(r.budget / N)


def test_only_attack_direction_audits_are_filed_as_scores(nba):
    """R_CI comes only from ci-trace audits that inflate the variance by 50% (drop/flip); a
    constructive reduction, a CI-aware or targeted top-k audit, or τ at another threshold is not
    filed under R_CI / R_top1 / R_tau."""
    rep = audit(nba, "ci-trace", "drop,add", budget=40)
    assert rep.audits["add"].objective_details["mode"] == "reduce"
    assert rep.robustness[["score", "action"]].values.tolist() == [["R_CI", "drop"]]
    assert audit(nba, "ci-trace", "drop", ci_mode="reduce", budget=40).robustness.empty
    assert audit(nba, "ci-trace", "drop", ci_ratio=1.2, budget=40).robustness.empty
    assert audit(nba, "tau", "flip", tau_threshold=0.95).robustness.empty
    assert audit(nba, "top1", "flip", ci_aware=True).robustness.empty
    leader = str(nba.players[nba.ranking()[0]])
    assert audit(nba, "topk:3", "flip", target=leader, goal="demote").robustness.empty
    # with robustness=True the canonical audits are added (a point top-1 audit beside the CI-aware one)
    rep = audit(nba, "top1", "flip", ci_aware=True, robustness=True)
    rob = rep.robustness.set_index(["score", "action"])
    assert set(rob.index) == {("R_top1", "flip"), ("R_tau", "flip"), ("R_CI", "flip")}
    point = next(r for r in rep.other_audits if r.objective == "top1")
    assert rob.loc[("R_top1", "flip"), "budget"] == point.budget < rep.audits["flip"].budget
    assert rob.loc[("R_CI", "flip"), "direction"] == "attack: inflate the uncertainty"


def test_exhaustive_refuses_huge_searches():
    st = _states(1)[0]
    with pytest.raises(InputError, match="max_sets"):
        exhaustive_minimum(st, TopK(st, 1), "drop", max_size=6, max_sets=1000)
