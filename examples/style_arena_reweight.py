"""Inverse-propensity reweighting on the real Chatbot Arena votes (1,670,250 battles, 129 models).

LMArena samples some pairs far more often than others. Weighting each battle by
1/max(n_pair, 50) (arena-rank's ``reweighted=True``) targets a uniform mixture over pairs. This
example fits the plain and the reweighted Bradley–Terry (sandwich intervals) on the bundled
pair counts and shows the ranks that move; arena-rank's reweighted fit on the same battles is
compared in ``tests/bt/test_style_arena_rank.py`` (slow).

Run: python examples/style_arena_reweight.py
"""

from __future__ import annotations

import numpy as np

from bayesrank.bt import BradleyTerry
from bayesrank.bt.reweight import pair_sampling_table

ARENA = "arena/chatbotarena_20240814.json"


def main(min_pair_count: float = 50) -> dict:
    bt = BradleyTerry(ARENA, reweight=True, min_pair_count=min_pair_count)  # pair counts with pair weights
    fit = bt.fit("mle")  # the default interval with importance weights: sandwich
    pairs = pair_sampling_table(bt.rows)
    n = pairs["n_battles"]
    print(f"{fit.n_comparisons:,.0f} battles in {len(pairs):,} pairs; battles per pair: median {n.median():.0f}, "
          f"max {n.max():,.0f}; pairs below the floor {min_pair_count:g}: {(n < min_pair_count).sum()}")
    t = fit.table()
    print(fit.diagnostics.line())
    print("top 10 (reweighted) with the plain rank:")
    print(t.head(10)[["player", "score", "lower", "upper", "rank", "rank_ci", "plain_rank", "rank_change"]]
          .to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    moved = t.loc[t["rank_change"].abs().sort_values(ascending=False).index].head(5)
    print("largest moves:", ", ".join(f"{r.player} {r.plain_rank}→{r['rank']}" for _, r in moved.iterrows()))
    print(f"players whose rank changes: {int((t['rank_change'] != 0).sum())} of {len(t)}; "
          f"max |change| {int(np.abs(t['rank_change']).max())}")
    return {"fit": fit, "data": bt.rows}


if __name__ == "__main__":
    main()
