"""``bayesrank audit``: leaderboard perturbation audit with verified breaks and robustness scores.

    bayesrank audit DATA --objective top1|topk:K|tau|ci-player:NAME|ci-trace
        [--actions drop,flip,add,add_pairs,add_weighted,remove-player] [--ci-aware]
        [--target NAME --goal promote|demote] [--budget N] [--robustness] [--certify S] [--json PATH]

``--certify S`` (small data) refits every action set of up to S matches: the greedy budget is an
upper bound on the smallest breaking set, the exhaustive search a certified minimum or lower bound.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from bayesrank.datasets import resolve
from bayesrank.errors import InputError

ACTION_ALIASES = {"add": "add", "add_all_outcomes": "add", "add_pairs": "add_pairs", "add_all_pairs": "add_pairs",
                  "add_weighted": "add_weighted", "add_all_outcomes_weighted": "add_weighted",
                  "drop": "drop", "flip": "flip", "remove-player": "remove-player"}


def register(subparsers) -> None:
    p = subparsers.add_parser("audit", help="leaderboard perturbation audit (influence, verified greedy breaks, R scores)")
    p.add_argument("data", help="comparison file or a bundled dataset name (e.g. arena/chatbotarena_20240814.json)")
    p.add_argument("--format", default="auto")
    p.add_argument("--objective", default="top1", help="top1 | topk:K | tau | ci-player:NAME | ci-trace")
    p.add_argument("--actions", default="drop,flip,add", help="comma list of drop, flip, add (all_outcomes), "
                   "add_pairs (all_pairs), add_weighted (all_outcomes_weighted), remove-player")
    p.add_argument("--ci-aware", action="store_true", help="count a rank change only when significant (95%% CI)")
    p.add_argument("--target", default=None, help="player to promote/demote (top-k objectives)")
    p.add_argument("--goal", default=None, choices=("promote", "demote"))
    p.add_argument("--budget", type=int, default=None, help="max actions (matches) per audit (default 5%% of N)")
    p.add_argument("--ci-mode", default=None, choices=("inflate", "reduce"),
                   help="CI objectives: inflate (attack, default for drop/flip) or reduce (constructive, default for add)")
    p.add_argument("--ci-ratio", type=float, default=None, help="variance ratio that counts as reached (1.5 / 0.5)")
    p.add_argument("--tau-threshold", type=float, default=0.9)
    p.add_argument("--ties", default="half", choices=("half", "drop"))
    p.add_argument("--ridge", type=float, default=0.0)
    p.add_argument("--min-matches", type=int, default=None,
                   help="restrict to the finite-MLE core (players with ≥ this many matches); excluded rows are reported")
    p.add_argument("--robustness", action="store_true", help="also run top1, tau and ci-trace audits for R scores")
    p.add_argument("--certify", type=int, default=None, metavar="S",
                   help="small data: exact refits of every action set of up to S matches (certified minimum or lower bound)")
    p.add_argument("--json", default=None, help="write the audit as JSON here")
    p.add_argument("--plots", default=None, help="directory for the plots (influence distribution, budget curves)")
    p.set_defaults(func=run)


def parse_actions(text: str) -> list[str]:
    items = [a.strip() for a in text.split(",") if a.strip()]
    if not items:
        raise InputError("--actions is empty; give at least one of drop, flip, add, add_pairs, add_weighted, remove-player")
    out = []
    for a in items:
        if a not in ACTION_ALIASES:
            raise InputError(f"unknown action {a!r}; expected one of {sorted(set(ACTION_ALIASES))}")
        out.append(ACTION_ALIASES[a])
    return list(dict.fromkeys(out))


def run_audit(counts, objective: str, actions: list[str], ci_aware=False, target=None, goal=None, budget=None,
              ties="half", ridge=0.0, ci_mode=None, ci_ratio=None, tau_threshold=0.9, robustness=False,
              progress=None, certify: int | None = None) -> dict:
    """Run the requested audits on ``counts``; returns the JSON-ready report (and keeps results)."""
    from bayesrank.influence.audit import greedy_audit, robustness_scores
    from bayesrank.influence.objectives import parse_objective
    from bayesrank.influence.players import degree_relation, player_removal
    from bayesrank.influence.state import BTState

    state = BTState.fit(counts, ties=ties, ridge=ridge)
    match_actions = [a for a in actions if a != "remove-player"]

    def make(spec, kind):
        mode = ci_mode or ("reduce" if kind.startswith("add") else "inflate")
        return parse_objective(spec, state, ci_aware=ci_aware and spec.startswith("top"), target=target, goal=goal,
                               tau_threshold=tau_threshold, ci_mode=mode, ci_ratio=ci_ratio)

    if match_actions:
        make(objective, match_actions[0])  # validate objective/target before any work
    results, jobs = [], [(objective, a) for a in match_actions]
    if robustness:
        for spec in ("top1", "tau", "ci-trace"):
            for a in match_actions:
                if (spec, a) not in jobs and not (spec == "ci-trace" and a.startswith("add")):
                    jobs.append((spec, a))
    for n, (spec, kind) in enumerate(jobs):
        obj = make(spec, kind)
        res = greedy_audit(state, obj, kind, budget=budget)
        results.append((spec, res, obj))
        if progress is not None:
            progress(n + 1, len(jobs), f"{spec} × {kind}")
    order = state.ranking()
    report = {
        "n_players": state.n_players,
        "n_comparisons": state.n_matches,
        "ties": ties,
        "ridge": ridge,
        "leader": str(state.players[order[0]]),
        "runner_up": str(state.players[order[1]]),
        "objective": objective,
        "audits": {},
        "other_audits": [],
    }
    for spec, res, obj in results:
        d = res.to_dict()
        d["objective_details"] = obj.describe()
        if spec == objective:
            if certify is not None:
                d["certified"] = certify_budget(state, obj, res, certify)
            report["audits"][res.action] = d
        else:
            report["other_audits"].append(d)
    own = [r for s, r, _ in results if s == objective]
    report["robustness"] = robustness_scores([r for _, r, _ in results])
    if "remove-player" in actions:
        table = player_removal(state)
        best = table.sort_values("displaced", ascending=False).iloc[0]
        report["audits"]["remove-player"] = {
            "table": table.to_dict(orient="records"),
            "largest_displacement": {"player": best["player"], "displaced": best["displaced"],
                                     "top10_changes": best["top10_changes"]},
            "max_top10_changes": float(table["top10_changes"].max()),
            **degree_relation(table),
        }
    report["_results"] = own
    report["_state"] = state
    return report


def certify_budget(state, objective, result, max_size: int) -> dict:
    """Exhaustive check below the greedy budget: ``{"minimum": m | None, "lower_bound": l, ...}``.

    If the greedy broke the objective with B matches, sets of up to min(max_size, B − 1) are
    refitted: none breaks → the greedy budget is the certified minimum when B − 1 ≤ max_size.
    """
    from bayesrank.influence.baselines import exhaustive_minimum

    if max_size < 1:
        raise InputError(f"--certify needs a size ≥ 1, got {max_size}")
    greedy = result.budget if (result.broken and result.verified) else None
    size = max_size if greedy is None else min(max_size, greedy - 1)
    if size < 1:  # one action broke it: nothing smaller exists
        return {"max_size": max_size, "minimum": greedy, "lower_bound": greedy, "n_sets": 0}
    e = exhaustive_minimum(state, objective, result.action, size)
    if e["budget"] is not None:
        return {"max_size": max_size, "minimum": e["budget"], "lower_bound": e["budget"], "n_sets": e["n_sets"]}
    minimum = greedy if greedy is not None and greedy == size + 1 else None
    return {"max_size": max_size, "minimum": minimum, "lower_bound": size + 1, "n_sets": e["n_sets"],
            "n_no_finite_mle": e["n_no_finite_mle"]}


def summary_frame(report: dict) -> pd.DataFrame:
    rows = []
    for action, d in report["audits"].items():
        if action == "remove-player":
            continue
        rows.append({"action": action, "space": d.get("candidate_space") or "", "broken": d["broken"],
                     "verified": d["verified"], "budget": d["budget"] if d["budget"] is not None else np.nan,
                     "fraction": d["fraction"] if d["fraction"] is not None else np.nan,
                     "steps": len(d["actions"]), "seconds": d["seconds"], "result": d["reason"],
                     **({"certified_min": d["certified"]["minimum"], "lower_bound": d["certified"]["lower_bound"]}
                        if "certified" in d else {})})
    return pd.DataFrame(rows)


def single_blas_thread():
    """Small dense algebra (K ≤ a few hundred) is much faster on one BLAS thread on shared machines."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1)


def run(args) -> int:
    from bayesrank.data import finite_core, read_comparisons
    from bayesrank.report import console, rich_table, to_jsonable, write_json

    out = console()
    actions = parse_actions(args.actions)
    comps = read_comparisons(resolve(args.data), format=args.format)
    if args.min_matches is not None:
        comps = finite_core(comps, min_matches=args.min_matches, ties=args.ties)
    if comps.excluded.total:
        out.print(f"[yellow]{comps.excluded.report()}[/]")
    counts = comps.aggregate()
    from rich.progress import Progress

    with single_blas_thread(), Progress(console=out, transient=True) as prog:
        task = prog.add_task("auditing", total=None)

        def progress(done, total, label):
            prog.update(task, completed=done, total=total, description=label)

        report = run_audit(counts, args.objective, actions, args.ci_aware, args.target, args.goal, args.budget,
                           args.ties, args.ridge, args.ci_mode, args.ci_ratio, args.tau_threshold, args.robustness,
                           progress, args.certify)
    out.print(f"{report['n_players']} players, {report['n_comparisons']:.0f} comparisons; leader "
              f"{report['leader']!r}, runner-up {report['runner_up']!r}; objective {args.objective}"
              + (" (CI-aware)" if args.ci_aware else ""))
    frame = summary_frame(report)
    if len(frame):
        out.print(rich_table(frame, title="actions needed to break the objective (verified by exact refit)", floatfmt="{:.4g}"))
        for action, d in report["audits"].items():
            if action != "remove-player" and d["broken"]:
                acts = pd.DataFrame(d["actions"])
                out.print(rich_table(acts.head(10), title=f"{action}: actions (first 10 steps)", floatfmt="{:.4g}"))
    if "remove-player" in report["audits"]:
        rp = report["audits"]["remove-player"]
        tb = pd.DataFrame(rp["table"]).sort_values("displaced", ascending=False).head(10)
        out.print(rich_table(tb[["player", "rank", "degree", "displaced", "top10_changes", "displaced_newton",
                                 "max_abs_error_newton"]], title="player removal (exact refit vs group Newton)", floatfmt="{:.4g}"))
        out.print(f"Spearman(degree, displacement) = {rp['spearman_degree_vs_displaced']:.3f}")
    if report["robustness"]:
        out.print("robustness scores (fraction of comparisons; None = not broken within budget): "
                  + str(to_jsonable(report["robustness"])))
    if args.plots:
        from bayesrank.influence.plots import save_audit_plots

        paths = save_audit_plots(report, args.plots)
        out.print(f"plots: {', '.join(map(str, paths))}")
    if args.json:
        write_json({k: v for k, v in report.items() if not k.startswith("_")}, args.json)
        out.print(f"wrote {args.json}")
    return 0
