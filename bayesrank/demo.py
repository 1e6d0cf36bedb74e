"""``bayesrank demo``: the main job on bundled real data — the reviewer's report on a leaderboard.

Fits the bundled leaderboard with every method (MLE with Fisher and sandwich intervals, bootstrap,
MAP, Laplace, NUTS), answers the default claims (top-1, top-k, adjacent pairs of the top 5) with
the frequentist and Bayesian answers and the smallest verified perturbation, prints the verdicts,
the top of the leaderboard with every method's interval width and the method-agreement table, and
writes ``out/review.html`` (+ ``.md``, ``.json``).
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
    p.add_argument("--top", type=positive_int, default=15)
    p.add_argument("--seed", type=nonnegative_int, default=0)
    p.add_argument("--out", default="out", metavar="DIR", help="folder for review.html, review.md, review.json")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the report's JSON here")
    declare_outputs(p, out=("--out", "folder"), json=("--json", "file"))
    p.set_defaults(func=run)


def run(args) -> int:
    import time
    from pathlib import Path

    import pandas as pd
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from bayesrank.cli_args import report_diagnostics
    from bayesrank.report import console, rich_table
    from bayesrank.review.pairwise_report import review_pairwise
    from bayesrank.datasets import resolve

    out = console()
    src = resolve(args.dataset)
    out.rule(f"bayesrank demo: {args.dataset} ({src.name})")
    t0 = time.perf_counter()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=out,
                  transient=True) as bar:
        task = bar.add_task("review", total=None)
        report = review_pairwise(src, kind="pairwise", claims=None, level=0.95, fragile_below=0.01, fast=False,
                                 nuts=not args.no_nuts, seed=args.seed, budget=None, format="auto",
                                 exclude_invalid=False, draws=args.draws, chains=args.chains,
                                 command=["bayesrank", "demo", "--dataset", args.dataset]
                                 + (["--no-nuts"] if args.no_nuts else []),
                                 progress=lambda label, *_: bar.update(task, description=label))
    elapsed = time.perf_counter() - t0
    data = next(s for s in report.sections if s.key == "data")
    for line in data.text:
        out.print(line)
    out.print(rich_table(report.table(), title="Claims and verdicts", floatfmt="{:.4g}"))
    out.print(f"[dim]rule: {report.rule}[/]")
    fits = report.results["fits"]
    top = report.leaderboard.head(args.top)[["player", "rank", "rank_lower", "rank_upper", "score", "lower", "upper"]]
    for name, fit in fits.items():
        if name in ("default", "map"):  # same intervals as the sandwich/Fisher default and Laplace rows
            continue
        t = fit.table().set_index("player").loc[top["player"]]
        top = top.assign(**{f"{name} width": (t["upper"] - t["lower"]).to_numpy()})
    default = fits["default"]
    out.print(rich_table(top, title=f"Top {args.top}: score and {default.interval} {default.level:.0%} interval "
                                    "(logit, sum-to-zero), simultaneous rank range, then each method's interval width"))
    methods = next(s for s in report.sections if s.key == "methods")
    agr = pd.DataFrame(methods.data["agreement"])
    out.print(rich_table(agr, title="Agreement with the default MLE fit (all players)", floatfmt="{:.4g}"))
    for line in methods.text[1:]:
        out.print(line)
    report_diagnostics(out, report.diagnostics)
    from bayesrank.outputs import write_text

    folder = Path(args.out)
    write_text(folder / "review.html", report.to_html())
    write_text(folder / "review.md", report.to_markdown())
    report.to_json(folder / "review.json")
    if args.json:
        report.to_json(args.json)
    out.print(f"[bold]wrote {folder / 'review.html'}[/] (open it in a browser), review.md and review.json "
              f"in {elapsed:.0f} s")
    return 0
