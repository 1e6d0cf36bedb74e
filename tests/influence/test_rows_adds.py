"""Adds on comparison rows: any pair (``add_space="pairs"``: a new comparison of equal style, player_a
listed first) and ``add_sampled`` (outcomes drawn from the fitted model). References: the
equal-style feature values recomputed here from the raw columns, the documented outcome stream
regenerated with numpy at statsmodels' fitted linear predictor, and statsmodels' logistic GLM (an
intercept for the first-listed side, ±1 player columns, the features) of the data with the logged
comparisons appended by code written here; Davidson adds on any pair by scipy's maximisation."""

import numpy as np
import pytest
import statsmodels.api as sm

from bayesrank.data.comparisons import Comparisons
from bayesrank.influence import audit
from bayesrank.influence.api import load_state
from bayesrank.influence.greedy import greedy_audit, state_for
from bayesrank.influence.state import BTState

from .test_models_audit import STYLE, _frame, _replay_cells, davidson_scipy

FEATURES = ("s0", "s1")


@pytest.fixture(scope="module")
def battles():
    frame = _frame(tie_rate=0.0, seed=4, n=600, k=5)
    return frame, Comparisons.from_frame(frame)


def _design(players, a, b, X):
    idx = {p: n for n, p in enumerate(players)}
    z = np.zeros((len(a), len(players)))
    z[np.arange(len(a)), [idx[p] for p in a]] += 1
    z[np.arange(len(a)), [idx[p] for p in b]] -= 1
    return np.column_stack([np.ones(len(a)), z[:, 1:], X])


def _glm(frame, X, added=()):
    """statsmodels' GLM of the raw comparisons (y = 1 when model_a won) and the ``added`` ones
    ((player_a, player_b, y, x) each): (players, θ centred, fitted results)."""
    a, b = frame["model_a"].astype(str).tolist(), frame["model_b"].astype(str).tolist()
    y = (frame["outcome"] == "a").astype(float).tolist()
    xs = list(X)
    for pa, pb, yy, x in added:
        a.append(pa), b.append(pb), y.append(yy), xs.append(x)
    players = sorted(set(a) | set(b))
    res = sm.GLM(np.array(y), _design(players, a, b, np.array(xs)), family=sm.families.Binomial()).fit(tol=1e-13)
    theta = np.concatenate([[0.0], res.params[1:len(players)]])
    return players, theta - theta.mean(), res


def _features(frame):
    """The model's style features recomputed from the raw columns: the normalised difference
    (x_a − x_b)/(x_a + x_b), centred and scaled over the comparisons; and its equal-style value
    (raw difference 0)."""
    cols, equal = [], []
    for f in FEATURES:
        raw = (frame[f"{f}_a"] - frame[f"{f}_b"]) / (frame[f"{f}_a"] + frame[f"{f}_b"])
        mean, sd = raw.mean(), raw.std(ddof=0)
        cols.append((raw - mean) / sd)
        equal.append(-mean / sd)
    return np.column_stack(cols), np.array(equal)


def _added(actions, equal):
    out = []
    for a in actions.to_dict(orient="records"):
        out += [(a["player_a"], a["player_b"], float(a["y_new"]), equal)] * int(a["count"])
    return out


def test_any_pair_adds_on_rows_are_equal_style_comparisons(battles):
    """add (any pair) on the style + position model: the template comparisons carry the equal-style
    values recomputed here, the JSON settings say how a new comparison is built, and the verified
    break — the logged comparisons appended to the raw data, refitted by statsmodels — changes the
    leader, one comparison fewer does not."""
    frame, comps = battles
    X, equal = _features(frame)
    rep = audit(comps, "top1", ["add"], style=STYLE, position_effect=True, add_space="pairs", budget=200)
    res = rep["add"]
    assert res.broken and res.verified, res.reason
    assert "equal style" in rep.settings["new_pair_comparison"] and "listed first" in rep.settings["new_pair_comparison"]
    from bayesrank.protocol import validate

    validate(rep.to_dict(), "audit")
    acts = res.actions
    np.testing.assert_allclose(acts[list(FEATURES)].to_numpy(), np.broadcast_to(equal, (len(acts), 2)), atol=1e-12)
    assert acts["y"].isna().all()  # a new pair has no comparison yet: no share to show (not 0.5)
    assert (acts["y_new"] == acts["outcome"].map({"a_wins": 1.0, "b_wins": 0.0})).all()
    players, theta0, _ = _glm(frame, X)
    leader0 = players[int(np.argmax(theta0))]
    players, theta, _ = _glm(frame, X, _added(acts, equal))
    assert leader0 == res.reference_top[0]
    assert players[int(np.argmax(theta))] == res.final_top[0] != leader0
    fewer = _added(acts, equal)[:-1]
    players, theta, _ = _glm(frame, X, fewer)
    assert players[int(np.argmax(theta))] == leader0


@pytest.mark.parametrize("space", ["observed", "pairs"])
def test_sampled_adds_on_rows_follow_the_stream_and_break_for_real(battles, space):
    """add_sampled on the style + position model: the n-th comparison added to (copied from) row r
    is won by player_a iff ``default_rng([seed, r]).random()[n] < σ(η̂_r)``, η̂_r from statsmodels'
    fit (regenerated here, in the order the audit logged them); a verified break replayed and
    refitted by statsmodels changes the leader."""
    frame, comps = battles
    X, equal = _features(frame)
    seed = 3
    st, _ = load_state(comps, style=STYLE, position_effect=True)
    res = greedy_audit(st, "top1", "add_sampled", budget=200, seed=seed, add_space=space)
    rows = state_for(st, "add_sampled", space).counts
    players, _, fit = _glm(frame, X)
    a = [str(rows.players[q]) for q in rows.i]
    b = [str(rows.players[q]) for q in rows.j]
    eta = _design(players, a, b, rows.X) @ fit.params
    used = {}
    for act in res.actions.to_dict(orient="records"):
        r, m = int(act["row"]), int(act["count"])
        u = np.random.default_rng([seed, r]).random(used.get(r, 0) + m)[used.get(r, 0):]
        wins = u < 1 / (1 + np.exp(-eta[r]))
        assert (wins == (act["outcome"] == "a_wins")).all(), act
        used[r] = used.get(r, 0) + m
    assert len(res.actions)
    if space == "observed":  # (any pair of equal style does not break it within the budget here)
        assert res.broken and res.verified, res.reason
        x_of = {int(act["row"]): rows.X[int(act["row"])] for act in res.actions.to_dict(orient="records")}
        added = [(act["player_a"], act["player_b"], float(act["y_new"]), x_of[int(act["row"])])
                 for act in res.actions.to_dict(orient="records") for _ in range(int(act["count"]))]
        players, theta, _ = _glm(frame, X, added)
        assert players[int(np.argmax(theta))] == res.final_top[0] != res.reference_top[0]


def test_davidson_adds_on_any_pair_verified_by_scipy(battles):
    """Davidson ties on pair counts, adds on any pair (observed or not): the verified top-1 break,
    replayed on the complete pair table and refitted by scipy, changes the leader."""
    frame = _frame(tie_rate=0.2, seed=6, n=400, k=6)
    st = BTState.fit(Comparisons.from_frame(frame).aggregate(), ties="davidson")
    res = greedy_audit(st, "top1", "add", add_space="pairs", budget=100)
    assert res.broken and res.verified, res.reason
    c = state_for(st, "add", "pairs").counts
    assert c.n_rows == st.n_players * (st.n_players - 1) // 2
    after = _replay_cells(c, res.actions)
    assert str(c.players[int(np.argmax(davidson_scipy(c.i, c.j, after, c.n_players)[0]))]) == res.final_top[0]
    assert res.final_top[0] != res.reference_top[0]
