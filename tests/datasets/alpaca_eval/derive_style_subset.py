"""Derive the AlpacaEval 2 length fixtures used by the style-control tests and example.

Run once, from a checkout of the source data (tatsu-lab/alpaca_eval @ cd543a149df8, annotations
compacted to ``alpaca_eval_annotations_compact.csv``: one row per instruction × generator ×
annotator, text dropped, lengths kept)::

    python derive_style_subset.py SOURCE_DIR

It keeps the annotator ``weighted_alpaca_eval_gpt4_turbo`` (AlpacaEval 2's default, whose
leaderboard publishes length-controlled win rates), drops the reference-vs-itself rows
(generator_2 == generator_1), keeps the columns instruction_idx, generator_1, generator_2,
preference, len_output_1, len_output_2 unchanged, sorts by (generator_2, instruction_idx) and
writes ``alpaca_eval2_weighted_lengths.csv.gz``; the published leaderboard CSV is copied verbatim.
"""

import shutil
import sys
from pathlib import Path

import pandas as pd

ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"
LEADERBOARD = "leaderboard__data_AlpacaEval_2__weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
COLUMNS = ["instruction_idx", "generator_1", "generator_2", "preference", "len_output_1", "len_output_2"]


def derive(source: Path, out: Path) -> pd.DataFrame:
    df = pd.read_csv(source / "alpaca_eval_annotations_compact.csv")
    df = df[(df["annotator"] == ANNOTATOR) & (df["generator_1"] != df["generator_2"])]
    df = df[COLUMNS].sort_values(["generator_2", "instruction_idx"], kind="stable").reset_index(drop=True)
    df.to_csv(out / "alpaca_eval2_weighted_lengths.csv.gz", index=False, compression={"method": "gzip", "mtime": 0})
    shutil.copyfile(source / LEADERBOARD, out / "alpaca_eval2_weighted_leaderboard.csv")
    return df


if __name__ == "__main__":
    print(len(derive(Path(sys.argv[1]), Path(__file__).resolve().parent)), "rows")
