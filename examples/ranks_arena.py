"""Rank uncertainty on the bundled Chatbot Arena snapshot (2024-08-14, 129 models, 1.67M battles):
bootstrap vs posterior P(rank ≤ k), rank ranges and simultaneous rank confidence sets.

    python examples/ranks_arena.py [--n-boot 1000] [--draws 1000] [--plots DIR]

Fits: the half-win MLE with 1,000 bootstrap replicates (LMArena's estimator), the Davidson NUTS
posterior (4 chains × 1,000 draws, the Bayesian default when the data contain ties) and its
Laplace approximation. Prints how far the methods' P(rank ≤ k) and rank ranges are apart.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from bayesrank.bt import BradleyTerry
from bayesrank.bt.ranks import analyze_ranks
from bayesrank.datasets import path


def agreement(a, b, cols) -> pd.DataFrame:
    """Max and mean absolute difference of the columns, on players aligned by name; players differing
    means by ≥ 0.05 for probabilities and at all for ranks."""
    ta, tb = a.table().set_index("player"), b.table().set_index("player").loc[a.table()["player"]]
    rows = []
    for c in cols:
        d = (ta[c] - tb[c]).abs()
        rows.append({"column": c, "max_abs_diff": d.max(), "mean_abs_diff": d.mean(),
                     "n_players_differing": int((d >= 0.05).sum()) if c.startswith("p_") else int((d > 0).sum())})
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n-boot", type=int, default=1000)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plots", default=None)
    args = p.parse_args(argv)
    bt = BradleyTerry(path("arena/chatbotarena_20240814.json"))
    analyses = {}
    for method, kw in (("bootstrap", {"n_boot": args.n_boot}), ("laplace", {"draws": 4000}),
                       ("nuts", {"draws": args.draws, "tune": 1000, "chains": 4, "ppc": False, "loo": False})):
        t0 = time.perf_counter()
        fit = bt.fit(method, seed=args.seed, **kw)
        ra = analyze_ranks(fit, seed=args.seed)
        analyses[method] = ra
        print(f"\n== {method} ({fit.interval}, ties={fit.ties}): {time.perf_counter() - t0:.1f} s")
        print(ra.diagnostics.line())
        print(ra.summary(top=15))
    cols = ["p_top1", "p_rank_le_3", "p_rank_le_10", "draws_rank_lower", "draws_rank_upper", "rank_lower", "rank_upper"]
    for other in ("laplace", "nuts"):
        print(f"\n== bootstrap vs {other}")
        print(agreement(analyses["bootstrap"], analyses[other], cols).to_string(index=False, float_format="{:.3f}".format))
    # where P(rank ≤ 10) disagrees most
    tb = analyses["bootstrap"].table().set_index("player")
    tn = analyses["nuts"].table().set_index("player").loc[tb.index]
    d = pd.DataFrame({"score_boot": tb["score"], "score_nuts": tn["score"],
                      "p_le_10_boot": tb["p_rank_le_10"], "p_le_10_nuts": tn["p_rank_le_10"],
                      "range_boot": tb["draws_rank_lower"].astype(str) + "-" + tb["draws_rank_upper"].astype(str),
                      "range_nuts": tn["draws_rank_lower"].astype(str) + "-" + tn["draws_rank_upper"].astype(str)})
    d["abs_diff"] = (d["p_le_10_boot"] - d["p_le_10_nuts"]).abs()
    print("\nlargest P(rank ≤ 10) differences, bootstrap vs NUTS:")
    print(d.sort_values("abs_diff", ascending=False).head(8).to_string(float_format="{:.3f}".format))
    corr = np.corrcoef(tb["score"], tn["score"])[0, 1]
    print(f"\nscore correlation bootstrap (half-win) vs NUTS (Davidson): {corr:.5f}; "
          f"point ranks identical for {(tb['rank'] == tn['rank']).sum()} of {len(tb)} players")
    if args.plots:
        from pathlib import Path

        Path(args.plots).mkdir(parents=True, exist_ok=True)
        for m, ra in analyses.items():
            ra.plot(top=30).savefig(Path(args.plots) / f"ranks_arena_{m}.png", dpi=120)


if __name__ == "__main__":
    main()
