"""Readers on every bundled real format, checked against numbers computed independently with pandas/json."""

import json

import numpy as np
import pandas as pd
import pytest

from bayesrank.data import FORMATS, detect_format, read_comparisons
from bayesrank.datasets import path
from bayesrank.errors import InputError


def _pair_outcome_table(frame, a, b, outcome):
    """Naive reference: weighted count per (unordered pair, outcome from the lower name's side)."""
    lo = np.where(frame[a] < frame[b], frame[a], frame[b])
    hi = np.where(frame[a] < frame[b], frame[b], frame[a])
    swapped = frame[a] > frame[b]
    out = np.asarray(outcome, dtype=object).copy()
    flip = {"a": "b", "b": "a", "tie": "tie"}
    out[swapped.to_numpy()] = [flip[o] for o in out[swapped.to_numpy()]]
    w = frame["weight"] if "weight" in frame else pd.Series(1.0, index=frame.index)
    df = pd.DataFrame({"lo": lo, "hi": hi, "o": out, "w": w.to_numpy(dtype=float)})
    return df.groupby(["lo", "hi", "o"])["w"].sum()


def _ours_table(c):
    f = c.frame
    return _pair_outcome_table(f, "model_a", "model_b", f["outcome"].astype(object).to_numpy())


def test_arena_counts_json_totals():
    raw = json.loads(path("arena/chatbotarena_20240814.json").read_text())
    y = np.asarray(raw["Y"], dtype=float)
    c = read_comparisons(path("arena/chatbotarena_20240814.json"))
    assert detect_format(raw) == "arena_counts"
    assert c.n_comparisons == 1_670_250 == y.sum()
    assert len(c.players) == 129 == len(set(raw["models"]))
    by = c.frame.groupby("outcome", observed=False)["weight"].sum()
    assert by["a"] == y[:, 0].sum() == 595_570
    assert by["b"] == y[:, 1].sum() == 498_305
    assert by["tie"] == y[:, 2].sum() + y[:, 3].sum() == 281_121 + 295_254
    # bothbad ties keep their kind
    bothbad = c.frame.loc[c.frame["tie_kind"] == "tie (bothbad)", "weight"].sum()
    assert bothbad == y[:, 3].sum()
    # per pair: aggregated counts equal the raw JSON
    counts = c.aggregate()
    names = np.asarray(raw["models"], dtype=object)
    x = np.asarray(raw["X"])
    ref = pd.DataFrame({"p": names[x[:, 0]], "q": names[x[:, 1]], "wp": y[:, 0], "wq": y[:, 1], "t": y[:, 2] + y[:, 3]})
    got = counts.frame()
    swap = ref["p"] > ref["q"]
    ref = pd.DataFrame({
        "player_a": np.where(swap, ref["q"], ref["p"]), "player_b": np.where(swap, ref["p"], ref["q"]),
        "wins_a": np.where(swap, ref["wq"], ref["wp"]), "wins_b": np.where(swap, ref["wp"], ref["wq"]), "ties": ref["t"],
    }).groupby(["player_a", "player_b"]).sum()
    ref = ref[ref.sum(axis=1) > 0]
    got = got.set_index(["player_a", "player_b"]).sort_index()
    assert len(got) == len(ref)
    np.testing.assert_array_equal(got.loc[ref.index].to_numpy(), ref.to_numpy())


def test_llmfao_crowd():
    raw = pd.read_csv(path("llmfao/crowd-comparisons.csv"))
    c = read_comparisons(path("llmfao/crowd-comparisons.csv"))
    assert len(c) == 8931 == len(raw)
    assert len(c.players) == 59 == len(set(raw["left"]) | set(raw["right"]))
    assert list(c.judges) == sorted(raw["worker"].astype(str).unique())  # worker -> judge
    assert len(c.judges) == raw["worker"].nunique() == 124
    vc = c.frame["outcome"].value_counts()
    rv = raw["winner"].value_counts()
    assert (vc["a"], vc["b"], vc["tie"]) == (rv["left"], rv["right"], rv["tie"]) == (2911, 2549, 3471)
    # row-level identity: left is model_a
    assert (c.frame["model_a"].to_numpy() == raw["left"].to_numpy()).all()
    # extra columns carried along
    assert "prompt" in c.frame


@pytest.mark.parametrize("name", ["gpt3", "gpt4"])
def test_llmfao_llm_judged(name):
    raw = pd.read_csv(path(f"llmfao/{name}-crowd-comparisons.csv"))
    c = read_comparisons(path(f"llmfao/{name}-crowd-comparisons.csv"))
    assert len(c) == len(raw) == 2139
    ref = raw.assign(o=raw["winner"].map({"left": "a", "right": "b", "tie": "tie"}))
    pd.testing.assert_series_equal(
        _ours_table(c), _pair_outcome_table(ref, "left", "right", ref["o"].to_numpy()), check_names=False
    )


def test_arena_hard_battles():
    raw = pd.read_json(path("arena/arena_hard_auto_battles_gpt4judge.jsonl"), lines=True)
    c = read_comparisons(path("arena/arena_hard_auto_battles_gpt4judge.jsonl"))
    assert detect_format(raw) == "battles"
    assert len(c) == len(raw) == 2136
    vc = c.frame["outcome"].value_counts()
    assert (vc["a"], vc["b"], vc["tie"]) == (347, 1758, 31)
    assert len(c.players) == len(set(raw["model_a"]) | set(raw["model_b"])) == 5


@pytest.mark.parametrize("file", ["tennis/atp_matches_2024.csv", "tennis/wta_matches_2024.csv", "tennis/atp_matches_2023.csv"])
def test_tennis_winner_name(file):
    raw = pd.read_csv(path(file))
    c = read_comparisons(path(file))
    assert detect_format(raw) == "tennis"
    wo = raw["score"].fillna("").str.upper().str.contains("W/O", regex=False).to_numpy()
    assert wo.sum() > 0  # the bundled seasons have walkovers
    played = raw[~wo]
    assert len(c) == len(played) and c.excluded.total == wo.sum()  # walkovers excluded and counted
    assert (c.frame["outcome"] == "a").all()
    assert (c.frame["model_a"].to_numpy() == played["winner_name"].str.strip().to_numpy()).all()
    assert (c.frame["model_b"].to_numpy() == played["loser_name"].str.strip().to_numpy()).all()
    # wins per player from the aggregate equal a naive value_counts of winner_name
    counts = c.aggregate()
    wins = np.bincount(counts.i, counts.wins_i, counts.n_players) + np.bincount(counts.j, counts.wins_j, counts.n_players)
    ref = played["winner_name"].str.strip().value_counts().reindex(counts.players, fill_value=0)
    np.testing.assert_array_equal(wins, ref.to_numpy())


def test_tennis_walkover_and_retirement_options():
    raw = pd.read_csv(path("tennis/atp_matches_2024.csv"))
    score = raw["score"].fillna("").str.upper()
    wo = score.str.contains("W/O", regex=False)
    ret = score.str.contains("RET") | score.str.contains("DEF")
    assert len(read_comparisons(raw, walkovers="keep")) == len(raw)
    both = read_comparisons(raw, retirements="exclude")
    assert len(both) == len(raw) - (wo | ret).sum()
    assert both.excluded.total == (wo | ret).sum()
    assert "walkover" in both.excluded.report() and "retirement" in both.excluded.report()
    with pytest.raises(InputError, match="walkovers must be"):
        read_comparisons(raw, walkovers="drop")


def test_nba_scores_home_away():
    raw = pd.read_csv(path("sports/nba_games_2023_24_tidy.csv"))
    c = read_comparisons(path("sports/nba_games_2023_24_tidy.csv"))
    assert detect_format(raw) == "scores"
    assert len(c) == len(raw) == 1231
    assert len(c.players) == 30
    home_wins = (raw["home_pts"] > raw["away_pts"]).to_numpy()
    assert (c.frame["model_a"].to_numpy() == raw["home_team"].to_numpy()).all()  # home team is model_a
    np.testing.assert_array_equal(c.frame["outcome"].to_numpy() == "a", home_wins)
    assert home_wins.sum() == 669
    assert (c.frame["outcome"] == "tie").sum() == (raw["home_pts"] == raw["away_pts"]).sum() == 0


def test_evalica_food_llmfao_style():
    raw = pd.read_csv(path("evalica/food.csv"))
    c = read_comparisons(path("evalica/food.csv"))
    assert detect_format(raw) == "llmfao"
    vc = c.frame["outcome"].value_counts()
    rv = raw["winner"].value_counts()
    assert (vc["a"], vc["b"], vc["tie"]) == (rv.get("left", 0), rv.get("right", 0), rv.get("tie", 0))


def test_onehot_matches_battles():
    raw = pd.read_json(path("arena/arena_hard_auto_battles_gpt4judge.jsonl"), lines=True)
    hot = raw[["model_a", "model_b"]].assign(
        winner_model_a=(raw["winner"] == "model_a").astype(int),
        winner_model_b=(raw["winner"] == "model_b").astype(int),
        winner_tie=raw["winner"].str.startswith("tie").astype(int),
    )
    assert detect_format(hot) == "onehot"
    a = read_comparisons(hot)
    b = read_comparisons(raw)
    np.testing.assert_array_equal(a.aggregate().counts, b.aggregate().counts)


def test_alpaca_eval_soft_preferences_inline():
    df = pd.DataFrame({
        "generator_1": ["m1", "m1", "m2", "m3", "m1", "m2"],
        "generator_2": ["m2", "m3", "m3", "m1", "m2", "m1"],
        "preference": [1.0, 2.0, 1.5, 1.25, np.nan, 1.9],
        "annotator": ["j1", "j1", "j2", "j2", "j1", "j3"],
    })
    assert detect_format(df) == "alpaca_eval"
    c = read_comparisons(df)
    assert c.excluded.counts == {"missing preference": 1}
    assert c.excluded.examples["missing preference"] == [4]
    # expected a-win mass: 2 - p, b-win mass: p - 1 per row (ties at exactly 1.5)
    p = df["preference"].dropna()
    assert c.n_comparisons == pytest.approx(len(p))
    f = c.frame
    a_mass = f.loc[f["outcome"] == "a", "weight"].sum()
    b_mass = f.loc[f["outcome"] == "b", "weight"].sum()
    tie_mass = f.loc[f["outcome"] == "tie", "weight"].sum()
    exact = np.isclose(p, 1.5)
    assert tie_mass == pytest.approx(exact.sum())
    assert a_mass == pytest.approx((2 - p[~exact]).sum())
    assert b_mass == pytest.approx((p[~exact] - 1).sum())
    assert set(c.judges) == {"j1", "j2", "j3"}


def test_alpaca_eval_bundled():
    """Bundled AlpacaEval annotations: soft preference p -> weight 2-p on a-win, p-1 on b-win."""
    from importlib import resources

    folder = resources.files("tests.datasets") / "alpaca_eval"
    files = sorted(f for f in folder.iterdir() if f.name.endswith("3annotators.csv"))
    assert files, "tests/datasets/alpaca_eval/ must hold the bundled annotations"
    raw = pd.read_csv(files[0])
    assert detect_format(raw) == "alpaca_eval"
    c = read_comparisons(raw)
    p = pd.to_numeric(raw["preference"], errors="coerce")
    assert c.excluded.total == int(p.isna().sum())  # missing preferences counted, not dropped silently
    assert c.n_comparisons == pytest.approx(float(p.notna().sum()), abs=1e-9)
    assert len(c.players) == len(set(raw["generator_1"]) | set(raw["generator_2"]))
    assert set(c.judges) == set(raw["annotator"].dropna().astype(str))
    f_ = c.frame
    q = p.dropna()
    exact = np.isclose(q, 1.5)
    # the reader snaps preferences within np.isclose (~1e-5) of 1, 1.5 or 2 to hard outcomes: allow that per row
    assert f_.loc[f_["outcome"] == "b", "weight"].sum() == pytest.approx((q[~exact] - 1).sum(), abs=1e-5 * len(q))
    assert f_.loc[f_["outcome"] == "tie", "weight"].sum() == exact.sum()


def test_format_override_and_detection_errors():
    raw = pd.read_csv(path("llmfao/crowd-comparisons.csv"))
    # rename to a canonical battles frame and force the format
    battles = raw.rename(columns={"left": "model_a", "right": "model_b"}).assign(
        winner=raw["winner"].map({"left": "model_a", "right": "model_b", "tie": "tie"})
    )
    c1 = read_comparisons(battles, format="battles")
    c2 = read_comparisons(raw, format="llmfao", judge="worker")
    np.testing.assert_array_equal(c1.aggregate().counts, c2.aggregate().counts)
    with pytest.raises(InputError, match="cannot tell which columns of the data hold the two players"):
        detect_format(pd.DataFrame({"x": [1], "y": [2]}))
    with pytest.raises(InputError, match="unknown format"):
        read_comparisons(raw, format="nope")
    with pytest.raises(InputError, match="needs column"):
        read_comparisons(raw, format="tennis")
    assert set(FORMATS) >= {"canonical", "battles", "arena_counts", "onehot", "llmfao", "alpaca_eval", "tennis", "scores"}
