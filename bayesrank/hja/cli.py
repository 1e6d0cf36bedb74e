"""``bayesrank hja DATA [--judge-col COL] [--rank R|auto] [--method mle|laplace|nuts] [--json PATH] [--plots DIR]``.

Module level: standard library, ``bayesrank.cli_args`` and ``bayesrank.errors`` only (start-up
speed); the readers, the estimator and the console are imported inside :func:`run`.
"""

from __future__ import annotations

from bayesrank.cli_args import (
    add_data_args,
    add_output_args,
    data_options,
    nonnegative_float,
    positive_int,
    report_diagnostics,
    write_outputs,
)
from bayesrank.data.formats import FORMATS
from bayesrank.errors import InputError

#: bundled multi-judge panels (``bayesrank.hja.datasets.load_panel``)
PANELS = ("llmfao", "alpaca_eval")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "hja", help="heterogeneous judge-aware ranking (consensus, judge sensitivity, residual heterogeneity)",
        description="Fit logit p_kij = γ_k(μ_i − μ_j) + U_k·(V_i· − V_j·)ᵀ to multi-judge pairwise comparisons. "
                    "DATA may be 'llmfao' or 'alpaca_eval' (bundled panels).",
    )
    add_data_args(p, FORMATS)
    p.add_argument("--judge-col", default=None, help="column naming the judge (default: the format's judge column)")
    p.add_argument("--rank", default="1", help="residual rank r (integer) or 'auto' (held-out log-likelihood)")
    p.add_argument("--method", choices=("mle", "laplace", "nuts"), default="mle")
    p.add_argument("--information", choices=("fisher", "observed"), default="fisher",
                   help="--method mle: expected (fisher, default) or observed information for the Wald intervals")
    p.add_argument("--min-per-judge", type=nonnegative_float, default=20.0, help="minimum comparisons per judge")
    p.add_argument("--draws", type=positive_int, default=1000, help="NUTS draws per chain (and as many tuning steps)")
    p.add_argument("--chains", type=positive_int, default=2, help="NUTS chains")
    p.add_argument("--sampler", choices=("nutpie", "pymc"), default=None,
                   help="NUTS implementation (default: nutpie when installed)")
    p.add_argument("--no-check", action="store_true",
                   help="--method nuts: skip the posterior predictive check per judge and PSIS-LOO")
    add_output_args(p)
    p.set_defaults(func=run)


def parse_rank(text: str):
    if text == "auto":
        return "auto"
    try:
        r = int(text)
    except ValueError:
        raise InputError(f"--rank must be an integer or 'auto', got {text!r}") from None
    if r < 0:
        raise InputError(f"--rank must be >= 0, got {r}")
    return r


def _load(args):
    if args.data in PANELS:
        from bayesrank.hja.datasets import load_panel

        return load_panel(args.data)
    from bayesrank.data.readers import read_comparisons
    from bayesrank.datasets import resolve

    return read_comparisons(resolve(args.data), format=args.format, judge=args.judge_col,
                            on_invalid="exclude" if args.exclude_invalid else "raise", **data_options(args))


def run(args) -> int:
    from bayesrank.hja.model import HJA
    from bayesrank.report import console, rich_table

    if not 0 < args.level < 1:
        raise InputError(f"--level must be strictly between 0 and 1, got {args.level}")
    rank = parse_rank(args.rank)
    comps = _load(args)
    if "judge" not in comps.frame:
        raise InputError("the data have no judge column: pass --judge-col COL (or --columns judge=COL, or "
                         "--judge-cols COL,COL,... for one outcome column per judge)")
    from bayesrank.cli_args import print_reading

    print_reading(console(), comps, excluded=False)  # the header line below counts the exclusions
    hja = HJA(comps, rank=rank, min_per_judge=args.min_per_judge, level=args.level, seed=args.seed)
    if args.method == "nuts":
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console(),
                      transient=True) as bar:
            task = bar.add_task(f"HJA NUTS: compiling the model, then {args.chains} chains × {args.draws:,} draws "
                                f"after {args.draws:,} tuning steps", total=None)
            fit = hja.fit("nuts", draws=args.draws, tune=args.draws, chains=args.chains, sampler=args.sampler)
            if not args.no_check:
                from bayesrank.hja.checks import attach_model_check

                bar.update(task, description="HJA NUTS: posterior predictive check per judge and PSIS-LOO")
                attach_model_check(fit, seed=args.seed)
    elif args.method == "mle":
        fit = hja.fit("mle", information=args.information)
    else:
        fit = hja.fit(args.method)
    out = console()
    from bayesrank.escape import terminal_text

    out.print(terminal_text(f"HJA rank {fit.rank} ({fit.method}; {fit.interval_kind} intervals, level {fit.level:g}); "
              f"{fit.counts.total:g} comparisons, {fit.counts.n_judges} judges, {fit.counts.n_items} players; "
              f"{fit.counts.excluded.report()}"))
    report_diagnostics(out, fit.diagnostics)
    if hja.rank_selection is not None:
        out.print(rich_table(hja.rank_selection, title="rank selection (held-out log-loss per comparison)"))
    if hja.rank_fallback:
        out.print(terminal_text(hja.rank_fallback, style="yellow"))
    out.print(rich_table(fit.table(), title="consensus μ (rank_ci: pairwise-contrast rule; rank_ub: LMArena)"))
    out.print(rich_table(fit.judge_table(), title="judges: sensitivity γ, residual ‖U_k‖, influence flag"))
    if fit.model_check:
        import pandas as pd

        out.print(rich_table(pd.DataFrame(fit.model_check["ppc"]),
                             title="posterior predictive check per judge (Pearson X²; p = P(X²_rep ≥ X²_obs))"))
        loo = fit.model_check["loo"]
        out.print(f"PSIS-LOO over (judge, pair) cells: elpd {loo['elpd_loo']:.1f} (se {loo['se']:.1f}), "
                  f"p_loo {loo['p_loo']:.1f}, max Pareto k {loo['pareto_k_max']:.2f} "
                  f"({loo['n_pareto_k_above_0_7']} cells above 0.7: PSIS unreliable there)")
    write_outputs(out, fit, args, {"hja_judges.png": fit.plot})
    return 0
