"""Fragility against the claim's own evidence (``relative_to``) and the searched range.

* the effective count against closed forms (equal shares, the all-pairs design) and its shares
  against statsmodels' Fisher variance of the contrast;
* the dilution case of the issue: 4 players, 300 games per pair; then 9,250 games among ten weaker
  players joined to the rest only through the bottom player: estimates, p-values, evidence,
  fractions, searched ranges, budgets, the drop/flip witnesses and the verdicts unchanged (the
  fraction of *all* comparisons, the old denominator, falls below 1%). Adds may pair a claimed
  player with one of the new players (the "any pair" space grows with the players), so only their
  budgets are compared;
* ``--fragile-below 0.2``: the default budget covers 20% of each claim's evidence, so claims
  overturned by 5–20% of it are fragile, and a ``--budget`` below the threshold gives
  ``not searched``, never ``supported``.
"""

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.special import expit

from bayesrank.cli import main
from bayesrank.data import read_comparisons
from bayesrank.influence.state import BTState
from bayesrank.protocol import validate
from bayesrank.review import review
from bayesrank.review.claims import parse_claim
from bayesrank.review.evidence import effective_count, relative_to, searched_to

CORE = {"p0": 0.5, "p1": 0.2, "p2": 0.0, "p3": -0.3}
WEAK = {f"w{i}": -1.0 - 0.25 * i for i in range(10)}
CLAIMS = ["top1", "p0>p1", "p0>p2", "p0>p3"]


def _rows(pairs):
    """Deterministic outcomes: round(n·σ(θ_a − θ_b)) wins of a in each pair."""
    rows = []
    for a, b, n, p in pairs:
        w = int(round(n * p))
        rows += [(a, b, "a")] * w + [(a, b, "b")] * (n - w)
    return rows


def _write(path, rows):
    pd.DataFrame(rows, columns=["model_a", "model_b", "outcome"]).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def dilution(tmp_path_factory):
    d = tmp_path_factory.mktemp("dilution")
    names, weak = list(CORE), list(WEAK)
    core = [(a, b, 300, expit(CORE[a] - CORE[b])) for i, a in enumerate(names) for b in names[i + 1:]]
    extra = ([(a, b, 150, expit(WEAK[a] - WEAK[b])) for i, a in enumerate(weak) for b in weak[i + 1:]]
             + [("p3", w, 250, expit(CORE["p3"] - WEAK[w])) for w in weak])
    base = _write(d / "base.csv", _rows(core))
    diluted = _write(d / "diluted.csv", _rows(core) + _rows(extra))
    return base, diluted


# ------------------------------------------------------------------------------ the effective count
def test_effective_count_closed_forms():
    assert effective_count(np.full(7, 0.3)) == pytest.approx(7)
    assert effective_count([0.3, 0.3, 0.0, 0.0]) == pytest.approx(2)  # units without influence add nothing
    assert effective_count([0.5], weight=[40]) == pytest.approx(40)  # an aggregated cell of 40 comparisons
    # shares 0.9 (one unit) and 0.1 over 100 tiny units: about 1.2, not 101 (Kish of |ψ| would give ~3.7)
    assert effective_count(np.r_[0.9, np.full(100, 0.001)]) == pytest.approx(1 / (0.81 + 100 * 1e-6), rel=1e-12)


def test_all_pairs_design_closed_form():
    """4 equal players, 300 games per pair: u = H⁻¹(e0 − e1) = (e0 − e1)/300, so the 300 direct games
    carry share 4c/300² each, the 1,200 games with one of them c/300² each, the 300 others 0:
    n_eff = (600/300²)² / ((300·16 + 1200)/(16·300⁴)) = 960."""
    rows = []
    names = ["a", "b", "c", "d"]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            rows += [(a, b, "a")] * 150 + [(a, b, "b")] * 150
    state = BTState.fit(read_comparisons(pd.DataFrame(rows, columns=["model_a", "model_b", "outcome"])).aggregate())
    claim = parse_claim("a>b", "pairwise", players=names)
    rel = relative_to(state, claim, [(0, 1)], 0)
    assert rel["n"] == pytest.approx(960, rel=1e-9) and rel["unit"] == "comparisons"
    assert "a − b" in rel["what"]


def test_shares_add_up_to_statsmodels_fisher_variance(dilution):
    """Σ_n v_n = Var(θ̂_p0 − θ̂_p1) of statsmodels' logistic GLM on the ±1 design (the shares are a
    decomposition of the Fisher variance), and the diluted data's weak block carries no share."""
    from bayesrank.review.evidence import unit_shares

    for path in dilution:
        df = pd.read_csv(path)
        players = sorted(set(df.model_a) | set(df.model_b))
        idx = {p: i for i, p in enumerate(players)}
        x = np.zeros((len(df), len(players)))
        x[np.arange(len(df)), df.model_a.map(idx)] = 1
        x[np.arange(len(df)), df.model_b.map(idx)] = -1
        ref = players.index("p3")  # any reference player: contrasts do not depend on it
        keep = [k for k in range(len(players)) if k != ref]
        res = sm.GLM((df.outcome == "a").to_numpy(float), x[:, keep], family=sm.families.Binomial()).fit(tol=1e-13)
        c = np.zeros(len(keep))
        c[keep.index(idx["p0"])], c[keep.index(idx["p1"])] = 1, -1
        var = float(c @ res.cov_params() @ c)
        state = BTState.fit(read_comparisons(path).aggregate())
        a, b = state.counts.index_of("p0"), state.counts.index_of("p1")
        v, w, _ = unit_shares(state, state.hinv[:, a] - state.hinv[:, b])
        assert float((v * w).sum()) == pytest.approx(var, rel=1e-8)
        weak = np.array([str(state.players[i]).startswith("w") or str(state.players[j]).startswith("w")
                         for i, j in zip(state.counts.i, state.counts.j)])
        assert np.abs(v[weak]).max(initial=0.0) < 1e-15 * v.max()


# ------------------------------------------------------------------------------ dilution invariance
@pytest.fixture(scope="module")
def diluted_reports(dilution):
    return [review(p, fast=True, seed=0, claims=CLAIMS) for p in dilution]


def test_unrelated_comparisons_leave_every_answer_unchanged(diluted_reports, dilution):
    base, diluted = diluted_reports
    n_base, n_dil = (len(pd.read_csv(p)) for p in dilution)
    assert (n_base, n_dil) == (1800, 11050)
    for b, d in zip(base.claims, diluted.claims):
        assert b.claim.text == d.claim.text
        assert b.verdict == d.verdict, b.claim.text
        for key in ("estimate", "lower", "p_value", "supported"):
            assert b.frequentist[key] == pytest.approx(d.frequentist[key], rel=1e-8, abs=1e-12), (b.claim.text, key)
        assert b.relative_to["what"] == d.relative_to["what"]
        assert b.relative_to["n"] == pytest.approx(d.relative_to["n"], rel=1e-9)
        for answer in ("perturbation", "significance_perturbation"):
            for action, pb in getattr(b, answer).items():
                pd_ = getattr(d, answer)[action]
                where = (b.claim.text, answer, action)
                assert pb["budget"] == pd_["budget"] and pb.get("budget_limit") == pd_.get("budget_limit"), where
                assert pb["searched_to"] == pd_["searched_to"], where
                assert pb["verified"] == pd_["verified"], where
                if pb["fraction"] is not None:
                    assert pb["fraction"] == pytest.approx(pd_["fraction"], rel=1e-9), where
                    assert pb["fraction_of_all"] * n_base == pytest.approx(pd_["fraction_of_all"] * n_dil), where
                if action == "add":  # adds act on any pair: a witness may pair p0 with a new, weak player
                    continue
                assert [(x["player_a"], x["player_b"], x["outcome"], x["count"]) for x in pb["actions"]] == \
                       [(x["player_a"], x["player_b"], x["outcome"], x["count"]) for x in pd_["actions"]], where


def test_the_old_denominator_would_have_changed_the_verdict(diluted_reports):
    """The top-1 witness (44 flips) is 2.4% of all 1,800 comparisons but 0.40% of the 11,050 diluted
    ones: divided by all comparisons the claim would turn fragile; against its own evidence it stays
    at 4.7% and supported."""
    base, diluted = diluted_reports
    b, d = base.claims[0], diluted.claims[0]
    assert b.claim.text == "top1" and b.verdict == d.verdict == "supported"
    fb, fd = b.perturbation["flip"], d.perturbation["flip"]
    assert fb["broken"] and fb["verified"] and fb["budget"] == fd["budget"]
    assert fb["fraction_of_all"] > 0.01 > fd["fraction_of_all"]
    assert fb["fraction"] == pytest.approx(fd["fraction"]) and fb["fraction"] > 0.01


# ------------------------------------------------------------------------------ the searched range
def test_default_budget_covers_a_large_fragility_threshold(dilution):
    """--fragile-below 0.2: every audit searches at least 20% of its claim's evidence; the claims
    overturned by 5–20% of it (beyond the old 5% budget) are fragile, none is supported unsearched."""
    rep = review(dilution[0], fast=True, seed=0, claims=CLAIMS, fragile_below=0.2)
    for c in rep.claims:
        n = c.relative_to["n"]
        for p in c.perturbation.values():
            assert p["budget_limit"] >= 0.2 * n and p["searched_to"] >= 0.2 * n, c.claim.text
        smallest = min(p["fraction"] for p in c.perturbation.values() if p["broken"] and p["verified"])
        assert c.verdict == ("fragile" if smallest < 0.2 else "supported"), c.claim.text
    beyond = [c for c in rep.claims if c.verdict == "fragile" and
              min(p["fraction"] for p in c.perturbation.values() if p["broken"]) > 0.05]
    assert {c.claim.text for c in beyond} >= {"p0>p2", "p0>p3"}


def test_a_budget_below_the_threshold_is_not_searched(dilution, tmp_path):
    out = tmp_path / "r.json"
    assert main(["review", str(dilution[0]), "--fast", "--claim", "p0>p3", "--claim", "top1", "--fragile-below", "0.2",
                 "--budget", "20", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    validate(doc, "review")
    for c in doc["claims"]:
        assert c["frequentist"]["supported"]
        assert all(p["broken"] is False and p["searched_to"] == 20 for p in c["perturbation"].values())
        assert c["verdict"] == "not searched" and "within 20" in c["reason"]
    assert doc["verdicts"]["not searched"] == 2 and doc["verdicts"]["supported"] == 0
    assert main(["review", str(dilution[0]), "--fast", "--claim", "top1", "--fragile-below", "0.2", "--budget", "20",
                 "--fail-on", "fragile"]) == 1


def test_searched_to_reads_how_far_the_greedy_audit_went():
    curve = [{"budget": 0}, {"budget": 12}, {"budget": 30}]
    assert searched_to({"broken": True, "budget_limit": 50, "reason": "broken", "curve": curve}) == 50
    assert searched_to({"broken": False, "budget_limit": 50, "reason": "not broken within budget (50 actions)",
                        "curve": curve}) == 50
    assert searched_to({"broken": False, "budget_limit": 50, "reason": "stopped after 400 greedy steps (not broken)",
                        "curve": curve}) == 30
    assert searched_to({"broken": False, "budget_limit": 50, "reason": "not broken; stopped early (heuristic): ...",
                        "curve": curve}) == 30
    assert searched_to({"broken": None, "reason": "the claim is false at the point estimate"}) is None


@pytest.mark.slow
def test_arena_claims_against_their_own_evidence():
    """Chatbot Arena (1.67M votes): #1 vs a model far below is supported (its evidence is llama-13b's
    ~2,400 games, not the whole arena), while top-1 keeps a verified witness below 1% of its own
    evidence."""
    rep = review("arena", fast=True, seed=0, claims=["top1", "chatgpt-4o-latest>llama-13b"])
    top1, far = rep.claims
    assert far.verdict == "supported" and far.frequentist["supported"]
    assert 2000 < far.relative_to["n"] < 5000
    assert all(p["searched_to"] >= 0.01 * far.relative_to["n"] for p in far.perturbation.values())
    assert top1.verdict == "fragile"
    flip = top1.perturbation["flip"]
    assert flip["broken"] and flip["verified"] and flip["fraction"] < 0.01
    assert flip["fraction_of_all"] == pytest.approx(flip["budget"] / 1670250)


def test_joint_statement_is_holm_over_the_claims(diluted_reports):
    """Which supported claims hold jointly: statsmodels' Holm on the claims' p-values at α = 0.05;
    shown on the page, in the Markdown and in the JSON."""
    from statsmodels.stats.multitest import multipletests

    rep = diluted_reports[0]
    p = [c.frequentist["p_value"] for c in rep.claims]
    reject, adj, _, _ = multipletests(p, alpha=0.05, method="holm")
    for c, r, q in zip(rep.claims, reject, adj):
        assert c.extra["joint"]["p_holm"] == pytest.approx(q, rel=1e-12)
        assert c.extra["joint"]["holds_jointly"] == bool(r and c.frequentist["supported"])
    assert rep.joint["holds_jointly"] == [c.claim.text for c, r in zip(rep.claims, reject) if r]
    assert rep.joint["family"] == len(CLAIMS)
    page, md = rep.to_html(), rep.to_markdown()
    assert "<b>Jointly.</b>" in page and "**Jointly.**" in md
    assert "Fractions are of the claim's evidence: effective comparisons informing the binding contrast" in page
    validate(json.loads(rep.to_json()), "review")


def test_a_drop_cluster_witness_counts_its_own_clusters():
    """A whole-cluster audit (influence action drop-cluster) is measured by the clusters it removed:
    on the LLMFAO panel clustered by prompt, the top-1 claim's drop-cluster witness from the one audit
    engine gets ``clusters = budget`` and fractions of the claim's effective clusters / of all clusters."""
    from bayesrank.data import read_comparisons
    from bayesrank.data.aggregate import pair_rows
    from bayesrank.datasets import path
    from bayesrank.influence.greedy import greedy_audit
    from bayesrank.influence.state import BTState
    from bayesrank.review import evidence

    comps = read_comparisons(path("llmfao-panel"))
    st = BTState.fit(pair_rows(comps, (), cluster="id", ordered=True, per_comparison=True))
    res = greedy_audit(st, "top1", "drop-cluster", budget=max(1, st.counts.n_clusters // 2))
    entry = {k: v for k, v in res.to_dict().items() if k in ("broken", "budget", "verified", "actions", "reason",
                                                              "budget_limit", "curve")}
    rel = {"what": "effective clusters", "n": 40.0, "unit": "clusters", "comparisons_per_cluster": 5.0}
    evidence.annotate(entry, rel, st.counts.n_comparisons, cluster=st.counts.cluster, n_clusters=st.counts.n_clusters)
    assert entry["broken"] and entry["verified"], entry["reason"]
    assert entry["clusters"] == entry["budget"] == len(entry["actions"])
    assert entry["fraction"] == pytest.approx(entry["budget"] / 40.0)
    assert entry["fraction_of_all"] == pytest.approx(entry["budget"] / st.counts.n_clusters)
