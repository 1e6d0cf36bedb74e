"""``bayesrank items``: the leaderboard of per-item benchmark results — mean scores with intervals,
simultaneous rank sets and tie groups, every pair's paired test (Holm / BH over the pairs).

    bayesrank items DATA [--format F] [--cluster COL] [--metric M] [--benchmark B] [--level L] [--seed N]
        [--json PATH] [--plots DIR] [--exclude-invalid]

(The claims' three answers — paired test, item-response posterior, exact re-grade / drop minima —
are ``bayesrank review DATA``.)
"""

from __future__ import annotations

from bayesrank.cli_args import add_data_args, add_output_args

FORMATS = ("long", "wide", "inspect", "lm-eval", "helm", "eee", "swe-bench")  # = bayesrank.items.readers.FORMATS


def register(sub) -> None:
    p = sub.add_parser("items", help="leaderboard of per-item benchmark results: intervals, rank sets, tie groups, "
                                     "paired tests", description=__doc__.split("\n\n")[0])
    add_data_args(p, formats=FORMATS, vocabulary=("grid",))
    p.add_argument("--cluster", default=None, metavar="COL", help="column grouping items (cluster-robust tests)")
    p.add_argument("--metric", default=None, help="scorer/metric of harness logs holding several")
    p.add_argument("--benchmark", default=None, help="task of harness logs holding several")
    add_output_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from bayesrank.cli_args import report_diagnostics, write_outputs
    from bayesrank.datasets import resolve
    from bayesrank.errors import InputError
    from bayesrank.items.readers import read_items
    from bayesrank.items.result import analyze_items
    from bayesrank.report import console

    if not 0 < args.level < 1:
        raise InputError(f"--level must be in (0, 1), got {args.level}")
    out = console()
    from bayesrank.data.columns import GRID_KEYS, parse_columns

    if args.encoding:
        raise InputError("--encoding: per-item results are read by the items readers (UTF-8 / UTF-16 with BOM / "
                         "Windows-1252 detected); pass a UTF-8 copy of the file")
    names = parse_columns(args.columns, keys=GRID_KEYS)  # --columns model=,item=,score=
    if "benchmark" in names:
        raise InputError("--columns benchmark=COL: per-item results hold one benchmark; choose a harness task "
                         "with --benchmark NAME")
    data, notes = read_items(resolve(args.data), format=args.format, cluster=args.cluster, metric=args.metric,
                             benchmark=args.benchmark, on_invalid="exclude" if args.exclude_invalid else "raise",
                             **{k: names[k] for k in ("model", "item", "score") if k in names})
    res = analyze_items(data, level=args.level, seed=args.seed, notes=notes)
    from bayesrank.escape import terminal_text

    out.print(terminal_text(res.summary(), keep_newlines=True))  # names models and items: plain text
    report_diagnostics(out, res.diagnostics)
    write_outputs(out, res, args, {"items_leaderboard.png": lambda: res.plot()})
    return 0
