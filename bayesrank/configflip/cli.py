"""``bayesrank configflip`` (rank instability over a configuration grid) and ``bayesrank card`` (GRID card).

Module level: standard library, :mod:`bayesrank.cli_args` and :mod:`bayesrank.errors` only (start-up speed);
everything else is imported inside the command functions.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from bayesrank.cli_args import (
    add_data_args,
    add_output_args,
    declare_outputs,
    fraction,
    nonnegative_float,
    nonnegative_int,
    positive_int,
    report_diagnostics,
)
from bayesrank.errors import InputError

FORMATS = ("csv", "lm-eval", "lm-eval-samples", "inspect", "inspect-items", "helm")  # = readers.FORMATS
ITEM_COLUMNS = ("item", "correct")


def _split(s: str | None) -> list[str] | None:
    return [x.strip() for x in s.split(",") if x.strip()] if s else None


def _inputs(args) -> list[str]:
    from bayesrank.datasets import resolve  # files/folders as given, else bundled short names (lm-eval-2023)

    return [str(resolve(p)) for p in [args.data, *(args.more_data or [])]]


def _load_rows(paths: list[str], fmt: str = "auto", columns=None, encoding=None):
    """Concatenated reader rows. Returns (rows, per_item): per_item when every input holds per-item
    correctness (``item`` and ``correct`` columns and no ``score``). ``columns``: the grid vocabulary
    (``model``, ``item``, ``score``, ``benchmark``) naming the inputs' columns."""
    import pandas as pd

    from .readers import map_grid_columns, read_format

    frames = [map_grid_columns(read_format(p, fmt, encoding=encoding), columns) for p in paths]
    per_item = [all(c in f.columns for c in ITEM_COLUMNS) and "score" not in f.columns for f in frames]
    if any(per_item) and not all(per_item):
        from .readers import summarise_items

        frames = [summarise_items(f) if pi else f for f, pi in zip(frames, per_item)]
        return pd.concat(frames, ignore_index=True), False
    return pd.concat(frames, ignore_index=True), all(per_item)


def _grid_from_args(args, rows, per_item: bool):
    from .grid import EvalGrid
    from .readers import items_from_stderr, select

    d = select(rows, metric=args.metric, models=_split(args.models), benchmarks=_split(args.benchmarks),
               model=args.model_col, benchmark=args.benchmark_col)
    axes = _split(args.axes)
    if per_item:
        if axes is None:
            skip = {args.model_col, args.benchmark_col, *ITEM_COLUMNS, args.cluster_col}
            axes = [c for c in d.columns if c not in skip]
        return EvalGrid.from_items(d, model=args.model_col, benchmark=args.benchmark_col, axes=axes,
                                   keep=[args.cluster_col] if args.cluster_col else ())
    if args.claim:
        raise InputError("--claim needs per-item data (columns item and correct, e.g. lm-eval samples JSONL or a CSV "
                         "with one row per player, configuration and item); the input has one score per cell")
    n_col = args.n_items_col
    if n_col is None and "n_items" in d.columns and d["n_items"].notna().all():
        n_col = "n_items"
    if n_col is None and args.posterior != "none" and "stderr" in d.columns:
        d = d.assign(n_items=items_from_stderr(d, args.benchmark_col, args.score_col))
        n_col = "n_items"
    return EvalGrid.from_scores(d, model=args.model_col, benchmark=args.benchmark_col, axes=axes,
                                score=args.score_col, n_items=n_col,
                                score_range=None if args.no_score_range else (0.0, 1.0))


def _run_configflip(args) -> int:
    from bayesrank.escape import rich_escape as escape
    from bayesrank.escape import terminal_text
    from bayesrank.report import console, rich_table

    from .analysis import analyze

    if not 0 < args.level < 1:
        raise InputError(f"--level must be between 0 and 1, got {args.level}")
    rows, per_item = _load_rows(_inputs(args), args.format, args.columns, args.encoding)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grid = _grid_from_args(args, rows, per_item)
    out = console()
    out.width = max(out.width, 150)
    for w in caught:
        out.print(f"[yellow]warning:[/] {escape(w.message)}")
    post_kw = {"random_seed": args.seed}
    if args.posterior == "nuts":
        post_kw.update(draws=args.draws, tune=args.tune, chains=args.chains, cores=args.chains,
                       nuts_sampler=args.sampler)
    res = analyze(grid, args.range, tol=args.tol, anova_order=args.anova_order, execution_axes=_split(args.anova_axes),
                  posterior=None if args.posterior == "none" else args.posterior, posterior_kwargs=post_kw,
                  claims=args.claim, level=args.level, pooled_anova=args.anova_pooled,
                  paired_kwargs={"cluster": args.cluster_col, "power": args.power, "n_boot": args.n_boot,
                                 "seed": args.seed})
    out.print(f"range: [bold]{escape(res.range_spec)}[/] · {escape(repr(grid))}")
    for b, r in res.results.items():
        pairs = r.pairs_table()
        cols = ["player_a", "player_b", "n_plus", "n_minus", "n_ties", "rho_flip", "strict_order_free"]
        if r.posterior is not None:
            pairs = pairs.rename(columns={"rho_flip_mean": "post_rho_flip"})
            cols += ["post_rho_flip", "p_rho_flip_positive", "claims_reversal"]
        out.print(rich_table(pairs[cols], title=f"{b}: pairwise flips (tau_R = {r.tau['tau_R']:.3f}, "
                                                f"{r.orderings_info['n_reachable']} orderings reached of "
                                                f"{r.orderings_info['n_possible_strict']} strict)"))
        for a in r.anovas:
            out.print(f"  {escape(a.shares_line())}")
            out.print(f"    residual = {escape(a.residual_holds)}")
            if args.verbose:
                out.print(rich_table(a.table[["term", "sum_sq", "df", "share", "partial_eta_sq", "F", "p"]],
                                     title=f"{b}: Type-II ANOVA {a.name}"))
        if r.posterior is not None:
            report_diagnostics(out, r.posterior.diagnostics)
    if res.pooled_anova is not None:
        a = res.pooled_anova
        out.print(rich_table(a.table[["term", "sum_sq", "df", "share", "partial_eta_sq", "F", "p"]],
                             title=f"pooled ANOVA ({' x '.join(a.factors)} + {', '.join(a.blocks)}); "
                                   f"residual = {a.residual_holds}"))
    if res.paired is not None:
        out.print(rich_table(res.paired.claims(), title=f"claims: paired per-item tests (Holm across configurations, "
                                                        f"level {args.level})"))
        t = res.paired.table()
        out.print(rich_table(t[["claim", "benchmark", "config", "n_items", "diff", "n10", "n01", "test", "p_value",
                                "p_holm", "mde", "items_needed"]], title="paired tests per configuration"))
    if res.excluded.total:
        out.print(f"[yellow]excluded:[/] {escape(res.excluded.report())}")
    if len(res.missing_cells):
        out.print(f"[yellow]missing cells (not imputed):[/] {len(res.missing_cells)}")
    report_diagnostics(out, res.diagnostics)
    if args.json:
        res.to_json(args.json)
        out.print(terminal_text(f"wrote {args.json}"))
    if args.plots:
        _plots(res, args.plots)
        out.print(terminal_text(f"wrote figures to {args.plots}"))
    return 0


def _plots(res, folder: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayesrank.outputs import save_figure

    folder = Path(folder)

    def save(fig, name):
        try:
            save_figure(fig, folder / name, dpi=120)
        finally:
            plt.close(fig)

    for b in res.results:
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in b)
        for kind, name in (("flips", "flips"), ("orderings", "orderings")):
            save(res.plot(benchmark=b, kind=kind), f"{name}_{safe}.png")
    if any(r.anova is not None for r in res.results.values()):
        save(res.plot(kind="anova"), "anova_shares.png")
    if res.paired is not None:
        save(res.paired.plot(), "paired_tests.png")


def _run_card(args) -> int:
    from bayesrank.outputs import check_file
    from bayesrank.report import console

    check_file(Path(args.out).with_suffix(".md"), "--out (its Markdown twin)")

    from .card import build_card, write_card
    from .grid import EvalGrid
    from .ranges import apply_range
    from .readers import select, summarise_items

    rows, per_item = _load_rows(_inputs(args), args.format, args.columns, args.encoding)
    if per_item:
        rows = summarise_items(rows)
    rows = select(rows, metric=args.metric)
    axes = _split(args.axes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = EvalGrid.from_scores(rows, axes=axes, score_range=None if args.no_score_range else (0.0, 1.0))
        grid = apply_range(grid, args.range)
    keep = grid.data[["model", "benchmark", *axes]].astype(str)
    rows = rows.merge(keep, on=["model", "benchmark", *axes], how="inner") if args.range else rows
    card = build_card(rows, axes, grid=grid, range_spec=args.range or "full", title=args.title)
    path = write_card(card, args.out)
    msg = f"GRID card: {len(card['entries'])} scores, {len(card['claims'])} pairwise claims -> {path} " \
          f"(+ {path.with_suffix('.md')})"
    if args.json:
        write_card(card, args.json, markdown=False)
        msg += f"; JSON {args.json}"
    from bayesrank.escape import terminal_text

    console().print(terminal_text(msg))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "configflip", help="configuration-conditional rank instability (rho_flip, tau_R, orderings, ANOVA, claims)",
        description="Pairwise contradiction rate rho_flip = min(N+, N-)/|C_b|, Property-1 test, tau_R, reachable "
                    "orderings and the spec's Type-II ANOVA attribution per benchmark over a grid of configurations; "
                    "optionally posterior flip probabilities and paired per-item tests of 'A>B' claims.")
    add_data_args(p, FORMATS, exclude_invalid=False, vocabulary=("grid",))
    p.add_argument("more_data", nargs="*", metavar="MORE", help="further inputs (concatenated)")
    p.add_argument("--benchmark-col", default="benchmark")
    p.add_argument("--model-col", default="model", help="column naming the ranked player (default: model)")
    p.add_argument("--score-col", default="score")
    p.add_argument("--n-items-col", default=None, help="column with the number of items per cell")
    p.add_argument("--axes", default=None, help="comma-separated configuration axis columns (default: all others)")
    p.add_argument("--metric", default=None, help="keep rows with this metric (alternatives with '|')")
    p.add_argument("--models", default=None, help="comma-separated subset of players")
    p.add_argument("--benchmarks", default=None, help="comma-separated subset of benchmarks")
    p.add_argument("--range", default=None, help="filter, e.g. 'template!=cot,decoding=greedy', or a named range "
                                               "('full', 'core' = spec 03's template!=cot,decoding=greedy)")
    p.add_argument("--tol", type=nonnegative_float, default=0.0, help="score differences within tol count as ties")
    p.add_argument("--anova-axes", default=None,
                   help="execution axes of the ANOVA (default: axes named template/decoding/few-shot; the others, "
                        "e.g. scoring and harness, get separate analyses)")
    p.add_argument("--anova-order", type=positive_int, default=None, help="highest interaction order (default: all that "
                                                                 "leave residual df)")
    p.add_argument("--anova-pooled", action="store_true", help="also pool all benchmarks into one ANOVA with "
                                                               "benchmark as an additive block")
    p.add_argument("--posterior", choices=["none", "mle", "nuts"], default="none",
                   help="flip probabilities: no-pooling twin (mle) or hierarchical PyMC model (nuts)")
    p.add_argument("--draws", type=positive_int, default=1000, help="posterior draws per chain (default 1000)")
    p.add_argument("--tune", type=nonnegative_int, default=1000, help="tuning steps per chain (default 1000)")
    p.add_argument("--chains", type=positive_int, default=2)
    p.add_argument("--sampler", choices=["auto", "nutpie", "pymc"], default="auto",
                   help="NUTS implementation (auto: nutpie when installed, else PyMC)")
    p.add_argument("--claim", action="append", default=None, metavar="A>B",
                   help="paired per-item tests of 'A beats B' in every configuration (repeatable; needs per-item data)")
    p.add_argument("--cluster-col", default=None, help="per-item column grouping items (cluster-robust tests)")
    p.add_argument("--power", type=fraction, default=0.8, help="power for the minimum detectable effect (default 0.8)")
    p.add_argument("--n-boot", type=positive_int, default=2000, help="paired bootstrap resamples (default 2000)")
    p.add_argument("--no-score-range", action="store_true", help="scores are not fractions in [0, 1]")
    add_output_args(p)
    p.add_argument("-v", "--verbose", action="store_true", help="print the ANOVA tables")
    p.set_defaults(func=_run_configflip)

    c = subparsers.add_parser("card", help="build a GRID disclosure card (JSON/YAML + Markdown) from harness outputs")
    add_data_args(c, FORMATS, exclude_invalid=False, vocabulary=("grid",))
    c.add_argument("more_data", nargs="*", metavar="MORE", help="further inputs (concatenated)")
    c.add_argument("--axes", required=True, help="configuration axes, e.g. num_fewshot,metric")
    c.add_argument("--metric", default=None, help="keep rows with this metric (alternatives with '|')")
    c.add_argument("--range", default=None)
    c.add_argument("--title", default="GRID card")
    c.add_argument("--no-score-range", action="store_true")
    c.add_argument("--out", default="out/grid_card.json", help=".json or .yaml; the .md rendering is written beside")
    add_output_args(c, level=False, seed=False, plots=False)
    declare_outputs(c, out=("--out", "file"))
    c.set_defaults(func=_run_card)
