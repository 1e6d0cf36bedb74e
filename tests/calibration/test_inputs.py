"""Verbal parsing, token readouts, records validation, BoolQ and OpenAI readers."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from bayesrank.calibration.readers import (
    BOOLQ_WORD_MAP,
    answer_span,
    read_boolq_file,
    read_boolq_llama3,
    read_openai_logprobs,
)
from bayesrank.calibration.readouts import span_confidence, t1_geometric_mean, t2_first_token, yes_no_confidence
from bayesrank.calibration.records import from_frame
from bayesrank.calibration.verbal import parse_verbal, parse_verbal_series
from bayesrank.datasets import path as data_path
from bayesrank.errors import ExclusionLog, InputError


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Yes, 60%", 0.6), (" Yes, 100%.\n", 1.0), ("No, 0%", 0.0), ("0.8", 0.8), ("Confidence: .75", 0.75),
        ("80/100", 0.8), ("4/5", 0.8), ("I'd say 8 out of 10", 0.8), ("confidence 1.0", 1.0),
        ("70 percent sure", 0.7), (0.35, 0.35),
    ],
)
def test_parse_verbal_numbers(text, expected):
    assert parse_verbal(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["very certain", "2.5", "150%", "120/100", "", None, float("nan"), "maybe", 1.7])
def test_parse_verbal_unparsable_is_nan(text):
    assert math.isnan(parse_verbal(text))


def test_words_only_with_a_mapping_and_longest_phrase_first():
    assert math.isnan(parse_verbal("Yes, very uncertain"))
    wm = {"certain": 0.8, "very certain": 0.95, "uncertain": 0.3, "very uncertain": 0.1}
    assert parse_verbal("Yes, very uncertain", wm) == 0.1
    assert parse_verbal("Yes, very certain", wm) == 0.95
    assert parse_verbal("Yes, uncertain", wm) == 0.3
    assert parse_verbal("Confidence: 80", integer_scale=100) == 0.8
    assert math.isnan(parse_verbal("Confidence: 80"))


def test_unparsable_rows_are_counted():
    log = ExclusionLog()
    out = parse_verbal_series(pd.Series(["Yes, 60%", "no idea", "0.3", "hmm"]), log=log, reason="bad")
    assert out.isna().tolist() == [False, True, False, True]
    assert log.counts == {"bad": 2} and log.examples["bad"] == [1, 3]


def test_readouts_closed_forms():
    lp = np.log([0.9, 0.5, 0.8])
    assert t1_geometric_mean(lp) == pytest.approx((0.9 * 0.5 * 0.8) ** (1 / 3))
    assert t2_first_token(lp) == pytest.approx(0.9)
    assert span_confidence([lp, np.log([0.25])], "T2").tolist() == pytest.approx([0.9, 0.25])
    got = yes_no_confidence(["Yes", "no", "maybe"], [0.6, 0.2, 0.5], [0.2, 0.6, 0.5], normalize=True)
    assert got[:2] == pytest.approx([0.75, 0.75]) and np.isnan(got[2])


@pytest.mark.parametrize("lp,match", [([-0.1, 0.3], "positive token log-probability"), ([], "empty answer span"), ([np.nan], "non-finite")])
def test_bad_logprobs(lp, match):
    with pytest.raises(InputError, match=match):
        span_confidence([[-0.2], lp], "T1", index=["a", "b"])
    with pytest.raises(InputError, match="row b"):
        span_confidence([[-0.2], lp], "T1", index=["a", "b"])


def _frame():
    return pd.DataFrame({
        "model": ["m"] * 5, "dataset": ["d"] * 5,
        "correct": [1, 0, True, None, 1], "verbal": ["Yes, 90%", "No, 40%", "unsure", "0.5", 0.7], "token": [0.8, 0.3, 0.6, 0.5, np.nan],
    })


def test_records_count_exclusions_and_keep_paired_items():
    df = _frame()
    df["verbal"] = df["verbal"].astype(object)
    rec = from_frame(df, correct_col="correct", verbal_col="verbal", token_col="token", protocol={"context": "bare"})
    assert len(rec) == 2  # row 2 unparsable verbal, row 3 missing correctness, row 4 missing token
    assert rec.frame["verbal"].tolist() == [0.9, 0.4]
    assert rec.exclusions.total == 3
    assert rec.frame["context"].unique().tolist() == ["bare"] and rec.frame["readout"].unique().tolist() == ["unspecified"]


@pytest.mark.parametrize(
    "col,value,match",
    [
        ("token", 1.3, "^row 0: column 'token' has confidence 1.3 outside \\[0, 1\\]"),
        ("verbal", -0.2, "^row 0: column 'verbal'"),
        ("correct", 2, "^row 0: column 'correct' has correctness 2; expected binary"),
        ("correct", "maybe", "expected binary"),
    ],
)
def test_records_bad_values_name_row_and_column(col, value, match):
    df = pd.DataFrame({"correct": [1, 0], "verbal": [0.5, 0.5], "token": [0.5, 0.5]}).astype(object)
    df.loc[0, col] = value
    with pytest.raises(InputError, match=match):
        from_frame(df, correct_col="correct", verbal_col="verbal", token_col="token")


def test_records_empty_and_missing_columns():
    with pytest.raises(InputError, match="empty"):
        from_frame(pd.DataFrame({"c": []}), correct_col="c", verbal_col="v", token_col="t")
    with pytest.raises(InputError, match="column 'v' not found"):
        from_frame(pd.DataFrame({"c": [1]}), correct_col="c", verbal_col="v", token_col="t")


def test_records_from_logprob_lists():
    df = pd.DataFrame({"correct": [1, 0], "verbal": [0.9, 0.2], "lps": [json.dumps([-0.1, -0.3]), [-0.7]]})
    rec = from_frame(df, correct_col="correct", verbal_col="verbal", token_logprobs_col="lps", readout="T1")
    assert rec.frame["token"].tolist() == pytest.approx([np.exp(-0.2), np.exp(-0.7)])
    assert rec.frame["readout"].unique().tolist() == ["T1"]
    df.loc[1, "lps"] = json.dumps([-0.1, 0.5])
    with pytest.raises(InputError, match="row 1: positive token log-probability"):
        from_frame(df, correct_col="correct", verbal_col="verbal", token_logprobs_col="lps")


# ----------------------------------------------------------------------------- bundled BoolQ files
BOOLQ_ROWS = {1: 2917, 2: 3238, 3: 666, 4: 469, 5: 180, 6: 200}


@pytest.fixture(scope="module")
def boolq():
    return read_boolq_llama3()


def test_boolq_all_rows_read_and_parsed_verbal_matches_source_column(boolq):
    counts = boolq.frame["prompt_variant"].value_counts().to_dict()
    assert counts == {f"prompt{k}": v for k, v in BOOLQ_ROWS.items()}
    assert boolq.exclusions.total == 0  # every Raw_Answer parsed and agreed with the authors' Confidence column
    for v in BOOLQ_ROWS:
        raw = pd.read_csv(data_path(f"calibration/L3_data{v}.csv"), index_col=0)
        got = boolq.frame[boolq.frame["prompt_variant"] == f"prompt{v}"]
        assert np.allclose(got["verbal"].to_numpy(), raw["Confidence"].to_numpy(), atol=1e-12)
        # default readout = the authors' Prob_Score = p(answer) / (p(Yes) + p(No))
        assert np.allclose(got["token"].to_numpy(), raw["Prob_Score"].to_numpy(), atol=1e-6)
        # Score is 1 exactly when the given answer matches the gold label
        assert np.array_equal(got["correct"].to_numpy(), ((raw["Answer"].str.strip() == "Yes") == raw["Correct_Answer"]).astype(int).to_numpy())


def test_boolq_raw_readout_and_protocol_columns():
    rec = read_boolq_file(data_path("calibration/L3_data5.csv"), token_readout="T2_yesno_raw")
    raw = pd.read_csv(data_path("calibration/L3_data5.csv"), index_col=0)
    expect = np.where(raw["Answer"].str.strip() == "Yes", raw["Yes_Prob"], raw["No_Prob"])
    assert np.allclose(rec.frame["token"], expect)
    assert rec.frame["token"].max() < 0.05  # the first generated token is rarely Yes/No in variant 5
    row = rec.frame.iloc[0]
    assert (row["provenance"], row["scored_answer"], row["readout"], row["context"]) == (
        "self_generated", "generated", "T2_yesno_raw", "verbal_prefix")
    assert set(BOOLQ_WORD_MAP) >= set(raw["Stated_Confidence"].str.strip().str.lower())


def test_boolq_column_source_and_bad_readout():
    rec = read_boolq_file(data_path("calibration/L3_data6.csv"), verbal_source="column")
    assert len(rec) == 200
    with pytest.raises(InputError, match="token_readout"):
        read_boolq_file(data_path("calibration/L3_data6.csv"), token_readout="T1")


# ----------------------------------------------------------------------------- OpenAI logprobs JSON
def _chat_item(item, answer, tokens, correct, verbal):
    content = [{"token": t, "logprob": lp, "top_logprobs": [{"token": t, "logprob": lp}, {"token": alt, "logprob": alp}]}
               for t, lp, alt, alp in tokens]
    return {"model": "gpt-x", "dataset": "toy", "item_id": item, "answer": answer, "correct": correct, "verbal": verbal,
            "response": {"choices": [{"message": {"content": "".join(t[0] for t in tokens)}, "logprobs": {"content": content}}]}}


def test_openai_chat_logprobs_T1_T2_and_normalised(tmp_path):
    items = [
        _chat_item("q1", "Paris", [("The", -0.01, "A", -5.0), (" Par", -0.2, " Lyon", -2.0), ("is", -0.05, "", -9.0)], 1, "Confidence: 90%"),
        _chat_item("q2", "Yes", [("Yes", -0.4, "No", -1.2), (",", -0.01, ".", -6.0)], 0, "0.6"),
    ]
    p = tmp_path / "resp.jsonl"
    p.write_text("\n".join(json.dumps(i) for i in items))
    t1 = read_openai_logprobs(p, readout="T1", protocol={"provenance": "self_generated"})
    assert t1.frame["token"].tolist() == pytest.approx([np.exp((-0.2 - 0.05) / 2), np.exp(-0.4)])
    assert t1.frame["verbal"].tolist() == pytest.approx([0.9, 0.6])
    t2 = read_openai_logprobs(items, readout="T2")
    assert t2.frame["token"].tolist() == pytest.approx([np.exp(-0.2), np.exp(-0.4)])
    norm = read_openai_logprobs(items[1:], normalize_over=["Yes", "No"])
    assert norm.frame["token"].iloc[0] == pytest.approx(np.exp(-0.4) / (np.exp(-0.4) + np.exp(-1.2)))
    assert norm.frame["readout"].iloc[0] == "T2_norm"


def test_openai_legacy_completions_and_span():
    item = {"correct": 1, "verbal": "80/100", "answer": "blue",
            "response": {"choices": [{"text": " blue sky", "logprobs": {"tokens": [" bl", "ue", " sky"], "token_logprobs": [-0.3, -0.1, -2.0]}}]}}
    rec = read_openai_logprobs([item], readout="T1")
    assert rec.frame["token"].iloc[0] == pytest.approx(np.exp(-0.2))
    assert answer_span([" bl", "ue", " sky"], "sky") == slice(2, 3)
    with pytest.raises(InputError, match="not found"):
        answer_span(["a", "b"], "zzz")
    bad = json.loads(json.dumps(item))
    bad["response"]["choices"][0]["logprobs"]["token_logprobs"][0] = 0.4
    with pytest.raises(InputError, match="positive token log-probability"):
        read_openai_logprobs([bad])


def test_exclude_invalid_counts_each_reason_and_keeps_the_rest():
    df = pd.DataFrame({"correct": [1, 0, 2, 1, "maybe"], "verbal": [0.5, 1.4, 0.5, 0.7, 0.6],
                       "token": [0.5, 0.6, 0.7, "n/a", 0.8]}).astype(object)
    with pytest.raises(InputError, match="^row 2: column 'correct' has correctness 2"):
        from_frame(df, correct_col="correct", verbal_col="verbal", token_col="token")
    rec = from_frame(df, correct_col="correct", verbal_col="verbal", token_col="token", exclude_invalid=True)
    assert rec.frame.index.tolist() == [0]  # rows 1-4 each invalid in one column
    assert rec.exclusions.counts == {
        "invalid correctness (correct): not binary": 2,
        "invalid confidence (verbal): outside [0, 1]": 1,
        "invalid token probability (token): not a number": 1,
    }
    assert rec.exclusions.examples["invalid correctness (correct): not binary"] == [2, 4]


def test_grouping_columns_are_those_in_the_data(boolq):
    rec = from_frame(_frame(), correct_col="correct", verbal_col="verbal", token_col="token", protocol={"context": "bare"})
    assert set(rec.columns) == {"model", "dataset", "item_id", "context"}  # not the 'unspecified' fillers
    with pytest.raises(InputError, match="--by column 'readout' is not in the data"):
        rec.groups(["readout"])
    # BoolQ: model and dataset are constants of the reader, the prompt variant is a column
    assert {"model", "dataset", "prompt_variant", "readout", "context"} <= set(boolq.columns)
    assert [k for k, _ in boolq.groups(["prompt_variant"])] == [(f"prompt{v}",) for v in range(1, 7)]


def test_readout_applied_by_the_reader_is_a_grouping_column():
    df = pd.DataFrame({"correct": [1, 0], "verbal": [0.9, 0.2], "lps": [[-0.1, -0.3], [-0.7]]})
    rec = from_frame(df, correct_col="correct", verbal_col="verbal", token_logprobs_col="lps", readout="T2")
    assert "readout" in rec.columns and [k for k, _ in rec.groups(["readout"])] == [("T2",)]
