"""Bad input raises InputError naming the row/column; ``on_invalid="exclude"`` counts every excluded row.

A DataFrame's rows are named by their index labels (``row 2 (DataFrame index)``); files by their
1-based lines (tests/data/test_file_lines.py)."""

import numpy as np
import pandas as pd
import pytest

from bayesrank.data import Comparisons, read_comparisons
from bayesrank.errors import InputError


def _frame(**over):
    df = pd.DataFrame({
        "model_a": ["x", "y", "z", "x", "y"],
        "model_b": ["y", "z", "x", "z", "x"],
        "outcome": ["a", "b", "tie", "a", "b"],
    })
    for k, v in over.items():
        df[k] = v
    return df


def test_missing_column_named():
    with pytest.raises(InputError, match=r"missing column\(s\) \['outcome'\]"):
        Comparisons.from_frame(_frame().drop(columns="outcome"))
    with pytest.raises(InputError, match="needs column"):
        read_comparisons(pd.DataFrame({"left": ["a"], "winner": ["left"]}), format="llmfao")


def test_unknown_outcome_label_names_rows_and_label():
    df = _frame(outcome=["a", "b", "wat", "a", "WAT?"])
    with pytest.raises(InputError) as e:
        Comparisons.from_frame(df)
    msg = str(e.value)
    assert msg.startswith("rows 2, 4 (DataFrame index): column 'outcome'") and "'wat', 'WAT?'" in msg
    assert "(2 rows)" in msg and "--outcome-map wat=a|b|tie|invalid" in msg and "--exclude-invalid" in msg
    c = Comparisons.from_frame(df, on_invalid="exclude")  # each unknown value counted under its own reason
    assert c.excluded.counts == {"unknown outcome 'wat'": 1, "unknown outcome 'WAT?'": 1}


def test_outcome_map_extends_labels():
    df = _frame(outcome=["A>B", "B>A", "same", "A>B", "B>A"])
    c = Comparisons.from_frame(df, outcome_map={"same": "tie"})
    assert c.frame["outcome"].astype(str).tolist() == ["a", "b", "tie", "a", "b"]


def test_self_comparison_raises_then_excluded_and_counted():
    df = _frame(model_b=["y", "y", "x", "x", "x"])  # rows 1, 3 are self-comparisons
    with pytest.raises(InputError) as e:
        Comparisons.from_frame(df)
    assert str(e.value).startswith("rows 1, 3 (DataFrame index): columns 'model_a'/'model_b' name the same player")
    c = Comparisons.from_frame(df, on_invalid="exclude")
    assert len(c) == 3
    assert c.excluded.counts == {"self-comparison": 2}
    assert c.excluded.examples["self-comparison"] == [1, 3]
    assert len(c) + c.excluded.total == len(df)


@pytest.mark.parametrize("bad", [np.nan, None, "", "  "])
def test_missing_names(bad):
    df = _frame(model_a=["x", bad, "z", "x", "y"])
    with pytest.raises(InputError) as e:
        Comparisons.from_frame(df)
    assert str(e.value).startswith("row 1 (DataFrame index): column 'model_a' has no player name")
    c = Comparisons.from_frame(df, on_invalid="exclude")
    assert c.excluded.total == 1 and len(c) == 4


def test_exclusion_counts_add_up_with_several_reasons():
    rng = np.random.default_rng(1)
    n = 500
    names = np.array(["p0", "p1", "p2", "p3"], dtype=object)
    a = names[rng.integers(0, 4, n)]
    b = names[rng.integers(0, 4, n)]
    a[rng.random(n) < 0.05] = None
    b[rng.random(n) < 0.05] = None
    df = pd.DataFrame({"model_a": a, "model_b": b, "outcome": rng.choice(["a", "b", "tie"], n)})
    c = read_comparisons(df, on_invalid="exclude")
    sa, sb = pd.Series(a), pd.Series(b)
    bad_name = sa.isna() | sb.isna()
    same = (~bad_name) & (sa == sb)
    assert c.excluded.total == int(bad_name.sum() + same.sum())
    assert c.excluded.counts["self-comparison"] == int(same.sum())
    # the name reasons together count each missing-name row exactly once
    named = {k: v for k, v in c.excluded.counts.items() if k.startswith("missing name") or k == "row without players"}
    assert c.excluded.counts.get("row without players", 0) == int((sa.isna() & sb.isna()).sum())
    assert sum(named.values()) == int(bad_name.sum())
    assert len(c) == n - c.excluded.total
    assert "rows excluded" in c.excluded.report()


@pytest.mark.parametrize("w", [-1.0, np.nan, np.inf, "heavy"])
def test_bad_weights(w):
    df = _frame(weight=[1.0, 2.0, w, 1.0, 1.0])
    with pytest.raises(InputError) as e:
        read_comparisons(df)
    assert str(e.value).startswith("row 2 (DataFrame index): column 'weight' has a negative, missing or non-finite")


def test_empty_data():
    with pytest.raises(InputError, match="0 rows"):
        Comparisons.from_frame(_frame().iloc[:0])
    only_self = pd.DataFrame({"model_a": ["x"], "model_b": ["x"], "outcome": ["a"]})
    with pytest.raises(InputError, match="no comparisons left"):
        Comparisons.from_frame(only_self, on_invalid="exclude")


def test_missing_judge():
    df = _frame(judge=["j", None, "j", "k", "k"])
    with pytest.raises(InputError, match=r"^row 1 \(DataFrame index\): column 'judge' has no judge"):
        read_comparisons(df)
    c = read_comparisons(df, on_invalid="exclude")
    assert c.excluded.total == 1 and len(c.judges) == 2


def test_onehot_bad_row_named():
    df = pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "x"], "winner_model_a": [1, 1],
                       "winner_model_b": [0, 1], "winner_tie": [0, 0]})
    with pytest.raises(InputError, match=r"^row 1 \(DataFrame index\): not exactly one of winner_model_a"):
        read_comparisons(df)


def test_scores_non_numeric_points_named():
    df = pd.DataFrame({"home_team": ["x", "y"], "away_team": ["y", "x"], "home_pts": [100, "?"], "away_pts": [90, 80]})
    with pytest.raises(InputError, match=r"^row 1 \(DataFrame index\): missing points"):
        read_comparisons(df)
    assert read_comparisons(df, on_invalid="exclude").excluded.counts == {"missing points": 1}


def test_arena_counts_bad_index_and_counts():
    good = {"models": ["a", "b", "c"], "X": [[0, 1], [1, 2]], "Y": [[1, 2, 0, 0], [3, 1, 1, 0]]}
    assert read_comparisons(good).n_comparisons == 8
    with pytest.raises(InputError, match=r"X records \[2\] index outside"):
        read_comparisons({**good, "X": [[0, 1], [1, 5]]})
    with pytest.raises(InputError, match=r"Y records \[1\] have negative"):
        read_comparisons({**good, "Y": [[-1, 2, 0, 0], [3, 1, 1, 0]]})
    with pytest.raises(InputError, match=r"X records \[2\] hold non-integer model indices"):  # was truncated to 1
        read_comparisons({**good, "X": [[0, 1], [1.7, 2]]})


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        read_comparisons("/nonexistent/file.csv")


@pytest.mark.parametrize("suffix", ["parquet", "csv", "jsonl"])
def test_score_of_player_a_as_floats_is_read_in_every_named_format(tmp_path, suffix):
    """An outcome column of 1.0 / 0.0 / 0.5 (the score of player a; a Parquet float column) is read as
    a / b / tie without a map, as in a detected layout; 1.0 / 0.0 alone stay ambiguous (one line)."""
    words = _frame(outcome=["a", "b", "tie", "a", "b"])
    floats = words.assign(outcome=words["outcome"].map({"a": 1.0, "b": 0.0, "tie": 0.5}))
    f = tmp_path / f"v.{suffix}"
    write = {"parquet": lambda d: d.to_parquet(f), "csv": lambda d: d.to_csv(f, index=False),
             "jsonl": lambda d: d.to_json(f, orient="records", lines=True)}[suffix]
    write(floats)
    got = read_comparisons(f)
    assert list(got.frame["outcome"]) == list(words["outcome"])
    assert any("score of player a" in n for n in got.notes)
    write(floats.rename(columns={"outcome": "winner"}))  # the battles format
    assert list(read_comparisons(f).frame["outcome"]) == list(words["outcome"])
    write(floats.assign(outcome=[1.0, 0.0, 1.0, 1.0, 0.0]))
    with pytest.raises(InputError, match=r"^the outcome column 'outcome' holds the numbers 0, 1, .*--outcome-map 1=a,0=b"):
        read_comparisons(f)
    assert list(read_comparisons(f, outcome_map="1=a,0=b").frame["outcome"]) == ["a", "b", "a", "a", "b"]


def test_empty_cell_in_a_judge_column_names_its_line_and_column(tmp_path):
    """Wide judge columns: the empty cell is named by its line and its own column (not all three);
    a long judge column: a blank or whitespace-only judge is a missing judge on its line."""
    wide = _frame().drop(columns="outcome")
    for k in (1, 2, 3):
        wide[f"annotator{k}"] = ["a", "b", "tie", "a", "b"]
    wide.loc[3, "annotator2"] = None
    wide.to_csv(tmp_path / "w.csv", index=False)
    with pytest.raises(InputError, match=r"^line 5 of .*w\.csv: empty cell in judge column 'annotator2'; --exclude"):
        read_comparisons(tmp_path / "w.csv")
    got = read_comparisons(tmp_path / "w.csv", on_invalid="exclude")
    assert got.excluded.counts == {"empty cell in judge column 'annotator2'": 1} and len(got) == 14
    long = _frame(judge=["j1", "j2", "  ", "j1", "j2"])
    long.to_csv(tmp_path / "l.csv", index=False)
    with pytest.raises(InputError, match=r"^line 4 of .*l\.csv: column 'judge' has no judge \(an empty cell\)"):
        read_comparisons(tmp_path / "l.csv")
