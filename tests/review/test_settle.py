"""What would settle it (``to_settle``): the fields every review kind writes, the power the
allocation states against simulation from the fitted model refitted by the package's own MLE and
test, the claims that cannot be settled, the pro-football-reference layout of the issue's
``review nfl.csv --claim top1``, and the page, Markdown and terminal column."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from bayesrank.cli import main
from bayesrank.protocol import validate
from bayesrank.review.settle import settle_text


def _run(tmp_path, *args, name="r"):
    out = tmp_path / f"{name}.json"
    assert main(["review", *args, "--json", str(out), "--md", str(tmp_path / f"{name}.md"),
                 "--html", str(tmp_path / f"{name}.html")]) == 0
    doc = json.loads(out.read_text())
    validate(doc, "review")
    return doc


@pytest.fixture(scope="module")
def nba(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nba")
    return tmp, _run(tmp, "nba", "--fast", "--claim", "top1", "--claim", "Denver Nuggets>Minnesota Timberwolves",
                     "--claim", "Boston Celtics>Detroit Pistons", "--claim", "Denver Nuggets>Boston Celtics",
                     "--claim", "order")


def _by(doc):
    return {c["claim"]: c for c in doc["claims"]}


def test_nba_to_settle_fields(nba):
    """NBA 2023–24: top1 (p = 0.38) needs ~1,600 comparisons where the c-optimal design puts them —
    Boston against its closest rivals first — far fewer than uniform over Boston's 29 pairs or in
    proportion to the schedule; a supported claim has null; a claim false at the estimate and the
    order claim are not settleable, with why."""
    tmp, doc = nba
    by = _by(doc)
    top = by["top1"]
    assert top["verdict"] == "unsupported" and top["frequentist"]["p_value"] == pytest.approx(0.381, abs=1e-3)
    s = top["to_settle"]
    assert s["settleable"] and s["unit"] == "comparisons" and s["target_power"] == 0.8
    assert 0.8 <= s["power"] < 0.81 and s["power_now"] < 0.05
    assert sum(a["count"] for a in s["allocation"]) == s["additional"]
    assert 1_000 < s["additional"] < 2_500
    assert s["additional"] * 4 < s["uniform_additional"] < s["proportional_additional"]
    first = {(a["player_a"], a["player_b"]) for a in s["allocation"][:3]}
    assert first == {("Boston Celtics", "Oklahoma City Thunder"), ("Boston Celtics", "Denver Nuggets"),
                     ("Boston Celtics", "Minnesota Timberwolves")}
    assert by["Boston Celtics>Detroit Pistons"]["verdict"] == "supported"
    assert by["Boston Celtics>Detroit Pistons"]["to_settle"] is None
    assert by["Denver Nuggets>Boston Celtics"]["to_settle"] == {
        "settleable": False, "why": by["Denver Nuggets>Boston Celtics"]["to_settle"]["why"]}
    assert "false" in by["Denver Nuggets>Boston Celtics"]["to_settle"]["why"]
    assert by["order"]["to_settle"]["settleable"] is False
    # the page, its Markdown twin and the cell text
    page = (tmp / "r.html").read_text()
    md = (tmp / "r.md").read_text()
    assert "to settle it" in page and "to settle it" in md
    cell = settle_text(s)
    assert cell.startswith(f"{s['additional']:,} more comparisons (Boston Celtics–") and "80% power" in cell
    assert cell in md.replace("\\", "")


def _draw_and_refit(fit, design, pairs, alloc, reps: int, seed: int, sided: str, level: float = 0.95):
    """Share of datasets (the existing pair counts plus ``alloc``, every outcome drawn from the fitted
    scores) on which the package's own MLE and intersection–union contrast test support the claim."""
    from bayesrank.bt import BradleyTerry
    from bayesrank.data.rows import PairRows
    from bayesrank.review.pairwise import contrast_answer

    ii = np.concatenate([design.i, [a for a, _, _ in alloc]]).astype(int)
    jj = np.concatenate([design.j, [b for _, b, _ in alloc]]).astype(int)
    nn = np.concatenate([design.n, [n for _, _, n in alloc]]).astype(np.int64)
    prob = 1 / (1 + np.exp(-(fit.score[ii] - fit.score[jj])))
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(reps):
        w = rng.binomial(nn, prob)
        rows = PairRows(fit.players, ii, jj, w, nn - w, np.zeros(len(ii)))
        refit = BradleyTerry(rows).fit("mle")
        hits += contrast_answer(refit, pairs, level, sided, refit.interval, fit.players)["supported"]
    return hits / reps


@pytest.fixture(scope="module")
def nba_fit():
    from bayesrank.bt import BradleyTerry
    from bayesrank.bt.design import Design
    from bayesrank.data import read_comparisons

    fit = BradleyTerry(read_comparisons("nba")).fit("mle")
    return fit, Design.from_fit(fit)


def _alloc(fit, s):
    index = {str(p): i for i, p in enumerate(fit.players)}
    return [(index[a["player_a"]], index[a["player_b"]], a["count"]) for a in s["allocation"]]


def test_top1_power_with_the_packages_own_refit(nba, nba_fit):
    """The top1 allocation, drawn from the fitted model and refitted by bayesrank's MLE, passes the
    review's own two-sided intersection–union test at the stated rate (300 datasets: 3 SE = 0.07;
    the independent statsmodels check with more replications is tests/bt/test_design.py)."""
    from bayesrank.review.claims import parse_claim
    from bayesrank.review.pairwise import claim_contrasts

    _, doc = nba
    fit, design = nba_fit
    s = _by(doc)["top1"]["to_settle"]
    pairs = claim_contrasts(parse_claim("top1", "pairwise", players=fit.players), fit.players, fit.score)
    reps = 300
    got = _draw_and_refit(fit, design, pairs, _alloc(fit, s), reps, seed=0, sided="two-sided")
    assert abs(got - s["power"]) < 3 * math.sqrt(s["power"] * (1 - s["power"]) / reps)


def test_one_sided_pair_claim_power(nba, nba_fit):
    """A pre-specified DEN > MIN (one-sided): every added comparison goes to the pair itself, and the
    package's refit reaches the stated power (400 datasets)."""
    _, doc = nba
    fit, design = nba_fit
    c = _by(doc)["Denver Nuggets>Minnesota Timberwolves"]
    s = c["to_settle"]
    assert c["sided"] == "one-sided" and c["verdict"] == "unsupported"
    assert s["allocation"] == [{"player_a": "Denver Nuggets", "player_b": "Minnesota Timberwolves",
                                "count": s["additional"]}]
    assert s["uniform_additional"] == s["additional"]
    index = {str(p): i for i, p in enumerate(fit.players)}
    pairs = [(index["Denver Nuggets"], index["Minnesota Timberwolves"])]
    reps = 400
    got = _draw_and_refit(fit, design, pairs, _alloc(fit, s), reps, seed=0, sided="one-sided")
    assert abs(got - s["power"]) < 3 * math.sqrt(0.8 * 0.2 / reps)


def test_pro_football_reference_layout_gives_the_same_answer(tmp_path, nba):
    """The issue's ``review nfl.csv --claim top1``: a season in pro-football-reference's layout
    (Week, Day, Date, Time, Winner/tie, '@', Loser/tie, boxscore, PtsW, PtsL, ...), built from the
    bundled NBA games, read by the package's own reader: the same top1 answer and to_settle."""
    from bayesrank.datasets import resolve

    g = pd.read_csv(resolve("nba"))
    home_won = g["home_pts"] > g["away_pts"]
    pfr = pd.DataFrame({
        "Week": np.arange(len(g)) // 15 + 1, "Day": "Sun", "Date": g["date"], "Time": "1:00PM",
        "Winner/tie": np.where(home_won, g["home_team"], g["away_team"]), "": np.where(home_won, "", "@"),
        "Loser/tie": np.where(home_won, g["away_team"], g["home_team"]), " ": "boxscore",
        "PtsW": np.maximum(g["home_pts"], g["away_pts"]), "PtsL": np.minimum(g["home_pts"], g["away_pts"]),
        "YdsW": 350, "TOW": 1, "YdsL": 300, "TOL": 2})
    path = tmp_path / "nfl.csv"
    pfr.to_csv(path, index=False)
    doc = _run(tmp_path, str(path), "--fast", "--claim", "top1", name="nfl")
    _, want = nba
    got, ref = doc["claims"][0], _by(want)["top1"]
    assert got["frequentist"]["p_value"] == pytest.approx(ref["frequentist"]["p_value"], rel=1e-9)
    assert got["to_settle"] == ref["to_settle"]


def test_judges_review_writes_to_settle(tmp_path):
    """A judges review (the LLMFAO panel) goes through the pairwise answers: its JSON validates with
    to_settle on every claim (null exactly when supported)."""
    doc = _run(tmp_path, "llmfao-panel", "--fast", "--claim", "top1", "--claim", "GPT 3.5 Turbo>GPT 4")
    assert doc["kind"] == "judges"
    for c in doc["claims"]:
        assert "to_settle" in c and (c["to_settle"] is None) == (c["verdict"] == "supported")
    s = _by(doc)["GPT 3.5 Turbo>GPT 4"]["to_settle"]
    assert s["settleable"] is False  # false at the estimate


ITEMS = "items/arena_bench_v1_gpt4_single_scores_01.csv"


def _resampled_power(frame, claim_pairs, total: int, reps: int, seed: int, test) -> float:
    """Share of benchmarks of ``total`` items drawn with replacement from the item rows (the models'
    joint scores) on which every claimed contrast has mean > 0 and ``test(x_a, x_b) < 0.05``."""
    wide = frame.pivot(index="item", columns="model", values="score").dropna()  # the items every model answered
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(reps):
        rows = wide.iloc[rng.integers(0, len(wide), total)]
        hits += all(rows[a].mean() > rows[b].mean() and test(rows[a].to_numpy(), rows[b].to_numpy()) < 0.05
                    for a, b in claim_pairs)
    return hits / reps


def test_items_fractional_scores_paired_t(tmp_path):
    """Arena-Hard single scores (fractional: the paired t): the items for a pre-specified pair claim that
    is not significant, checked by an independent simulation (SciPy's ttest_rel on benchmarks resampled
    from the item rows, 1,000 of them) within 3 combined Monte Carlo SEs."""
    from scipy import stats

    from bayesrank.datasets import resolve

    a, b = "gpt-3.5-turbo", "gpt-3.5-turbo-1106"
    doc = _run(tmp_path, ITEMS, "--fast", "--claim", f"{a}>{b}", "--claim", "order")
    c = doc["claims"][0]
    assert c["frequentist"]["test"] == "paired t" and c["verdict"] == "unsupported"
    s = c["to_settle"]
    assert s["settleable"] and s["unit"] == "items" and "allocation" not in s and s["additional"] > 0
    assert doc["claims"][1]["to_settle"]["settleable"] is False  # the order claim
    frame = pd.read_csv(resolve(ITEMS))
    n = len(frame.pivot(index="item", columns="model", values="score").dropna())
    assert doc["sections"]["items"]["n_items"] == n if "items" in doc["sections"] else True
    reps = 1000
    got = _resampled_power(frame, [(a, b)], n + s["additional"], reps, 0,
                           lambda x, y: stats.ttest_rel(x, y, alternative="greater").pvalue)
    se = math.sqrt(s["power"] * (1 - s["power"]) * (1 / reps + 1 / 2000))
    assert abs(got - s["power"]) < 3 * se


def test_items_binary_scores_exact_mcnemar(tmp_path):
    """The same benchmark binarised (score ≥ 0.5): the claim's one-sided p-value is half statsmodels'
    exact McNemar (the discordance favours A), and the stated power is reached on benchmarks resampled
    from the item rows under SciPy's exact binomial test of the discordant items (1,000 of them)."""
    from scipy import stats
    from statsmodels.stats.contingency_tables import mcnemar

    from bayesrank.datasets import resolve

    frame = pd.read_csv(resolve(ITEMS))[["model", "item", "score"]]
    frame["score"] = (frame["score"] >= 0.5).astype(int)
    path = tmp_path / "binary.csv"
    frame.to_csv(path, index=False)
    a, b = "claude-2.1", "claude-instant-1"
    doc = _run(tmp_path, str(path), "--fast", "--claim", f"{a}>{b}", name="bin")
    c = doc["claims"][0]
    assert c["frequentist"]["test"] == "exact McNemar"
    wide = frame.pivot(index="item", columns="model", values="score").dropna()
    d10 = int(((wide[a] == 1) & (wide[b] == 0)).sum())
    d01 = int(((wide[a] == 0) & (wide[b] == 1)).sum())
    assert d10 > d01
    want = mcnemar([[0, d10], [d01, 0]], exact=True).pvalue / 2
    assert c["frequentist"]["p_value"] == pytest.approx(want, rel=1e-9)
    assert c["verdict"] == "unsupported"
    s = c["to_settle"]
    assert s["settleable"] and s["unit"] == "items" and s["additional"] > 0

    def one_sided(x, y):  # H1: A solves more of the discordant items
        n10, n01 = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
        return stats.binomtest(n10, n10 + n01, 0.5, alternative="greater").pvalue if n10 + n01 else 1.0

    reps = 1000
    got = _resampled_power(frame, [(a, b)], len(wide) + s["additional"], reps, 0, one_sided)
    se = math.sqrt(s["power"] * (1 - s["power"]) * (1 / reps + 1 / 2000))
    assert abs(got - s["power"]) < 3 * se
