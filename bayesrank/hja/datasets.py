"""Bundled multi-judge panels for HJA.

- ``llmfao``: LLMFAO (dustalov/llmfao) — the same 2,139 pairs of 59 LLMs judged by crowd workers
  (``crowd-comparisons.csv``), GPT-3.5 (``gpt3-crowd-comparisons.csv``) and GPT-4
  (``gpt4-crowd-comparisons.csv``). The 124 crowd workers give 7–343 votes each (median 21), too few
  for a per-worker sensitivity, so by default the crowd is pooled into ONE judge ``crowd``
  (``crowd="top"`` keeps workers with at least ``min_worker_votes`` votes as separate judges and pools
  the rest). Judges: crowd, gpt3, gpt4. Ties are half-wins.
- ``alpaca_eval``: a derived subset of AlpacaEval 2 annotations (tatsu-lab/alpaca_eval @ cd543a149df8)
  with the three GPT-4-turbo annotators ``weighted_alpaca_eval_gpt4_turbo``,
  ``alpaca_eval_gpt4_turbo_fn`` and ``alpaca_eval_cot_gpt4_turbo_fn``; see :func:`derive_alpaca_subset`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.errors import InputError

ALPACA_ANNOTATORS = ("weighted_alpaca_eval_gpt4_turbo", "alpaca_eval_gpt4_turbo_fn", "alpaca_eval_cot_gpt4_turbo_fn")
ALPACA_SUBSET = "alpaca_eval/alpaca_eval_gpt4turbo_3annotators.csv"


def load_llmfao(crowd: str = "pooled", min_worker_votes: int = 100):
    """LLMFAO as one multi-judge :class:`~bayesrank.data.Comparisons` (judge = crowd / gpt3 / gpt4)."""
    from bayesrank import datasets
    from bayesrank.data import read_comparisons

    parts = []
    crowd_df = pd.read_csv(datasets.path("llmfao/crowd-comparisons.csv"))
    if crowd == "pooled":
        crowd_df["judge"] = "crowd"
    elif crowd == "top":
        votes = crowd_df["worker"].map(crowd_df["worker"].value_counts())
        crowd_df["judge"] = np.where(votes >= min_worker_votes, "worker" + crowd_df["worker"].astype(str), "crowd_rest")
    else:
        raise InputError(f"crowd must be 'pooled' or 'top', got {crowd!r}")
    parts.append(crowd_df[["id", "left", "right", "winner", "judge"]])
    for name in ("gpt3", "gpt4"):
        d = pd.read_csv(datasets.path(f"llmfao/{name}-crowd-comparisons.csv"))
        parts.append(d.assign(judge=name)[["id", "left", "right", "winner", "judge"]])
    df = pd.concat(parts, ignore_index=True)
    return read_comparisons(df, format="llmfao", judge="judge")


def derive_alpaca_subset(source_csv: str, out_csv: str | None = None) -> pd.DataFrame:
    """Derive the bundled AlpacaEval subset from ``alpaca_eval_annotations_compact.csv``.

    Only the three GPT-4-turbo annotators (all use ``gpt4_1106_preview`` as ``generator_1``). Pairs judged
    by all three annotators cover a single generator (gpt-3.5-turbo-0301: 2 items, too few for HJA), so
    the subset keeps every generator judged by at least two of the three annotators (7 items incl. the
    reference), all instructions, self-comparisons removed; columns instruction_idx, generator_1,
    generator_2, annotator, preference.
    """
    d = pd.read_csv(source_csv)
    d = d[d["annotator"].isin(ALPACA_ANNOTATORS)]
    n_ann = d.groupby("generator_2")["annotator"].nunique()
    keep = n_ann[n_ann >= 2].index
    d = d[d["generator_2"].isin(keep) & (d["generator_2"] != d["generator_1"])]
    out = d[["instruction_idx", "generator_1", "generator_2", "annotator", "preference"]]
    out = out.sort_values(["annotator", "generator_2", "instruction_idx"]).reset_index(drop=True)
    if out_csv:
        out.to_csv(out_csv, index=False)
    return out


def load_alpaca_eval():
    """The bundled AlpacaEval subset as :class:`~bayesrank.data.Comparisons` (judge = annotator)."""
    from bayesrank import datasets
    from bayesrank.data import read_comparisons

    return read_comparisons(datasets.path(ALPACA_SUBSET), format="alpaca_eval", judge="annotator")


def load_panel(name: str, **kw):
    if name == "llmfao":
        return load_llmfao(**kw)
    if name == "alpaca_eval":
        return load_alpaca_eval()
    raise InputError(f"unknown bundled panel {name!r}; expected 'llmfao' or 'alpaca_eval'")
