"""``add_sampled`` (all_outcomes_sampled): the actor picks the pair, the winner is drawn from the
reference fit's BT probability. Checked against an independent regeneration of the documented
stream (numpy ``default_rng([seed, pair])``) and independent refits."""

import numpy as np
import pytest

from bayesrank.bt.mle import fit_newton
from bayesrank.influence.actions import OutcomeStream, candidates
from bayesrank.influence.greedy import _state_for, greedy_audit
from bayesrank.influence.objectives import TopK

from .test_audit import replay_table


def _reference_stream(p, seed, r, n):
    """The documented rule, written out: the n-th added match of pair row r is won by player_a iff
    U < p_r, U = numpy.random.default_rng([seed, r]).random(n)."""
    return np.random.default_rng([seed, r]).random(n) < p[r]


def _p(st):
    return 1 / (1 + np.exp(-(st.theta[st.counts.i] - st.theta[st.counts.j])))


def test_stream_follows_the_documented_rule_and_the_bt_probability(nba):
    st = _state_for(nba, "add_sampled")
    p = _p(st)
    stream = OutcomeStream(p, seed=11)
    n = 200
    wins = np.array([stream.wins(r, n)[:n] for r in range(st.counts.n_pairs)])
    ref = np.array([_reference_stream(p, 11, r, n) for r in range(st.counts.n_pairs)])
    np.testing.assert_array_equal(wins, ref)
    # win frequencies follow p (direction included): total within 3 binomial SEs, per-pair correlation
    z = (wins.sum() - n * p.sum()) / np.sqrt(n * (p * (1 - p)).sum())
    assert abs(z) < 3
    assert np.corrcoef(wins.mean(axis=1), p)[0, 1] > 0.9
    # candidates: outcome = the next draw, available = its run of equal outcomes
    added = np.zeros(st.counts.n_pairs)
    added[:5] = [0, 1, 2, 3, 4]
    cand = candidates(st, "add_sampled", stream=stream, added=added)
    for r in range(10):
        pos = int(added[r])
        seq = ref[r, pos:]
        run = int(np.argmax(seq != seq[0])) if (seq != seq[0]).any() else len(seq)
        assert cand.outcome[r] == (0 if seq[0] else 1) and cand.available[r] == run


def test_sampled_add_audit_is_verified_and_follows_the_stream(nba):
    seed = 5
    res = greedy_audit(nba, TopK(nba, 1), "add_sampled", seed=seed)
    assert res.broken and res.verified and res.seed == seed
    counts = replay_table(nba.counts, res.actions.to_dict(orient="records"))
    assert np.argmax(fit_newton(counts)[0]) != nba.ranking()[0]
    st = _state_for(nba, "add_sampled")
    p = _p(st)
    names = list(map(str, st.players))
    pos: dict[int, int] = {}
    for row in res.actions.itertuples():
        a, b = names.index(row.player_a), names.index(row.player_b)
        r = int(np.flatnonzero((st.counts.i == a) & (st.counts.j == b))[0])
        start, m = pos.get(r, 0), int(row.count)
        drawn = _reference_stream(p, seed, r, start + m)[start:]
        assert (drawn == (row.outcome == "a_wins")).all()  # the outcomes chance dealt, in order
        pos[r] = start + m
    again = greedy_audit(nba, TopK(nba, 1), "add_sampled", seed=seed)
    assert again.actions.equals(res.actions) and again.budget == res.budget


def test_weighted_and_sampled_spaces_are_named(nba):
    from bayesrank.influence import audit

    rep = audit(nba, "top1", "add_weighted,add_sampled", seed=1)
    assert rep.audits["add_weighted"].candidate_space == "all_outcomes_weighted"
    assert rep.audits["add_sampled"].candidate_space == "all_outcomes_sampled"
    assert not rep.audits["add_weighted"].broken
    with pytest.raises(ValueError, match="OutcomeStream"):
        candidates(_state_for(nba, "add_sampled"), "add_sampled")
