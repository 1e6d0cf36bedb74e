"""One objective audited with several action types on the style-controlled BT:
:func:`audit_report` → :class:`StyleAuditReport` (``bayesrank.protocol.Result``, schema
``style_audit_report``), the entry point of ``bayesrank audit DATA --style A_COL:B_COL``.

The model is ``logit P(a beats b) = θ_a − θ_b + βᵀd_n`` fitted on the individual battles
(:func:`bayesrank.data.aggregate.pair_rows`, one row per comparison); each action type (``drop``, ``flip``, ``add`` — ``add``
copies an *observed* battle with its covariates, since a new battle's style features are not
known) gets one :func:`~bayesrank.influence.covariates.style_audit`: greedy 1sN-ranked actions,
exact refits, every break verified by a cold-start refit. ``report.audits[action]`` (or
``report[action]``) is that :class:`~bayesrank.influence.covariates.StyleAudit`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import pandas as pd

from bayesrank.errors import InputError
from bayesrank.influence.covariates.audit import StyleAudit, style_audit
from bayesrank.influence.covariates.objectives import style_objective
from bayesrank.influence.covariates.state import ACTIONS, StyleState
from bayesrank.protocol import Diagnostics, Result

MODEL = "style-controlled BT"
TABLE_COLUMNS = ["action", "broken", "verified", "budget", "fraction", "budget_limit", "n_actions", "n_refits", "seconds",
                 "final_top", "reason"]


@dataclass
class StyleAuditReport(Result):
    """Audit of one objective on the style-controlled BT under several action types (module docstring)."""

    schema: ClassVar[str] = "style_audit_report"

    objective: str
    audits: dict[str, StyleAudit]
    state: StyleState = field(repr=False)
    settings: dict = field(default_factory=dict)
    exclusions: dict = field(default_factory=dict)

    def __getitem__(self, action: str) -> StyleAudit:
        return self.audits[action]

    @property
    def ranked_players(self) -> list[str]:
        """The players by style-adjusted score θ̂, best first."""
        return [str(p) for p in self.state.players[self.state.ranking()]]

    @property
    def style_coefficients(self) -> pd.Series:
        """The position effect α̂ (when modelled) and β̂ by feature: logit per unit of each model
        feature (per SD of the feature difference when standardised, the default)."""
        st = self.state
        return pd.Series(st.params[st.n_players:], index=st.covariate_names, name="coef")

    @property
    def diagnostics(self) -> Diagnostics:
        """The reference fit's row-level Newton and each audit's last (cold-start verification) refit."""
        fit = Diagnostics.optimizer("row-level Newton MLE (style-controlled)", self.state.converged,
                                    self.state.gradient_norm)
        return Diagnostics.combine("style-controlled audit",
                                   {"reference fit": fit, **{f"{a} audit": r.diagnostics for a, r in self.audits.items()}})

    # ------------------------------------------------------------------ protocol views
    def table(self) -> pd.DataFrame:
        """One row per action: broken, verified, budget (battles), fraction of the battles, reason."""
        rows = [{"action": a, "broken": r.broken, "verified": r.verified, "budget": r.budget, "fraction": r.fraction,
                 "budget_limit": r.budget_limit, "n_actions": len(r.actions), "n_refits": r.n_refits,
                 "seconds": r.seconds, "final_top": ", ".join(r.final_top), "reason": r.reason}
                for a, r in self.audits.items()]
        df = pd.DataFrame(rows, columns=TABLE_COLUMNS)
        df["budget"] = df["budget"].astype(float)  # battles; fractional with fractional row frequencies
        df["fraction"] = df["fraction"].astype(float)
        return df

    def headline(self) -> str:
        beta = ", ".join(f"{f} {b:+.3f}" for f, b in self.style_coefficients.items())
        ci = self.settings.get("ci_aware")
        first, second = self.ranked_players[:2]
        return (f"{self.state.n_players} players, {self.state.data.n_comparisons:g} battles; {MODEL} (β̂: {beta}); "
                f"leader {first!r}, runner-up {second!r} (style-adjusted); objective {self.objective}"
                + (f" (CI-aware: a reversal counts when significant at level {self.settings.get('level')}, "
                   "pairwise contrast with H^-1)" if ci else "")
                + (f" (loss of significance at level {self.settings.get('level')}, "
                   f"{self.settings.get('significance_covariance')})" if self.settings.get("significance") else ""))

    def summary(self) -> str:
        lines = [self.headline(), self.diagnostics.line(), "",
                 "battles needed to break the objective (verified by a cold-start refit):",
                 self.table().drop(columns=["reason"]).to_string(index=False, float_format=lambda v: f"{v:.4g}")]
        lines += [f"{a}: {r.reason}" for a, r in self.audits.items()]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            **self._envelope(), "objective": self.objective, "model": MODEL, "n_players": self.state.n_players,
            "n_comparisons": self.state.data.n_comparisons, "leader": self.ranked_players[0],
            "runner_up": self.ranked_players[1],
            "style_coefficients": [{"feature": f, "coef": float(b)} for f, b in self.style_coefficients.items()],
            "settings": self.settings, "exclusions": self.exclusions,
            "n_excluded": int(self.exclusions.get("total", 0)),
            "excluded_by_reason": dict(self.exclusions.get("by_reason", {})),
            "audits": {a: r.to_dict() for a, r in self.audits.items()},
        }

    def plot(self, ax=None, **kwargs):
        """The objective's driver vs battles acted on (1sN prediction and exact refit), one panel per
        action (into ``ax``: the first action only)."""
        import matplotlib.pyplot as plt

        if ax is not None:
            return next(iter(self.audits.values())).plot(ax=ax)
        fig, axes = plt.subplots(1, len(self.audits), figsize=(5 * len(self.audits), 3.8), squeeze=False)
        for (action, res), a in zip(self.audits.items(), axes[0]):
            res.plot(ax=a)
            a.set_title(f"{res.objective} × {action}" + (f": broken at {res.budget}" if res.broken else ": not broken"))
        fig.tight_layout()
        return fig


def style_actions(actions) -> list[str]:
    """``"drop,flip"`` or a sequence → the style audit's action types (aliases as the plain audit)."""
    from bayesrank.influence.api import parse_actions

    acts = parse_actions(actions)
    other = [a for a in acts if a not in ACTIONS]
    if other:
        raise InputError(f"--actions {','.join(other)} is not available with --style: the style-controlled audit "
                         f"acts on observed battles with their covariates ({', '.join(ACTIONS)})")
    return acts


def load_style_state(data, style=None, ties: str = "half", ridge: float = 0.0,
                     transform: str = "normalized_diff", standardize: str = "center_scale",
                     data_format: str = "auto", exclude_invalid: bool = False, cluster: str | None = None,
                     position_effect: bool = False, **read_options) -> StyleState:
    """The fitted row-level BT of ``data``: a :class:`StyleState` (reused as is), comparison rows
    (:class:`~bayesrank.data.rows.PairRows` with ``unit=True``), or comparisons / a DataFrame / a path
    / a bundled name with ``style`` naming the feature column pairs (``"A_COL:B_COL[,...]"``),
    ``cluster`` a cluster column and ``position_effect`` an intercept for the first-listed side
    (``read_options``: the readers' column vocabulary). With ``ties="drop"`` tie rows are removed
    (and counted). Raises
    :class:`~bayesrank.errors.NoFiniteEstimateError` when the win graph admits no finite MLE."""
    from bayesrank.bt.mle import check_finite_mle
    from bayesrank.data.aggregate import pair_rows
    from bayesrank.data.features import parse_style
    from bayesrank.data.rows import PairRows
    from bayesrank.influence.api import read_input

    if isinstance(data, StyleState):
        return data
    if ties not in ("half", "drop"):
        raise InputError(f"the row-level audit supports ties in ('half', 'drop'), got {ties!r} (Davidson ties: "
                         "with the one audit engine)")
    if not isinstance(data, PairRows):
        if not parse_style(style if style is not None else ()) and cluster is None and not position_effect:
            raise InputError("--style names no feature columns; expected A_COL:B_COL[,A_COL:B_COL...] "
                             "(the audit without covariates is `bayesrank audit` without --style)")
        comps = read_input(data, data_format, exclude_invalid, **read_options)
        if isinstance(comps, PairRows):
            raise InputError("the row-level audit (--style, --cluster, --position-effect) needs the individual "
                             "comparisons, not pair counts (a folder or glob is streamed to pair counts: pass one file)")
        data = pair_rows(comps, style or (), transform, standardize, cluster=cluster, ordered=True,
                         per_comparison=True)
    elif not data.unit:
        raise InputError("the row-level audit acts on comparison rows (one row per comparison); got aggregated counts")
    if ties == "drop":
        data = data.without_ties()
    check_finite_mle(data, ties, ridge)  # a player who never wins (or never loses): no finite MLE, say what to try
    return StyleState.fit(data, ridge=ridge, position=position_effect, ties=ties)


def audit_report(data, style=None, objective: str = "top1", actions=("drop", "flip", "add"), *,
                 ci_aware: bool = False, significance: bool = False, level: float = 0.95,
                 target: str | None = None, goal: str | None = None,
                 budget: int | None = None, ties: str = "half", ridge: float = 0.0,
                 transform: str = "normalized_diff", standardize: str = "center_scale", ci_mode: str | None = None,
                 ci_ratio: float | None = None, tau_threshold: float = 0.9, data_format: str = "auto",
                 exclude_invalid: bool = False, progress=None, cluster: str | None = None,
                 position_effect: bool = False, columns=None, outcome_map=None,
                 judge_cols=None) -> StyleAuditReport:
    """Audit ``objective`` (``top1 | topk:K | pair:A>B | tau | ci-player:NAME | ci-trace``) of the
    style-controlled BT with each action type in ``actions`` (``drop``, ``flip``, ``add``), every
    break verified by a cold-start refit. Options as :func:`bayesrank.influence.audit` (``ci_mode``
    defaults to ``inflate`` for drop/flip and ``reduce`` for add); data as :func:`load_style_state`.
    ``significance``: top-k and pair claims break when no longer significant (the default interval:
    sandwich with fractional outcomes, cluster-robust with ``cluster``). ``cluster``: a column of cluster
    labels (the significance mode's covariance); ``position_effect``: the model's intercept for the
    first-listed side. ``budget``: battles per audit (default 5% of the battles). ``progress(done, total, label)`` is
    called after every greedy step (battles acted on, budget)."""
    from bayesrank.influence.api import (
        SIGNIFICANCE_COVARIANCE,
        check_ci_aware,
        default_ci_mode,
    )

    acts = style_actions(actions)
    if not 0 < level < 1:
        raise InputError(f"--level must be in (0, 1), got {level}")
    state = load_style_state(data, style, ties, ridge, transform, standardize, data_format, exclude_invalid,
                             cluster=cluster, position_effect=position_effect, columns=columns,
                             outcome_map=outcome_map, judge_cols=judge_cols)

    def make(kind):
        return style_objective(objective, state, ci_aware=ci_aware, significance=significance, level=level,
                               target=target, goal=goal, tau_threshold=tau_threshold, ci_mode=default_ci_mode(kind, ci_mode), ci_ratio=ci_ratio)

    jobs = [(kind, make(kind)) for kind in acts]  # validates the objective before any audit runs
    check_ci_aware(ci_aware, jobs[0][1], objective)
    audits = {}
    for kind, obj in jobs:
        step = None if progress is None else (lambda used, total, value, label=f"{obj.name} × {kind}":
                                              progress(used, total, label))
        audits[kind] = style_audit(state, kind, budget=budget, objective=obj, model=MODEL, progress=step)
    d = state.data
    settings = {"actions": acts, "features": d.transform, "ties": state.ties,
                "position_effect": state.position, "cluster": d.cluster_name,
                "ridge": state.ridge, "ci_aware": bool(ci_aware), "level": level, "target": target, "goal": goal,
                "budget": budget, "tau_threshold": tau_threshold, "ci_mode": ci_mode, "ci_ratio": ci_ratio,
                "significance": bool(significance),
                "significance_covariance": SIGNIFICANCE_COVARIANCE[state.covariance_kind(getattr(jobs[0][1], "covariance", "fisher"))]}
    return StyleAuditReport(objective=objective, audits=audits, state=state, settings=settings,
                            exclusions=d.excluded.to_dict())

