"""``bayesrank hja DATA --judge-col COL [--rank R|auto] [--method mle|laplace|nuts] [--json PATH]``."""

from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "hja", help="heterogeneous judge-aware ranking (consensus, judge sensitivity, residual heterogeneity)",
        description="Fit logit p_kij = γ_k(μ_i − μ_j) + U_k·(V_i· − V_j·)ᵀ to multi-judge pairwise comparisons.",
    )
    p.add_argument("data", help="comparisons file (canonical/battles/llmfao/alpaca_eval/... with a judge column), "
                                "or 'llmfao' / 'alpaca_eval' for the bundled multi-judge panels")
    p.add_argument("--judge-col", default=None, help="column naming the judge (default: format's judge column)")
    p.add_argument("--rank", default="1", help="residual rank r (integer) or 'auto' (held-out log-likelihood)")
    p.add_argument("--method", choices=("mle", "laplace", "nuts"), default="mle")
    p.add_argument("--min-per-judge", type=float, default=20.0, help="minimum comparisons per judge")
    p.add_argument("--draws", type=int, default=500, help="NUTS draws per chain")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plot", default=None, help="write the (γ, residual) judge plot to this PNG path")
    p.add_argument("--json", default=None, help="write results as JSON to this path")
    p.set_defaults(func=run)


def _load(args):
    from bayesrank.hja.datasets import load_panel

    if args.data in ("llmfao", "alpaca_eval"):
        return load_panel(args.data)
    from bayesrank.data import read_comparisons

    return read_comparisons(args.data, judge=args.judge_col)


def run(args) -> int:
    from bayesrank.errors import InputError
    from bayesrank.hja.model import HJA
    from bayesrank.report import console, rich_table, write_json

    rank = args.rank if args.rank == "auto" else None
    if rank is None:
        try:
            rank = int(args.rank)
        except ValueError:
            raise InputError(f"--rank must be an integer or 'auto', got {args.rank!r}") from None
    comps = _load(args)
    if "judge" not in comps.frame:
        raise InputError("the data have no judge column: pass --judge-col COL")
    hja = HJA(comps, rank=rank, min_per_judge=args.min_per_judge, seed=args.seed)
    kw = {"draws": args.draws, "tune": args.draws} if args.method == "nuts" else {}
    fit = hja.fit(args.method, **kw)
    out = console()
    out.print(f"HJA rank {fit.rank} ({fit.method}); converged: {fit.converged}; "
              f"{fit.counts.total:g} comparisons, {fit.counts.n_judges} judges, {fit.counts.n_items} items; "
              f"{fit.counts.excluded.report()}")
    if hja.rank_selection is not None:
        out.print(rich_table(hja.rank_selection, title="rank selection (held-out log-loss)"))
    out.print(rich_table(fit.consensus(), title="consensus μ (95% CI)"))
    out.print(rich_table(fit.judge_table(), title="judges: sensitivity γ, residual ‖U_k‖, influence flag"))
    if args.plot:
        from bayesrank.hja.diagnostics import plot_judges

        plot_judges(fit, args.plot)
        out.print(f"plot written to {args.plot}")
    if args.json:
        write_json(fit.to_dict(), args.json)
        out.print(f"JSON written to {args.json}")
    return 0
