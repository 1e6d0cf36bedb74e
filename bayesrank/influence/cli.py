"""``bayesrank audit``: leaderboard perturbation audit with verified breaks and robustness scores.

    bayesrank audit DATA [--objective top1|topk:K|pair:A>B|tau|ci-player:NAME|ci-trace]
        [--actions drop,flip,add,add_pairs,add_sampled,add_weighted,remove-player] [--ci-aware | --significance] [--level L]
        [--target NAME --goal promote|demote] [--budget N] [--robustness] [--certify S]
        [--seed N] [--json PATH] [--plots DIR]
    bayesrank audit DATA --style A_COL:B_COL[,...] [--style-transform T] [--style-standardize S]
        [--position-effect] [--cluster COL] [--actions drop,flip,add] [same objective, budget, CI and output flags]

The audit itself is :func:`bayesrank.influence.audit` (with ``--style``, ``--cluster`` or
``--position-effect``: the row-level BT of that model, :func:`bayesrank.influence.covariates.audit_report`,
whose actions act on comparisons and whose significance mode uses the model's default interval —
cluster-robust when clustered); this module parses, prints and writes.
"""

from __future__ import annotations

import contextlib

from bayesrank.cli_args import (
    add_data_args,
    add_output_args,
    data_options,
    fraction,
    nonnegative_float,
    positive_float,
    positive_int,
    report_diagnostics,
)
from bayesrank.errors import InputError

ACTIONS_HELP = (
    "comma list of: drop; flip; add (all_outcomes: the actor picks the winner); add_pairs (all_pairs: the "
    "currently stronger player wins); add_sampled (all_outcomes_sampled: the winner is drawn from the fitted "
    "BT probability, seeded by --seed); add_weighted (all_outcomes_weighted: a fractional expected match, whose "
    "gradient is zero at the MLE, so it never moves a score or rank, only the CIs); remove-player")


def register(subparsers) -> None:
    p = subparsers.add_parser("audit", help="leaderboard perturbation audit (influence, verified greedy breaks, R scores)")
    add_data_args(p)
    p.add_argument("--objective", default="top1",
                   help="top1 | topk:K | pair:A>B (the claim 'A is ahead of B'; 'A>B' works too) | tau | "
                        "ci-player:NAME | ci-trace")
    p.add_argument("--actions", default="drop,flip,add", help=ACTIONS_HELP)
    p.add_argument("--ci-aware", action="store_true",
                   help="top-k and pair claims: count a reversal only when it is significant at --level by the "
                        "pairwise-contrast test (theta_b - theta_a > z sd, sd from the inverse observed information)")
    p.add_argument("--significance", action="store_true",
                   help="top1, topk:K and pair claims: break the claim when it is no longer significant at --level "
                        "(the review's contrast test: sandwich covariance when ties are half-wins, Fisher otherwise); "
                        "not with --ci-aware")
    p.add_argument("--target", default=None, help="player to promote/demote (top-k objectives)")
    p.add_argument("--goal", default=None, choices=("promote", "demote"))
    p.add_argument("--budget", type=positive_int, default=None, help="max actions (matches) per audit (default 5%% of N)")
    p.add_argument("--ci-mode", default=None, choices=("inflate", "reduce"),
                   help="CI objectives: inflate (attack, default for drop/flip) or reduce (constructive, default for add)")
    p.add_argument("--ci-ratio", type=positive_float, default=None, help="variance ratio that counts as reached (1.5 / 0.5)")
    p.add_argument("--tau-threshold", type=fraction, default=0.9)
    p.add_argument("--ties", default="half", choices=("half", "drop"))
    p.add_argument("--ridge", type=nonnegative_float, default=0.0)
    p.add_argument("--min-matches", type=positive_int, default=None,
                   help="restrict to the finite-MLE core (players with ≥ this many matches); excluded rows are reported")
    p.add_argument("--robustness", action="store_true",
                   help="also run the audits behind R_top1, R_tau and R_CI (attack direction; see docs)")
    p.add_argument("--certify", type=positive_int, default=None, metavar="S",
                   help="small data: exact refits of every action set of up to S matches (certified minimum or lower bound)")
    add_output_args(p, level=True, seed=True, plots=True)
    from bayesrank.cli_args import add_model_args

    add_model_args(p, "audit the style-controlled BT (the model of `bayesrank fit --style`): per-battle feature "
                      "columns of player a and player b, e.g. len_a:len_b; drop, flip and add act on battles "
                      "carrying their features")
    p.set_defaults(func=run)


@contextlib.contextmanager
def audit_progress(out):
    """One BLAS thread and a transient progress bar; yields ``progress(done, total, label)``."""
    from rich.progress import Progress

    from bayesrank.blas import single_blas_thread

    with single_blas_thread(), Progress(console=out, transient=True) as prog:
        task = prog.add_task("auditing", total=None)

        def progress(done, total, label):
            prog.update(task, completed=done, total=total, description=label)

        yield progress


def print_report(out, report, shown) -> None:
    """Exclusions, headline, diagnostics, the per-action table ``shown`` and each audit's first
    actions (or why it did not break) — the same for the plain and the style-controlled report."""
    from bayesrank.report import rich_table

    if report.exclusions.get("total"):
        out.print(f"[yellow]{report.exclusions['total']} rows excluded: {report.exclusions['by_reason']}[/]")
    out.print(report.headline())
    report_diagnostics(out, report.diagnostics)
    if not len(shown):
        return
    out.print(rich_table(shown, title="actions needed to break the objective (verified by exact refit)",
                         floatfmt="{:.4g}"))
    for action, res in report.audits.items():
        if res.broken:
            out.print(rich_table(res.actions.head(10), title=f"{action}: actions (first 10 steps)", floatfmt="{:.4g}"))
        else:
            out.print(f"{action}: {res.reason}")


def row_level(args) -> bool:
    """``--style``, ``--cluster`` or ``--position-effect``: the audit runs on the comparison rows of
    that model (:func:`bayesrank.influence.covariates.audit_report`), not on pair counts."""
    return args.style is not None or args.cluster is not None or bool(args.position_effect)


def style_flag_errors(args) -> None:
    """One-line InputErrors for flags the row-level audit does not have."""
    if not row_level(args):
        return
    given = [flag for flag, on in (("--robustness", args.robustness), ("--certify", args.certify is not None),
                                   ("--min-matches", args.min_matches is not None)) if on]
    if given:
        raise InputError(f"{', '.join(given)} not available with --style/--cluster/--position-effect (the row-level "
                         "audit runs the objective's audit per action: drop, flip, add)")


def read_data(args):
    """The comparisons DATA holds, read with the command's reading options; the reading notes and
    exclusions are printed (the audit report repeats the exclusion count)."""
    from bayesrank.cli_args import print_reading
    from bayesrank.data.readers import read_comparisons
    from bayesrank.report import console

    comps = read_comparisons(args.data, format=args.format, on_invalid="exclude" if args.exclude_invalid else "raise",
                             **data_options(args))
    print_reading(console(), comps, excluded=False)
    return comps


def run(args) -> int:
    from bayesrank.report import console

    style_flag_errors(args)
    if row_level(args):
        return run_style(args)
    import pandas as pd

    from bayesrank.influence.api import audit
    from bayesrank.report import rich_table

    out = console()
    with audit_progress(out) as progress:
        report = audit(read_data(args), args.objective, args.actions, ci_aware=args.ci_aware,
                       significance=args.significance, level=args.level,
                       target=args.target, goal=args.goal, budget=args.budget, ties=args.ties, ridge=args.ridge,
                       ci_mode=args.ci_mode, ci_ratio=args.ci_ratio, tau_threshold=args.tau_threshold,
                       robustness=args.robustness, certify=args.certify, min_matches=args.min_matches,
                       data_format=args.format, exclude_invalid=args.exclude_invalid, seed=args.seed,
                       progress=progress)
    frame = report.table()
    print_report(out, report, frame.drop(columns=["reason"] + [c for c in ("certified_minimum", "lower_bound")
                                                               if frame[c].isna().all()]))
    if report.player_removal is not None:
        rp = report.player_removal_dict()
        tb = pd.DataFrame(rp["table"]).sort_values("displaced", ascending=False).head(10)
        out.print(rich_table(tb[["player", "rank", "degree", "displaced", "top10_changes", "displaced_newton",
                                 "max_abs_error_newton"]], title="player removal (exact refit vs group Newton)",
                             floatfmt="{:.4g}"))
        out.print(f"Spearman(degree, displacement) = {rp['spearman_degree_vs_displaced']:.3f}")
    rob = report.robustness
    if len(rob):
        out.print(rich_table(rob[["score", "action", "direction", "fraction", "budget", "bound"]],
                             title="robustness scores: smallest fraction of comparisons whose perturbation breaks "
                                   "the property (docs/influence.md)", floatfmt="{:.3g}"))
    if args.plots:
        import matplotlib

        matplotlib.use("Agg")
        paths = report.save_plots(args.plots)
        out.print(f"plots: {', '.join(map(str, paths))}")
    if args.json:
        report.to_json(args.json)
        out.print(f"wrote {args.json}")
    return 0


def run_style(args) -> int:
    """``bayesrank audit DATA --style ... | --cluster COL | --position-effect``: the row-level BT's audit of
    the objective per action (drop, flip, add battles with their covariates; the significance mode uses
    the model's default interval: cluster-robust when clustered)."""
    from bayesrank.cli_args import write_outputs
    from bayesrank.influence.covariates import audit_report
    from bayesrank.report import console

    out = console()
    with audit_progress(out) as progress:
        report = audit_report(read_data(args), args.style, args.objective, args.actions, ci_aware=args.ci_aware,
                              significance=args.significance, level=args.level, target=args.target, goal=args.goal, budget=args.budget,
                              ties=args.ties, ridge=args.ridge, transform=args.style_transform,
                              standardize=args.style_standardize, ci_mode=args.ci_mode, ci_ratio=args.ci_ratio,
                              tau_threshold=args.tau_threshold, data_format=args.format,
                              exclude_invalid=args.exclude_invalid, progress=progress, cluster=args.cluster,
                              position_effect=args.position_effect)
    print_report(out, report, report.table().drop(columns=["reason"]))
    write_outputs(out, report, args, {"style_audit.png": report.plot})
    return 0
