"""``bayesrank fit``: fit a Bradley-Terry leaderboard and print/write it.

Module level: standard library, ``bayesrank.cli_args`` and ``bayesrank.errors`` only (start-up
speed); the data readers, the estimator and the console are imported inside :func:`run`.
"""

from __future__ import annotations

import time

from bayesrank.cli_args import (
    add_data_args,
    add_output_args,
    data_options,
    nonnegative_float,
    nonnegative_int,
    positive_float,
    positive_int,
    report_diagnostics,
    write_outputs,
)
from bayesrank.data.formats import FORMATS
from bayesrank.errors import InputError

METHODS = ("mle", "map", "laplace", "nuts", "bootstrap")
TIES = ("auto", "half", "drop", "davidson")


def load(args):
    from bayesrank.data.readers import read_comparisons
    from bayesrank.data.streaming import aggregate_files, is_collection
    from bayesrank.datasets import resolve

    options = data_options(args)
    on_invalid = "exclude" if args.exclude_invalid else "raise"
    if is_collection(args.data) and not ({"path_pattern", "encoding"} & set(options)):
        # a folder or glob of Parquet/CSV files: streamed to pair counts
        return aggregate_files(args.data, format=args.format, on_invalid=on_invalid, **options)
    return read_comparisons(resolve(args.data), format=args.format, on_invalid=on_invalid, **options)


def register(sub) -> None:
    p = sub.add_parser("fit", help="fit a Bradley-Terry leaderboard with CIs")
    add_data_args(p, FORMATS)
    p.add_argument("--method", default="mle", choices=METHODS)
    p.add_argument("--ties", default="auto", choices=TIES,
                   help="tie model (auto: half-wins for mle/bootstrap, Davidson for map/laplace/nuts when "
                        "the data have ties)")
    p.add_argument("--ci", default="auto", choices=("auto", "fisher", "sandwich"),
                   help="interval for --method mle (auto: sandwich when ties are scored as half-wins, else Fisher)")
    p.add_argument("--ridge", type=nonnegative_float, default=0.0,
                   help="L2 penalty on the scores (>= 0; > 0 gives finite scores when a player never won or never lost)")
    p.add_argument("--prior-sigma", type=positive_float, default=None, help="ZeroSumNormal prior scale (map/laplace/nuts)")
    p.add_argument("--n-boot", type=positive_int, default=200)
    p.add_argument("--bootstrap-failed", default="exclude", choices=("exclude", "ridge"),
                   help="bootstrap replicates with no finite MLE: exclude them (default) or refit with ridge 1e-6 "
                        "(counted in the diagnostics either way)")
    p.add_argument("--draws", type=positive_int, default=1000)
    p.add_argument("--tune", type=nonnegative_int, default=1000)
    p.add_argument("--chains", type=positive_int, default=4)
    p.add_argument("--sampler", default="pymc", choices=("pymc", "nutpie"))
    p.add_argument("--scale", default="logit", choices=("logit", "elo"), help="display scale of the printed table")
    p.add_argument("--anchor", default=None, metavar="NAME=VALUE",
                   help="with --scale elo: shift so that player NAME sits at VALUE (default base 1000)")
    p.add_argument("--top", type=positive_int, default=None, help="print only the top N rows (N >= 1)")
    add_output_args(p)
    from bayesrank.bt.style_cli import (
        add_style_args,  # standard library only at module level
    )

    add_style_args(p)  # --style, --reweight, --min-pair-count (battle-level model: bayesrank.bt.style)
    p.set_defaults(func=run)


def parse_anchor(text: str | None):
    """``"NAME=VALUE"`` -> ``(NAME, float(VALUE))``; None when not given."""
    if not text:
        return None
    name, _, value = text.rpartition("=")
    try:
        number = float(value)
    except ValueError:
        number = None
    if not name or number is None:
        raise InputError(f"--anchor must look like NAME=VALUE, got {text!r}")
    return name, number


def run(args) -> int:
    from bayesrank.bt.api import BradleyTerry
    from bayesrank.report import console, rich_table

    out = console()
    anchor = parse_anchor(args.anchor)
    comps = load(args)
    from bayesrank.bt.style_cli import run_style, wants_style
    from bayesrank.cli_args import print_reading

    print_reading(out, comps, excluded=False)  # the summary line below counts the exclusions

    if wants_style(args):
        return run_style(args, comps)
    kw = {} if args.prior_sigma is None else {"prior_sigma": args.prior_sigma}
    bt = BradleyTerry(comps, ties=args.ties, ridge=args.ridge, level=args.level, **kw)
    if anchor:
        bt.counts.index_of(anchor[0])  # InputError naming close matches for an unknown player
    t0 = time.perf_counter()
    import contextlib

    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    what = {"map": "MAP: PyMC builds and compiles the model, then Newton on its log-density",
            "laplace": "Laplace: PyMC builds and compiles the model, then Newton on its log-density and its Hessian",
            "nuts": "NUTS: PyMC compiles the model, then samples", "bootstrap": "bootstrap refits"}.get(
                args.method, args.method)
    own_bar = args.method in ("bootstrap", "nuts")  # these draw their own progress bar
    with contextlib.nullcontext() if own_bar else Progress(
            SpinnerColumn(), TextColumn(f"fitting ({what})"), TimeElapsedColumn(), console=out, transient=True) as bar:
        if bar is not None:
            bar.add_task("fit", total=None)
        fit = bt.fit(
            args.method, ci=args.ci, n_boot=args.n_boot, failed=args.bootstrap_failed, seed=args.seed,
            draws=args.draws, tune=args.tune, chains=args.chains, sampler=args.sampler,
            progress=args.method in ("bootstrap", "nuts"),
        )
    elapsed = time.perf_counter() - t0
    table = fit.table(scale=args.scale, anchor=anchor)
    if args.top:
        table = table.head(args.top)
    out.print(rich_table(table, title=f"Bradley-Terry ({fit.method}, ties={fit.ties}, {fit.interval} {fit.level:.0%})"))
    out.print(
        f"{fit.n_comparisons:g} comparisons, {len(fit.players)} players, {fit.n_excluded} excluded "
        f"({comps.excluded.report() if comps.excluded.total else 'none'}); {elapsed:.1f}s"
    )
    out.print(f"[dim]{fit.significance_rule()}[/]")
    report_diagnostics(out, fit.diagnostics)
    write_outputs(out, fit, args, {"leaderboard.png": lambda: fit.plot(top=args.top)})
    return 0
