"""``bayesrank.influence.audit(data, objective, actions, ...)`` → :class:`AuditReport`.

The one entry point of the leaderboard perturbation audit (spec 00); ``bayesrank audit`` and the
review call it. Data: a :class:`~bayesrank.influence.state.BTState` (reused as is), a
:class:`~bayesrank.data.aggregate.PairCounts`, :class:`~bayesrank.data.comparisons.Comparisons`,
a DataFrame, a file path or a bundled dataset name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from bayesrank.errors import InputError
from bayesrank.influence.actions import ACTION_TYPES
from bayesrank.influence.result import AuditReport
from bayesrank.influence.state import BTState, check_ties

if TYPE_CHECKING:
    from bayesrank.data.rows import PairRows
    from bayesrank.influence.greedy import AuditResult
    from bayesrank.influence.objectives import Objective

ACTION_ALIASES = {"add": "add", "add_all_outcomes": "add", "add_pairs": "add_pairs", "add_all_pairs": "add_pairs",
                  "add_weighted": "add_weighted", "add_all_outcomes_weighted": "add_weighted",
                  "add_sampled": "add_sampled", "add_all_outcomes_sampled": "add_sampled",
                  "drop": "drop", "flip": "flip", "remove-player": "remove-player",
                  "drop-cluster": "drop-cluster", "drop_cluster": "drop-cluster"}


def parse_actions(actions: str | Sequence[str]) -> list[str]:
    """``"drop,flip"`` or a sequence → canonical action names (aliases of the candidate spaces accepted)."""
    items = [a.strip() for a in (actions.split(",") if isinstance(actions, str) else actions) if a.strip()]
    if not items:
        raise InputError("--actions is empty; give at least one of drop, flip, add, add_pairs, add_sampled, "
                         "add_weighted, remove-player")
    out = []
    for a in items:
        if a not in ACTION_ALIASES:
            raise InputError(f"unknown action {a!r}; expected one of {sorted(set(ACTION_ALIASES))}")
        out.append(ACTION_ALIASES[a])
    return list(dict.fromkeys(out))


def default_ci_mode(kind: str, ci_mode: str | None = None) -> str:
    """The CI objectives' direction for an action type: ``ci_mode`` when given, else ``reduce`` for
    adds (constructive: more data narrows the CIs) and ``inflate`` (the attack) for drop and flip."""
    return ci_mode or ("reduce" if kind.startswith("add") else "inflate")


def check_ci_aware(ci_aware: bool, obj: Objective, objective: str) -> None:
    """``--ci-aware`` only for objectives that have a significance mode (top-k and pair claims)."""
    if ci_aware and not getattr(obj, "ci_aware", False):
        raise InputError(f"--ci-aware applies to top1, topk:K and pair:A>B claims, not to {objective!r}")


SIGNIFICANCE_COVARIANCE = {
    "fisher": "inverse observed information H^-1 (Fisher)",
    "sandwich": "sandwich H^-1 B H^-1 (ties scored as half-wins: the review's and bt.fit's default interval)",
    "cluster": "cluster-robust sandwich H^-1 (sum_c S_c S_c^T) H^-1 with statsmodels' CRV1 factor (clustered data: "
               "the review's and bt.fit's default interval)",
}


def significance_covariance(obj: Objective, state: BTState) -> str:
    """The covariance behind the objective's contrast test on the unperturbed data, in words
    (CI-aware and point objectives: the Fisher ``H⁻¹``; the significance mode: the review's)."""
    kind = state.covariance_kind(obj.covariance) if getattr(obj, "significance", False) else "fisher"
    return SIGNIFICANCE_COVARIANCE[kind]


def new_pair_comparison(state: BTState, actions: Sequence[str], add_space: str | None) -> str | None:
    """How an add in the ``"pairs"`` space builds a new comparison on comparison rows (the JSON's
    ``settings.new_pair_comparison``); None when no such add is audited."""
    from bayesrank.data.features import equal_style
    from bayesrank.influence.greedy import default_add_space

    space = default_add_space(state) if add_space is None else add_space
    if space != "pairs" or not state.counts.unit or not any(a.startswith("add") for a in actions):
        return None
    parts = ["any pair (player_a < player_b in the player order), player_a listed first"
             + (" (the position effect applies)" if state.position else "")]
    if state.counts.n_features:
        x = equal_style(state.counts.features, state.counts.transform)
        parts.append("equal style: every feature's raw difference 0, i.e. model values "
                     + ", ".join(f"{f} {v:+.4g}" for f, v in zip(state.counts.features, x)))
    if state.counts.cluster is not None:
        parts.append("a cluster of its own")
    return "; ".join(parts)


def read_input(data: Any, data_format: str = "auto", exclude_invalid: bool = False, **read_options: Any) -> Any:
    """A file path, bundled dataset name or DataFrame read as
    :class:`~bayesrank.data.comparisons.Comparisons` (a folder or glob streamed to pair counts) by
    the one reader entry point :func:`bayesrank.data.readers.read_pairwise` (``read_options``:
    ``columns``, ``outcome_map``, ``judge_cols``, ``encoding``, ``path_pattern`` of
    :func:`~bayesrank.data.read_comparisons`); anything else is returned as is."""
    read_options = {k: v for k, v in read_options.items() if v is not None}
    if not isinstance(data, (str, Path, pd.DataFrame)):
        if read_options:
            raise InputError(f"columns=/outcome_map=/judge_cols= apply when reading a file or a DataFrame, "
                             f"not {type(data).__name__}")
        return data
    from bayesrank.data.readers import read_pairwise

    return read_pairwise(data, format=data_format, on_invalid="exclude" if exclude_invalid else "raise",
                         **read_options)


def load_state(data: Any, ties: str = "half", ridge: float = 0.0, min_matches: int | None = None,
               data_format: str = "auto", exclude_invalid: bool = False, *,
               style: str | Sequence[str] | Sequence[tuple[str, str]] | None = None,
               transform: str = "normalized_diff", standardize: str = "center_scale", cluster: str | None = None,
               position_effect: bool = False, **read_options: Any) -> tuple[BTState, dict[str, Any]]:
    """(fitted state, exclusions ``{total, by_reason}``) from any supported data (module docstring).

    Without ``style``, ``cluster`` and ``position_effect`` the comparisons are aggregated to pair
    counts (the zero-feature fast path); with any of them the state is fitted on the comparison rows
    of that model (:func:`bayesrank.data.aggregate.pair_rows`: ``style`` names the feature column
    pairs ``"A_COL:B_COL[,...]"``, ``cluster`` a cluster column, ``position_effect`` an intercept for
    the first-listed side). With ``ties="drop"`` tie rows are removed (and counted). Raises
    :class:`~bayesrank.errors.NoFiniteEstimateError` when the data admit no finite MLE."""
    from bayesrank.data.aggregate import PairCounts, finite_core, pair_rows
    from bayesrank.data.comparisons import Comparisons
    from bayesrank.data.features import parse_style

    check_ties(ties)
    if isinstance(data, BTState):
        if min_matches is not None:
            raise InputError("min_matches needs comparisons, not an already fitted state")
        return data, {"total": 0, "by_reason": {}}
    rows_model = bool(parse_style(style if style is not None else ())) or cluster is not None or bool(position_effect)
    if style is not None and not parse_style(style) and cluster is None and not position_effect:
        raise InputError("--style names no feature columns; expected A_COL:B_COL[,A_COL:B_COL...] "
                         "(the audit without covariates is `bayesrank audit` without --style)")
    if rows_model and min_matches is not None:
        raise InputError("--min-matches is not available with --style/--cluster/--position-effect "
                         "(the finite-MLE core is defined on pair counts)")
    data = read_input(data, data_format, exclude_invalid, **read_options)
    if isinstance(data, Comparisons):
        if rows_model:
            rows = pair_rows(data, style or (), transform, standardize, cluster=cluster, ordered=True,
                             per_comparison=True)
            return _fit_rows(rows, ties, ridge, position_effect), data.excluded.to_dict()
        if min_matches is not None:
            data = finite_core(data, min_matches=min_matches, ties=ties)
        return BTState.fit(data.aggregate(), ties=ties, ridge=ridge), data.excluded.to_dict()
    if isinstance(data, PairCounts):
        if min_matches is not None:
            raise InputError("min_matches needs comparisons (a file or Comparisons), not aggregated counts")
        if rows_model and not data.unit:
            raise InputError("the row-level audit (--style, --cluster, --position-effect) needs the individual "
                             "comparisons, not pair counts (a folder or glob is streamed to pair counts: pass one file)")
        if data.unit or data.n_features or position_effect:
            return _fit_rows(data, ties, ridge, position_effect), data.excluded.to_dict()
        return BTState.fit(data, ties=ties, ridge=ridge), {"total": 0, "by_reason": {}}
    raise InputError(f"data must be a BTState, PairRows, Comparisons, DataFrame or a path; got {type(data).__name__}")


def _fit_rows(rows: PairRows, ties: str, ridge: float, position: bool) -> BTState:
    from bayesrank.bt.mle import check_finite_mle

    if ties == "drop":
        rows = rows.without_ties()
    check_finite_mle(rows, ties, ridge)  # a player who never wins (or never loses): no finite MLE, say what to try
    return BTState.fit(rows, ties=ties, ridge=ridge, position=position)


def audit(data: Any, objective: str = "top1", actions: str | Sequence[str] = ("drop", "flip", "add"), *,
          ci_aware: bool = False,
          significance: bool = False, level: float = 0.95, target: str | None = None, goal: str | None = None, budget: int | None = None,
          ties: str = "half", ridge: float = 0.0, ci_mode: str | None = None, ci_ratio: float | None = None,
          tau_threshold: float = 0.9, robustness: bool = False, certify: int | None = None,
          min_matches: int | None = None, data_format: str = "auto", exclude_invalid: bool = False,
          seed: int = 0, progress: Callable[[int, int, str], object] | None = None, step_cap: int | None = None,
          fill_steps: bool | None = None, stop_early: bool = True, columns: Mapping[str, Any] | str | None = None,
          outcome_map: Mapping[str, str] | str | None = None, judge_cols: str | Sequence[str] | None = None,
          style: str | Sequence[str] | Sequence[tuple[str, str]] | None = None,
          transform: str = "normalized_diff", standardize: str = "center_scale", cluster: str | None = None,
          position_effect: bool = False, add_space: str | None = None) -> AuditReport:
    """Audit ``objective`` under each action type: greedy influence-ranked actions, every break
    verified by an exact cold-start refit.

    ``objective``: ``top1 | topk:K | pair:A>B | tau | ci-player:NAME | ci-trace`` (``A>B`` and
    ``order`` accepted). ``actions``: ``drop, flip, add`` (all_outcomes), ``add_pairs``
    (all_pairs), ``add_sampled`` (all_outcomes_sampled, seeded by ``seed``), ``add_weighted``
    (all_outcomes_weighted: cannot move θ̂, only the CIs), ``remove-player``.
    ``ci_aware`` (top-k and pair claims): a reversal counts only when significant at ``level`` by
    the pairwise-contrast test with the inverse observed information ``H⁻¹``. ``significance``
    (top1, topk:K, pair:A>B; or the suffix ``+sig``): the claim breaks when it is no longer
    significant at ``level`` by the review's contrast test (its default covariance: sandwich when ties
    are half-wins and present, Fisher otherwise); refused when the claim is not significant to begin
    with. ``ci_mode``
    (CI objectives): ``inflate`` (default for drop/flip) or ``reduce`` (default for adds).
    ``robustness``: also run the audits behind R_top1, R_tau and R_CI (:mod:`.robustness`).
    ``certify S`` (small data): exhaustive refits of every action set of up to S matches below each
    greedy budget. ``budget``: matches per audit (default 5% of N). ``step_cap``, ``fill_steps``,
    ``stop_early``: the greedy loop's step size cap, step filling and linear early stop
    (:func:`~bayesrank.influence.greedy.greedy_audit`; defaults there). ``columns``, ``outcome_map``,
    ``judge_cols``: how to read a file or DataFrame (:func:`bayesrank.data.read_comparisons`).
    The model: ``ties`` ``half | drop | davidson``; ``style`` (feature column pairs), ``cluster`` (a
    cluster column: cluster-robust significance and the ``drop-cluster`` action, whose budget counts
    clusters), ``position_effect`` — any of them fits the comparison rows of that model
    (:func:`load_state`). ``add_space``: ``"pairs"`` (any pair; the default on pair counts; on
    comparison rows a new comparison of equal style, the pair's first player listed first:
    ``settings["new_pair_comparison"]``) or ``"observed"`` (copies of observed comparisons with
    their covariates; the default on rows). ``remove-player``, ``robustness`` and ``certify`` work
    on every model (a unit of the certification is a comparison row, for ``drop-cluster`` a cluster).
    """
    from bayesrank.influence.baselines import certify_budget
    from bayesrank.influence.greedy import greedy_audit, state_for
    from bayesrank.influence.objectives import parse_objective
    from bayesrank.influence.players import player_removal
    from bayesrank.influence.robustness import (
        R_CI,
        R_TAU,
        R_TOP1,
        applies,
        canonical_objective,
        score_of,
    )

    acts = parse_actions(actions)
    if not 0 < level < 1:
        raise InputError(f"--level must be in (0, 1), got {level}")
    state, exclusions = load_state(data, ties, ridge, min_matches, data_format, exclude_invalid, style=style,
                                   transform=transform, standardize=standardize, cluster=cluster,
                                   position_effect=position_effect, columns=columns, outcome_map=outcome_map,
                                   judge_cols=judge_cols)
    match_actions = [a for a in acts if a in ACTION_TYPES]

    def make(kind: str) -> Objective:
        st = state_for(state, kind, add_space) if kind in ACTION_TYPES else state
        return parse_objective(objective, st, ci_aware=ci_aware, target=target, goal=goal, level=level,
                               significance=significance, tau_threshold=tau_threshold, ci_mode=default_ci_mode(kind, ci_mode),
                               ci_ratio=ci_ratio)

    main_obj = make(match_actions[0] if match_actions else "drop")  # validates objective/target first
    check_ci_aware(ci_aware, main_obj, objective)
    if certify is not None and main_obj.significance and state.covariance_kind(main_obj.covariance) != "fisher":
        raise InputError(f"--certify with --significance needs Fisher intervals, but this model's default interval is "
                         f"the {state.covariance_kind(main_obj.covariance)} covariance (half-win ties, outcome shares, "
                         "weights or --cluster): the exhaustive search checks breaks with H^-1 only (use data without "
                         "those, or --ties drop)")

    jobs: list[tuple[str | None, str, Objective]] = [(None, kind, make(kind)) for kind in match_actions]
    if robustness:
        for score in (R_TOP1, R_TAU, R_CI):
            for kind in match_actions:
                if applies(score, kind) and not any(score_of(o) == score and k == kind for _, k, o in jobs):
                    jobs.append((score, kind, canonical_objective(score, state)))
    audits: dict[str, AuditResult] = {}
    scored: list[tuple[str, AuditResult]] = []
    for n, (name, kind, obj) in enumerate(jobs):
        res = greedy_audit(state, obj, kind, budget=budget, seed=seed, step_cap=step_cap, fill_steps=fill_steps,
                           stop_early=stop_early, add_space=add_space)
        if certify is not None:
            res.certified = certify_budget(state, obj, res, certify)
        if name is None:
            audits[kind] = res
        if progress is not None:
            progress(n + 1, len(jobs), f"{obj.name} × {kind}")
        key = score_of(obj)
        if key is not None and applies(key, kind):
            scored.append((key, res))
    removal = player_removal(state) if "remove-player" in acts else None
    settings = {"actions": acts, "ci_aware": bool(ci_aware), "significance": bool(main_obj.significance),
                "level": level, "ties": state.ties,
                "ridge": state.ridge, "budget": budget, "seed": seed, "tau_threshold": tau_threshold,
                "ci_mode": ci_mode, "ci_ratio": ci_ratio, "robustness": bool(robustness), "certify": certify,
                "min_matches": min_matches, "significance_covariance": significance_covariance(main_obj, state),
                "features": dict(state.counts.transform), "position_effect": bool(state.position),
                "cluster": state.counts.cluster_name if state.counts.cluster is not None else None,
                "add_space": add_space, "new_pair_comparison": new_pair_comparison(state, acts, add_space)}
    return AuditReport(objective=objective, objective_details=main_obj.describe(), audits=audits,
                       robustness_audits=scored, state=state, settings=settings, player_removal=removal,
                       exclusions=exclusions, objective_object=main_obj)
