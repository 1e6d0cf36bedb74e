"""``bayesrank fit``: fit a Bradley-Terry leaderboard and print/write it."""

from __future__ import annotations

import argparse
import time

from bayesrank.bt.api import METHODS, BradleyTerry
from bayesrank.bt.likelihood import TIE_MODELS
from bayesrank.data.readers import FORMATS, read_comparisons
from bayesrank.datasets import resolve
from bayesrank.report import console, rich_table


def add_data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", help="comparison file (CSV/TSV/JSON/JSONL/Parquet) or a bundled dataset name")
    p.add_argument("--format", default="auto", choices=("auto", *FORMATS), help="input format (default: detect)")
    p.add_argument("--exclude-invalid", action="store_true",
                   help="count and drop self-comparisons / missing names instead of failing")


def load(args):
    return read_comparisons(
        resolve(args.data), format=args.format, on_invalid="exclude" if args.exclude_invalid else "raise"
    )


def register(sub) -> None:
    p = sub.add_parser("fit", help="fit a Bradley-Terry leaderboard with CIs")
    add_data_args(p)
    p.add_argument("--ties", default="half", choices=TIE_MODELS)
    p.add_argument("--method", default="mle", choices=METHODS)
    p.add_argument("--ci", default="fisher", choices=("fisher", "sandwich"), help="interval for --method mle")
    p.add_argument("--ridge", type=float, default=0.0)
    p.add_argument("--prior-sigma", type=float, default=None, help="ZeroSumNormal prior scale (map/laplace/nuts)")
    p.add_argument("--level", type=float, default=0.95)
    p.add_argument("--n-boot", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--sampler", default="pymc", choices=("pymc", "nutpie"))
    p.add_argument("--scale", default="logit", choices=("logit", "elo"), help="display scale of the printed table")
    p.add_argument("--anchor", default=None, metavar="NAME=VALUE",
                   help="with --scale elo: shift so that player NAME sits at VALUE (default base 1000)")
    p.add_argument("--top", type=int, default=None, help="print only the top N rows")
    p.add_argument("--json", default=None, help="write the result as JSON here")
    p.set_defaults(func=run)


def run(args) -> int:
    out = console()
    comps = load(args)
    kw = {} if args.prior_sigma is None else {"prior_sigma": args.prior_sigma}
    bt = BradleyTerry(comps, ties=args.ties, ridge=args.ridge, level=args.level, **kw)
    t0 = time.perf_counter()
    with out.status(f"fitting ({args.method})..."):
        fit = bt.fit(
            args.method, ci=args.ci, n_boot=args.n_boot, seed=args.seed, draws=args.draws, tune=args.tune,
            chains=args.chains, sampler=args.sampler, progress=args.method in ("bootstrap", "nuts"),
        )
    elapsed = time.perf_counter() - t0
    anchor = None
    if args.anchor:
        name, _, value = args.anchor.rpartition("=")
        if not name:
            raise ValueError(f"--anchor must look like NAME=VALUE, got {args.anchor!r}")
        fit.counts.index_of(name)  # clear error for an unknown player
        anchor = (name, float(value))
    table = fit.table(scale=args.scale, anchor=anchor)
    if args.top:
        table = table.head(args.top)
    out.print(rich_table(table, title=f"Bradley-Terry ({fit.method}, ties={fit.ties}, {fit.interval} {fit.level:.0%})"))
    out.print(
        f"{fit.n_comparisons:g} comparisons, {len(fit.players)} players, {fit.n_excluded} excluded "
        f"({comps.excluded.report() if comps.excluded.total else 'none'}); {elapsed:.1f}s"
    )
    if fit.diagnostics:
        simple = {k: v for k, v in fit.diagnostics.items() if isinstance(v, (int, float, bool))}
        out.print("diagnostics: " + ", ".join(f"{k}={v:.4g}" for k, v in simple.items()))
    if args.json:
        fit.to_json(args.json)
        out.print(f"wrote {args.json}")
    return 0
