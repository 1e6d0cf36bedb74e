"""``bayesrank demo``: the main job on bundled real data — one leaderboard, every fit method,
and how well the methods agree (MLE/Fisher, sandwich, bootstrap, MAP, Laplace, NUTS)."""

from __future__ import annotations

import time

import pandas as pd

from bayesrank.bt import BradleyTerry, compare
from bayesrank.data import comparison_graph, read_comparisons
from bayesrank.datasets import path
from bayesrank.report import console, rich_table, write_json

DATASETS = {
    "arena": "arena/chatbotarena_20240814.json",
    "llmfao": "llmfao/crowd-comparisons.csv",
    "nba": "sports/nba_games_2023_24_tidy.csv",
}


def register(sub) -> None:
    p = sub.add_parser("demo", help="leaderboard with CIs from every fit method on bundled data, and their agreement")
    p.add_argument("--dataset", default="arena", choices=sorted(DATASETS))
    p.add_argument("--no-nuts", action="store_true", help="skip posterior sampling (fast)")
    p.add_argument("--draws", type=int, default=500)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--json", default=None, help="write every fit and the agreement table as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    out = console()
    src = path(DATASETS[args.dataset])
    comps = read_comparisons(src)
    graph = comparison_graph(comps.aggregate())
    out.rule(f"bayesrank demo: {args.dataset}")
    out.print(f"{src.name}: {comps}")
    out.print(f"comparison graph: {graph.advice()}")
    bt = BradleyTerry(comps, ties="half")
    methods = [("mle", {"ci": "fisher"}), ("mle", {"ci": "sandwich"}), ("bootstrap", {"n_boot": 200}), ("map", {}), ("laplace", {})]
    if not args.no_nuts:
        methods.append(("nuts", {"draws": args.draws, "tune": args.draws, "chains": args.chains}))
    fits, timings = [], {}
    for method, kw in methods:
        label = "sandwich" if kw.get("ci") == "sandwich" else method
        t0 = time.perf_counter()
        with out.status(f"fitting {label} ..."):
            fit = bt.fit(method, progress=method == "nuts", **kw)
        timings[label] = time.perf_counter() - t0
        fit.method = label
        fits.append(fit)
        out.print(f"  {label:<14} done in {timings[label]:6.1f}s")
    mle = fits[0]
    top = mle.table().head(args.top)
    show = top[["player", "rank_ci", "score", "lower", "upper"]].rename(columns={"score": "MLE", "lower": "lo", "upper": "hi"})
    for fit in fits:
        t = fit.table().set_index("player").loc[top["player"]]
        show[fit.method] = (t["upper"] - t["lower"]).to_numpy()
    out.print(rich_table(
        show, title=f"Top {args.top}: MLE and 95% Fisher CI lo..hi (logit, sum-to-zero; rank is CI-aware), "
        "then the 95% interval width of each method",
    ))
    agreement = compare(*fits).attrs["agreement"]
    agr = pd.DataFrame(
        [{"method": m, "seconds": timings[m], **v} for m, v in agreement.items()]
    )
    out.print(rich_table(agr, title="Agreement with MLE/Fisher (all players)", floatfmt="{:.4g}"))
    nuts = next((f for f in fits if f.method == "nuts"), None)
    if nuts is not None:
        d = nuts.diagnostics
        ppc, loo = d.extra["ppc"], d.extra["loo"]
        out.print(
            f"NUTS: R-hat max {d.rhat_max:.3f}, bulk ESS min {d.ess_bulk_min:.0f}, divergences {d.divergences}, "
            f"PPC: {ppc['share_outside_95']:.1%} of pairs outside their 95% replicated win-rate interval, "
            f"PSIS-LOO elpd {loo['elpd']:.1f} (max Pareto k {loo['pareto_k_max']:.2f})"
        )
    if args.json:
        write_json({"fits": [f.to_dict() for f in fits], "agreement": agreement, "seconds": timings}, args.json)
        out.print(f"wrote {args.json}")
    return 0
