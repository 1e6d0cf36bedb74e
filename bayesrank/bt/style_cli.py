"""``bayesrank fit DATA --style A_COL:B_COL[,...] [--reweight] [--min-pair-count N]``.

The style-control flags of ``bayesrank fit`` and what they run. Module level: standard library
only (``bayesrank fit --help`` must stay fast); the estimator is imported inside :func:`run_style`.
"""

from __future__ import annotations

import time

from bayesrank.errors import InputError

FIT_STYLE_HELP = ("style-controlled BT: per-battle feature columns of player a and player b (e.g. len_a:len_b,bold_a:bold_b); "
                  "each feature is (x_a − x_b)/(x_a + x_b), standardised (LMArena's style control); scores are the "
                  "adjusted ones, the table shows each player's rank change vs the plain fit")


def add_style_model_args(p, style_help: str = FIT_STYLE_HELP):
    """The flags that define the style-controlled model (``--style``, ``--style-transform``,
    ``--style-standardize``): shared by ``fit``, ``audit`` and any command that fits it. Returns the group."""
    g = p.add_argument_group("style control (battle-level model)")
    g.add_argument("--style", default=None, metavar="A_COL:B_COL[,A_COL:B_COL...]", help=style_help)
    g.add_argument("--style-transform", default="normalized_diff", choices=("normalized_diff", "diff"),
                   help="feature difference: (x_a − x_b)/(x_a + x_b) (default, LMArena) or x_a − x_b")
    g.add_argument("--style-standardize", default="center_scale", choices=("center_scale", "scale", "none"),
                   help="center_scale (default, LMArena: implies a position-a effect tied to β), scale (keeps "
                        "features antisymmetric: use it when every battle involves one reference player), none")
    return g


def add_style_args(p) -> None:
    """The style-control and reweighting flags of ``bayesrank fit``."""
    g = add_style_model_args(p)
    g.title = "style control and reweighting (battle-level model)"
    g.add_argument("--style-cluster", default=None, metavar="COL",
                   help="column of cluster labels (e.g. the prompt): cluster-robust sandwich and cluster bootstrap")
    g.add_argument("--reweight", action="store_true",
                   help="inverse-propensity weights 1/max(n_pair, --min-pair-count) for uneven pair sampling "
                        "(arena-rank's reweighting; use with the sandwich interval)")
    from bayesrank.cli_args import nonnegative_float

    g.add_argument("--min-pair-count", type=nonnegative_float, default=50.0, metavar="N",
                   help="floor on a pair's battle count in the --reweight weights (default 50; no battle is dropped)")


def wants_style(args) -> bool:
    """True when a battle-level option is given (then :func:`run_style` runs instead of the plain fit)."""
    return any(bool(getattr(args, name, None)) for name in ("style", "reweight", "style_cluster"))


def run_style(args, comps) -> int:
    """Fit the battle-level (style-controlled and/or reweighted) BT on ``comps`` and print/write it."""
    from bayesrank.bt.style import StyleBT
    from bayesrank.cli_args import report_diagnostics, write_outputs
    from bayesrank.report import console, rich_table

    out = console()
    ties = "half" if args.ties == "auto" else args.ties
    if ties not in ("half", "drop"):
        raise InputError(f"--style/--reweight support --ties half or drop, got {args.ties!r}")
    if getattr(args, "anchor", None):
        raise InputError("--anchor is not supported with --style/--reweight (use --scale elo for base 1000)")
    ci = args.ci if args.ci != "auto" else "sandwich"
    kw = {} if args.prior_sigma is None else {"prior_sigma": args.prior_sigma}
    bt = StyleBT(comps, args.style or (), ties=ties, transform=args.style_transform,
                 standardize=args.style_standardize, reweight=args.reweight, min_pair_count=args.min_pair_count,
                 ridge=args.ridge, level=args.level, cluster=args.style_cluster, **kw)
    t0 = time.perf_counter()
    with out.status(f"fitting ({args.method}, battle-level)..."):
        fit = bt.fit(args.method, ci=ci, n_boot=args.n_boot, seed=args.seed, draws=args.draws, tune=args.tune,
                     chains=args.chains, sampler=args.sampler, progress=args.method in ("bootstrap", "nuts"))
    elapsed = time.perf_counter() - t0
    table = fit.table()
    if args.scale == "elo":
        a = 400.0 / 2.302585092994046
        for col in ("score", "lower", "upper", "plain_score"):
            table[col] = 1000.0 + a * table[col]
    if args.top:
        table = table.head(args.top)
    what = "style-controlled" if fit.features else "reweighted"
    if fit.features:
        out.print(rich_table(fit.style_table(), title="style coefficients (logit per SD of the feature difference)"))
    out.print(rich_table(table, title=f"{what} Bradley-Terry ({fit.method}, ties={fit.ties}, {fit.interval} "
                                      f"{fit.level:.0%}); rank_change = plain_rank − rank"))
    excluded = getattr(comps, "excluded", None)
    out.print(f"{fit.n_comparisons:g} battles, {len(fit.players)} players, {fit.n_excluded} excluded "
              f"({excluded.report() if excluded is not None and excluded.total else 'none'})"
              + (f"; inverse-propensity weights, min pair count {args.min_pair_count:g}" if args.reweight else "")
              + f"; {elapsed:.1f}s")
    out.print(f"[dim]{fit.significance_rule()}[/]")
    report_diagnostics(out, fit.diagnostics)
    write_outputs(out, fit, args, {"style_leaderboard.png": lambda: fit.plot(top=args.top)})
    return 0
