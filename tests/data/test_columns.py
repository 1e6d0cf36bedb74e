"""Which column is which: the --columns / --outcome-map / --judge-cols vocabulary and the near misses
detected without flags. Each layout is a small synthetic file with the header, value vocabulary and
quirks of a real public file (docs/your-data.md names them); the reference is the same comparisons
computed directly with pandas from the raw columns."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from bayesrank.data import read_comparisons
from bayesrank.data.columns import parse_columns, parse_outcome_map
from bayesrank.errors import InputError

TEAMS = ["Ravens", "49ers", "Lions", "Bills", "Chiefs", "Eagles"]


def _games(n=40, seed=0, ties=True):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(TEAMS), n)
    b = (a + rng.integers(1, len(TEAMS), n)) % len(TEAMS)
    pa, pb = rng.integers(0, 40, n), rng.integers(0, 40, n)
    if ties:
        pb[::9] = pa[::9]
    return np.array(TEAMS)[a], np.array(TEAMS)[b], pa, pb


def _tally(a, b, outcome):
    """Reference: counts per (unordered pair, outcome seen from the alphabetically first player)."""
    a, b, o = (np.asarray(x, dtype=object) for x in (a, b, outcome))
    swap = a > b
    flip = {"a": "b", "b": "a", "tie": "tie"}
    o = np.where(swap, [flip[x] for x in o], o)
    lo, hi = np.where(swap, b, a), np.where(swap, a, b)
    return pd.DataFrame({"lo": lo, "hi": hi, "o": o}).value_counts().sort_index().to_dict()


def _ours(c):
    f = c.frame
    return _tally(f["model_a"].astype(object), f["model_b"].astype(object), f["outcome"].astype(object))


def _sign(pa, pb):
    return np.where(pa > pb, "a", np.where(pa < pb, "b", "tie"))


def test_pro_football_reference_winner_tie_layout(tmp_path):
    w, l, pw, pl = _games()
    pw, pl = np.maximum(pw, pl), np.minimum(pw, pl)  # the winner is listed first; equal points = a tie
    lines = ["Week,Day,Date,Time,Winner/tie,,Loser/tie,,PtsW,PtsL,YdsW,TOW,YdsL,TOL"]
    for i in range(len(w)):
        lines.append(f"{1 + i // 8},Sun,2023-09-{10 + i % 20},1:00PM,{w[i]},{'@' if i % 2 else ''},{l[i]},boxscore,"
                     f"{pw[i]},{pl[i]},300,1,280,2")
    lines.insert(20, ",,Playoffs,,,,,,,,,,,")  # a section line, as pro-football-reference's older exports have
    f = tmp_path / "nfl.csv"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"^line 21 of .*: columns 'Winner/tie' and 'Loser/tie' are both empty"):
        read_comparisons(f)
    c = read_comparisons(f, on_invalid="exclude")
    assert c.excluded.counts == {"row without players": 1}
    assert _ours(c) == _tally(w, l, _sign(pw, pl))
    assert "(= --columns a=Winner/tie,b=Loser/tie,score_a=PtsW,score_b=PtsL)" in c.notes[0]


@pytest.mark.parametrize("header", ["Rk,Wk,Date,Time,Day,Winner,Pts,,Loser,Pts,TV,Notes",
                                    "Rk,Wk,Date,Time,Day,Winner,Winner_Pts,,Loser,Loser_Pts,TV,Notes"])
def test_sports_reference_college_football_layouts(tmp_path, header):
    """Both points columns named Pts (told apart by position: right after each team) or renamed."""
    w, l, pw, pl = _games(ties=False)
    pw, pl = np.maximum(pw, pl) + 1, np.minimum(pw, pl)
    rows = [f"{i + 1},{1 + i // 8},Sep 2 2023,12:00 PM,Sat,{w[i]},{pw[i]},{'@' if i % 3 == 0 else ''},{l[i]},{pl[i]},,"
            for i in range(len(w))]
    f = tmp_path / "cfb.csv"
    f.write_text("\n".join([header] + rows) + "\n")
    c = read_comparisons(f)
    assert _ours(c) == _tally(w, l, _sign(pw, pl))
    second = "Loser_Pts" if "Winner_Pts" in header else "Pts.1"
    assert f"score_b={second}" in c.notes[0]


def test_poll_rank_prefixes_are_names_until_the_documented_fix(tmp_path):
    """'(13) Michigan' and 'Michigan' are different texts to any generic reader; docs/your-data.md
    gives the one-line fix. The prefixed and the plain name are both kept (nothing merged silently)."""
    f = tmp_path / "cfb.csv"
    f.write_text("Rk,Wk,Winner,Pts,,Loser,Pts\n1,1,(13) Michigan,30,,Ohio State,24\n2,2,Michigan,20,@,Iowa,3\n"
                 "3,3,Ohio State,10,,Iowa,7\n")
    assert sorted(read_comparisons(f).players) == ["(13) Michigan", "Iowa", "Michigan", "Ohio State"]
    import re
    fixed = tmp_path / "fixed.csv"
    fixed.write_text(re.sub(r"\(\d+\) ", "", f.read_text()))  # the documented fix, in Python
    assert sorted(read_comparisons(fixed).players) == ["Iowa", "Michigan", "Ohio State"]


def test_international_football_home_away_scores_with_missing(tmp_path):
    h, a, ph, pa = _games()
    df = pd.DataFrame({"date": "2024-01-01", "home_team": h, "away_team": a, "home_score": ph.astype(object),
                       "away_score": pa.astype(object), "tournament": "Friendly", "city": "X", "country": "Y",
                       "neutral": "FALSE"})
    df.loc[[3, 7], "home_score"] = "NA"  # fixtures not played yet
    df.to_csv(tmp_path / "results.csv", index=False)
    with pytest.raises(InputError, match=r"^lines 5, 9 of .*results\.csv: missing points \(2 rows\); --exclude-invalid"):
        read_comparisons(tmp_path / "results.csv")
    c = read_comparisons(tmp_path / "results.csv", on_invalid="exclude")
    keep = np.ones(len(h), bool)
    keep[[3, 7]] = False
    assert c.excluded.counts == {"missing points": 2}
    assert _ours(c) == _tally(h[keep], a[keep], _sign(ph, pa)[keep])


def test_fivethirtyeight_team1_team2_score1_score2(tmp_path):
    t1, t2, s1, s2 = _games(ties=False)
    df = pd.DataFrame({"date": "2022-05-01", "season": 2022, "neutral": 0, "playoff": "", "team1": t1, "team2": t2,
                       "elo1_pre": 1500.0, "elo2_pre": 1500.0, "score1": s1.astype(float), "score2": s2.astype(float)})
    df.loc[len(df) - 3:, ["score1", "score2"]] = np.nan  # unplayed games at the end of the file
    df.to_csv(tmp_path / "nba_elo_latest.csv", index=False)
    c = read_comparisons(tmp_path / "nba_elo_latest.csv", on_invalid="exclude")
    assert c.excluded.counts == {"missing points": 3}
    assert c.excluded.examples["missing points"] == [len(df) - 1, len(df), len(df) + 1]  # 1-based lines, header line 1
    assert _ours(c) == _tally(t1[:-3], t2[:-3], _sign(s1, s2)[:-3])
    assert "score_a=score1,score_b=score2" in c.notes[0]


def test_basketball_reference_duplicate_pts(tmp_path):
    v, h, pv, ph = _games(ties=False)
    lines = ["Date,Start (ET),Visitor/Neutral,PTS,Home/Neutral,PTS,,,Attend.,Arena,Notes"]
    lines += [f"Tue Oct 24 2023,7:30p,{v[i]},{pv[i]},{h[i]},{ph[i]},Box Score,,19842,Arena," for i in range(len(v))]
    (tmp_path / "nba.csv").write_text("\n".join(lines) + "\n")
    c = read_comparisons(tmp_path / "nba.csv")
    assert _ours(c) == _tally(v, h, _sign(pv, ph))


def test_pandalm_pair_column_and_wide_annotators(tmp_path):
    rng = np.random.default_rng(3)
    models = ["bloom-7b", "llama-7b", "opt-7b", "pythia-6.9b"]
    recs = []
    for i in range(30):
        a, b = rng.choice(models, 2, replace=False)
        recs.append({"idx": i, "cmp_key": f"{a}_{b}", "instruction": "…", "response1": "r1", "response2": "r2",
                     **{f"annotator{k}": int(rng.integers(0, 3)) for k in (1, 2, 3)}})
    (tmp_path / "testset-v1.json").write_text(json.dumps(recs, indent=4))
    with pytest.raises(InputError, match=r"holds the numbers 0, 1, 2.*--outcome-map 1=a,2=b,0=tie"):
        read_comparisons(tmp_path / "testset-v1.json")
    c = read_comparisons(tmp_path / "testset-v1.json", outcome_map="1=a,2=b,0=tie")
    assert sorted(c.judges) == ["annotator1", "annotator2", "annotator3"] and len(c) == 90
    raw = pd.DataFrame(recs)
    long = raw.melt(id_vars=["cmp_key"], value_vars=["annotator1", "annotator2", "annotator3"])
    pair = long["cmp_key"].str.split("_", expand=True)
    assert _ours(c) == _tally(pair[0], pair[1], long["value"].map({1: "a", 2: "b", 0: "tie"}))
    assert "--columns pair=cmp_key --judge-cols annotator1,annotator2,annotator3" in c.notes[-1]


def test_model_1_model_2_with_winner_naming_the_column(tmp_path):
    df = pd.DataFrame({"question_id": range(6), "model_1": ["x", "y", "z", "x", "y", "z"],
                       "model_2": ["y", "z", "x", "z", "x", "y"],
                       "winner": ["model_1", "model_2", "tie", "model_2", "model_1", "model_1"]})
    df.to_csv(tmp_path / "mt.csv", index=False)
    c = read_comparisons(tmp_path / "mt.csv")
    assert _ours(c) == _tally(df.model_1, df.model_2, df.winner.map({"model_1": "a", "model_2": "b", "tie": "tie"}))
    assert any("'model_1'/'model_2' name the winning column" in n for n in c.notes)


def test_system_a_system_b_with_winner_naming_the_player(tmp_path):
    df = pd.DataFrame({"system_a": ["x", "y", "z"], "system_b": ["y", "z", "x"], "winner": ["y", "y", "draw"]})
    df.to_csv(tmp_path / "s.csv", index=False)
    c = read_comparisons(tmp_path / "s.csv")
    assert c.frame["outcome"].astype(str).tolist() == ["b", "a", "tie"]


@pytest.mark.parametrize("values, example", [([0, 1, 1, 0], "1=a,0=b"), ([1, 2, 2, 1], "1=a,2=b"),
                                             ([0, 1, 2, 1], "1=a,2=b,0=tie")])
def test_ambiguous_numeric_outcomes_need_a_map(values, example):
    df = pd.DataFrame({"model_a": ["x", "y", "z", "x"], "model_b": ["y", "z", "x", "z"], "result": values})
    with pytest.raises(InputError, match=rf"numbers .*--outcome-map \(e\.g\. --outcome-map {example}\)"):
        read_comparisons(df)
    mapped = read_comparisons(df, outcome_map=example)
    want = pd.Series(values).astype(str).map(dict(kv.split("=") for kv in example.split(",")))
    assert mapped.frame["outcome"].astype(str).tolist() == want.tolist()


def test_score_of_player_a_with_half_points_is_read_with_a_note():
    df = pd.DataFrame({"model_a": ["x", "y", "z"], "model_b": ["y", "z", "x"], "result": [1, 0.5, 0]})
    c = read_comparisons(df)
    assert c.frame["outcome"].astype(str).tolist() == ["a", "tie", "b"]
    assert any("score of player a" in n for n in c.notes)


def test_outcome_map_with_invalid_values_excludes_them_by_reason():
    df = pd.DataFrame({"p": ["x", "y", "z", "x", "y"], "q": ["y", "z", "x", "z", "x"],
                       "verdict": ["1", "2", "unparsed", "Tie", "garbage"]})
    opts = dict(columns="a=p,b=q,outcome=verdict", outcome_map="1=a,2=b,tie=tie,unparsed=invalid,garbage=invalid")
    with pytest.raises(InputError, match=r"^rows 2, 4 \(DataFrame index\): column 'verdict' has outcome value\(s\) "
                                         r"'unparsed', 'garbage', which the outcome map sends to invalid"):
        read_comparisons(df, **opts)
    c = read_comparisons(df, on_invalid="exclude", **opts)
    assert c.excluded.counts == {"outcome 'unparsed' (mapped to invalid)": 1, "outcome 'garbage' (mapped to invalid)": 1}
    assert c.frame["outcome"].astype(str).tolist() == ["a", "b", "tie"]


def test_columns_flag_errors_are_one_line():
    df = pd.DataFrame({"p": ["x"], "q": ["y"], "w": ["a"]})
    with pytest.raises(InputError, match=r"--columns: unknown key 'player'; the keys are a, b, outcome"):
        read_comparisons(df, columns="player=p")
    with pytest.raises(InputError, match=r"column 'nope' is not in the data"):
        read_comparisons(df, columns="a=p,b=nope,outcome=w")
    with pytest.raises(InputError, match="a given twice"):
        parse_columns("a=p,a=q")
    with pytest.raises(InputError, match=r"the target must be one of a\|b\|tie\|invalid"):
        parse_outcome_map("x=win")
    with pytest.raises(InputError, match="expected KEY=VALUE pairs"):
        parse_columns("a")
    assert parse_outcome_map("a=b=tie") == {"a=b": "tie"}  # a raw value may contain '='
    assert parse_columns("group=llm,group=qset", keys=("group",)) == {"group": ["llm", "qset"]}


def test_explicit_columns_and_judge_cols_override_detection():
    df = pd.DataFrame({"home_team": ["x", "y", "z"], "away_team": ["y", "z", "x"], "home_score": [1, 2, 3],
                       "away_score": [2, 2, 1], "j1": ["a", "b", "tie"], "j2": ["b", "b", "a"]})
    c = read_comparisons(df, judge_cols="j1,j2")
    assert sorted(c.judges) == ["j1", "j2"] and len(c) == 6
    assert c.frame["outcome"].astype(str).tolist() == ["a", "b", "tie", "b", "b", "a"]
    c2 = read_comparisons(df, columns="a=away_team,b=home_team")  # points follow the detected home/away columns
    assert c2.frame["model_a"].astype(str).tolist() == ["y", "z", "x"]


def test_api_entry_points_take_the_same_mapping(tmp_path):
    from bayesrank.bt import BradleyTerry
    from bayesrank.influence import audit

    h, a, ph, pa = _games(n=120, seed=5)
    df = pd.DataFrame({"H": h, "A": a, "x": ph, "y": pa})
    cols = "a=H,b=A,score_a=x,score_b=y"
    fit_df = BradleyTerry(df, columns=cols).fit("mle")
    df.to_csv(tmp_path / "g.csv", index=False)
    fit_path = BradleyTerry(tmp_path / "g.csv", columns=cols).fit("mle")
    np.testing.assert_allclose(fit_df.score, fit_path.score, atol=1e-12)
    rep = audit(df, "top1", ("flip",), columns=cols)
    assert rep.table()["action"].tolist() == ["flip"]
    with pytest.raises(InputError, match="apply when reading a file or a DataFrame"):
        BradleyTerry(read_comparisons(df, columns=cols), columns=cols)
