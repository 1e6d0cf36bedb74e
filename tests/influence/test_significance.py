"""Loss-of-significance audits (``+sig``, ``bayesrank audit --significance``) against independent
references: every verified break is replayed on the individual comparisons and the contrast test
redone with statsmodels (Fisher covariance without ties, HC0 sandwich with half-win ties); one
comparison fewer still leaves the claim significant; certified (exhaustive) minima obey
"significance is lost no later than the point estimate is reversed"."""

import json

import numpy as np
import pytest
from scipy.stats import spearmanr

from bayesrank.bt import BradleyTerry
from bayesrank.cli import main
from bayesrank.data import read_comparisons
from bayesrank.data.aggregate import PairCounts
from bayesrank.datasets import path
from bayesrank.errors import InputError
from bayesrank.influence import audit
from bayesrank.influence.actions import candidates
from bayesrank.influence.baselines import exhaustive_minimum
from bayesrank.influence.greedy import greedy_audit
from bayesrank.influence.objectives import PairMargin, TopK, parse_objective
from bayesrank.influence.state import BTState, refit
from tests.influence.significance_reference import (
    fit_glm,
    replay,
    rows_from_counts,
    significance_margin,
)

ACTIONS = ("drop", "flip", "add")


def simulated(seed=0, n=80, tie=0.2, theta=(2.0, 1.5, 1.1, 0.0, -0.2, -0.4, -0.6, -0.8)):
    """Every pair of 8 players meets n times; a tie with probability ``tie``, else BT with ``theta``."""
    rng = np.random.default_rng(seed)
    th = np.asarray(theta)
    ii, jj = np.triu_indices(len(th), 1)
    p = 1 / (1 + np.exp(-(th[ii] - th[jj])))
    t = rng.binomial(n, tie, len(ii))
    w = rng.binomial(n - t, p)
    return PairCounts(np.array([f"m{q}" for q in range(len(th))]), ii, jj, w.astype(float), (n - t - w).astype(float),
                      t.astype(float))


@pytest.fixture(scope="module")
def states(llmfao, nba):
    return {"llmfao": llmfao, "nba": nba, "llmfao-drop": BTState.fit(read_comparisons(path("llmfao")).aggregate(), ties="drop"),
            "sim": BTState.fit(simulated())}


def contrasts_of(obj):
    p = [str(x) for x in obj.players] if isinstance(obj, TopK) else None
    if isinstance(obj, TopK):
        return [(p[a], p[b]) for a in obj._ins for b in obj._outs]
    return [(obj.player_a, obj.player_b)]


def test_covariance_kinds_and_the_sandwich_equal_statsmodels_hc0_and_the_reviews_interval(states):
    """auto = sandwich exactly when ties are half-wins and present; the sandwich's contrast sds equal
    statsmodels' HC0 GLM on the 8,931 llmfao comparisons and the default interval of bt.fit (the review's)."""
    assert [states[k].covariance_kind() for k in ("llmfao", "nba", "llmfao-drop", "sim")] == \
        ["sandwich", "fisher", "fisher", "sandwich"]
    st = states["llmfao"]
    theta_sm, cov_sm = fit_glm(rows_from_counts(st.counts), st.players, "half")
    bt = BradleyTerry(read_comparisons(path("llmfao"))).fit("mle")
    assert bt.settings["ci_used"] == "sandwich"
    order = st.ranking()
    a = order[np.array([0, 0, 3, 10, 20])]
    b = order[np.array([1, 30, 4, 40, 58])]

    def sd(c):
        return np.sqrt(c[a, a] + c[b, b] - 2 * c[a, b])

    np.testing.assert_allclose((theta_sm[a] - theta_sm[b]), st.theta[a] - st.theta[b], rtol=1e-7)
    np.testing.assert_allclose(sd(st.covariance()), sd(cov_sm), rtol=1e-6)
    k = st.n_players
    np.testing.assert_allclose(sd(st.covariance()), sd(bt.cov[:k, :k]), rtol=1e-9)
    assert not np.allclose(sd(st.covariance()), sd(st.hinv), rtol=1e-2)  # ties: not the Fisher interval


CASES = [("llmfao", "pair:GPT 4>Falcon Instruct (40B)"),       # half-win ties: sandwich
         ("llmfao-drop", "pair:GPT 4>Guanaco (33B)"),          # ties dropped: Fisher
         ("nba", "pair:Boston Celtics>Golden State Warriors"),  # no ties: Fisher
         ("sim", "top1"), ("sim", "topk:3")]                   # simulated with 20% ties: sandwich


@pytest.mark.parametrize(("data", "spec"), CASES)
def test_significance_breaks_replayed_with_statsmodels_are_tight(states, data, spec):
    """After each verified break the claim is no longer significant by statsmodels' test on the
    replayed comparisons; one comparison fewer (the prefix the greedy's bisection rejected) it still
    is; the break needs no more comparisons than the greedy reversal of the point estimate."""
    st = states[data]
    ties = st.ties
    obj = parse_objective(spec, st, significance=True)
    point = parse_objective(spec, st)
    rows = rows_from_counts(st.counts)
    contrasts = contrasts_of(obj)
    base = significance_margin(rows, st.players, contrasts, ties=ties)
    assert base > 0 and base == pytest.approx(obj.value_at(st), abs=1e-6)
    for kind in ACTIONS:
        res = greedy_audit(st, obj, kind)
        assert res.broken and res.verified, (kind, res.reason)
        assert res.budget == sum(a["count"] for a in res.actions.to_dict("records"))
        acts = res.actions.to_dict("records")
        after = significance_margin(replay(rows, acts), st.players, contrasts, ties=ties)
        before = significance_margin(replay(rows, acts, limit=res.budget - 1), st.players, contrasts, ties=ties)
        assert after < 0 < before, (kind, after, before)
        assert after == pytest.approx(res.final_value, abs=1e-6)
        rev = greedy_audit(st, point, kind)
        assert rev.budget is None or res.budget <= rev.budget, (kind, res.budget, rev.budget)


def _tiny(ties):
    """3 players: A well ahead of B and C (18 matches each), B and C even; ``ties``: a few ties."""
    t = 3.0 if ties else 0.0
    return PairCounts(np.array(["A", "B", "C"]), np.array([0, 0, 1]), np.array([1, 2, 2]),
                      np.array([14.0, 14.0, 8.0]), np.array([4.0, 4.0, 8.0]), np.array([t, t, 2 * t]))


def _exhaustive(state, obj, kind, max_size):
    """Smallest multiset of candidate cells whose action breaks ``obj`` by its own exact criterion
    (``broken_at``: the sandwich with ties), by refitting every multiset up to ``max_size``."""
    from itertools import combinations_with_replacement

    cand = candidates(state, kind, keep_finite=False)
    for size in range(1, max_size + 1):
        sets = [s for s in combinations_with_replacement(range(len(cand)), size)
                if all(s.count(c) <= cand.available[c] for c in set(s))]
        tables = np.repeat(state.counts.counts[None], len(sets), axis=0)
        for q, s in enumerate(sets):
            for c in s:
                tables[q, cand.r[c]] += cand.delta[c]
        rf = refit(state, tables, with_hinv=True)
        for q in np.flatnonzero(rf.ok):
            sub = BTState(state.counts.with_counts(tables[q]), state.ties, state.ridge, rf.theta[q], rf.hessian[q],
                          rf.hinv[q])
            if obj.broken_at(sub):
                return size, [(cand, c) for c in sets[q]]
    return None, None


@pytest.mark.parametrize("ties", [False, True])
def test_certified_significance_minimum_is_at_most_the_certified_reversal(ties):
    """Exact refits of every flip/drop set: the smallest set that removes top-1's significance is no
    larger than the smallest that reverses the leader (a reversal implies loss of significance), the
    greedy budget is an upper bound on it, and statsmodels confirms the certified set."""
    st = BTState.fit(_tiny(ties))
    assert st.covariance_kind() == ("sandwich" if ties else "fisher")
    sig, point = TopK(st, 1, significance=True), TopK(st, 1)
    rows = rows_from_counts(st.counts)
    contrasts = contrasts_of(sig)
    for kind in ("flip", "drop"):
        s_min, witness = _exhaustive(st, sig, kind, 8)
        r_min, _ = _exhaustive(st, point, kind, 10)
        r_bound = 11 if r_min is None else r_min  # None: certified that no set of ≤ 10 reverses the leader
        assert s_min is not None and s_min <= r_bound, (kind, s_min, r_min)
        if not ties:  # the package's own exhaustive search (Fisher criterion) agrees
            assert exhaustive_minimum(st, sig, kind, s_min)["budget"] == s_min
        greedy = greedy_audit(st, sig, kind, budget=20)
        assert greedy.verified and s_min <= greedy.budget, (kind, s_min, greedy.budget)
        acts = [{"kind": kind, "player_a": str(st.players[c.i[q]]), "player_b": str(st.players[c.j[q]]),
                 "outcome": ("a_wins", "b_wins", "tie")[c.outcome[q]], "count": 1} for c, q in witness]
        assert significance_margin(replay(rows, acts), st.players, contrasts, ties="half") < 0
        assert significance_margin(rows, st.players, contrasts, ties="half") > 0


@pytest.mark.parametrize("data", ["nba", "llmfao"])
def test_negative_z_predictions_follow_exact_refits(states, data, sample):
    """The 1sN prediction of f = θ_a − θ_b − z·ρ·sd for single drops (gradient, Sherman–Morrison
    and the Newton-point variance with z < 0) against the exact refit's f (the review's covariance)."""
    st = states[data]
    spec = {"nba": "pair:Boston Celtics>Golden State Warriors", "llmfao": "pair:GPT 4>Falcon Instruct (40B)"}[data]
    obj = parse_objective(spec, st, significance=True)
    cand = sample(candidates(st, "drop"), 60, 1)
    pred = obj.delta(st, cand, 1.0, "1sN")
    rough = obj.delta(st, cand, 1.0, "linear")
    tables = np.repeat(st.counts.counts[None], len(cand), axis=0)
    tables[np.arange(len(cand)), cand.r] += cand.delta
    rf = refit(st, tables, with_hinv=True)
    exact = np.array([obj.value_at(st.with_fit(tables[q], type(rf)(rf.theta[q], rf.hinv[q], True, rf.hessian[q])))
                      for q in range(len(cand))]) - obj.value_at(st)
    assert np.all(rf.ok)
    err = np.abs(pred - exact) / np.abs(exact).max()
    if data == "nba":  # Fisher: the prediction's own covariance
        assert err.max() < 0.01
    else:  # sandwich: Fisher Δsd scaled by ρ (the dropped comparison's own share of the meat is not predicted)
        assert np.median(err) < 0.01 and err.max() < 0.5
    assert spearmanr(pred, exact).statistic > 0.97 and spearmanr(rough, exact).statistic > 0.9
    flipped = PairMargin(st, obj.player_a, obj.player_b, ci_aware=True).delta(st, cand, 1.0, "1sN")
    assert np.abs(flipped - exact).max() > 2 * np.abs(pred - exact).max()  # the sign of z matters


def test_refusals_are_one_line_input_errors(states):
    nba, llm = states["nba"], states["llmfao"]
    msgs = []
    for call in (lambda: parse_objective("top1", nba, significance=True),           # not significant
                 lambda: parse_objective("top1+sig", nba),
                 lambda: TopK(nba, 1, ci_aware=True, significance=True),
                 lambda: parse_objective("tau", nba, significance=True),
                 lambda: TopK(nba, 3, target="Denver Nuggets", goal="demote", significance=True),
                 lambda: audit(llm, "pair:GPT 4>Falcon Instruct (40B)", "flip", significance=True, certify=2)):
        with pytest.raises(InputError) as e:
            call()
        msgs.append(str(e.value))
    assert all("\n" not in m for m in msgs)
    assert "not significant" in msgs[0] and "nothing to overturn" in msgs[0] and msgs[0] == msgs[1]
    assert "choose one" in msgs[2] and "tau" in msgs[3] and "--target" in msgs[4] and "sandwich" not in msgs[4]
    assert "--certify" in msgs[5]


def test_cli_significance_json(tmp_path, capsys):
    out = tmp_path / "a.json"
    claim = "pair:Boston Celtics>Golden State Warriors"
    assert main(["audit", "nba", "--objective", claim, "--significance", "--actions", "flip", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())  # validated against schemas/audit.json by to_json
    det = doc["objective_details"]
    assert (det["mode"], det["ci_aware"], det["covariance"], det["name"]) == \
        ("significance", False, "auto", "Boston Celtics>Golden State Warriors+sig")
    assert det["z"] == pytest.approx(1.959963984540054)
    assert doc["settings"]["significance"] and doc["settings"]["significance_covariance"].startswith("inverse observed")
    flip = doc["audits"]["flip"]
    assert flip["broken"] and flip["verified"] and flip["final_value"] < 0 < flip["initial_value"]
    assert main(["audit", "nba", "--objective", claim, "--significance", "--ci-aware"]) == 2
    assert main(["audit", "nba", "--objective", "tau", "--significance"]) == 2
    err = capsys.readouterr().err
    assert "choose one" in err and "tau" in err


def test_mode_suffixes_and_a_player_named_like_one():
    """``+sig``/``+ci`` select the modes, unless the whole spec already names two players."""
    counts = _tiny(False)
    st = BTState.fit(counts)
    assert parse_objective("top1+sig", st).name == "top1+sig" and parse_objective("pair:A>B+ci", st).ci_aware
    assert parse_objective("A>C+sig", st).significance
    odd = BTState.fit(PairCounts(np.array(["A", "B+sig", "C"]), counts.i, counts.j, counts.wins_i, counts.wins_j,
                                 counts.ties))
    plain = parse_objective("A>B+sig", odd)
    assert plain.mode == "point" and plain.player_b == "B+sig"
    assert parse_objective("A>B+sig+sig", odd).significance
