"""Greedy, influence-ranked audits verified by exact refits, and robustness scores.

One audit = one objective × one action type. Each step scores every candidate cell by the
one-step-Newton change of the objective per match, takes the best cell (for τ, whose
driver is a smooth surrogate: among the ``lookahead`` best cells, the one the 1sN predicts to
break the hard criterion with the fewest matches),
chooses how many of its matches ``m`` to act on (the smallest ``m`` the 1sN predicts to break the
objective, else the cell's capacity, capped at ``step_cap`` matches; when the best cell is exhausted without a
predicted break, the step is filled with the next-best cells of other pairs that are nearly
as effective per match, up to ``step_cap``), applies them and **refits exactly** (batched
Newton, warm start). Scores are recomputed from the refitted state after every accepted step.
A cell whose action leaves no finite MLE is excluded from then on.
When the refit shows the property broken, the last step is trimmed to its shortest prefix that
still breaks it (bisection on exact refits) and the final table is refitted again from a cold start;
``verified`` says that the cold refit confirms the break. A budget that runs out is reported as
``broken = False`` ("not broken within budget"), never as a break.

Every exact check (after a step, in the trimming bisection, at the cold-start verification) is the
objective's :meth:`~bayesrank.influence.objectives.Objective.broken_at` on the perturbed data's
exact state, so an objective whose criterion needs more than θ̂ and ``H⁻¹`` (the significance mode
of the margins: the review's sandwich covariance when ties are half-wins) is checked exactly as its
own rule says; predicted breaks (the step size) use ``broken_predicted``.

Robustness scores built from these audits: :mod:`bayesrank.influence.robustness`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd

from bayesrank.errors import InputError, NoFiniteEstimateError
from bayesrank.influence.actions import (
    ACTION_TYPES,
    ADD_SPACE_CHOICES,
    ADD_SPACES,
    Candidates,
    OutcomeStream,
    apply_batch,
    candidates,
)
from bayesrank.influence.objectives import Objective, SmoothTau, parse_objective
from bayesrank.influence.state import OUTCOMES, BTState, complete_pairs, with_pair_templates

WEIGHTED_ADD_NOTE = ("expected-outcome adds (all_outcomes_weighted) leave θ̂ unchanged — the score of the "
                     "model's expected outcome (σ(d̂) − p; Davidson's three probabilities likewise) is zero at "
                     "the MLE — so no point-estimate property can break")


@dataclass
class AuditResult:
    """One greedy audit: objective × action type. ``budget`` = comparisons (``unit``; clusters for
    ``drop-cluster``) acted on when the property broke (``None``: not broken within
    ``budget_limit``), ``verified`` = a cold-start exact refit of the final data confirms the break;
    ``actions`` one row per accepted step (player_a, player_b, outcome acted on, count[, to]; comparison
    rows also row, y (share won by player_a), y_new and the features; clusters: the cluster);
    ``curve`` the objective vs budget (1sN predicted before each step, exact refit after)."""

    objective: str
    action: str
    broken: bool
    verified: bool
    budget: int | float | None
    n_matches: float
    budget_limit: int
    actions: pd.DataFrame
    curve: pd.DataFrame
    initial_value: float
    final_value: float
    reason: str
    seconds: float
    n_refits: int
    final_theta: np.ndarray | None = field(default=None, repr=False)
    objective_details: dict = field(default_factory=dict)
    certified: dict | None = None
    seed: int | None = None
    candidate_space_name: str | None = None
    model: str = "BT"
    reference_top: list = field(default_factory=list)
    final_top: list = field(default_factory=list)
    unit: str = "comparisons"

    @property
    def n_comparisons(self) -> float:
        return self.n_matches

    @property
    def fraction(self) -> float | None:
        return None if self.budget is None else self.budget / self.n_matches

    @property
    def candidate_space(self) -> str | None:
        return ADD_SPACES.get(self.action)

    def summary(self) -> str:
        head = (f"{self.model}: {self.objective} audit with {self.action} actions — "
                + (f"BROKEN by {self.budget} {self.unit} ({self.fraction:.3%} of {self.n_matches:g}); "
                   f"verified by a cold-start refit: {self.verified}" if self.broken else f"not broken ({self.reason})"))
        lines = [head, f"reference top: {self.reference_top[:10]} → after: {self.final_top[:10]}"]
        if len(self.actions):
            lines.append(self.actions.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        return "\n".join(lines)

    def to_dict(self) -> dict:
        d = {
            "objective": self.objective,
            "objective_details": self.objective_details,
            "action": self.action,
            "candidate_space": self.candidate_space,
            "add_space": self.candidate_space_name,
            "model": self.model,
            "unit": self.unit,
            "broken": self.broken,
            "budget": self.budget,
            "fraction": self.fraction,
            "verified": self.verified,
            "budget_limit": self.budget_limit,
            "n_comparisons": self.n_matches,
            "reference_top": list(self.reference_top),
            "final_top": list(self.final_top),
            "initial_value": self.initial_value,
            "final_value": self.final_value,
            "reason": self.reason,
            "seconds": self.seconds,
            "n_refits": self.n_refits,
            "seed": self.seed,
            "actions": self.actions.to_dict(orient="records"),
            "curve": self.curve.to_dict(orient="records"),
        }
        if self.certified is not None:
            d["certified"] = self.certified
        return d

    def plot(self, ax=None, **kwargs):
        """The objective's driver vs the budget (1sN prediction and exact refit)."""
        import matplotlib.pyplot as plt

        if ax is None:
            fig, ax = plt.subplots(figsize=(5, 3.5))
        else:
            fig = ax.figure
        ax.plot(self.curve["budget"], self.curve["refit"], "o-", label="exact refit")
        ax.plot(self.curve["budget"], self.curve["predicted"], "x--", label="1sN prediction")
        ax.axhline(0, color="0.5", lw=0.8)
        ax.set_xlabel(f"{self.unit} ({self.action})")
        ax.set_ylabel(f"{self.objective}: driver")
        ax.legend(fontsize=8)
        return fig


def score_candidates(objective: Objective, st: BTState, cand: Candidates, preselect: int | None = None) -> np.ndarray:
    """Per-match 1sN change of the objective for each candidate. Where the 1sN evaluation is costly
    (the τ surrogate: K² per candidate; CI objectives and CI-aware margins: a K × K inverse per
    candidate) only the best ``preselect`` (``objective.preselect_size``) candidates of a cheap score
    (``objective.preselect_order``: first order for τ, the linear 1sN for the variances) are
    refined; the others get +inf."""
    if preselect is None:  # rows with covariates: a CI objective's Newton point costs an O(N) pass per candidate
        preselect = objective.preselect_size if st.fast or not objective.uses_hinv else min(objective.preselect_size, 32)
    cheap = objective.preselect_order
    if cand.members is not None and cheap is None:  # whole clusters: a Woodbury solve per cluster, screened by first order
        cheap = "first"
    if cheap is not None and len(cand) > preselect:
        rough = objective.delta(st, cand, 1.0, cheap)
        top = np.argsort(rough, kind="stable")[:preselect]
        out = np.full(len(cand), np.inf)
        out[top] = objective.delta(st, cand.take(top), 1.0, "1sN")
        return out
    return objective.delta(st, cand, 1.0, "1sN")


def _predicted_broken(objective: Objective, st: BTState, cand: Candidates, idx: int, m: float) -> bool:
    th = objective.predicted_theta(st, cand, idx, m)
    hv = objective.predicted_hinv(st, cand, idx, m) if objective.uses_hinv else None
    return objective.broken_predicted(st, th, hv)


def fill_step(group, capacity, order, score, batch, room: float, remaining: float) -> list:
    """Fill a step whose best candidate ``batch[0]`` is exhausted with the next candidates in
    ``order`` — at least 0.8 as effective per action, each of another ``group`` (pair or row), at
    their ``capacity`` — up to ``room`` actions and half the ``remaining`` margin (predicted)."""
    best, m = batch[0]
    total, groups, gain = m, {int(group[best])}, -score[best] * m
    for idx in order[1:]:
        if not score[idx] <= 0.8 * score[best] or total >= room or gain >= 0.5 * remaining:
            break
        if int(group[idx]) in groups or not np.isfinite(score[idx]):
            continue
        mm = float(min(capacity[idx], room - total))
        batch.append((int(idx), mm))
        groups.add(int(group[idx]))
        total += mm
        gain += -score[idx] * mm
    return batch


def early_stop(objective) -> bool:
    """Whether the audit may stop before its budget when the best per-match rate, extrapolated
    linearly over the remaining budget, closes less than a tenth of the margin: only for margin
    objectives in point mode (their driver is the criterion and does not depend on H⁻¹). CI
    objectives and CI-aware / significance margins run to their budget: a variance can grow faster
    than linearly in the number of actions (a counterexample stopped early where 75 flips break)."""
    return bool(objective.driver_is_criterion and not objective.uses_hinv)


def smallest_breaking(breaks, lo: float, hi: float) -> float:
    """Smallest ``t`` among ``lo + 1, lo + 2, … < hi`` and ``hi`` with ``breaks(t)``, by bisection,
    given ``breaks(hi)`` and not ``breaks(lo)`` (monotone). ``hi`` may be fractional (weighted
    comparisons): every midpoint stays strictly between ``lo`` and ``hi``."""
    while hi - lo > 1:
        mid = max(float(np.floor((lo + hi) / 2)), lo + 1)
        lo, hi = (lo, mid) if breaks(mid) else (mid, hi)
    return float(hi)


def choose_count(breaks, cap: float) -> float:
    """Smallest integer ``m ≤ cap`` (or ``cap`` itself) with ``breaks(m)`` — doubling, then
    :func:`smallest_breaking`; ``cap`` when none breaks."""
    if cap <= 1:
        return float(cap)
    lo, m = 0.0, 1.0
    while m < cap and not breaks(m):
        lo, m = m, min(cap, 2 * m)
    if not breaks(m):
        return float(cap)
    return smallest_breaking(breaks, lo, m)


def _choose_m(objective, st, cand, idx, cap) -> float:
    """Smallest m ≤ cap (integer, or cap) that the 1sN predicts to break; else cap."""
    return choose_count(lambda m: _predicted_broken(objective, st, cand, idx, m), cap)


def look_ahead(objective, order, score, capacity, room, width, choose, predicts_break):
    """(candidate, m) of this step: among the ``width`` best-scored candidates, the one whose 1sN
    predicts a break with the fewest actions (ties: the better score); when none is predicted to
    break within ``room``, the best-scored candidate with its capacity. Used only where the smooth
    driver and the hard criterion differ (τ: one flip of a close pair can break the hard τ while
    the surrogate prefers spreading changes); for margins the driver is the criterion.
    ``choose(idx, cap)`` is the step size (:func:`choose_count`), ``predicts_break(idx, m)`` the 1sN's
    verdict — the plain and the style-controlled audits pass their own."""
    best_idx, best_m = int(order[0]), None
    for idx in order[: 0 if objective.driver_is_criterion else width]:
        idx = int(idx)
        if not (np.isfinite(score[idx]) and score[idx] < 0):
            break
        m = choose(idx, float(min(capacity[idx], room)))
        if (best_m is None or m < best_m) and predicts_break(idx, m):
            best_idx, best_m = idx, m
    if best_m is not None:
        return best_idx, best_m
    return best_idx, choose(best_idx, float(min(capacity[best_idx], room)))


def state_for(base: BTState, kind: str, add_space: str | None = None) -> BTState:
    """The state an action acts on: adds in the ``"pairs"`` space work on the complete pair table
    (unobserved pairs with zero counts; zero-feature models on pair counts), every other action on
    the fitted rows."""
    space = default_add_space(base) if add_space is None else add_space
    if space not in ADD_SPACE_CHOICES:
        raise InputError(f"add_space must be one of {ADD_SPACE_CHOICES}, got {space!r}")
    if not kind.startswith("add") or space == "observed":
        return base
    if base.counts.unit:  # comparison rows: a template comparison per pair, equal style (docs/influence.md)
        return with_pair_templates(base)
    if base.counts.n_features or base.position or base.counts.cluster is not None:
        raise InputError("add_space='pairs' on aggregated rows with features, a position effect or clusters: the "
                         "audit works on one row per comparison there (pass the comparisons, not aggregated rows)")
    if base.counts.n_pairs < base.n_players * (base.n_players - 1) // 2:
        full = complete_pairs(base.counts)
        return BTState(full, base.ties, base.ridge, base.params, base.hessian, base.hinv, base.fit_info,
                       penalty=base.penalty)
    return base


_state_for = state_for


def default_add_space(state: BTState) -> str:
    """``"pairs"`` for zero-feature binary models on pair counts (any pair may get a new comparison),
    ``"observed"`` otherwise (a copy of an observed comparison, with its covariates)."""
    c = state.counts
    if getattr(state, "large", False):  # K(K−1)/2 cells (4.5 million at 3,000 players): new games of observed pairs
        return "observed"
    return "pairs" if (state.fast and not c.unit and c.cluster is None) else "observed"


def greedy_audit(
    state: BTState,
    objective: Objective | str,
    kind: str,
    budget: int | None = None,
    step_cap: int | None = None,
    max_steps: int = 400,
    progress=None,
    fill_steps: bool | None = None,
    seed: int = 0,
    lookahead: int = 16,
    stop_early: bool = True,
    add_space: str | None = None,
    model: str | None = None,
    **objective_options,
) -> AuditResult:
    """Greedy influence-ranked audit of ``objective`` (an :class:`Objective` or a spec for
    :func:`~bayesrank.influence.objectives.parse_objective` with ``objective_options``) with actions
    of ``kind`` (see module doc). ``budget`` counts comparisons (clusters for ``drop-cluster``;
    default 5% of them), ``step_cap`` the most one step may act on (default 0.2%, at least 1);
    ``fill_steps`` (default: more than 50,000 comparisons on pair counts, more than 20,000 comparison
    rows) fills a step with several rows; ``seed`` drives the outcomes of ``add_sampled``
    (:class:`OutcomeStream`); ``lookahead`` best-scored candidates are checked for a predicted break
    (:func:`look_ahead`); ``stop_early=False`` runs to the budget even where :func:`early_stop` would
    allow a stop; ``add_space`` ``"pairs" | "observed"`` (:func:`default_add_space`)."""
    if kind not in ACTION_TYPES:
        raise InputError(f"unknown action type {kind!r}; expected one of {ACTION_TYPES} or remove-player")
    t0 = time.perf_counter()
    if not state.converged:
        raise NoFiniteEstimateError("the reference fit did not converge; cannot audit it")
    clusters = kind == "drop-cluster"
    if clusters and state.counts.cluster is None:
        raise InputError("the drop-cluster action needs clusters (cluster=COLUMN, --cluster COL)")
    n_total = float(state.counts.n_clusters) if clusters else state.n_matches
    if budget is None:
        budget = int(max(1, np.ceil(0.05 * n_total)))
    if budget < 1:
        raise InputError(f"budget must be a positive number of actions, got {budget}")
    if step_cap is None:
        step_cap = int(max(1, np.ceil(0.002 * n_total)))
    if step_cap < 1:
        raise InputError(f"step_cap must be a positive number of actions, got {step_cap}")
    if fill_steps is None:
        fill_steps = (state.counts.n_rows > 20_000) if state.counts.unit else n_total > 50_000
    space = (default_add_space(state) if add_space is None else add_space) if kind.startswith("add") else None
    st = state_for(state, kind, space)
    if isinstance(objective, str):
        objective = parse_objective(objective, st, **objective_options)
    elif objective_options:
        raise InputError(f"objective options {sorted(objective_options)} need the objective as a spec string")
    data = st.counts
    f0 = objective.value_at(st)
    used = 0.0
    log_rows, curve = [], [{"budget": 0, "predicted": f0, "refit": f0}]
    n_refits, reason, broken = 0, "", False
    if objective.broken_at(st):
        raise InputError(f"objective {objective.name} is already broken on the unperturbed data")
    details = objective.describe()
    reference_top = objective.reference_order(state)
    model = model or model_name(state)
    stream, drawn = None, None
    if kind == "add_sampled":  # drawn[r]: comparisons added to (copied from) row r so far, its stream's position
        eta = st.eta()  # Davidson: the three outcome probabilities (ties drawn too), else σ(η̂)
        stream = OutcomeStream(st.model.outcome_probs(eta, st.params[-1:]) if st.n_extra
                               else 1.0 / (1.0 + np.exp(-eta)), seed)
        drawn = np.zeros(st.counts.n_rows)
    what = "clusters" if clusters else "comparisons"

    def result(**kw):
        return AuditResult(objective=objective.name, action=kind, n_matches=n_total, budget_limit=int(budget),
                           initial_value=f0, seconds=time.perf_counter() - t0, objective_details=details,
                           candidate_space_name=space, model=model, reference_top=reference_top,
                           unit="clusters" if clusters else "comparisons", **kw)

    if kind == "add_weighted" and not objective.uses_hinv:
        return result(broken=False, verified=False, budget=None, actions=_actions_frame(st, []),
                      curve=pd.DataFrame(curve), final_value=f0, reason=WEIGHTED_ADD_NOTE, n_refits=0,
                      final_theta=st.theta, final_top=reference_top)
    banned: set = set()  # cells whose action leaves no finite MLE
    for _step in range(max_steps):
        if used >= budget:
            reason = f"not broken within budget ({budget} {'actions' if not clusters else what})"
            break
        cand = candidates(st, kind, stream=stream, added=drawn)
        if banned and len(cand):
            cand = cand.take(np.flatnonzero([(r, o) not in banned for r, o in zip(cand.r, cand.outcome)]))
        if len(cand) == 0:
            reason = "no candidate actions left"
            break
        score = score_candidates(objective, st, cand)
        # scores equal to 1e-10 of the objective are ties (symmetric boards have exact ones): ranked by
        # row, so the path does not depend on the platform's rounding
        order = np.argsort(np.round(score / max(1.0, abs(f0)), 10), kind="stable")
        best = int(order[0])
        if not score[best] < -1e-12 * max(1.0, abs(f0)):  # below: rounding noise, not progress
            reason = "no remaining action moves the objective towards a break (not broken)"
            break
        if stop_early and early_stop(objective) and -score[best] * (budget - used) < 0.1 * curve[-1]["refit"]:
            reason = (f"not broken; stopped early (heuristic): at the best remaining rate per "
                      f"{'cluster' if clusters else 'comparison'} the {budget - used:g} {what} left would close "
                      f"less than a tenth of the remaining margin")
            break
        room = float(min(budget - used, step_cap))
        best, m = look_ahead(objective, order, score, cand.available, room, lookahead,
                             partial(_choose_m, objective, st, cand),
                             partial(_predicted_broken, objective, st, cand))
        if m <= 0:
            reason = "no remaining capacity"
            break
        batch = [(best, m)]
        if fill_steps and m == cand.available[best] and m < room and not _predicted_broken(objective, st, cand, best, m):
            # the best candidate is exhausted without a predicted break: fill the step with the next
            # ones (other rows, at least 0.8 as effective per action: fill_step), then refit once;
            # objectives that break at 0: fill only up to half of the remaining gap (predicted)
            remaining = np.inf if isinstance(objective, SmoothTau) else abs(curve[-1]["refit"])
            batch = fill_step(cand.group, cand.available, order, score, batch, room, remaining)
        new = st.refit(apply_batch(data, cand, batch))
        n_refits += 1
        if not new.converged and len(batch) > 1:
            batch = batch[:1]
            new = st.refit(apply_batch(data, cand, batch))
            n_refits += 1
        if not new.converged and batch[0][1] > 1:
            batch = [(best, float(np.floor(batch[0][1] / 2)))]
            new = st.refit(apply_batch(data, cand, batch))
            n_refits += 1
        if not new.converged:  # this action leaves no finite MLE: never offer it again
            banned.add((int(cand.r[best]), int(cand.outcome[best])))
            continue
        predicted = curve[-1]["refit"] + sum(float(objective.delta(st, cand.take([b]), mm, "1sN")[0]) for b, mm in batch)
        prev_data, prev_state, prev_used = data, st, used
        data, st = new.counts, new
        if drawn is not None:
            for b, mm in batch:
                drawn[cand.r[b]] += mm
        step_total = sum(mm for _, mm in batch)
        used += step_total
        val = objective.value_at(st)
        curve.append({"budget": used, "predicted": predicted, "refit": val})
        if progress is not None:
            progress(used, budget, val)
        if objective.broken_at(st):
            broken = True
            if step_total > 1:  # trim the step to the shortest prefix that still breaks (exact refits)
                def prefix_breaks(t, prev_data=prev_data, prev_state=prev_state, cand=cand, batch=batch):
                    nonlocal n_refits
                    trial = prev_state.refit(apply_batch(prev_data, cand, step_prefix(batch, t)))
                    n_refits += 1
                    return bool(trial.converged and objective.broken_at(trial))

                hi = smallest_breaking(prefix_breaks, 0.0, step_total)
                if hi < step_total:
                    batch = step_prefix(batch, hi)
                    st = prev_state.refit(apply_batch(prev_data, cand, batch))
                    data = st.counts
                    n_refits += 1
                    used = prev_used + hi
                    curve[-1]["budget"] = used
                    curve[-1]["refit"] = objective.value_at(st)
            log_rows += [_log_row(prev_state, cand, b, mm) for b, mm in batch]
            reason = "broken"
            break
        log_rows += [_log_row(prev_state, cand, b, mm) for b, mm in batch]
    else:
        reason = f"stopped after {max_steps} greedy steps (not broken)"
    # verification: cold-start exact refit of the final data
    verified = False
    final_theta = st.theta
    if broken:
        cold = st.refit(data, start=0.0)
        n_refits += 1
        verified = bool(cold.converged and objective.broken_at(cold))
        final_theta = cold.theta
    return result(broken=broken, verified=verified, budget=battle_count(used) if broken else None,
                  actions=_actions_frame(st, log_rows), curve=pd.DataFrame(curve),
                  final_value=objective.value_at(st), reason=reason, n_refits=n_refits, final_theta=final_theta,
                  final_top=objective.top(final_theta, state.players), seed=seed if kind == "add_sampled" else None)


def model_name(state: BTState) -> str:
    """A short description of the audited model (``model`` of the result)."""
    parts = []
    if state.counts.n_features:
        parts.append("style-controlled")
    parts.append("BT")
    extra = [f"ties={state.ties}"]
    if state.position:
        extra.append("position effect")
    if state.counts.cluster is not None:
        extra.append(f"clusters of {state.counts.cluster_name or 'cluster'}")
    return " ".join(parts) + f" ({', '.join(extra)})"


def battle_count(x: float) -> int | float:
    """A number of comparisons as reported: an integer when it is one (to 1e-9), else the exact sum
    (weighted comparisons — fractional pair counts or row frequencies — are acted on in fractions)."""
    r = round(x)
    return int(r) if abs(x - r) < 1e-9 else float(x)


def step_prefix(batch, t):
    """The first ``t`` matches of a step's (candidate, count) sequence."""
    out, left = [], float(t)
    for idx, m in batch:
        if left <= 0:
            break
        out.append((idx, float(min(m, left))))
        left -= m
    return out


def _log_row(state: BTState, cand: Candidates, idx: int, m: float) -> dict:
    """One accepted action: pair (player_a, player_b), acted-on outcome, count (adds: the added
    outcome; flips: also the new outcome ``to``; weighted adds: the expected a-wins); comparison rows
    also their row, share ``y`` won by player_a (None for an added new pair: no comparison yet), ``y_new``
    and features; clusters their label."""
    d, players = state.counts, state.players
    kind = cand.kind
    if cand.members is not None:
        rows, _ = cand.member_rows(idx)
        return {"kind": kind, "cluster": d.cluster_label(cand.r[idx]), "count": float(m), "rows": int(len(rows)),
                "comparisons": float(d.counts[rows].sum())}
    o = int(cand.outcome[idx])
    rec = {"kind": kind, "player_a": str(players[cand.i[idx]]), "player_b": str(players[cand.j[idx]]),
           "outcome": OUTCOMES[o], "count": float(m)}
    if kind == "flip":
        rec["to"] = OUTCOMES[1 - o]
    if kind == "add_weighted":
        rec["expected_a_wins"] = float(m * cand.delta[idx][0])
    if d.unit:
        n = int(cand.r[idx])
        rec["row"] = n
        rec["y"] = float(d.share[n]) if d.total[n] > 0 else None  # a new pair's template row: no share yet
        if kind != "drop":
            dl = cand.delta[idx]
            rec["y_new"] = float(1.0 - d.share[n]) if kind == "flip" else float(dl[0] + 0.5 * dl[2])
        for f, name in enumerate(d.features):
            rec[name] = float(d.X[n, f])
    return rec


def _actions_frame(state: BTState, rows) -> pd.DataFrame:
    cols = ["kind", "player_a", "player_b", "outcome", "count"]
    if state.counts.unit:
        cols += ["row", "y"]
    return pd.DataFrame(rows) if rows else pd.DataFrame(columns=cols)
