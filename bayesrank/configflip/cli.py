"""``bayesrank configflip`` (rank instability over a configuration grid) and ``bayesrank card`` (GRID card)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd


def _split(s: str | None) -> list[str] | None:
    return [x.strip() for x in s.split(",") if x.strip()] if s else None


def _load_rows(paths: list[str]) -> pd.DataFrame:
    """Concatenated reader rows; per-item files (samples JSONL) are summarised to one row per cell."""
    from .readers import read_any, summarise_items

    frames = []
    for p in paths:
        rows = read_any(p)
        if "correct" in rows.columns and "score" not in rows.columns:
            rows = summarise_items(rows)
        frames.append(rows)
    return pd.concat(frames, ignore_index=True)


def _grid_from_args(args, rows: pd.DataFrame):
    from .grid import EvalGrid
    from .readers import items_from_stderr, select

    d = select(rows, metric=args.metric, models=_split(args.models), benchmarks=_split(args.benchmarks),
               model=args.model_col, benchmark=args.benchmark_col)
    n_col = args.n_items_col
    if n_col is None and "n_items" in d.columns and d["n_items"].notna().all():
        n_col = "n_items"
    if n_col is None and args.posterior != "none" and "stderr" in d.columns:
        d = d.assign(n_items=items_from_stderr(d, args.benchmark_col, args.score_col))
        n_col = "n_items"
    return EvalGrid.from_scores(d, model=args.model_col, benchmark=args.benchmark_col, axes=_split(args.axes),
                                score=args.score_col, n_items=n_col,
                                score_range=None if args.no_score_range else (0.0, 1.0))


def _run_configflip(args) -> int:
    from bayesrank.report import console, rich_table, write_json

    from .analysis import analyze
    from .anova import anova_type2

    rows = _load_rows(args.data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grid = _grid_from_args(args, rows)
    out = console()
    out.width = max(out.width, 150)
    for w in caught:
        out.print(f"[yellow]warning:[/] {w.message}")
    res = analyze(grid, args.range, tol=args.tol, anova_order=args.anova_order,
                  posterior=None if args.posterior == "none" else args.posterior,
                  posterior_kwargs={"draws": args.draws, "tune": args.draws, "chains": 2, "random_seed": args.seed,
                                    "nuts_sampler": args.sampler, "target_accept": 0.95 if args.sampler == "nutpie" else 0.9}
                  if args.posterior == "nuts" else {"random_seed": args.seed})
    payload = res.to_dict()
    if args.anova_pooled:
        from .ranges import apply_range

        g = apply_range(grid, args.range)
        d = g.data[g.data["benchmark"].isin(list(res.results))]
        factors = ["model"] + [a for a in g.axes if d[a].nunique() > 1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            payload["anova_pooled"] = anova_type2(d, "score", factors, max_order=args.anova_order,
                                                  blocks=("benchmark",))
    out.print(f"range: [bold]{res.range_spec}[/] · {grid}")
    for b, r in res.results.items():
        pairs = r.pairs[["model_a", "model_b", "n_plus", "n_minus", "n_ties", "rho_flip", "strict_order_free"]]
        if r.posterior is not None:
            ps = r.posterior.pair_summary()
            pairs = pairs.merge(ps[["model_a", "model_b", "rho_flip_mean", "claims_reversal"]],
                                on=["model_a", "model_b"]).rename(columns={"rho_flip_mean": "post_rho_flip"})
        out.print(rich_table(pairs, title=f"{b}: pairwise flips (tau_R = {r.tau['tau_R']:.3f}, "
                                          f"{r.orderings_info['n_reachable']} orderings reached of "
                                          f"{r.orderings_info['n_possible_strict']} strict)"))
        if args.verbose and r.anova is not None:
            out.print(rich_table(r.anova[["term", "sum_sq", "df", "share", "partial_eta_sq", "F", "p"]],
                                 title=f"{b}: Type-II ANOVA"))
    if res.excluded.total:
        out.print(f"[yellow]excluded:[/] {res.excluded.report()}")
    if len(res.missing_cells):
        out.print(f"[yellow]missing cells (not imputed):[/] {len(res.missing_cells)}")
    if args.json:
        write_json(payload, args.json)
        out.print(f"wrote {args.json}")
    if args.plots:
        _plots(res, args.plots, grid)
        out.print(f"wrote figures to {args.plots}")
    return 0


def _plots(res, folder: str, grid) -> None:
    import matplotlib.pyplot as plt

    from . import plots
    from .ranges import apply_range

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    g = apply_range(grid, res.range_spec if res.range_spec != "full" else None)
    for b, r in res.results.items():
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in b)
        ax = plots.flip_heatmap(g, b, r.posterior.p_greater() if r.posterior is not None else None)
        ax.figure.savefig(folder / f"flips_{safe}.png", dpi=120)
        plt.close(ax.figure)
        ax = plots.ordering_frequencies(r.orderings, title=f"{b}: orderings")
        ax.figure.savefig(folder / f"orderings_{safe}.png", dpi=120)
        plt.close(ax.figure)
    tables = {b: r.anova for b, r in res.results.items() if r.anova is not None}
    if tables:
        ax = plots.anova_shares(tables)
        ax.figure.savefig(folder / "anova_shares.png", dpi=120)
        plt.close(ax.figure)


def _run_card(args) -> int:
    from bayesrank.report import console

    from .card import build_card, write_card
    from .grid import EvalGrid
    from .ranges import apply_range

    from .readers import select

    rows = select(_load_rows(args.inputs), metric=args.metric)
    axes = _split(args.axes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = EvalGrid.from_scores(rows, axes=axes, score_range=None if args.no_score_range else (0.0, 1.0))
        grid = apply_range(grid, args.range)
    keep = grid.data[["model", "benchmark", *axes]].astype(str)
    rows = rows.merge(keep, on=["model", "benchmark", *axes], how="inner") if args.range else rows
    card = build_card(rows, axes, grid=grid, range_spec=args.range or "full", title=args.title)
    path = write_card(card, args.out)
    console().print(f"GRID card: {len(card['entries'])} scores, {len(card['claims'])} pairwise claims -> {path} "
                    f"(+ {path.with_suffix('.md')})")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "configflip", help="configuration-conditional rank instability (rho_flip, tau_R, orderings, ANOVA)",
        description="Pairwise contradiction rate rho_flip = min(N+, N-)/|C_b|, Property-1 test, tau_R, reachable "
                    "orderings and Type-II ANOVA attribution per benchmark over a grid of configurations.")
    p.add_argument("data", nargs="+", help="CSV (tidy grid), lm-eval results JSON / directory, Inspect JSON log, "
                                           "HELM run directory")
    p.add_argument("--benchmark-col", default="benchmark")
    p.add_argument("--model-col", default="model")
    p.add_argument("--score-col", default="score")
    p.add_argument("--n-items-col", default=None, help="column with the number of items per cell")
    p.add_argument("--axes", default=None, help="comma-separated configuration axis columns (default: all others)")
    p.add_argument("--metric", default=None, help="keep rows with this metric (alternatives with '|')")
    p.add_argument("--models", default=None, help="comma-separated subset of models")
    p.add_argument("--benchmarks", default=None, help="comma-separated subset of benchmarks")
    p.add_argument("--range", default=None, help="filter, e.g. 'template!=cot,decoding=greedy', or a named range "
                                               "('full', 'core' = spec 03's template!=cot,decoding=greedy)")
    p.add_argument("--tol", type=float, default=0.0, help="score differences within tol count as ties")
    p.add_argument("--anova-order", type=int, default=None, help="highest interaction order (default: all that "
                                                                 "leave residual df)")
    p.add_argument("--anova-pooled", action="store_true", help="also pool all benchmarks into one ANOVA with "
                                                               "benchmark as an additive block")
    p.add_argument("--posterior", choices=["none", "mle", "nuts"], default="none",
                   help="flip probabilities: no-pooling twin (mle) or hierarchical PyMC model (nuts)")
    p.add_argument("--draws", type=int, default=500)
    p.add_argument("--sampler", choices=["pymc", "nutpie"], default="pymc",
                   help="NUTS implementation for --posterior nuts (nutpie: optional extra, faster on large item grids)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-score-range", action="store_true", help="scores are not fractions in [0, 1]")
    p.add_argument("--json", default=None, help="write the full result as JSON here")
    p.add_argument("--plots", default=None, help="folder for the flip heatmaps, ordering and ANOVA figures")
    p.add_argument("-v", "--verbose", action="store_true", help="print the ANOVA tables")
    p.set_defaults(func=_run_configflip)

    c = subparsers.add_parser("card", help="build a GRID disclosure card (JSON/YAML + Markdown) from harness outputs")
    c.add_argument("inputs", nargs="+", help="lm-eval results JSON/dirs, Inspect JSON logs, HELM run dirs, CSV")
    c.add_argument("--axes", required=True, help="configuration axes, e.g. num_fewshot,metric")
    c.add_argument("--metric", default=None, help="keep rows with this metric (alternatives with '|')")
    c.add_argument("--range", default=None)
    c.add_argument("--title", default="GRID card")
    c.add_argument("--no-score-range", action="store_true")
    c.add_argument("--out", default="out/grid_card.json", help=".json or .yaml; the .md rendering is written beside")
    c.set_defaults(func=_run_card)
