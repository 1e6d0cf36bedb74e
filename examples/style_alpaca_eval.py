"""Length-controlled Bradley–Terry on AlpacaEval 2, next to AlpacaEval's own length-controlled win rates.

Data: AlpacaEval 2 annotations of the weighted GPT-4-Turbo judge (57 generators, each judged
against the reference gpt4_1106_preview on the same 805 instructions; the judge's preference is a
probability, used as a fractional outcome) with the lengths of both outputs, and the published
leaderboard (CC BY-NC 4.0; test fixtures in tests/datasets/alpaca_eval).

Model: logit P(generator beats reference) = θ_gen − θ_ref + β·d, d = the standardised length
difference. Every battle involves the reference, so the features are *scaled, not centred*
(``standardize="scale"``): centring would add −β·mean(d) to every battle and move only the
reference (θ_gen − θ_ref would be the log-odds at the *average* length gap instead of at equal
length, which is what AlpacaEval's length control reports). Sandwich intervals clustered by
instruction (every generator answers the same 805 instructions).

Run: python examples/style_alpaca_eval.py
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, spearmanr

from bayesrank.bt import BradleyTerry
from bayesrank.data.rows import share_rows
from bayesrank.datasets import path

ANNOTATIONS = "alpaca_eval/alpaca_eval2_weighted_lengths.csv.gz"
LEADERBOARD = "alpaca_eval/alpaca_eval2_weighted_leaderboard.csv"
LENGTH = "len_output_2:len_output_1"
#: AlpacaEval's placeholder generator "example" (a format demo, not on the published leaderboard):
#: its 805 battles are excluded, counted in the fit's exclusions.
PLACEHOLDERS = ("example",)


def load(transform: str = "normalized_diff"):
    """(comparison rows with model_a = the generator, model_b = the reference, outcome shares
    [P(generator wins), 1 − P]; leaderboard)."""
    df = pd.read_csv(path(ANNOTATIONS))
    df["p_generator"] = df["preference"] - 1.0  # preference 2 = generator_2 preferred
    placeholder = df["generator_2"].isin(PLACEHOLDERS).to_numpy()
    data = share_rows(df[~placeholder], "generator_2", "generator_1", "p_generator", LENGTH,
                            cluster="instruction_idx", transform=transform, standardize="scale")
    data.excluded.add(f"placeholder generator {PLACEHOLDERS}", int(placeholder.sum()),
                        [int(r) for r in np.flatnonzero(placeholder)[:5]])
    return data, pd.read_csv(path(LEADERBOARD), index_col=0)


def agreement(fit, leaderboard: pd.DataFrame) -> dict:
    """Rank correlations with the published LC win rates over the players on both lists."""
    t = fit.table().set_index("player").join(leaderboard[["win_rate", "length_controlled_winrate"]], how="inner")
    lc = t["length_controlled_winrate"]
    return {"n_players": len(t), "spearman_style_vs_lc": spearmanr(t["score"], lc).statistic,
            "kendall_style_vs_lc": kendalltau(t["score"], lc).statistic,
            "spearman_plain_vs_lc": spearmanr(t["plain_score"], lc).statistic,
            "spearman_plain_vs_winrate": spearmanr(t["plain_score"], t["win_rate"]).statistic}


def main() -> dict:
    out = {}
    for transform in ("normalized_diff", "diff"):
        data, board = load(transform)
        fit = BradleyTerry(data).fit("mle")  # default: cluster-robust sandwich (by instruction)
        out[transform] = (fit, agreement(fit, board))
    fit, agree = out["normalized_diff"]
    print(f"{fit.n_comparisons:g} battles, {len(fit.players)} players; excluded: {fit.exclusions}")
    print(fit.diagnostics.line())
    print("length coefficient (logit per RMS of the normalised length difference):")
    print(fit.style_table().to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    t = fit.table().set_index("player").join(board["length_controlled_winrate"].rename("published_lc"), how="left")
    t["published_lc_rank"] = t["published_lc"].rank(ascending=False, method="min")
    cols = ["score", "lower", "upper", "rank", "rank_ci", "plain_rank", "rank_change", "published_lc", "published_lc_rank"]
    print(t[cols].head(15).to_string(float_format=lambda v: f"{v:.2f}"))
    for transform, (_, a) in out.items():
        print(f"[{transform}] over {a['n_players']} players: Spearman(style-controlled score, published LC win rate) = "
              f"{a['spearman_style_vs_lc']:.3f} (Kendall {a['kendall_style_vs_lc']:.3f}); plain BT vs published LC = "
              f"{a['spearman_plain_vs_lc']:.3f}; plain BT vs published raw win rate = {a['spearman_plain_vs_winrate']:.3f}")
    return {k: a for k, (_, a) in out.items()} | {"fit": fit}


if __name__ == "__main__":
    main()
