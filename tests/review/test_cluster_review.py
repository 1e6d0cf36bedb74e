"""``review --cluster COL`` on real repeated judgments: the bundled LLMFAO panel (2,139 output pairs,
column ``id``, each rated by 1–5 crowd workers, GPT-3.5 and GPT-4: 13,209 comparisons, 3,731 ties scored
as half-wins).

Independent references: statsmodels' logistic GLM on one row per comparison (y = 1, 0, ½) with
``cov_type="cluster"`` (groups = ``id``; its default CRV1 factor) for the frequentist answer, its
``HC0`` for the sandwich beside it, and its non-robust covariance (the Fisher H⁻¹) for the claim's
effective number of clusters, recomputed from the definition ``v_g = Σ_{n∈g} c_n (x_nᵀH⁻¹c)²``.
"""

import math

import numpy as np
import pytest
import statsmodels.api as sm

from bayesrank.data import read_comparisons
from bayesrank.datasets import path
from bayesrank.review import review

PAIR = "GPT 3.5 Turbo>Dolly v2 (3B)"


@pytest.fixture(scope="module")
def panel():
    f = read_comparisons(path("llmfao-panel")).frame
    a, b = f["model_a"].astype(str).to_numpy(), f["model_b"].astype(str).to_numpy()
    players = sorted(set(a) | set(b))
    idx = {p: k for k, p in enumerate(players)}
    z = np.zeros((len(f), len(players)))
    z[np.arange(len(f)), [idx[p] for p in a]] += 1
    z[np.arange(len(f)), [idx[p] for p in b]] -= 1
    y = f["outcome"].astype(str).map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    groups = f["id"].astype("category").cat.codes.to_numpy()
    glm = sm.GLM(y, z[:, 1:], family=sm.families.Binomial())
    fits = {kind: glm.fit(tol=1e-13, cov_type=kind, cov_kwds=kw)
            for kind, kw in (("cluster", {"groups": groups}), ("HC0", None), ("nonrobust", None))}
    return {"players": players, "idx": idx, "x": z[:, 1:], "y": y, "groups": groups, "fits": fits,
            "ids": f["id"].to_numpy()}


@pytest.fixture(scope="module")
def report():
    return review("llmfao-panel", kind="pairwise", fast=True, cluster="id", claims=["top1", PAIR], seed=0)


def _contrast_vector(panel, name):
    a, b = (s.strip() for s in name.split(" − "))
    c = np.zeros(len(panel["players"]) - 1)
    for p, sign in ((a, 1.0), (b, -1.0)):
        if panel["idx"][p]:
            c[panel["idx"][p] - 1] += sign
    return c


def test_frequentist_answer_equals_statsmodels_cluster_glm(panel, report):
    from scipy.stats import norm

    for claim in report.claims:
        f = claim.frequentist
        c = _contrast_vector(panel, f["contrast"])
        ref = panel["fits"]["cluster"]
        est, se = float(c @ ref.params), float(np.sqrt(c @ ref.cov_params() @ c))
        z = norm.ppf(0.95) if claim.claim.sided == "one-sided" else norm.ppf(0.975)
        assert f["interval"] == "cluster-robust sandwich"
        assert f["estimate"] == pytest.approx(est, abs=1e-6)
        assert (f["estimate"] - f["lower"]) / z == pytest.approx(se, abs=1e-6)
        hc0 = panel["fits"]["HC0"]
        assert (f["estimate"] - f["intervals"]["sandwich"][0]) / z == pytest.approx(
            float(np.sqrt(c @ hc0.cov_params() @ c)), abs=1e-6)


def test_bayesian_answer_has_the_cluster_robust_spread(panel, report):
    """The claims' posterior is adjusted to the cluster-robust covariance (exactly, by construction):
    the variance of the binding contrast over its draws is statsmodels' cluster variance."""
    fit = report.results["fits"]["claims"]
    assert "cluster-robust" in fit.method
    for claim in report.claims:
        c = _contrast_vector(panel, claim.frequentist["contrast"])
        a, b = (panel["idx"][s.strip()] for s in claim.frequentist["contrast"].split(" − "))
        d = fit.draws[:, a] - fit.draws[:, b]
        ref = panel["fits"]["cluster"]
        assert np.var(d, ddof=1) == pytest.approx(float(c @ ref.cov_params() @ c), rel=1e-6)


def test_fractions_count_effective_clusters(panel, report):
    """relative_to.n = (Σ_g v_g)² / Σ_g v_g² with v_g summed over the comparisons of item g, from
    statsmodels' Fisher covariance; every witness is measured by the items it touches; the search
    covers the comparisons of --fragile-below of those items."""
    ref = panel["fits"]["nonrobust"]
    p = ref.fittedvalues
    for claim in report.claims:
        rel = claim.relative_to
        assert rel["unit"] == "clusters" and rel["what"].startswith("effective clusters")
        u = ref.cov_params() @ _contrast_vector(panel, claim.frequentist["contrast"])
        v = np.bincount(panel["groups"], weights=p * (1 - p) * (panel["x"] @ u) ** 2)
        assert rel["n"] == pytest.approx(v.sum() ** 2 / (v**2).sum(), rel=1e-6)
        sizes = np.bincount(panel["groups"])
        assert rel["comparisons_per_cluster"] == sizes[v > 1e-15 * v.max()].max()
        m = rel["comparisons_per_cluster"]
        for entry in list(claim.perturbation.values()) + list(claim.significance_perturbation.values()):
            if entry.get("broken") is None:
                continue
            whole = entry.get("searched_unit") == "clusters"  # drop-cluster: searched in clusters
            assert entry["searched_to"] >= 0.01 * rel["n"] * (1 if whole else m) - 1e-9
            if entry["broken"] and not whole:
                assert entry["clusters"] >= math.ceil(entry["budget"] / m - 1e-9)
                assert entry["fraction"] == pytest.approx(entry["clusters"] / rel["n"])
                assert entry["fraction_of_all"] == pytest.approx(entry["clusters"] / 2139)


def test_significance_audit_uses_the_cluster_robust_test():
    """The loss-of-significance audit runs on the clustered rows, whose default covariance is the
    cluster-robust one (the frequentist answer's test); a claim significant at p ≈ 0.012 loses it."""
    from bayesrank.influence.api import load_state

    rep = review("llmfao-panel", kind="pairwise", fast=True, cluster="id", claims=["GPT 4>Claude v1"])
    claim = rep.claims[0]
    assert claim.frequentist["supported"] and claim.frequentist["p_value"] < 0.05
    found = [e for e in claim.significance_perturbation.values() if e.get("broken") and e.get("verified")]
    assert found and all(e["objective_details"]["covariance"] == "auto" for e in found)
    state, _ = load_state(read_comparisons(path("llmfao-panel")), cluster="id")
    assert state.covariance_kind("auto") == "cluster" and state.counts.n_clusters == 2139


def test_report_says_what_the_audits_measure(report):
    assert any("drop whole clusters" in n for n in report.notes)
    md = report.to_markdown()
    assert "effective clusters" in md and " clusters (" in md
    from bayesrank.protocol import validate

    validate(report.to_dict(), "review")


def test_fragile_below_02_with_clusters_searches_the_clusters_range():
    """--fragile-below 0.2 with clusters: the default budget covers the comparisons of 20% of the
    claim's effective clusters (n_eff · m), so a claim with no witness there is supported over a
    searched range; a --budget below that is 'not searched', never 'supported'."""
    rep = review("llmfao-panel", kind="pairwise", fast=True, cluster="id", claims=[PAIR], fragile_below=0.2)
    claim = rep.claims[0]
    rel = claim.relative_to
    need = 0.2 * rel["n"] * rel["comparisons_per_cluster"]
    for entry in claim.perturbation.values():
        whole = entry.get("searched_unit") == "clusters"
        lim = 0.2 * rel["n"] if whole else need
        assert entry["budget_limit"] >= lim - 1e-9 and entry["searched_to"] >= lim - 1e-9
    found = [e["fraction"] for e in claim.perturbation.values() if e["broken"] and e["verified"]]
    assert claim.verdict == ("fragile" if found and min(found) < 0.2 else "supported")
    small = review("llmfao-panel", kind="pairwise", fast=True, cluster="id", claims=[PAIR], fragile_below=0.2,
                   budget=int(0.2 * rel["n"]))  # 20% of the clusters' count, but fewer than their comparisons
    c = small.claims[0]
    if not any(e["broken"] for e in c.perturbation.values()):
        assert c.verdict == "not searched"
    assert c.verdict != "supported"


def test_clustered_witnesses_replayed_on_the_raw_comparisons(panel):
    """Each drop / flip / add witness of "GPT 4 > Claude v1" under --cluster id, applied to the raw
    comparisons (its rows are the file's comparisons) and refitted by statsmodels' GLM, reverses
    the claim; its `clusters` are the distinct ids it touches (drop, flip) and at least
    ceil(budget / m) for added comparisons."""
    import pandas as pd

    rep = review("llmfao-panel", kind="pairwise", fast=True, cluster="id", claims=["GPT 4>Claude v1"])
    claim = rep.claims[0]
    frame = read_comparisons(path("llmfao-panel")).frame
    y0 = frame["outcome"].astype(str).map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    x0 = panel["x"]
    c = _contrast_vector(panel, "GPT 4 − Claude v1")

    def gap(x, y, w):
        res = sm.GLM(y, x, family=sm.families.Binomial(), freq_weights=w).fit(tol=1e-12)
        return float(c @ res.params)

    assert gap(x0, y0, np.ones(len(y0))) > 0
    m = claim.relative_to["comparisons_per_cluster"]
    for action, entry in claim.perturbation.items():
        if action == "drop-cluster":  # whole clusters: test_whole_clusters_are_an_action
            continue
        assert entry["broken"] and entry["verified"], action
        acts = pd.DataFrame(entry["actions"])
        rows = acts["row"].to_numpy()
        assert (frame["model_a"].astype(str).to_numpy()[rows] == acts["player_a"]).all()
        assert acts["count"].sum() == entry["budget"]
        x, y, w = x0.copy(), y0.copy(), np.ones(len(y0))
        if action == "drop":
            np.subtract.at(w, rows, acts["count"].to_numpy())
        elif action == "flip":
            assert (acts["count"] == 1).all()
            y[rows] = acts["y_new"].to_numpy()
        else:
            x = np.vstack([x, x0[rows]])
            y = np.concatenate([y, acts["y_new"].to_numpy()])
            w = np.concatenate([w, acts["count"].to_numpy()])
        assert gap(x, y, w) < 0, action
        touched = len(set(panel["groups"][rows]))
        expect = touched if action != "add" else max(touched, math.ceil(entry["budget"] / m - 1e-9))
        assert entry["clusters"] == expect, action


def test_whole_clusters_are_an_action(panel):
    """With --cluster the audits also drop whole clusters (``drop-cluster``: the budget counts
    clusters, ceil(max(5%, --fragile-below) · n_eff)); a witness, replayed by dropping those items
    from the raw comparisons and refitting with statsmodels, reverses the claim."""
    import pandas as pd

    rep = review("llmfao-panel", kind="pairwise", fast=True, cluster="id", claims=["GPT 4>Claude v1"], fragile_below=0.3)
    claim = rep.claims[0]
    entry = claim.perturbation["drop-cluster"]
    n = claim.relative_to["n"]
    assert entry["searched_unit"] == "clusters" and entry["budget_limit"] == math.ceil(0.3 * n - 1e-9)
    assert entry["searched_to"] >= 0.3 * n - 1e-9
    assert entry["broken"] and entry["verified"]
    assert entry["fraction"] == pytest.approx(entry["budget"] / n) and entry["clusters"] == entry["budget"]
    gone = pd.DataFrame(entry["actions"])["cluster"].to_numpy()
    assert len(gone) == entry["budget"]
    keep = ~np.isin(panel["ids"], gone)  # the witness names the ids of the file
    res = sm.GLM(panel["y"][keep], panel["x"][keep], family=sm.families.Binomial()).fit(tol=1e-12)
    theta = np.concatenate([[0.0], res.params])
    idx = panel["idx"]
    assert theta[idx["GPT 4"]] - theta[idx["Claude v1"]] < 0


def test_whole_cluster_witness_names_string_cluster_ids():
    """A real file with string cluster ids (NBA 2023-24 clustered by game day, ``date``): the review's
    drop-cluster witness names the dates of the file — in its JSON entry and in the page's table of
    the witness's actions — and removing those days' games from the raw file (read here with pandas)
    and refitting with statsmodels reverses the #1."""
    import pandas as pd

    rep = review("nba", kind="pairwise", fast=True, cluster="date", claims=["top1"], seed=0)
    entry = rep.claims[0].perturbation["drop-cluster"]
    assert entry["broken"] and entry["verified"] and entry["searched_unit"] == "clusters"
    gone = [a["cluster"] for a in entry["actions"]]
    games = pd.read_csv(path("nba"))
    assert len(gone) == entry["budget"] and all(isinstance(g, str) and g in set(games["date"]) for g in gone)
    page = rep.to_html()
    assert all(f"<td>{g}</td>" in page for g in gone[:8])  # the page shows the first 8 steps
    kept = games[~games["date"].isin(gone)]
    teams = sorted(set(kept["home_team"]) | set(kept["away_team"]))
    idx = {t: n for n, t in enumerate(teams)}
    z = np.zeros((len(kept), len(teams)))
    z[np.arange(len(kept)), kept["home_team"].map(idx)] += 1
    z[np.arange(len(kept)), kept["away_team"].map(idx)] -= 1
    res = sm.GLM((kept["home_pts"] > kept["away_pts"]).to_numpy(float), z[:, 1:],
                 family=sm.families.Binomial()).fit(tol=1e-12)
    leader = rep.claims[0].claim.text.split(" is #1")[0].split(": ")[-1]
    assert teams[int(np.argmax(np.concatenate([[0.0], res.params])))] != leader


def test_whole_clusters_remove_significance_replayed_by_statsmodels(panel):
    """With --cluster the loss-of-significance audit also drops whole clusters; its witness, replayed
    by dropping those items from the raw comparisons, leaves a contrast that statsmodels' cluster GLM
    (CRV1, the package's correction) no longer finds significant at the claim's level and sidedness."""
    import pandas as pd
    from scipy.stats import norm

    rep = review("llmfao-panel", kind="pairwise", fast=True, cluster="id", claims=["GPT 4>Claude v1"], fragile_below=0.3)
    claim = rep.claims[0]
    assert claim.frequentist["supported"]
    entry = claim.significance_perturbation["drop-cluster"]
    assert entry["searched_unit"] == "clusters"
    assert entry["broken"] and entry["verified"], entry["reason"]
    assert entry["objective_details"]["covariance"] == "auto"
    gone = pd.DataFrame(entry["actions"])["cluster"].to_numpy()
    assert len(gone) == entry["budget"]
    c = _contrast_vector(panel, "GPT 4 − Claude v1")
    sided = claim.frequentist["sided"]
    crit = norm.ppf(rep.level if sided != "two-sided" else (1 + rep.level) / 2)

    def z_after(keep):
        groups = panel["groups"][keep]
        res = sm.GLM(panel["y"][keep], panel["x"][keep], family=sm.families.Binomial()).fit(
            tol=1e-13, cov_type="cluster", cov_kwds={"groups": groups})
        return float(c @ res.params / np.sqrt(c @ res.cov_params() @ c))

    assert z_after(np.ones(len(panel["y"]), bool)) > crit  # significant on the whole panel
    assert z_after(~np.isin(panel["ids"], gone)) <= crit  # not after the witness
