"""``bayesrank fit``: fit a Bradley-Terry leaderboard (plain, with a position effect, style
features, clusters or reweighting: one model, one command) and print/write it.

Module level: standard library, ``bayesrank.cli_args`` and ``bayesrank.errors`` only (start-up
speed); the data readers, the estimator and the console are imported inside :func:`run`.
The model flags (``--position-effect``, ``--cluster``, ``--style``…) are the ones every command
shares (:func:`bayesrank.cli_args.add_model_args`).
"""

from __future__ import annotations

import time

from bayesrank.cli_args import (
    add_data_args,
    add_model_args,
    add_output_args,
    data_options,
    model_options,
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
CI = ("auto", "fisher", "sandwich", "cluster")


def register(sub) -> None:
    p = sub.add_parser("fit", help="fit a Bradley-Terry leaderboard with CIs")
    add_data_args(p, FORMATS)
    p.add_argument("--method", default="mle", choices=METHODS)
    p.add_argument("--ties", default="auto", choices=TIES,
                   help="tie model (auto: half-wins for mle/bootstrap, Davidson for map/laplace/nuts when "
                        "the data have ties)")
    p.add_argument("--ci", default="auto", choices=CI,
                   help="interval for --method mle (auto: cluster-robust with --cluster; sandwich when ties are scored "
                        "as half-wins, outcomes are split in shares or with --reweight; else Fisher)")
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
    p.add_argument("--sampler", default="density", choices=("density", "pymc", "nutpie"),
                   help="NUTS implementation: nutpie on the hand-written log density (default), PyMC's sampler, "
                        "or nutpie on the PyMC model (numba compilation)")
    p.add_argument("--scale", default="logit", choices=("logit", "elo"), help="display scale of the printed table")
    p.add_argument("--anchor", default=None, metavar="NAME=VALUE",
                   help="with --scale elo: shift so that player NAME sits at VALUE (default base 1000)")
    p.add_argument("--top", type=positive_int, default=None, help="print only the top N rows (N >= 1)")
    add_output_args(p)
    g = add_model_args(p)
    g.title = "model (position effect, clusters, style features, reweighting)"
    g.add_argument("--style-cluster", default=None, metavar="COL", help="the same as --cluster (earlier name)")
    g.add_argument("--reweight", action="store_true",
                   help="inverse-propensity weights 1/max(n_pair, --min-pair-count) for uneven pair sampling "
                        "(arena-rank's reweighting; the default interval is then the sandwich)")
    g.add_argument("--min-pair-count", type=nonnegative_float, default=50.0, metavar="N",
                   help="floor on a pair's battle count in the --reweight weights (default 50; no battle is dropped)")
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
    import contextlib

    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from bayesrank.bt.api import BradleyTerry
    from bayesrank.cli_args import print_reading
    from bayesrank.data.readers import read_pairwise
    from bayesrank.escape import terminal_text
    from bayesrank.report import console, rich_table

    out = console()
    anchor = parse_anchor(args.anchor)
    model = model_options(args)
    data = read_pairwise(args.data, format=args.format, on_invalid="exclude" if args.exclude_invalid else "raise",
                         **data_options(args))
    print_reading(out, data, excluded=False)  # the summary line below counts the exclusions
    kw = {} if args.prior_sigma is None else {"prior_sigma": args.prior_sigma}
    bt = BradleyTerry(data, ties=args.ties, ridge=args.ridge, level=args.level, reweight=args.reweight,
                      min_pair_count=args.min_pair_count, **model, **kw)
    if anchor:
        bt.rows.index_of(anchor[0])  # InputError naming close matches for an unknown player
    t0 = time.perf_counter()
    what = {"map": "MAP: PyMC builds and compiles the model, then Newton on its log-density",
            "laplace": "Laplace: PyMC builds and compiles the model, then Newton on its log-density and its Hessian",
            "nuts": "NUTS", "bootstrap": "bootstrap refits"}.get(
                args.method, args.method)
    own_bar = args.method in ("bootstrap", "nuts")  # these draw their own progress bar
    with contextlib.nullcontext() if own_bar else Progress(
            SpinnerColumn(), TextColumn(f"fitting ({what})"), TimeElapsedColumn(), console=out, transient=True) as bar:
        if bar is not None:
            bar.add_task("fit", total=None)
        fit = bt.fit(
            args.method, ci=args.ci, n_boot=args.n_boot, failed=args.bootstrap_failed, seed=args.seed,
            draws=args.draws, tune=args.tune, chains=args.chains, sampler=args.sampler, progress=own_bar,
        )
    elapsed = time.perf_counter() - t0
    table = fit.table(scale=args.scale, anchor=anchor)
    if args.top:
        table = table.head(args.top)
    if fit.features:
        out.print(rich_table(fit.style_table(), title="style coefficients (logit per SD of the feature difference)"))
    if fit.position is not None:
        p = fit.position
        out.print(f"position effect α (logit for the side listed first): {p['coef']:.4f} "
                  f"[{p['lower']:.4f}, {p['upper']:.4f}] ({fit.interval} {fit.level:.0%})")
    note = "; rank_change = plain_rank − rank" if fit.plain_score is not None else ""
    out.print(rich_table(table, title=f"{fit.model_description()} ({fit.method}, ties={fit.ties}, {fit.interval} "
                                      f"{fit.level:.0%}){note}"))
    excluded = getattr(data, "excluded", None)
    out.print(terminal_text(
        f"{fit.n_comparisons:g} comparisons, {len(fit.players)} players, {fit.n_excluded} excluded "
        f"({excluded.report() if excluded is not None and excluded.total else 'none'})"
        + (f"; {bt.rows.n_clusters} clusters of {bt.rows.cluster_name}" if bt.rows.cluster is not None else "")
        + (f"; inverse-propensity weights, min pair count {args.min_pair_count:g}" if args.reweight else "")
        + f"; {elapsed:.1f}s"
    ))
    out.print(terminal_text(fit.significance_rule(), style="dim"))
    report_diagnostics(out, fit.diagnostics)
    write_outputs(out, fit, args, {"leaderboard.png": lambda: fit.plot(top=args.top)})
    return 0
