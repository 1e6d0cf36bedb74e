"""Files as they come (bayesrank.data.tables): encodings, delimiters, header quirks, parse errors with
their 1-based line, names kept as text. References: files built here with the line of every record
known by construction, Python's own codecs, and pandas on a cleaned copy of the same data."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest

from bayesrank.data import read_comparisons
from bayesrank.data.tables import read_header, read_source, read_table
from bayesrank.errors import InputError

ROWS = [("alpha", "beta", "a"), ("beta", "gamma", "b"), ("gamma", "alpha", "tie"), ("alpha", "gamma", "a")]


def _csv(rows=ROWS, sep=",", header=("model_a", "model_b", "outcome")):
    return "\n".join([sep.join(header)] + [sep.join(r) for r in rows]) + "\n"


def _same_as_clean(c):
    """The comparisons equal those read from a clean UTF-8 comma file of ROWS (pandas, no sniffing)."""
    clean = pd.DataFrame(ROWS, columns=["model_a", "model_b", "outcome"])
    ref = read_comparisons(clean)
    assert c.frame[["model_a", "model_b", "outcome"]].astype(str).to_numpy().tolist() == \
        ref.frame[["model_a", "model_b", "outcome"]].astype(str).to_numpy().tolist()


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-32"])
def test_unicode_encodings_with_and_without_byte_order_mark(tmp_path, encoding):
    f = tmp_path / "v.csv"
    f.write_bytes(_csv(ROWS + [("Zoë", "Łukasz", "a")]).encode(encoding))
    c = read_comparisons(f)
    assert {"Zoë", "Łukasz"} <= set(c.players) and c.notes == []
    assert list(read_table(f).frame.columns) == ["model_a", "model_b", "outcome"]  # no BOM in the first name


def test_latin1_file_is_read_as_windows_1252_with_a_note(tmp_path):
    f = tmp_path / "v.csv"
    f.write_bytes(_csv(ROWS + [("Zoë", "Müller", "a")]).encode("latin-1"))
    c = read_comparisons(f)
    assert {"Zoë", "Müller"} <= set(c.players)
    assert len(c.notes) == 1 and "not valid UTF-8 (byte 0xeb on line 6)" in c.notes[0] and "Windows-1252" in c.notes[0]
    # named explicitly: no note, same names; a wrong explicit encoding names the line
    assert set(read_comparisons(f, encoding="latin-1").players) == set(c.players)
    with pytest.raises(InputError, match=r"line 6: not valid utf-8 \(byte 0xeb\); pass the file's encoding"):
        read_comparisons(f, encoding="utf-8")
    with pytest.raises(InputError, match="not a known text encoding"):
        read_comparisons(f, encoding="klingon")


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_delimiters_are_sniffed(tmp_path, sep):
    f = tmp_path / "v.csv"
    f.write_text(_csv(sep=sep))
    c = read_comparisons(f)
    _same_as_clean(c)
    assert any(f"delimiter {sep!r}" in n for n in c.notes) or sep == "\t"


def test_tsv_suffix_and_gzip(tmp_path):
    (tmp_path / "v.tsv").write_text(_csv(sep="\t"))
    _same_as_clean(read_comparisons(tmp_path / "v.tsv"))
    (tmp_path / "v.csv.gz").write_bytes(gzip.compress(_csv().encode()))
    _same_as_clean(read_comparisons(tmp_path / "v.csv.gz"))
    (tmp_path / "w.json.gz").write_bytes(gzip.compress(json.dumps(
        [dict(zip(("model_a", "model_b", "outcome"), r)) for r in ROWS]).encode()))
    _same_as_clean(read_comparisons(tmp_path / "w.json.gz"))


def test_lines_are_file_lines_with_blank_lines_and_quoted_newlines(tmp_path):
    """Line of each record known by construction: blank line 1, header line 2, a record spanning
    lines 4-5 (quoted newline), a blank line 7; the self-comparison sits on line 9."""
    text = ("\n"
            "model_a,model_b,outcome,note\n"
            "alpha,beta,a,plain\n"
            'beta,gamma,b,"two\nlines"\n'
            "gamma,alpha,tie,x\n"
            "\n"
            "alpha,gamma,a,y\n"
            "gamma,gamma,a,self\n")
    f = tmp_path / "v.csv"
    f.write_text(text)
    with pytest.raises(InputError) as err:
        read_comparisons(f)
    assert str(err.value).startswith(f"line 9 of {f}: columns 'model_a'/'model_b' name the same player twice")
    c = read_comparisons(f, on_invalid="exclude")
    assert c.excluded.counts == {"self-comparison": 1} and c.excluded.examples["self-comparison"] == [9]
    assert c.frame["note"].tolist() == ["plain", "two\nlines", "x", "y"]


def test_repeated_header_lines_are_skipped_and_counted(tmp_path):
    header = "Week,Day,,Winner/tie,,Loser/tie,PtsW,PtsL"
    lines = ["", header, "1,Sun,boxscore,A,@,B,24,17", "1,Sun,boxscore,C,,D,10,10", header,
             "2,Sun,boxscore,B,,C,3,0", "2,Mon,boxscore,D,@,A,21,14"]
    f = tmp_path / "nfl.csv"
    f.write_text("\n".join(lines) + "\n")
    t = read_table(f)
    assert t.skipped.counts == {"repeated header line": 1} and t.skipped.examples["repeated header line"] == [5]
    assert t.frame["PtsW"].dtype.kind in "if"  # numbers again once the repeated header is gone
    c = read_comparisons(f)  # PFR layout detected: points decide, the equal score is a tie
    assert c.excluded.counts == {"repeated header line": 1}
    assert c.frame["outcome"].astype(str).tolist() == ["a", "tie", "a", "a"]
    assert any("score_a=PtsW,score_b=PtsL" in n for n in c.notes)


def test_duplicate_column_names_are_kept_apart_and_named(tmp_path):
    f = tmp_path / "dup.csv"
    f.write_text("model_a,model_b,winner,winner\nx,y,model_a,model_b\ny,x,model_b,model_a\n")
    t = read_table(f)
    assert t.duplicated == {"winner": ["winner", "winner.1"]}
    with pytest.raises(InputError, match=r"column 'winner' appears 2 times in the header; say which one .*winner, "
                                         r"winner\.1"):
        read_comparisons(f, columns="a=model_a,b=model_b,outcome=winner")
    c = read_comparisons(f, columns="a=model_a,b=model_b,outcome=winner.1")
    assert c.frame["outcome"].astype(str).tolist() == ["b", "a"]  # the second copy, not silently the first


def test_player_names_stay_text(tmp_path):
    f = tmp_path / "v.csv"
    f.write_text("model_a,model_b,outcome\n3.10,3.1,a\n007,7,b\n3.1,007,tie\n")
    c = read_comparisons(f)
    assert sorted(c.players) == ["007", "3.1", "3.10", "7"]
    (tmp_path / "v.jsonl").write_text('{"model_a": "007", "model_b": 7, "outcome": "a"}\n')
    assert sorted(read_comparisons(tmp_path / "v.jsonl").players) == ["007", "7"]


def test_parse_errors_are_one_line_with_the_line(tmp_path):
    (tmp_path / "ragged.csv").write_text("model_a,model_b,outcome\nx,y,a\nx,y,a,extra\n")
    with pytest.raises(InputError, match=r"ragged\.csv line 3: 4 fields where the header has 3"):
        read_table(tmp_path / "ragged.csv")
    records = [dict(zip(("model_a", "model_b", "outcome"), r)) for r in ROWS]
    text = json.dumps(records, indent=1)
    (tmp_path / "cut.json").write_text(text[: len(text) // 2])
    with pytest.raises(InputError, match=r"cut\.json line \d+ column \d+: not valid JSON"):
        read_table(tmp_path / "cut.json")
    bad = "\n".join(json.dumps(r) for r in records[:2]) + "\n{\"model_a\": \"x\",\n" + json.dumps(records[3]) + "\n"
    (tmp_path / "bad.jsonl").write_text(bad)
    with pytest.raises(InputError, match=r"bad\.jsonl line 3: not valid JSON .*--exclude-invalid"):
        read_comparisons(tmp_path / "bad.jsonl")
    c = read_comparisons(tmp_path / "bad.jsonl", on_invalid="exclude")
    assert c.excluded.counts == {"unreadable JSON line": 1} and c.excluded.examples["unreadable JSON line"] == [3]
    assert len(c) == 3


def test_json_array_records_know_their_lines(tmp_path):
    records = [dict(zip(("model_a", "model_b", "outcome"), r)) for r in ROWS] + [
        {"model_a": "x", "model_b": "x", "outcome": "a"}]
    text = json.dumps(records, indent=2)
    (tmp_path / "v.json").write_text(text)
    expected_line = text.splitlines().index("  {") + 1 + 5 * 4  # each record spans 5 lines with indent=2
    with pytest.raises(InputError, match=rf"^line {expected_line} of .*v\.json: columns 'model_a'/'model_b'"):
        read_comparisons(tmp_path / "v.json")


def test_empty_binary_truncated_and_spreadsheet_files(tmp_path):
    (tmp_path / "empty.csv").write_bytes(b"")
    with pytest.raises(InputError, match=r"empty\.csv: empty file \(0 bytes\)"):
        read_table(tmp_path / "empty.csv")
    (tmp_path / "head.csv").write_text("model_a,model_b,outcome\n")
    with pytest.raises(InputError, match=r"head\.csv: a header but no data rows"):
        read_table(tmp_path / "head.csv")
    (tmp_path / "garbage.csv").write_bytes(bytes(range(256)) * 4)
    with pytest.raises(InputError, match=r"garbage\.csv: not a text table \(binary data"):
        read_table(tmp_path / "garbage.csv")
    pd.DataFrame(ROWS, columns=["model_a", "model_b", "outcome"]).to_parquet(tmp_path / "v.parquet")
    data = (tmp_path / "v.parquet").read_bytes()
    (tmp_path / "cut.parquet").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"cut\.parquet: not a readable Parquet file"):
        read_table(tmp_path / "cut.parquet")
    (tmp_path / "book.xlsx").write_bytes(b"PK\x03\x04rest")
    with pytest.raises(InputError, match="a spreadsheet file; export the sheet as CSV"):
        read_table(tmp_path / "book.xlsx")
    (tmp_path / "noext").write_text(_csv())  # no suffix: recognised from the content
    _same_as_clean(read_comparisons(tmp_path / "noext"))


def test_parquet_records_are_numbered_from_one(tmp_path):
    df = pd.DataFrame(ROWS + [("x", "x", "a")], columns=["model_a", "model_b", "outcome"])
    df.to_parquet(tmp_path / "v.parquet")
    with pytest.raises(InputError, match=r"^record 5 of .*v\.parquet: columns 'model_a'/'model_b'"):
        read_comparisons(tmp_path / "v.parquet")


def test_folder_with_a_path_pattern_takes_players_from_file_names(tmp_path):
    """QLoRA/PRD layout: one JSONL per pair and judge; players and judge only in the path."""
    rng = np.random.default_rng(0)
    expected = []
    for judge in ("gpt4", "claude"):
        for a, b in (("m1", "m2"), ("m2", "m3"), ("m1", "m3")):
            folder = tmp_path / f"ratings-{judge}"
            folder.mkdir(exist_ok=True)
            scores = rng.choice([1, 2, 3, -1], size=6)
            with open(folder / f"answer_{a}-vs-answer_{b}-{judge}-reviewer_threeclass.jsonl", "w") as fh:
                for s in scores:
                    fh.write(json.dumps({"review_id": "r", "answer1_id": "x", "answer2_id": "y", "score": int(s)}) + "\n")
            expected += [(a, b, judge, int(s)) for s in scores]
    (tmp_path / "README.md").write_text("not data")
    (tmp_path / "ratings-gpt4" / "notes.csv").write_text("a,b\n1,2\n")  # does not match: skipped, said
    t = read_source(tmp_path, path_pattern="ratings-{judge}/answer_{a}-vs-answer_{b}-{judge}-reviewer*")
    assert any("1 file(s)" in n and "notes.csv" in n for n in t.notes)
    c = read_comparisons(tmp_path, path_pattern="ratings-{judge}/answer_{a}-vs-answer_{b}-{judge}-reviewer*",
                         on_invalid="exclude")
    ref = pd.DataFrame(expected, columns=["a", "b", "judge", "score"])
    assert c.excluded.counts == {"unparsed review (score -1)": int((ref.score == -1).sum())}
    kept = ref[ref.score != -1]
    assert len(c) == len(kept) and sorted(c.judges) == ["claude", "gpt4"]
    got = c.frame.assign(o=c.frame["outcome"].astype(str)).groupby(["judge", "o"], observed=True).size()
    want = kept.assign(o=kept.score.map({1: "a", 2: "b", 3: "tie"})).groupby(["judge", "o"]).size()
    assert got.to_dict() == want.to_dict()
    with pytest.raises(InputError, match=r"ratings-claude/answer_m1-vs-answer_m2-claude-reviewer_threeclass\.jsonl "
                                         r"lines? \d"):
        read_comparisons(tmp_path, path_pattern="ratings-{judge}/answer_{a}-vs-answer_{b}-{judge}-reviewer*")


def test_read_header_is_cheap_and_matches_read_table(tmp_path):
    f = tmp_path / "v.csv"
    f.write_text("\n" + _csv(sep=";"))
    assert read_header(f) == list(read_table(f).frame.columns)
