"""Readers: the bundled Llama-3 BoolQ confidence files and OpenAI-style ``logprobs`` JSON.

Llama-3 BoolQ files (``tests/datasets/calibration/L3_data1..6.csv``, a test fixture of the source checkout
found by ``bayesrank.datasets.path``; six prompt variants of
Llama-3-8B on BoolQ, from NoamMichael/Confidence-Calibration). Columns: ``Answer`` (Yes/No given),
``Raw_Answer`` (generated text), ``Confidence`` (the authors' parsed verbal confidence),
[``Stated_Confidence``] (the verbal phrase, variants 5-6), ``Yes_Prob``/``No_Prob`` (probabilities of
the "Yes"/"No" tokens at the answer position), ``Prob_Score`` (= p(answer)/(p(Yes)+p(No)), checked),
``Correct_Answer`` (gold label), ``Score`` (1 if ``Answer`` matches the gold label).

Token confidence = probability of the answer the model gave, read off the first answer token:
``token_readout="T2_yesno_normalized"`` (default; p(ans)/(p(Yes)+p(No)), the authors' Prob_Score)
or ``"T2_yesno_raw"`` (p(ans) unnormalised: in variants 5-6 the first generated token is rarely
Yes/No, so p(Yes)+p(No) is ~0.01-0.04 and the raw readout is tiny).
Verbal confidence = our parse of ``Raw_Answer`` (the answer line / the ``<a>…<b>`` span; phrases with
``BOOLQ_WORD_MAP``), cross-checked against the authors' ``Confidence`` column; disagreements and
unparsable rows are counted in the exclusion log (``verbal_source="column"`` uses their column).
Conditioning context: the answer, the stated confidence and the Yes/No probabilities all come from
one generation under the verbal-elicitation prompt, so ``context="verbal_prefix"`` (inferred from
the file structure; the source does not state it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from bayesrank.errors import ExclusionLog, InputError

from .readouts import READOUTS, yes_no_confidence
from .records import ConfidenceRecords, concat, from_frame
from .verbal import parse_verbal_series

BOOLQ_VARIANTS = tuple(range(1, 7))
# phrase -> probability, as the source maps them in variants 5-6 (Stated_Confidence -> Confidence)
BOOLQ_WORD_MAP = {"very certain": 0.9, "somewhat uncertain": 0.6, "very uncertain": 0.5}
BOOLQ_TOKEN_READOUTS = ("T2_yesno_normalized", "T2_yesno_raw")


def _answer_segment(text) -> str:
    """The part of a raw generation that states answer and confidence."""
    s = "" if text is None or (isinstance(text, float) and np.isnan(text)) else str(text)
    if "<a>" in s.lower():
        seg = re.split(r"<a>", s, flags=re.I)[1]
        return re.split(r"<b>|\n", seg, flags=re.I)[0]
    return s.strip().split("\n")[0]


def read_boolq_file(
    path: str | Path,
    *,
    variant: str | None = None,
    token_readout: str = "T2_yesno_normalized",
    verbal_source: str = "parsed",
    context: str = "verbal_prefix",
    model: str = "Llama-3-8B",
    dataset: str = "BoolQ",
) -> ConfidenceRecords:
    """Read one Llama-3 BoolQ confidence file (see module docstring for the column semantics)."""
    if token_readout not in BOOLQ_TOKEN_READOUTS:
        raise InputError(f"token_readout {token_readout!r}; expected one of {BOOLQ_TOKEN_READOUTS}")
    if verbal_source not in ("parsed", "column"):
        raise InputError(f"verbal_source {verbal_source!r}; expected 'parsed' or 'column'")
    path = Path(path)
    df = pd.read_csv(path, index_col=0)
    need = {"Answer", "Raw_Answer", "Confidence", "Yes_Prob", "No_Prob", "Score"}
    miss = need - set(df.columns)
    if miss:
        raise InputError(f"{path.name}: missing column(s) {sorted(miss)}; not a Llama-3 BoolQ confidence file")
    log = ExclusionLog()
    variant = variant or path.stem.replace("L3_data", "prompt")
    work = pd.DataFrame(index=df.index)
    work["item_id"] = df.index.astype(str)
    work["model"], work["dataset"], work["prompt_variant"] = model, dataset, variant
    work["Score"] = df["Score"]
    parsed = parse_verbal_series(df["Raw_Answer"].map(_answer_segment), BOOLQ_WORD_MAP, None, log,
                                 reason="unparsable verbal confidence (Raw_Answer)")
    column = pd.to_numeric(df["Confidence"], errors="coerce")
    disagree = parsed.notna() & column.notna() & (np.abs(parsed - column) > 1e-9)
    if verbal_source == "parsed":
        log.add("parsed verbal confidence disagrees with the file's Confidence column", int(disagree.sum()),
                list(df.index[disagree][:5]))
        work["verbal"] = parsed.where(~disagree)
    else:
        work["verbal"] = column
    ans = df["Answer"].astype(str).str.strip().str.lower()
    bad_ans = ~ans.isin(["yes", "no"])
    log.add("answer is neither Yes nor No", int(bad_ans.sum()), list(df.index[bad_ans][:5]))
    tok = yes_no_confidence(df["Answer"], df["Yes_Prob"], df["No_Prob"], normalize=token_readout.endswith("normalized"))
    if "Prob_Score" in df.columns and token_readout.endswith("normalized"):
        off = np.abs(tok - df["Prob_Score"].to_numpy(float)) > 1e-6
        log.add("normalised Yes/No probability disagrees with Prob_Score", int(np.nansum(off)), list(df.index[np.nan_to_num(off, nan=0).astype(bool)][:5]))
    work["token"] = tok
    rec = from_frame(
        work,
        correct_col="Score",
        verbal_col="verbal",
        token_col="token",
        item_col="item_id",
        protocol={"provenance": "self_generated", "scored_answer": "generated", "readout": token_readout, "context": context},
        extra_axes=("prompt_variant",),
    )
    for reason, n in rec.exclusions.counts.items():
        if not reason.startswith("missing verbal"):  # those rows were already counted with their reason above
            log.add(reason, n, rec.exclusions.examples.get(reason, []))
    rec.exclusions = log
    return rec


def read_boolq_llama3(variants: Iterable[int] = BOOLQ_VARIANTS, **kwargs) -> ConfidenceRecords:
    """All (or some) of the six bundled Llama-3 BoolQ prompt variants as one record set."""
    from bayesrank.datasets import path as data_path

    recs = [read_boolq_file(data_path(f"calibration/L3_data{v}.csv"), variant=f"prompt{v}", **kwargs) for v in variants]
    return concat(recs)


# ----------------------------------------------------------------------------- OpenAI logprobs
def _content_tokens(logprobs: Mapping) -> tuple[list[str], list[float], list]:
    """(tokens, logprobs, top_logprobs) from chat (``content``) or legacy completion format."""
    if logprobs is None:
        raise InputError("response has no 'logprobs' (request it with logprobs=true)")
    if "content" in logprobs:
        content = logprobs["content"] or []
        toks = [c["token"] for c in content]
        lps = [c["logprob"] for c in content]
        tops = [{t["token"]: t["logprob"] for t in (c.get("top_logprobs") or [])} for c in content]
        return toks, lps, tops
    if "tokens" in logprobs and "token_logprobs" in logprobs:
        return list(logprobs["tokens"]), list(logprobs["token_logprobs"]), list(logprobs.get("top_logprobs") or [{}] * len(logprobs["tokens"]))
    raise InputError("unrecognised logprobs object: expected 'content' (chat) or 'tokens'/'token_logprobs' (completions)")


def answer_span(tokens: list[str], answer: str | None) -> slice:
    """Token slice covering the first occurrence of ``answer`` (case-insensitive) in the joined
    tokens; the whole sequence when ``answer`` is None."""
    if not answer:
        return slice(0, len(tokens))
    text = "".join(tokens)
    pos = text.lower().find(str(answer).strip().lower())
    if pos < 0:
        raise InputError(f"answer {answer!r} not found in the generated tokens {text[:60]!r}")
    end = pos + len(str(answer).strip())
    starts = np.cumsum([0] + [len(t) for t in tokens[:-1]])
    ends = starts + np.array([len(t) for t in tokens])
    idx = np.flatnonzero((ends > pos) & (starts < end))
    return slice(int(idx[0]), int(idx[-1]) + 1)


def read_openai_logprobs(
    source: str | Path | list[dict],
    *,
    readout: str = "T1",
    correct_key: str = "correct",
    verbal_key: str = "verbal",
    answer_key: str | None = "answer",
    normalize_over: list[str] | None = None,
    word_map: Mapping[str, float] | None = None,
    integer_scale: float | None = 100,
    protocol: Mapping[str, str] | None = None,
) -> ConfidenceRecords:
    """Records from a JSON list / JSON-lines file of items, each holding ``model``, ``dataset``,
    ``item_id``, ``correct``, ``verbal`` (number or text), optionally ``answer`` and protocol fields,
    and ``response``: an OpenAI chat/completions response (or its ``choices[0]``) with ``logprobs``.

    The answer span is located by ``answer`` in the generated tokens; ``readout`` T1/T2 turns its
    per-token log-probabilities into a probability. With ``normalize_over=["Yes", "No"]`` the first
    token's probability is normalised over those candidates in ``top_logprobs`` (readout ``T2_norm``).
    """
    if isinstance(source, (str, Path)):
        text = Path(source).read_text()
        try:
            items = json.loads(text)
        except json.JSONDecodeError:
            items = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        items = list(source)
    if isinstance(items, dict):
        items = [items]
    if readout not in READOUTS:
        raise InputError(f"unknown token readout {readout!r}; expected one of {READOUTS}")
    rows = []
    for _i, it in enumerate(items):
        resp = it.get("response", it)
        choice = resp["choices"][0] if "choices" in resp else resp
        toks, lps, tops = _content_tokens(choice.get("logprobs"))
        span = answer_span(toks, it.get(answer_key) if answer_key else None)
        span_lps = lps[span]
        if normalize_over:
            top = tops[span.start] if span.start < len(tops) else {}
            cand = {k.strip().lower(): v for k, v in top.items()}
            mass = [np.exp(cand[c.lower()]) for c in normalize_over if c.lower() in cand]
            p_first = np.exp(span_lps[0]) if span_lps else np.nan
            token_lp = [float(np.log(p_first / sum(mass)))] if mass and p_first > 0 else None
        else:
            token_lp = span_lps
        row = {k: it.get(k) for k in ("model", "dataset", "item_id", "provenance", "scored_answer", "context")}
        row.update(correct=it.get(correct_key), verbal=it.get(verbal_key), token_logprobs=token_lp)
        rows.append(row)
    df = pd.DataFrame(rows)
    df = df.dropna(axis=1, how="all") if len(df) else df
    for col in ("correct", "verbal", "token_logprobs"):
        if col not in df.columns:
            raise InputError(f"no item has {col!r}")
    if df["verbal"].map(lambda v: isinstance(v, str)).any():
        df["verbal"] = df["verbal"].astype(object)
    return from_frame(
        df,
        correct_col="correct",
        verbal_col="verbal",
        token_logprobs_col="token_logprobs",
        readout="T2" if normalize_over else readout,
        item_col="item_id",
        protocol=protocol,
        word_map=word_map,
        integer_scale=integer_scale,
        defaults={"readout": "T2_norm" if normalize_over else readout},
    )
