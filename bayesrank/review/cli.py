"""``bayesrank review``: every claim, frequentist and Bayesian side by side, the smallest verified
perturbation that overturns it, and a verdict — as HTML, Markdown and JSON.

    bayesrank review DATA [--kind pairwise|judges|grid|confidence|items|table] [--judge-col COL] [--claim CLAIM ...]
        [--html PATH] [--json PATH] [--md PATH] [--fail-on fragile|unsupported] [--fragile-below FRACTION]
        [--fast] [--seed N] [--level L] [--scale logit|elo] [--twopl]

Exit code 1 when ``--fail-on`` is met: ``unsupported`` (some claim is unsupported or not converged)
or ``fragile`` (some claim is not supported: fragile, not searched, unsupported, not converged or
undetermined by the table).
"""

from __future__ import annotations

import sys

from bayesrank.cli_args import (
    add_data_args,
    data_options,
    declare_outputs,
    fraction,
    nonnegative_float,
    nonnegative_int,
    positive_int,
)
from bayesrank.errors import EXIT_FAIL_ON, EXIT_OK, InputError

KINDS = ("pairwise", "judges", "grid", "confidence", "items", "table")
# --fail-on: the verdicts that meet it (a claim without a verdict, "not converged", fails both gates)
FAILING = {"unsupported": {"unsupported", "not converged"},
           "fragile": {"fragile", "not searched", "unsupported", "not converged", "undetermined by the table"}}


def register(sub) -> None:
    p = sub.add_parser("review", help="the reviewer's report: claims -> verdicts with evidence (HTML, Markdown, JSON)",
                       description=__doc__.split("\n\n")[0])
    add_data_args(p, vocabulary=("pairwise", "grid", "confidence"))
    p.add_argument("--kind", default=None, choices=KINDS, help="kind of data (default: detected from the columns)")
    p.add_argument("--judge-col", default=None, help="judge column (judges kind)")
    p.add_argument("--claim", action="append", default=None, metavar="CLAIM",
                   help="top1 | topk:K | A>B | order (pairwise, judges); A>B[@BENCHMARK] (grid); top1, topk:K, A>B, each "
                        "optionally @BENCHMARK (table); verbal-better (confidence). Repeat for several; default: top1, topk:3 (topk:5 with ≥ 20 players) and "
                        "each adjacent pair of the top 5 below the leader")
    p.add_argument("--level", type=fraction, default=0.95, help="level of every interval and test (default 0.95)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="random seed (integer >= 0; default 0)")
    p.add_argument("--fragile-below", type=fraction, default=0.01, metavar="FRACTION",
                   help="a supported claim overturned by fewer than this fraction of its evidence (the effective "
                        "comparisons informing it) is fragile (0.01)")
    p.add_argument("--budget", type=positive_int, default=None,
                   help="audit budget per claim and action in comparisons (default: max(5%%, --fragile-below) of the "
                        "claim's evidence); below --fragile-below of it a claim without a witness is 'not searched'")
    p.add_argument("--fast", action="store_true", help="Laplace approximation instead of NUTS")
    p.add_argument("--scale", default="logit", choices=("logit", "elo"),
                   help="pairwise and judge data: scores, contrasts and intervals as logits (default) or Elo points "
                        "(× 400/ln 10, as fit --scale elo, no anchor: the leaderboard stays centred at 0); tests, "
                        "probabilities, verdicts and budgets do not change")
    p.add_argument("--all-ranks", action="store_true",
                   help="the page's leaderboard shows every rank column (default: the simultaneous rank set; all "
                        "are in the JSON)")
    g = p.add_argument_group("fit controls")
    g.add_argument("--ridge", type=nonnegative_float, default=0.0,
                   help="L2 penalty on the scores of the frequentist fits and audits (>= 0; > 0 gives finite scores "
                        "when a player never won or never lost)")
    g.add_argument("--draws", type=positive_int, default=None, help="NUTS draws per chain (default 1000)")
    g.add_argument("--tune", type=nonnegative_int, default=None, help="NUTS tuning steps per chain (default 500, or --draws if fewer; per-item results: 300)")
    g.add_argument("--chains", type=positive_int, default=None, help="NUTS chains (default 4)")
    g.add_argument("--twopl", action="store_true",
                   help="per-item results (posterior checked against the full 2PL model on a small benchmark; calibration by "
                        "one opt-in SBC run; docs/items.md): the 2PL "
                        "item-response model, logit P = a_i(θ_m − b_i) with an item "
                        "discrimination a_i (log a_i ~ N(0, 0.5²)), for the Bayesian answers (default: Rasch); "
                        "for small benchmarks (cost grows with the distinct response patterns)")
    g.add_argument("--rank", default=None, metavar="R|auto",
                   help="judges data: residual rank of the HJA consensus (an integer >= 0 or 'auto'; default auto: "
                        "the rank held-out fit chooses, falling back where it is not identified)")
    p.add_argument("--html", default=None, metavar="PATH", help="write the self-contained HTML report")
    p.add_argument("--md", default=None, metavar="PATH", help="write the Markdown twin")
    p.add_argument("--json", default=None, metavar="PATH", help="write the JSON (schema-validated)")
    declare_outputs(p, html=("--html", "file"), md=("--md", "file"), json=("--json", "file"))
    from bayesrank.cli_args import add_model_args

    add_model_args(p, "also answer every claim under style control (per-battle feature columns of each side, "
                      "e.g. len_a:len_b); pairwise battles only")
    # --cluster (add_model_args) also serves per-item results: the column grouping items (task family,
    # repository, passage): cluster-robust tests, whole clusters as perturbation units
    g = p.add_argument_group("published results tables (--kind table)")
    g.add_argument("--interval-level", type=fraction, default=None, metavar="L",
                   help="level of the intervals a published score table prints as lower/upper (default 0.95): "
                        "se = (upper - lower) / (2 z)")
    g = p.add_argument_group("grid data")
    g.add_argument("--axes", default=None, help="configuration axis columns (default: the known axes that vary)")
    g.add_argument("--metric", default=None, help="keep rows of this metric (alternatives with '|', e.g. 'acc|acc_norm')")
    g.add_argument("--models", default=None, help="comma-separated players to keep")
    g.add_argument("--benchmarks", default=None, help="comma-separated benchmarks to keep")
    p.add_argument("--fail-on", default=None, choices=("fragile", "unsupported"),
                   help="exit with code 1 if a claim is unsupported or not converged (fragile: any verdict but "
                        "supported)")
    p.set_defaults(func=run)


def claims_table(report):
    """The verdicts as the HTML page shows them (cells formatted by the renderer)."""
    from rich.table import Table
    from rich.text import Text

    from bayesrank.escape import terminal_text
    from bayesrank.review.render import (
        BAYESIAN_HEAD,
        FREQUENTIST_HEAD,
        OVERTURN_HEAD,
        SIGNIFICANCE_HEAD,
        _has_settle,
        bayesian_cell,
        claim_actions,
        claim_label,
        frequentist_parts,
        perturbation_lines,
        settle_cell,
    )

    colour = {"supported": "green", "fragile": "yellow", "unsupported": "red", "not searched": "blue",
              "not converged": "magenta", "undetermined by the table": "cyan"}
    actions = claim_actions(report)
    significance = any(c.significance_perturbation for c in report.claims)
    settle = _has_settle(report)
    # the claim column keeps a label on one line up to a third of the terminal (more columns share the rest)
    import shutil

    longest = max((len(terminal_text(claim_label(c)).plain) for c in report.claims), default=10)
    label_width = min(longest, max(20, shutil.get_terminal_size((140, 40)).columns // 3))
    t = Table(title="claims and verdicts", show_lines=True)
    for col in ("claim", "verdict", FREQUENTIST_HEAD, BAYESIAN_HEAD, OVERTURN_HEAD,
                *([SIGNIFICANCE_HEAD] if significance else []), *(["to settle it (80% power)"] if settle else [])):
        t.add_column(Text(col), overflow="fold", min_width=label_width if col == "claim" else None)
    for c in report.claims:  # names and intervals are plain text, never rich markup; controls shown
        groups = [c.perturbation] + ([c.significance_perturbation] if significance else [])
        t.add_row(terminal_text(claim_label(c)), Text(c.verdict, style=f"bold {colour.get(c.verdict, 'magenta')}"),
                  terminal_text("\n".join(x for x in frequentist_parts(c.frequentist) if x), keep_newlines=True),
                  terminal_text(bayesian_cell(c.bayesian)),
                  *(terminal_text("\n".join(perturbation_lines(g, actions)), keep_newlines=True) for g in groups),
                  *([terminal_text(settle_cell(c, short=True))] if settle else []))
    return t


def _split(text):
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def _fit_options(args) -> dict:
    """--ridge, --draws, --tune, --chains, --rank, --twopl as review() options (only those given)."""
    opts = {"draws": args.draws, "tune": args.tune, "chains": args.chains, "twopl": args.twopl or None}
    if args.ridge:
        opts["ridge"] = args.ridge
    if args.rank is not None:
        from bayesrank.hja.cli import parse_rank

        opts["rank"] = parse_rank(args.rank)
    return {k: v for k, v in opts.items() if v is not None}


def _grid_options(args) -> dict:
    opts = {"axes": _split(args.axes), "metric": args.metric, "models": _split(args.models),
            "benchmarks": _split(args.benchmarks), "style": args.style, "cluster": args.cluster,
            "all_ranks": args.all_ranks or None, "scale": None if args.scale == "logit" else args.scale, "position_effect": args.position_effect or None,
            "interval_level": args.interval_level}
    if args.style:  # the style model's feature options (bayesrank fit --style's)
        opts.update(style_transform=args.style_transform, style_standardize=args.style_standardize)
    elif (args.style_transform, args.style_standardize) != ("normalized_diff", "center_scale"):
        raise InputError("--style-transform / --style-standardize need --style")
    return {k: v for k, v in opts.items() if v is not None}


def run(args) -> int:
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from bayesrank.cli_args import report_diagnostics
    from bayesrank.escape import rich_escape, terminal_text
    from bayesrank.report import console
    from bayesrank.review.api import review

    out = console()
    import logging

    logging.getLogger("pymc").setLevel(logging.WARNING)  # the progress line says what is running
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=out,
                  transient=True) as bar:
        task = bar.add_task("review", total=None)
        report = review(args.data, kind=args.kind, claims=args.claim, judge_col=args.judge_col, level=args.level,
                        fragile_below=args.fragile_below, fast=args.fast, seed=args.seed, budget=args.budget,
                        format=args.format, exclude_invalid=args.exclude_invalid,
                        command=["bayesrank", *sys.argv[1:]], **data_options(args), **_fit_options(args),
                        progress=lambda label, *_: bar.update(task, description=rich_escape(label)),
                        **_grid_options(args))
    out.rule(rich_escape(report.title))
    table = report.table()
    out.print(claims_table(report))
    out.print(terminal_text(f"rule: {report.rule}", style="dim"))
    if report.joint:
        out.print(terminal_text(f"jointly: {report.joint['text']}"))
    for n in report.notes:
        out.print(terminal_text(n, style="yellow"))
    report_diagnostics(out, report.diagnostics)
    from bayesrank.outputs import write_text

    for flag, writer in (("html", report.to_html), ("md", report.to_markdown)):
        target = getattr(args, flag)
        if target:
            write_text(target, writer())
            out.print(terminal_text(f"wrote {target}"))
    if args.json:
        report.to_json(args.json)
        out.print(terminal_text(f"wrote {args.json}"))
    verdicts = set(table["verdict"])
    failing = FAILING.get(args.fail_on, set())
    if verdicts & failing:
        out.print(f"[bold red]--fail-on {args.fail_on}:[/] {sum(table['verdict'].isin(failing))} claim(s) met it")
        return EXIT_FAIL_ON
    return EXIT_OK
