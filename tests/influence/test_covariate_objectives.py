"""Kendall τ and CI objectives of the style-controlled audit (the one audit engine on comparison rows):
predictions against exact refits, the Newton-point covariance against the refit's, and verified
breaks re-checked by an independent fit (statsmodels' logistic GLM with player contrasts and the
style features; scipy's Kendall τ)."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from bayesrank.bt.simulate import simulate_style_battles
from bayesrank.data.aggregate import pair_rows as battle_data
from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import InputError, NoFiniteEstimateError
from bayesrank.influence.actions import apply, candidates
from bayesrank.influence.objectives import CIObjective, SmoothTau, newton_point_covariance, parse_objective
from bayesrank.influence.state import BTState
from tests.influence.style_reference import audit_of, glm, replay, validate_audit_result, weakest_significance_margin

STYLE = "s0_a:s0_b,s1_a:s1_b"


def _state(n_players, n_battles, seed, theta_sd=0.5, tie_rate=0.1):
    frame, _, _ = simulate_style_battles(n_players=n_players, n_battles=n_battles, beta=(0.6, -0.3),
                                         tie_rate=tie_rate, seed=seed, theta_sd=theta_sd)
    return BTState.fit(battle_data(Comparisons.from_frame(frame), STYLE))


@pytest.fixture(scope="module")
def state():
    return _state(6, 1500, seed=4)


@pytest.fixture(scope="module")
def wide():
    """Ten players: breaking τ ≤ 0.8 needs several discordant pairs, hence several battles."""
    return _state(10, 3000, seed=11, theta_sd=0.6)


def without_last_battle(data, actions):
    """The audit's actions minus one battle of the last step (the tightness check)."""
    short = replay(data, actions.iloc[:-1])
    last = actions.iloc[-1]
    return replay(short, actions.iloc[[-1]].assign(count=last["count"] - 1)) if last["count"] > 1 else short


def _sample(cand, n, seed):
    return np.random.default_rng(seed).choice(len(cand), n, replace=False)


# ------------------------------------------------------------------------------------ CI objectives
def test_variance_definitions_equal_statsmodels(state):
    """v₀ of ci-player and ci-trace are the Fisher variances of the sum-to-zero θ (statsmodels)."""
    _, cov = glm(state.counts)
    p = str(state.players[2])
    assert CIObjective(state, p).v0 == pytest.approx(cov[2, 2], rel=1e-6)
    assert CIObjective(state).v0 == pytest.approx(np.trace(cov), rel=1e-6)


@pytest.mark.parametrize("kind", ["drop", "flip", "add"])
def test_newton_point_covariance_converges_to_the_refit(state, kind):
    """With enough chord sweeps the Newton point is the perturbed MLE, so its covariance is the
    exact refit's (1e-8): the rebuild of H on the perturbed data is right, added rows included."""
    cand = candidates(state, kind)
    for idx in _sample(cand, 3, 0):
        m = 4.0 if kind == "add" else 1.0
        exact = state.refit(apply(state.counts, cand, idx, m)).hinv
        np.testing.assert_allclose(newton_point_covariance(state, cand, idx, m, chord_steps=30), exact, atol=1e-8)


@pytest.mark.parametrize("spec", ["ci-trace", "ci-player"])
@pytest.mark.parametrize("kind", ["drop", "flip", "add"])
def test_ci_predictions_match_exact_refits(state, kind, spec):
    """Predicted change of the CI driver for 80 sampled actions (drop/flip: the row's one battle;
    add: 3 copies) vs exact refits: the 1sN (Newton-point covariance) has Spearman ≥ 0.999 and an
    error below 1% of the spread of the exact changes, smaller than the linear prediction's; the
    linear screen ranks with Spearman ≥ 0.99."""
    obj = CIObjective(state, None if spec == "ci-trace" else str(state.players[state.ranking()[0]]))
    cand = candidates(state, kind)
    idx = _sample(cand, 80, 1)
    m = np.minimum(3.0, cand.available[idx])
    f0 = obj.value(None, state.hinv)
    exact = np.array([obj.value(None, state.refit(apply(state.counts, cand, n, mm)).hinv) - f0 for n, mm in zip(idx, m)])
    sub = cand.take(idx)
    one, lin = obj.delta(state, sub, m, "1sN"), obj.delta(state, sub, m, "linear")
    spread = np.ptp(exact)
    assert spearmanr(one, exact).statistic >= 0.999
    assert np.max(np.abs(one - exact)) <= 0.01 * spread
    assert np.max(np.abs(one - exact)) < np.max(np.abs(lin - exact))
    assert spearmanr(lin, exact).statistic >= 0.99


@pytest.mark.parametrize("kind", ["drop", "flip"])
def test_ci_inflate_break_verified_by_statsmodels(state, kind, tmp_path):
    """Inflating the #1's variance by 1.3×: the replayed actions, refitted by statsmodels, give a
    Fisher variance ≥ 1.3·v₀; without the last battle of the last step the ratio is not reached."""
    top = str(state.players[state.ranking()[0]])
    res = audit_of(state, kind, objective=f"ci-player:{top}", ci_ratio=1.3)
    assert res.objective == f"ci-player:{top}" and res.broken and res.verified, res.reason
    t = state.counts.index_of(top)
    v0 = glm(state.counts)[1][t, t]
    assert glm(replay(state.counts, res.actions))[1][t, t] >= 1.3 * v0
    assert glm(without_last_battle(state.counts, res.actions))[1][t, t] < 1.3 * v0
    assert res.budget == int(res.actions["count"].sum())
    validate_audit_result(res)
    json.dumps(res.to_dict(), allow_nan=False)


def test_ci_reduce_with_adds_reached(state):
    """The constructive direction: adding battles (with their covariates) shrinks the trace of the
    θ covariance to 0.9 of its value, checked by statsmodels on the replayed data."""
    res = audit_of(state, "add", objective="ci-trace", ci_mode="reduce", ci_ratio=0.9)
    assert res.broken and res.verified, res.reason
    v0 = np.trace(glm(state.counts)[1])
    assert np.trace(glm(replay(state.counts, res.actions))[1]) <= 0.9 * v0
    assert np.trace(glm(without_last_battle(state.counts, res.actions))[1]) > 0.9 * v0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ci_audits_without_features_equal_the_plain_audit(seed):
    """Without features the style model is plain BT, and a battle is a pair cell's match: the
    row-level CI audit (its own linear screen and Newton-point covariance) takes the same greedy
    path length as the plain pair-count audit (bayesrank.influence.greedy), ci-player and ci-trace."""
    from bayesrank.influence.greedy import greedy_audit
    from bayesrank.influence.objectives import CIObjective
    from bayesrank.influence.state import BTState

    st = BTState.fit(_state(8, 2000, seed=seed, theta_sd=0.6, tie_rate=0.0).counts.without_features())
    bt = BTState.fit(st.counts.pairs(), ties="half")
    top = str(st.players[st.ranking()[0]])
    for kind in ("drop", "flip"):
        for target, ratio in ((top, 1.3), (None, 1.2)):
            spec = "ci-trace" if target is None else f"ci-player:{target}"
            style = audit_of(st, kind, objective=spec, ci_ratio=ratio)
            plain = greedy_audit(bt, CIObjective(bt, target, "inflate", ratio), kind)
            assert style.broken and style.verified and plain.broken
            assert style.budget == plain.budget, (kind, spec)


def test_ci_objective_input_errors(state):
    with pytest.raises(InputError, match="does not fit mode"):
        CIObjective(state, None, "inflate", 0.8)
    with pytest.raises(InputError, match="unknown player"):
        audit_of(state, "drop", objective="ci-player:nobody")
    with pytest.raises(InputError, match="unknown objective"):
        audit_of(state, "drop", objective="ci-width")


# ------------------------------------------------------------------------------------ Kendall τ
@pytest.mark.parametrize("kind", ["drop", "flip", "add"])
def test_tau_predictions_match_exact_refits(wide, kind):
    """The τ surrogate's predicted change for 100 sampled actions vs exact refits: 1sN Spearman
    ≥ 0.995 and never further from the refit than first order in the worst case."""
    obj = SmoothTau(wide)
    cand = candidates(wide, kind)
    idx = _sample(cand, 100, 2)
    m = np.minimum(3.0, cand.available[idx])
    f0 = obj.value(wide.theta)
    exact = np.array([obj.value(wide.refit(apply(wide.counts, cand, n, mm)).theta) - f0 for n, mm in zip(idx, m)])
    sub = cand.take(idx)
    one, first = obj.delta(wide, sub, m, "1sN"), obj.delta(wide, sub, m, "first")
    assert spearmanr(one, exact).statistic >= 0.995
    assert np.max(np.abs(one - exact)) <= np.max(np.abs(first - exact))


@pytest.mark.parametrize("kind", ["drop", "flip", "add"])
def test_tau_break_verified_independently_and_tight(wide, kind, tmp_path):
    """τ ≤ 0.8: statsmodels' refit of the replayed battles has scipy Kendall τ ≤ 0.8 to the
    reference order, and the same actions minus the last battle leave τ > 0.8."""
    res = audit_of(wide, kind, objective="tau", tau_threshold=0.8)
    assert res.objective == "tau" and res.broken and res.verified, res.reason
    assert res.reference_top == [str(p) for p in wide.players[wide.ranking()]]
    assert len(res.actions) > 1  # several steps: a real greedy path, not a single battle
    assert kendalltau(glm(replay(wide.counts, res.actions))[0], wide.theta).statistic <= 0.8
    assert kendalltau(glm(without_last_battle(wide.counts, res.actions))[0], wide.theta).statistic > 0.8
    validate_audit_result(res)
    json.dumps(res.to_dict(), allow_nan=False)


@pytest.mark.parametrize("kind", ["flip", "drop"])
def test_tau_against_a_reported_order(wide, kind):
    """``reference=``: τ is measured against another order than the fit's own — here the fit's order
    with its 3rd and 4th players swapped (τ = 43/45 to the fit). The verified break has scipy
    Kendall τ ≤ 0.9 to *that* order in statsmodels' refit, one battle fewer does not, and the
    reported reference order is the swapped one."""
    order = wide.ranking()
    ref = wide.theta.copy()
    ref[order[2]], ref[order[3]] = wide.theta[order[3]], wide.theta[order[2]]
    assert kendalltau(wide.theta, ref).statistic == pytest.approx(43 / 45)
    res = audit_of(wide, kind, objective="tau", reference=ref)
    assert res.broken and res.verified, res.reason
    assert res.reference_top == [str(p) for p in wide.players[np.argsort(-ref, kind="stable")]]
    assert kendalltau(glm(replay(wide.counts, res.actions))[0], ref).statistic <= 0.9
    assert kendalltau(glm(without_last_battle(wide.counts, res.actions))[0], ref).statistic > 0.9


def test_tau_already_broken_is_an_input_error(wide):
    with pytest.raises(InputError, match="nothing to overturn"):
        SmoothTau(wide, reference=-wide.theta)
    with pytest.raises(InputError, match="one value per player"):
        SmoothTau(wide, reference=wide.theta[:3])


def test_fractional_frequencies_give_exact_fractional_budgets(state):
    """Rows standing for fractional battles (a soft judge's split rows): the budget is the exact sum
    of the battles acted on, not rounded, and the fraction is that sum over the total."""
    freq = np.random.default_rng(5).uniform(0.2, 1.0, state.counts.n_rows)
    st = BTState.fit(state.counts.with_totals(freq))
    res = audit_of(st, "drop")
    assert res.broken and res.verified, res.reason
    total = float(res.actions["count"].sum())
    assert total != round(total)
    assert res.budget == pytest.approx(total, abs=1e-12)
    assert res.fraction == pytest.approx(total / freq.sum(), abs=1e-15)
    validate_audit_result(res)


def test_ci_aware_applies_to_margins_only(state):
    for spec in ("tau", "ci-trace"):
        with pytest.raises(InputError, match="--ci-aware applies to top1, topk:K and pair:A>B claims"):
            audit_of(state, "flip", objective=spec, ci_aware=True)


# ------------------------------------------------------------------------------------ edge cases
@pytest.mark.parametrize("freq", [1.5, 3.5])
@pytest.mark.parametrize("kind", ["drop", "flip"])
def test_fractional_capacities_above_one(state, freq, kind):
    """Rows standing for 1.5 or 3.5 battles: the step choice and the trimming bisect between an
    integer and a fractional bound (they used to loop forever when ``hi − lo`` was in (1, 2)); the
    verified break reverses the pair in statsmodels' refit, the budget is the exact sum."""
    st = BTState.fit(state.counts.with_totals(np.full(state.counts.n_rows, freq)))
    order = [str(p) for p in st.players[st.ranking()]]
    res = audit_of(st, kind, pair=(order[1], order[2]), step_cap=7)
    assert res.broken and res.verified, res.reason
    assert res.budget == pytest.approx(float(res.actions["count"].sum()), abs=1e-12)
    theta = glm(replay(st.counts, res.actions))[0]
    assert theta[st.counts.index_of(order[1])] < theta[st.counts.index_of(order[2])]


def test_an_action_that_leaves_a_player_without_battles_is_never_taken(state):
    """Player X's only battle is a tie with the leader: dropping it leaves θ_X unidentified (Newton
    does not move it), so that refit does not count as converged and the audit never takes it; the
    verified break keeps every player with battles and is confirmed by statsmodels."""
    frame, _, _ = simulate_style_battles(n_players=6, n_battles=1500, beta=(0.6, -0.3), tie_rate=0.1, seed=4,
                                         theta_sd=0.5)
    top = str(state.players[state.ranking()[0]])
    extra = frame.iloc[:1].assign(model_a="X", model_b=top, outcome="tie")
    data = battle_data(Comparisons.from_frame(pd.concat([frame, extra], ignore_index=True)), STYLE)
    st = BTState.fit(data)
    assert st.converged
    with pytest.raises(NoFiniteEstimateError):
        BTState.fit(data.with_totals(np.where(data.players[data.i] == "X", 0.0, data.total)))
    res = audit_of(st, "drop", k=2)
    assert res.broken and res.verified, res.reason
    after = replay(data, res.actions)
    battles = np.bincount(after.i, after.total, after.n_players) + np.bincount(after.j, after.total, after.n_players)
    assert battles.min() > 0
    theta = glm(after)[0]
    assert sorted(res.final_top) == sorted(str(p) for p in after.players[np.argsort(-theta)[:2]])


def test_ci_predictions_after_a_step_are_changes_from_the_current_fit(state):
    """Away from the reference fit (20 of the #1's battles dropped, v/v₀ > 1) the 1sN predicts the
    change from the *current* variance: within 1% of the spread of exact refits."""
    top = str(state.players[state.ranking()[0]])
    obj = CIObjective(state, top)
    t = state.counts.index_of(top)
    rows = np.flatnonzero((state.counts.i == t) | (state.counts.j == t))[:20]
    freq = state.counts.total.copy()
    freq[rows] = 0.0
    st = state.refit(state.counts.with_totals(freq))
    assert obj.variance(st.hinv) > 1.02 * obj.v0
    cand = candidates(st, "drop")
    idx = _sample(cand, 60, 3)
    cur = obj.value(None, st.hinv)
    exact = np.array([obj.value(None, st.refit(apply(st.counts, cand, n, 1.0)).hinv) - cur for n in idx])
    one = obj.delta(st, cand.take(idx), 1.0, "1sN")
    assert np.max(np.abs(one - exact)) <= 0.01 * np.ptp(exact)


def test_ci_audit_runs_to_its_budget_instead_of_stopping_early():
    """A balanced 4-player round robin (every pair 50/50): one flip barely moves Var(θ_p0), but the
    variance grows faster than linearly in the flips, so a linear extrapolation of the first rate
    would give up; the audit runs on and finds a verified break well inside the budget."""
    from bayesrank.data.rows import PairRows

    per, k = 100, 4
    i, j = (np.repeat(a, 6 * per // 6) for a in np.triu_indices(k, 1))
    n = len(i)
    y = np.tile(np.r_[np.ones(per // 2), np.zeros(per // 2)], n // per)
    data = PairRows.from_shares(np.array([f"p{q}" for q in range(k)], dtype=object), i, j, y,
                                X=np.tile([1.0, -1.0], n // 2)[:, None], features=["f"])
    st = BTState.fit(data)
    res = audit_of(st, "flip", objective="ci-player:p0", ci_ratio=1.3, budget=int(0.4 * n))
    assert res.broken and res.verified, res.reason
    _, cov = glm(replay(data, res.actions))
    assert cov[0, 0] >= 1.3 * glm(data)[1][0, 0]


# ------------------------------------------------------------------------------------ loss of significance
def default_cov_type(data) -> str:
    """statsmodels' twin of the default interval on ``data``: HC0 (= the sandwich) while some outcome
    is fractional, Fisher otherwise."""
    y = data.share[data.total > 0]
    return "HC0" if ((y > 0) & (y < 1)).any() else "nonrobust"


def one_tie_state(seed: int = 21):
    """3 players, 90 battles, one tie between the two leaders: dropping that tie switches the
    default interval from the sandwich to Fisher."""
    frame, _, _ = simulate_style_battles(n_players=3, n_battles=90, beta=(0.6, -0.3), seed=seed, theta_sd=1.0)
    data = battle_data(Comparisons.from_frame(frame), STYLE)
    order = BTState.fit(data).ranking()
    rows = np.flatnonzero(((data.i == order[0]) & (data.j == order[1])) | ((data.i == order[1]) & (data.j == order[0])))
    y = data.share.copy()
    y[rows[0]] = 0.5
    return BTState.fit(data.with_shares(y))


@pytest.mark.parametrize("seed,tie_rate,claim", [(4, 0.1, "top1"), (4, 0.1, "pair:0>3"), (11, 0.0, "topk:2"),
                                                 (11, 0.0, "pair:0>3"), ("one tie", None, "pair:0>2")])
@pytest.mark.parametrize("kind", ["drop", "flip", "add"])
def test_significance_breaks_verified_by_statsmodels(seed, tie_rate, claim, kind):
    """``significance=True``: the claim breaks when it is no longer significant by the default
    interval *of the perturbed data* (some fractional outcome left → sandwich = statsmodels' HC0;
    none → Fisher, as the review would then report). statsmodels' refit of the replayed battles
    finds some contrast of the claim not significant, and with one battle fewer every contrast
    still significant. (On these data the greedy also needs no more battles than the reversal.)"""
    st = one_tie_state() if seed == "one tie" else _state(6, 1500, seed=seed, tie_rate=tie_rate)
    order = st.ranking()
    if claim.startswith("pair:"):
        a, b = (int(x) for x in claim.removeprefix("pair:").split(">"))
        spec, pairs = f"pair:{st.players[order[a]]}>{st.players[order[b]]}", [(order[a], order[b])]
    else:
        k = 1 if claim == "top1" else int(claim.split(":")[1])
        spec, pairs = claim, [(a, b) for a in order[:k] for b in order[k:]]
    assert weakest_significance_margin(st.counts, pairs, cov_type=default_cov_type(st.counts)) > 0
    res = audit_of(st, kind, objective=spec, significance=True, budget=300)
    assert res.objective.endswith("+sig") and res.broken and res.verified, res.reason
    after, before = replay(st.counts, res.actions), without_last_battle(st.counts, res.actions)
    assert weakest_significance_margin(after, pairs, cov_type=default_cov_type(after)) <= 0
    assert weakest_significance_margin(before, pairs, cov_type=default_cov_type(before)) > 0
    reversal = audit_of(st, kind, objective=spec, budget=300)
    assert reversal.budget is None or res.budget <= reversal.budget
    validate_audit_result(res)


def test_dropping_the_only_tie_switches_the_significance_test_to_fisher():
    """The regression behind the "one tie" case: the drop audit of the leaders' pair passes through
    dropping their only tie; from then on the claim is tested with Fisher (the review's interval on
    those data), and the reported break holds under Fisher — not just under the sandwich it started with."""
    st = one_tie_state()
    assert st.covariance_kind() == "sandwich"
    order = st.ranking()
    res = audit_of(st, "drop", objective=f"pair:{st.players[order[0]]}>{st.players[order[2]]}", significance=True,
                      budget=30)
    assert res.broken and res.verified and res.objective_details["covariance"] == "auto"
    after = replay(st.counts, res.actions)
    assert default_cov_type(after) == "nonrobust"  # the only tie was dropped on the way
    assert weakest_significance_margin(after, [(order[0], order[2])], cov_type="nonrobust") <= 0


def test_suffix_specs_and_unidentified_refits():
    """``top1+sig`` / ``topk:2+ci`` select the modes like the flags; a refit whose Hessian is singular
    on the sum-to-zero space (two disconnected groups of players) is not converged, not a crash."""
    from bayesrank.data.rows import PairRows

    st = _state(6, 1500, seed=4, tie_rate=0.1)
    assert parse_objective("top1+sig", st).name == "top1+sig"
    assert parse_objective("topk:2+ci", st).name == "top2+ci"
    n = 200
    rng = np.random.default_rng(0)
    i = np.r_[np.zeros(n // 2, int), np.full(n // 2, 2)]
    data = PairRows.from_shares(np.array(["a", "b", "c", "d"], dtype=object), i, i + 1,
                                (rng.random(n) < 0.6).astype(float), X=rng.normal(size=(n, 1)), features=["f"])
    with pytest.raises(NoFiniteEstimateError):
        BTState.fit(data)
    # a drop audit that reaches an exactly singular refit (a pair left with wins one way only):
    # the action is excluded and the audit ends normally (it used to raise LinAlgError)
    st = one_tie_state(34)
    second, strongest = (str(st.players[q]) for q in st.ranking()[[1, 0]])
    for significance in (False, True):
        res = audit_of(st, "drop", objective=f"pair:{strongest}>{second}", significance=significance, budget=30)
        assert res.reason


def test_significance_refuses_a_claim_that_is_not_significant():
    st = _state(6, 1500, seed=11, tie_rate=0.0)
    with pytest.raises(InputError, match="is not significant on the data"):
        audit_of(st, "flip", objective="top1", significance=True)
    with pytest.raises(InputError, match="choose one"):
        audit_of(st, "flip", objective="topk:2", significance=True, ci_aware=True)
    with pytest.raises(InputError, match="--significance applies to"):
        audit_of(st, "flip", objective="tau+sig")
