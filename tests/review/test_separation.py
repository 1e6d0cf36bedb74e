"""Separation is an answer: a season in which one team never lost (no finite MLE) is reviewed with
Firth's bias-reduced fit. The claims' tests and intervals are checked against firthmodels (an
independent Firth logistic regression with profile-likelihood intervals and penalised LR tests:
logistic Firth on the ±1 Bradley–Terry design, reference coding, is Firth BT)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import norm

from bayesrank.cli import main
from bayesrank.review import review

firthmodels = pytest.importorskip("firthmodels")

# A sports-reference layout (two columns named Pts, each after its team; a blank column): Ridgeback
# State never lost, Tern Tech never won. Round robin of 6 teams, twice, plus a few extra games.
TEAMS = ["Ridgeback State", "Heron College", "Osprey A&M", "Kestrel U", "Plover Poly", "Tern Tech"]
GAMES = [  # (winner, loser) by index
    (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 2), (2, 1), (1, 3), (3, 1), (1, 4), (1, 5), (2, 3), (3, 2),
    (2, 4), (4, 2), (2, 5), (3, 4), (4, 3), (3, 5), (4, 5), (0, 1), (0, 2), (1, 2), (2, 3), (3, 4), (1, 4),
    (4, 1), (2, 5), (0, 3),
]


@pytest.fixture(scope="module")
def season(tmp_path_factory):
    path = tmp_path_factory.mktemp("separation") / "schedule.csv"
    lines = ["Rk,Wk,Date,Winner,Pts,,Loser,Pts,Notes"]
    for r, (w, l) in enumerate(GAMES, start=1):
        lines.append(f"{r},{1 + r // 6},2023-09-{1 + r % 28:02d},{TEAMS[w]},{24 + r % 7},@,{TEAMS[l]},{10 + r % 9},")
    path.write_text("\n".join(lines) + "\n")
    return path


def _reference(k_a: int, k_b: int):
    """firthmodels on the design with team ``k_b`` as the reference: coefficient of ``k_a`` = θ_a − θ_b."""
    others = [t for t in range(len(TEAMS)) if t != k_b]
    x, y = [], []
    for w, l in GAMES:
        row = np.zeros(len(TEAMS))
        row[w], row[l] = 1.0, -1.0
        x.append(row[others])
        y.append(1)
    x = np.array(x)
    x = np.vstack([x, -x])  # each game once as a win of the winner, once as a loss of the loser
    y = np.r_[np.ones(len(GAMES)), np.zeros(len(GAMES))]
    m = firthmodels.FirthLogisticRegression(fit_intercept=False, gtol=1e-10, xtol=1e-10, max_iter=200)
    m.fit(x, y, sample_weight=np.full(len(y), 0.5))
    return m, others.index(k_a)


def test_review_of_a_season_with_an_undefeated_team_uses_firth(season):
    """A claim named in advance about the undefeated team (one-sided at 95%): the estimate, the
    one-sided profile bound (the lower bound of the two-sided 90% interval) and the directional
    p-value Φ(−r) (half the two-sided penalised LR p) equal firthmodels'."""
    rep = review(season, claims=["Ridgeback State>Heron College"], fast=True)
    claim = rep.claims[0]
    f = claim.frequentist
    assert f["interval"] == "profile penalised likelihood (Firth)" and f["sided"] == "one-sided"
    ref, col = _reference(0, 1)
    ref.lrt(col)
    lo = ref.conf_int(alpha=0.10, method="pl", tol=1e-10, max_iter=200)[col, 0]
    assert abs(f["estimate"] - ref.coef_[col]) < 1e-6
    assert abs(f["lower"] - lo) < 1e-5 and f["upper"] is None
    r = np.sign(ref.coef_[col]) * norm.isf(ref.lrt_pvalues_[col] / 2)
    assert abs(f["p_value"] - norm.sf(r)) < 1e-6
    assert f["supported"] == (lo > 0)
    assert claim.verdict in ("supported", "fragile", "unsupported")
    # the audits ran on Firth refits; the significance audit says why it is not run
    assert all(claim.perturbation[a]["broken"] is not None for a in ("drop", "flip"))
    sig = claim.significance_perturbation["drop"]["reason"]
    assert (not f["supported"] and sig.startswith("not significant")) or "profile penalised likelihood" in sig
    assert any("Firth's bias-reduced fit" in n and "1 player never lost (Ridgeback State)" in n for n in rep.notes)


def test_top1_binding_contrast_is_the_smallest_penalised_lr_statistic(season):
    """top1 (read off the data, two-sided): the binding contrast has the smallest signed root among
    the leader's contrasts, each recomputed by a brute-force scipy maximisation of the penalised
    likelihood with and without the contrast fixed at 0; its two-sided 95% profile interval and
    penalised LR p-value are firthmodels'."""
    from ..bt.test_firth import pair_counts, scipy_firth

    k = len(TEAMS)
    i, j = np.triu_indices(k, 1)
    wins = {(w, l): 0 for w in range(k) for l in range(k)}
    for w, l in GAMES:
        wins[w, l] += 1
    pc = pair_counts(k, i, j, [wins[a, b] for a, b in zip(i, j)], [wins[b, a] for a, b in zip(i, j)])
    keep = pc.total > 0
    pc = pair_counts(k, i[keep], j[keep], pc.wins_i[keep], pc.wins_j[keep])
    rep = review(season, claims=["top1"], fast=True)
    f = rep.claims[0].frequentist
    assert f["sided"] == "two-sided" and f["n_contrasts"] == k - 1
    assert f["contrast"].split(" − ")[0] == TEAMS[0]
    top, best = scipy_firth(pc)
    roots = {}
    for b in range(1, k):
        c = np.zeros(k)
        c[0], c[b] = 1.0, -1.0
        roots[b] = np.sign(c @ top) * np.sqrt(2 * (best - scipy_firth(pc, c, 0.0, start=top)[1]))
    b = min(roots, key=roots.get)
    assert f["contrast"] == f"{TEAMS[0]} − {TEAMS[b]}"
    assert abs(f["p_value"] - 2 * norm.sf(roots[b])) < 1e-6
    ref, col = _reference(0, b)
    lo, hi = ref.conf_int(alpha=0.05, method="pl", tol=1e-10, max_iter=200)[col]
    assert abs(f["lower"] - lo) < 1e-5 and abs(f["upper"] - hi) < 1e-5


def test_cli_review_answers_instead_of_exit_3(season, tmp_path, capsys):
    out = tmp_path / "review.json"
    assert main(["review", str(season), "--fast", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert len(data["claims"]) >= 1 and all(c["verdict"] for c in data["claims"])
    assert {c["frequentist"]["interval"] for c in data["claims"] if c["frequentist"].get("unit") == "logit difference"} \
        == {"profile penalised likelihood (Firth)"}
    assert "Firth" in capsys.readouterr().out
    # the user's ridge replaces Firth
    assert main(["review", str(season), "--fast", "--ridge", "0.5", "--json", str(out)]) == 0
    assert all("Firth" not in c["frequentist"]["interval"] for c in json.loads(out.read_text())["claims"])


def test_groups_never_compared_review_the_largest_and_count_the_rest(season, tmp_path):
    """Two teams that only played each other (a second component): the review is of the largest
    group, with exactly their comparisons excluded and counted; the rest is the same review."""
    extra = tmp_path / "with_island.csv"
    rows = season.read_text().splitlines()
    rows += ["90,9,2023-11-01,Isle Poly,21,,Atoll U,7,", "91,9,2023-11-08,Atoll U,14,,Isle Poly,3,",
             "92,9,2023-11-15,Isle Poly,10,,Atoll U,9,"]
    extra.write_text("\n".join(rows) + "\n")
    rep = review(extra, claims=["Ridgeback State>Heron College"], fast=True)
    base = review(season, claims=["Ridgeback State>Heron College"], fast=True)
    excluded = rep.reproducibility["excluded_by_reason"]
    assert excluded == {"not connected to the largest group of players": 3}
    assert any("2 groups of players never compared" in n and "Atoll U, Isle Poly" in n for n in rep.notes)
    for field in ("estimate", "lower", "p_value"):
        assert rep.claims[0].frequentist[field] == pytest.approx(base.claims[0].frequentist[field], abs=1e-9)


def test_ties_with_firth_keep_one_estimand(season, tmp_path):
    """With draws the Firth fit scores a tie as half a win; the leaderboard's covariance is the
    information at Firth's estimate (the sandwich, beside it, is degenerate when two teams' only
    games are draws with each other), and the claims' posterior is the half-win one adjusted to it."""
    drawn = tmp_path / "with_draws.csv"
    rows = season.read_text().splitlines()
    rows += ["95,10,2023-11-20,Kestrel U,17,,Plover Poly,17,", "96,10,2023-11-27,Heron College,20,,Osprey A&M,20,"]
    drawn.write_text("\n".join(rows) + "\n")
    rep = review(drawn, claims=["Ridgeback State>Kestrel U"], fast=True)
    default = rep.results["fits"]["default"]
    assert default.ties == "half" and default.settings["ci_used"] == "fisher"
    assert default.interval == "Wald at Firth's estimate (fisher)"
    c = rep.claims[0]
    assert c.frequentist["interval"] == "profile penalised likelihood (Firth)"
    assert c.bayesian["method"].endswith("half-win, adjusted to the Fisher information at Firth's estimate")
