"""``bayesrank demo``: the main job on bundled real data — the reviewer's report on a leaderboard.

Fits the bundled leaderboard with every method (MLE with Fisher and sandwich intervals, bootstrap,
MAP, Laplace, NUTS), answers the default claims (top-1, top-k, adjacent pairs of the top 5 below
the leader) with the frequentist and Bayesian answers and the smallest verified perturbation,
prints a short summary — each claim's verdict with its one-line reason, the top of the leaderboard
(logits, or Elo points with ``--scale elo``, as ``review --scale``) — and writes the full report to
``out/review.html`` (+ ``.md``, ``.json``).
"""

from __future__ import annotations

from bayesrank.cli_args import declare_outputs, nonnegative_int, positive_int

DATASETS = ("arena", "llmfao", "nba")


def register(sub) -> None:
    p = sub.add_parser("demo", help="the reviewer's report on a bundled leaderboard (every fit method; writes out/review.html)")
    p.add_argument("--dataset", default="arena", choices=DATASETS)
    p.add_argument("--no-nuts", action="store_true", help="skip posterior sampling (the Bayesian answers use Laplace)")
    p.add_argument("--draws", type=positive_int, default=500, help="NUTS draws (and tuning steps) per chain")
    p.add_argument("--chains", type=positive_int, default=4)
    p.add_argument("--top", type=positive_int, default=10, help="rows of the leaderboard printed (the page has all)")
    p.add_argument("--seed", type=nonnegative_int, default=0)
    p.add_argument("--scale", default="logit", choices=("logit", "elo"),
                   help="scores, contrasts and intervals as logits (default) or Elo points (× 400/ln 10, no anchor), "
                        "as review --scale; verdicts do not change")
    p.add_argument("--out", default="out", metavar="DIR", help="folder for review.html, review.md, review.json")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the report's JSON here")
    declare_outputs(p, out=("--out", "folder"), json=("--json", "file"))
    p.set_defaults(func=run)


def claims_summary(report):
    """The verdicts as a reader takes them in first: per claim its verdict, what it says about whom and
    the one-line reason. Two columns that wrap (never cut off) at any terminal width."""
    from rich.table import Table
    from rich.text import Text

    from bayesrank.escape import terminal_text
    from bayesrank.review.render import claim_label

    colour = {"supported": "green", "fragile": "yellow", "unsupported": "red"}
    t = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1, 1, 0))
    t.add_column("verdict", no_wrap=True, width=11)
    t.add_column("claim", overflow="fold", ratio=1)
    for c in report.claims:
        body = terminal_text(claim_label(c), style="bold")
        body.append("\n" + terminal_text(c.reason).plain, style="default")
        t.add_row(Text(c.verdict, style=f"bold {colour.get(c.verdict, 'magenta')}"), body)
    return t


def top_table(report, top: int):
    """The top of the leaderboard: score with its interval and the simultaneous rank set."""
    from rich.table import Table

    from bayesrank.escape import terminal_text
    from bayesrank.review.numbers import estimate_interval

    fits = report.results["fits"]
    default = fits["default"]
    lb = report.leaderboard.head(top)  # on the review's display scale
    scale = next((s.data.get("scale") for s in report.sections if s.key == "leaderboard"), None) or "logit"
    unit = "logit scale" if scale == "logit" else "Elo points (400/ln 10 × logit, no anchor)"
    t = Table(title=f"Top {len(lb)}: score [{default.level:.0%} {default.interval} interval], {unit}, and the "
                    "simultaneous rank set", title_justify="left")
    t.add_column("rank", justify="right", no_wrap=True)
    t.add_column("player", overflow="fold")
    t.add_column("score [interval]", no_wrap=True)
    t.add_column("rank set", justify="right", no_wrap=True)
    for r in lb.itertuples(index=False):
        lo, hi = int(r.rank_lower), int(r.rank_upper)
        t.add_row(str(int(r.rank)), terminal_text(r.player), estimate_interval(r.score, r.lower, r.upper),
                  f"{lo}–{hi}" if lo != hi else str(lo))
    return t


def run(args) -> int:
    import math
    import time
    from pathlib import Path

    import pandas as pd
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    from bayesrank.cli_args import report_diagnostics
    from bayesrank.datasets import resolve
    from bayesrank.escape import rich_escape
    from bayesrank.report import console
    from bayesrank.review.api import review

    out = console()
    src = resolve(args.dataset)
    out.rule(f"bayesrank demo: {rich_escape(args.dataset)} ({rich_escape(src.name)})")
    out.print(Text("Fitting the leaderboard with every method (MLE with Fisher and sandwich intervals, bootstrap"
                   + (", MAP, Laplace and NUTS" if not args.no_nuts else ", Laplace") + ") and auditing the default "
                   "claims with verified refits.", style="dim"))
    t0 = time.perf_counter()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=out,
                  transient=True) as bar:
        task = bar.add_task("review", total=None)
        report = review(src, kind="pairwise", level=0.95, fragile_below=0.01, fast=False, nuts=not args.no_nuts,
                        seed=args.seed, draws=args.draws, chains=args.chains, scale=args.scale,
                        command=["bayesrank", "demo", "--dataset", args.dataset]
                        + (["--no-nuts"] if args.no_nuts else []) + (["--scale", "elo"] if args.scale == "elo" else []),
                        progress=lambda label, *_: bar.update(task, description=rich_escape(label)))
    elapsed = time.perf_counter() - t0
    data = next(s for s in report.sections if s.key == "data")
    out.print(Text(data.text[0]))
    out.print()
    out.print(Text("Claims and verdicts", style="bold underline"))
    out.print(claims_summary(report))
    out.print(top_table(report, args.top))
    methods = next(s for s in report.sections if s.key == "methods")
    agr = pd.DataFrame(methods.data["agreement"])
    low = float(agr["kendall_tau"].min())
    tau = math.floor(low * 1000 + 1e-9) / 1000  # a lower bound, not rounded up to 1 (τ-b of equal orders: 1 − 1 ulp)
    bound = "= 1" if low > 1 - 1e-12 else f"≥ {tau:.3f}"
    out.print(Text(f"Fit methods compared ({', '.join(agr['method'])}): Kendall τ {bound} between each one's "
                   "order and the MLE's (the page has the table).", style="dim"))
    report_diagnostics(out, report.diagnostics)
    from bayesrank.outputs import write_text

    folder = Path(args.out)
    write_text(folder / "review.html", report.to_html())
    write_text(folder / "review.md", report.to_markdown())
    report.to_json(folder / "review.json")
    if args.json:
        report.to_json(args.json)
    out.print(Text.assemble(("The report: ", "bold"), (str((folder / "review.html").resolve()), "bold cyan"),
                            f" — open it in a browser (or print it); {folder / 'review.md'} and "
                            f"{folder / 'review.json'} hold the same answers. Reviewed in {elapsed:.0f} s."))
    return 0
