"""``bayesrank ranks``: rank confidence sets, rank distributions and significance tiers of a
Bradley–Terry leaderboard (:func:`bayesrank.bt.ranks.analyze_ranks`).

Module level: standard library, ``bayesrank.cli_args`` and ``bayesrank.errors`` only (start-up
speed); the fit and the analysis are imported inside :func:`run`.
"""

from __future__ import annotations

import time

from bayesrank.cli_args import (
    add_data_args,
    add_output_args,
    data_options,
    nonnegative_int,
    positive_int,
    report_diagnostics,
    write_outputs,
)
from bayesrank.data.formats import FORMATS
from bayesrank.errors import InputError

METHODS = ("bootstrap", "mle", "laplace", "nuts")
TIES = ("auto", "half", "drop", "davidson")


def register(sub) -> None:
    p = sub.add_parser(
        "ranks", help="rank confidence sets (simultaneous, csranks), P(rank <= k), top-k sets, pairwise tiers",
        description="Rank uncertainty of a Bradley-Terry leaderboard: simultaneous and marginal rank confidence "
                    "sets from max-|t| intervals on all pairwise contrasts, rank distributions from bootstrap or "
                    "posterior draws, and Holm/Benjamini-Hochberg significance tiers.")
    add_data_args(p, FORMATS)
    p.add_argument("--method", default="bootstrap", choices=METHODS,
                   help="fit whose uncertainty is used (default bootstrap: battles resampled, as LMArena)")
    p.add_argument("--ties", default="auto", choices=TIES,
                   help="tie model (auto: half-wins for mle/bootstrap, Davidson for laplace/nuts when there are ties)")
    p.add_argument("--n-boot", type=positive_int, default=1000, help="bootstrap replicates (default 1000)")
    p.add_argument("--draws", type=positive_int, default=1000, help="posterior draws per chain (nuts) or in total (laplace)")
    p.add_argument("--tune", type=nonnegative_int, default=1000)
    p.add_argument("--chains", type=positive_int, default=4)
    p.add_argument("--critical", default="auto", choices=("auto", "gaussian", "bootstrap"),
                   help="critical values from N(0, Sigma) or the bootstrap replicates (auto: bootstrap for "
                        "--method bootstrap)")
    p.add_argument("--single-step", action="store_true", help="no stepdown refinement of the rank sets")
    p.add_argument("--n-sim", type=positive_int, default=10_000, help="Monte Carlo draws for Gaussian critical values")
    p.add_argument("--top-k", default="3,10", metavar="K[,K...]", help="report P(rank <= k) and top-k sets (default 3,10)")
    p.add_argument("--top", type=positive_int, default=None, help="print only the top N rows (N >= 1)")
    add_output_args(p)
    from bayesrank.cli_args import add_model_args

    add_model_args(p)
    p.set_defaults(func=run)


def parse_top_k(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise InputError(f"--top-k must be comma-separated integers, got {text!r}") from None
    if not ks or min(ks) < 1:
        raise InputError(f"--top-k values must be integers >= 1, got {text!r}")
    return ks


def compact(t):
    """The console view: each rank range as one ``lo-hi`` column (the JSON keeps the bounds)."""
    view = t[["player", "score", "rank"]].copy()
    for name, lo, hi in (("rank_set", "rank_lower", "rank_upper"),
                         ("marginal_set", "marginal_rank_lower", "marginal_rank_upper"),
                         ("draws_range", "draws_rank_lower", "draws_rank_upper")):
        view[name] = t[lo].astype(str) + "-" + t[hi].astype(str)
    for col in t.columns:
        if col.startswith("p_") or col.startswith("tier_"):
            view[col] = t[col]
    return view


def run(args) -> int:
    from bayesrank.bt.api import BradleyTerry
    from bayesrank.bt.ranks import analyze_ranks, plot_pairwise
    from bayesrank.cli_args import model_options
    from bayesrank.escape import terminal_text
    from bayesrank.report import console, rich_table

    top_k = parse_top_k(args.top_k)
    if args.n_boot < 2 or args.n_sim < 100:
        raise InputError("--n-boot must be >= 2 and --n-sim >= 100")
    out = console()
    from bayesrank.cli_args import print_reading
    from bayesrank.data.readers import read_pairwise

    data = read_pairwise(args.data, format=args.format, on_invalid="exclude" if args.exclude_invalid else "raise",
                         **data_options(args))
    print_reading(out, data)
    bt = BradleyTerry(data, ties=args.ties, level=args.level, **model_options(args))
    t0 = time.perf_counter()
    with out.status(f"fitting ({args.method}) and computing rank sets..."):
        extra = {"ppc": False, "loo": False} if args.method == "nuts" else {}  # `bayesrank fit` runs those checks
        fit = bt.fit(args.method, n_boot=args.n_boot, seed=args.seed, draws=args.draws, tune=args.tune,
                     chains=args.chains, **extra)
        ra = analyze_ranks(fit, level=args.level, critical=args.critical, stepdown=not args.single_step,
                           n_sim=args.n_sim, seed=args.seed, top_k=top_k)
    elapsed = time.perf_counter() - t0
    table = compact(ra.table())
    if args.top:
        table = table.head(args.top)
    out.print(rich_table(table, title=f"Ranks ({fit.method} fit, ties={fit.ties}, level {args.level:.0%}; "
                                      f"--json has every column)"))
    for name, method in ra.methods().items():
        name = {"rank_lower/rank_upper": "rank_set", "marginal_rank_lower/marginal_rank_upper": "marginal_set",
                "draws_rank_lower/draws_rank_upper": "draws_range"}.get(name, name)
        out.print(f"[dim]{name}: {method}[/]")
    for line in ra.findings():  # findings name players: plain text
        out.print(terminal_text(line, keep_newlines=True))
    out.print(f"fit and rank analysis: {elapsed:.1f} s")
    report_diagnostics(out, ra.diagnostics)
    write_outputs(out, ra, args, {"rank_spread.png": ra.plot,
                                  "pairwise_top15.png": lambda: plot_pairwise(fit, top=15, level=args.level)})
    return 0
