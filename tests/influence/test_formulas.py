"""Influence formulas against finite differences of exact refits, and the chord refit against Newton."""

import numpy as np
import pytest

from bayesrank.bt.mle import constrained_covariance, fit_newton
from bayesrank.influence.actions import candidates
from bayesrank.influence.objectives import CIObjective, ContrastVariance, PairMargin, SmoothTau, TopK, top1_gap
from bayesrank.influence.state import chord_refit, refit


def _weight_derivative(state, cand, value, eps=1e-5):
    """Central difference of value(θ̂(w), H⁻¹(w)) in the weight of one match of each candidate cell."""
    out = []
    for n in range(len(cand)):
        vals = []
        for sgn in (+1, -1):
            table = state.counts.counts.copy()
            table[cand.r[n]] += sgn * eps * cand.delta[n]
            th, h, _, _ = fit_newton(state.counts.with_counts(table), ties=state.ties)
            vals.append(value(th, constrained_covariance(h, state.n_players)))
        out.append((vals[0] - vals[1]) / (2 * eps))
    return np.array(out)


def _pair(state, ci_aware):
    """The claim "2nd-ranked is ahead of 5th-ranked" (point or CI-aware margin)."""
    order = state.ranking()
    return PairMargin(state, str(state.players[order[1]]), str(state.players[order[4]]), ci_aware=ci_aware)


@pytest.mark.parametrize("make", [top1_gap, lambda s: SmoothTau(s), lambda s: CIObjective(s, None),
                                  lambda s: CIObjective(s, str(s.players[s.ranking()[0]])),
                                  lambda s: TopK(s, 3, ci_aware=True), lambda s: _pair(s, False),
                                  lambda s: _pair(s, True)])
def test_first_order_equals_weight_derivative(nba, make):
    """−∇fᵀH⁻¹g_n (+ the d(H⁻¹)/dw term with the third derivative for CI objectives) equals the
    numerical derivative of the exactly refitted objective w.r.t. the match weight."""
    obj = make(nba)
    cand = candidates(nba, "drop").take(np.arange(0, 400, 37))
    pred = obj.delta(nba, cand, 1e-6, "first") / 1e-6  # per unit weight change along delta (= −1)
    fd = _weight_derivative(nba, cand, obj.value)
    np.testing.assert_allclose(pred, fd, rtol=2e-4, atol=1e-8)


def test_third_derivative_term_matters(nba):
    """Without the θ-dependence of H (q-term) the CI derivative would be wrong: check it is not negligible."""
    t = nba.ranking()[0]
    u = np.zeros(nba.n_players)
    u[t] = 1.0
    cand = candidates(nba, "flip")  # flips change no curvature: the CI change is the q-term only
    d = ContrastVariance(u).delta(nba, cand, 1.0, "first")
    assert np.abs(d).max() > 1e-4


def test_single_drop_leverage_correction(nba):
    """For one dropped match the 1sN equals first order × 1/(1 − h_n), h_n = c(d) xᵀH⁻¹x."""
    obj = top1_gap(nba)
    cand = candidates(nba, "drop")
    first = obj.delta(nba, cand, 1.0, "first")
    newton = obj.delta(nba, cand, 1.0, "1sN")
    s, c, _ = nba.derivatives(cand.i, cand.j)
    h = c[:, 0] * nba.leverage_base(cand.i, cand.j)
    np.testing.assert_allclose(newton, first / (1 - h), rtol=1e-12, atol=1e-15)


def test_chord_refit_equals_newton(llmfao):
    cand = candidates(llmfao, "drop")
    cand = cand.take(np.linspace(0, len(cand) - 1, 50).astype(int))
    tables = np.stack([llmfao.counts.counts.copy() for _ in range(len(cand))])
    for n in range(len(cand)):
        tables[n, cand.r[n]] += cand.delta[n]
    _, dc = cand.gc(llmfao)
    a = chord_refit(llmfao, tables, cand.r, dc)
    b = refit(llmfao, tables)
    assert a.ok.all() and b.ok.all()
    np.testing.assert_allclose(a.theta, b.theta, atol=1e-9)


def test_ties_drop_first_order_and_one_step(llmfao):
    """``ties="drop"``: tie cells carry no likelihood; predictions still match exact refits."""
    from bayesrank.influence.baselines import exact_deltas
    from bayesrank.influence.state import BTState

    st = BTState.fit(llmfao.counts, ties="drop")
    cand = candidates(st, "drop")
    assert not (cand.outcome == 2).any()  # ties are not droppable evidence under ties="drop"
    cand = cand.take(np.linspace(0, len(cand) - 1, 40).astype(int))
    obj = top1_gap(st)
    fd = _weight_derivative(st, cand, obj.value)
    np.testing.assert_allclose(obj.delta(st, cand, 1e-6, "first") / 1e-6, fd, rtol=2e-4, atol=1e-8)
    exact = exact_deltas(st, obj, cand)
    assert np.max(np.abs(obj.delta(st, cand, 1.0, "1sN") - exact)) < 0.05 * np.max(np.abs(exact))


@pytest.mark.parametrize("ridge", [0.0, 0.3])
def test_newton_point_covariance_converges_to_exact_refit(nba, ridge):
    """With enough chord sweeps the Newton point is the exact refit, so the rebuilt covariance must
    equal ``constrained_covariance`` of an independent ``fit_newton`` (ridge: the 1/(1+ridge) shift)."""
    from bayesrank.influence.objectives import newton_point_covariance
    from bayesrank.influence.state import BTState

    st = nba if ridge == 0 else BTState.fit(nba.counts, ridge=ridge)
    for kind in ("drop", "flip"):
        cand = candidates(st, kind)
        idx = int(np.argmax(cand.available))
        m = 2.0
        table = st.counts.counts.copy()
        table[cand.r[idx]] += m * cand.delta[idx]
        theta, hess, _, _ = fit_newton(st.counts.with_counts(table), ridge=ridge)
        ref = constrained_covariance(hess, st.n_players)
        got = newton_point_covariance(st, cand, idx, m, chord_steps=60)
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)
        plain = newton_point_covariance(st, cand, idx, m, chord_steps=0)
        assert np.abs(plain - ref).max() > np.abs(got - ref).max()  # the sweeps do something
