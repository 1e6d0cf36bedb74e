"""``bayesrank audit``: leaderboard perturbation audit with verified breaks and robustness scores.

    bayesrank audit DATA [--objective top1|topk:K|pair:A>B|tau|ci-player:NAME|ci-trace]
        [--actions drop,flip,add,add_pairs,add_sampled,add_weighted,drop-cluster,remove-player]
        [--ci-aware | --significance] [--level L] [--target NAME --goal promote|demote] [--budget N]
        [--ties half|drop|davidson] [--add-space pairs|observed] [--robustness] [--certify S]
        [--style A_COL:B_COL[,...] [--style-transform T] [--style-standardize S]] [--position-effect]
        [--cluster COL] [--seed N] [--json PATH] [--plots DIR]

The audit itself is :func:`bayesrank.influence.audit` — one engine for every model: pair counts, or
the comparison rows of the model with ``--style``, ``--cluster`` or ``--position-effect`` (actions on
comparisons with their covariates; the significance mode uses the model's default interval, cluster-
robust when clustered); this module parses, prints and writes.
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

ACTIONS_HELP = (
    "comma list of: drop; flip; drop-cluster (remove every comparison of one --cluster: the budget counts clusters); add (all_outcomes: the actor picks the winner); add_pairs (all_pairs: the "
    "currently stronger player wins); add_sampled (all_outcomes_sampled: the outcome is drawn from the fitted "
    "BT probability, ties too under --ties davidson, seeded by --seed); add_weighted (all_outcomes_weighted: a fractional expected match, whose "
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
    p.add_argument("--ties", default="half", choices=("half", "drop", "davidson"),
                   help="tie model: half-wins (default), dropped, or Davidson's tie parameter (estimated)")
    p.add_argument("--add-space", default=None, choices=("pairs", "observed"),
                   help="where add actions may add a comparison: any pair (default on pair counts; on comparison rows a "
                        "comparison of equal style, the pair's first player listed first) or a copy of an observed "
                        "comparison with its covariates (default with --style/--cluster/--position-effect)")
    p.add_argument("--ridge", type=nonnegative_float, default=0.0)
    p.add_argument("--min-matches", type=positive_int, default=None,
                   help="restrict to the finite-MLE core (players with ≥ this many matches); excluded rows are reported")
    p.add_argument("--robustness", action="store_true",
                   help="also run the audits behind R_top1, R_tau and R_CI (attack direction; see docs)")
    p.add_argument("--certify", type=positive_int, default=None, metavar="S",
                   help="small data: exact refits of every action set of up to S comparisons (comparison rows; clusters "
                        "for drop-cluster): certified minimum or lower bound")
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
    from bayesrank.escape import rich_escape

    with single_blas_thread(), Progress(console=out, transient=True) as prog:
        task = prog.add_task("auditing", total=None)

        def progress(done, total, label):
            prog.update(task, completed=done, total=total, description=rich_escape(label))

        yield progress


def print_report(out, report, shown) -> None:
    """Exclusions, headline, diagnostics, the per-action table ``shown`` and each audit's first
    actions (or why it did not break) — the same for the plain and the style-controlled report."""
    from bayesrank.escape import terminal_text
    from bayesrank.report import rich_table

    if report.exclusions.get("total"):
        out.print(terminal_text(f"{report.exclusions['total']} rows excluded: {report.exclusions['by_reason']}",
                                style="yellow"))
    out.print(terminal_text(report.headline(), keep_newlines=True))  # names players: plain text
    report_diagnostics(out, report.diagnostics)
    if not len(shown):
        return
    out.print(rich_table(shown, title="actions needed to break the objective (verified by exact refit)",
                         floatfmt="{:.4g}"))
    for action, res in report.audits.items():
        if res.broken:
            out.print(rich_table(res.actions.head(10), title=f"{action}: actions (first 10 steps)", floatfmt="{:.4g}"))
        else:
            out.print(terminal_text(f"{action}: {res.reason}", keep_newlines=True))


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
    import pandas as pd

    from bayesrank.escape import terminal_text
    from bayesrank.influence.api import audit
    from bayesrank.report import console, rich_table

    out = console()
    with audit_progress(out) as progress:
        report = audit(read_data(args), args.objective, args.actions, ci_aware=args.ci_aware,
                       significance=args.significance, level=args.level,
                       target=args.target, goal=args.goal, budget=args.budget, ties=args.ties, ridge=args.ridge,
                       ci_mode=args.ci_mode, ci_ratio=args.ci_ratio, tau_threshold=args.tau_threshold,
                       robustness=args.robustness, certify=args.certify, min_matches=args.min_matches,
                       data_format=args.format, exclude_invalid=args.exclude_invalid, seed=args.seed,
                       progress=progress, style=args.style, transform=args.style_transform,
                       standardize=args.style_standardize, cluster=args.cluster,
                       position_effect=args.position_effect, add_space=args.add_space)
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
        out.print(terminal_text(f"plots: {', '.join(map(str, paths))}"))
    if args.json:
        report.to_json(args.json)
        out.print(terminal_text(f"wrote {args.json}"))
    return 0
