"""Perturbation audits of the style-controlled (covariate-adjusted) Bradley–Terry model.

Battles with covariates do not aggregate to pair counts, so every action acts on one *row* ``n``
(a battle, with its pair, outcome and style features ``d_n``), ``m`` times:

- ``drop``  remove m of the row's battles (frequency ``f_n → f_n − m``);
- ``flip``  reverse m of its outcomes (``y → 1 − y``; ties have no reverse), covariates kept;
- ``add``   add m copies of the battle (same pair, same covariates) with the outcome chosen by the
            actor (player a wins, or player b wins): "all outcomes" restricted to observed battles.

With ``x_n = (e_a − e_b, d_n)``, ``h_n = H⁻¹x_n``, ``a_n = x_nᵀH⁻¹x_n`` (H⁻¹ on the sum-to-zero space)
and the per-battle score ``s = v(σ(η) − y)`` and curvature ``c = vσ(η)(1 − σ(η))``, an action changes
the loss gradient at φ̂ by ``G x_n`` and the Hessian by ``C x_n x_nᵀ``:

    drop:  G = −m s,          C = −m c
    flip:  G = m v (2y − 1),  C = 0                 (the curvature does not depend on y)
    add:   G = m v (σ − y'),  C = m v c             (y' = 1: a wins, 0: b wins)

    first order (influence function):  Δφ = −G h_n
    one-step Newton (1sN):             Δφ = −G h_n / (1 + C a_n)     (Sherman–Morrison)

For a single drop, ``1/(1 − m c a)`` is the leverage correction. An objective is evaluated at
``θ̂ + Δθ``. The greedy audit (as :mod:`bayesrank.influence.greedy` for plain BT) ranks rows by the
1sN change of the objective per battle, acts on the best row (the smallest m the 1sN predicts to
break, capped), refits **exactly** (row-level Newton, warm start), and repeats; when the property
breaks, the last step is trimmed by bisection on exact refits and the final data are refitted from
a **cold start** (``verified``). Budgets count battles; a budget that runs out is reported as not
broken.

Objective: the top-k gap ``f = min_{a ∈ S, b ∉ S} (θ_a − θ_b + z·sd_ab)`` (``S`` = the reference
top-k; k = 1 is "who is #1"; ``z = 0`` for point estimates, ``z = 1.96`` in the CI-aware mode where a
change counts only when an outsider is significantly ahead), broken iff ``f < −10⁻⁹`` (an exact tie
is not a change). CI-aware predictions hold the pair SDs of the current fit fixed; every break is
checked with the refit's own H⁻¹.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.bt.mle import constrained_covariance
from bayesrank.bt.style import BattleData, loss_terms, newton
from bayesrank.errors import InputError, NoFiniteEstimateError
from bayesrank.protocol import Diagnostics, Result

ACTIONS = ("drop", "flip", "add")
TIE_TOL = 1e-9


# ---------------------------------------------------------------------------------------- state
@dataclass
class StyleState:
    """A fitted style-controlled BT: φ̂ = (θ̂, β̂), Hessian H and H⁻¹ (sum-to-zero)."""

    data: BattleData
    params: np.ndarray
    hessian: np.ndarray
    ridge: float = 0.0
    beta_ridge: float = 0.0
    converged: bool = True
    gradient_norm: float = 0.0
    hinv: np.ndarray = field(default=None, repr=False)

    def __post_init__(self):
        if self.hinv is None:
            self.hinv = constrained_covariance(self.hessian, self.data.n_players, self.data.n_features)

    @classmethod
    def fit(cls, data: BattleData, ridge: float = 0.0, beta_ridge: float = 0.0, start=None) -> "StyleState":
        res = newton(data, start=start, ridge=ridge, beta_ridge=beta_ridge, tol=1e-11)
        return cls(data, res.params, res.hessian, ridge, beta_ridge, bool(res.converged and np.all(np.isfinite(res.params))),
                   res.gradient_norm)

    @property
    def n_players(self) -> int:
        return self.data.n_players

    @property
    def players(self) -> np.ndarray:
        return self.data.players

    @property
    def theta(self) -> np.ndarray:
        return self.params[: self.n_players]

    def ranking(self) -> np.ndarray:
        return np.argsort(-self.theta, kind="stable")

    def hx(self, rows: np.ndarray) -> np.ndarray:
        """``H⁻¹ x_n`` for rows, one per row: (n, K+p) (H⁻¹ is symmetric: row gathers)."""
        d, k = self.data, self.n_players
        out = self.hinv[d.i[rows]] - self.hinv[d.j[rows]]
        if d.n_features:
            out += d.X[rows] @ self.hinv[k:]
        return out

    def per_battle(self, rows: np.ndarray):
        """(σ(η_n), score s_n = v(σ − y), curvature c_n = vσ(1 − σ)) per battle of each row."""
        eta, p, _ = loss_terms(self.data, self.params)
        v = self.data.weight[rows]
        return p[rows], v * (p[rows] - self.data.y[rows]), v * p[rows] * (1 - p[rows])


# ---------------------------------------------------------------------------------------- objective
class TopKGap:
    """Top-k membership gap against the reference top-k ``S`` (``z = 0``: point estimates;
    ``ci_aware=True``: ``z`` = the two-sided normal quantile of ``level`` and
    ``sd_ab² = (e_a − e_b)ᵀH⁻¹(e_a − e_b)`` from the Fisher information, so a change counts only when
    it is significant — the glossary's rule):

    * untargeted: ``f = min_{a ∈ S, b ∉ S} (θ_a − θ_b + z·sd_ab)`` (the set changes);
    * ``goal="demote"`` a member t: ``f = k-th smallest_b (θ_t − θ_b + z·sd_tb)`` (k others ahead of t);
    * ``goal="promote"`` an outsider t: ``f = −k-th smallest_b (θ_t − θ_b − z·sd_tb)`` (t enters).

    Broken iff ``f < −10⁻⁹``."""

    def __init__(self, state: StyleState, k: int = 1, ci_aware: bool = False, level: float = 0.95,
                 target: str | None = None, goal: str | None = None):
        if not isinstance(k, (int, np.integer)) or not 1 <= k < state.n_players:
            raise InputError(f"k must be an integer in 1..{state.n_players - 1}, got {k!r}")
        from statistics import NormalDist

        self.k = int(k)
        self.in_set = np.zeros(state.n_players, bool)
        self.in_set[state.ranking()[: self.k]] = True
        self.reference_top = [str(p) for p in state.players[self.in_set]]
        self.ci_aware = bool(ci_aware)
        self.z = NormalDist().inv_cdf(0.5 + level / 2) if ci_aware else 0.0
        self.target, self.goal = None, None
        if target is not None or goal is not None:
            if target is None or goal not in ("promote", "demote"):
                raise InputError("a targeted audit needs target=NAME and goal='promote' or 'demote'")
            t = state.data.index_of(target)
            if goal == "demote" and not self.in_set[t]:
                raise InputError(f"{target!r} is not in the top-{self.k}; nothing to demote (use goal='promote')")
            if goal == "promote" and self.in_set[t]:
                raise InputError(f"{target!r} is already in the top-{self.k}; nothing to promote (use goal='demote')")
            self.target, self.goal = t, goal
            self.others = np.delete(np.arange(state.n_players), t)
        self.name = (f"top{self.k}" if self.target is None else f"{goal}:{target}@top{self.k}") + (
            "+ci" if ci_aware else "")
        self._sd = None
        self.use_hinv(state.hinv)

    def use_hinv(self, hinv: np.ndarray) -> None:
        """Set the pair SDs used by :meth:`values` from ``H⁻¹``."""
        if not self.ci_aware:
            return
        if self.target is None:
            a, b = np.flatnonzero(self.in_set)[:, None], np.flatnonzero(~self.in_set)[None, :]
        else:
            a, b = self.target, self.others
        d = np.diag(hinv)
        self._sd = np.sqrt(np.clip(d[a] + d[b] - 2 * hinv[a, b], 0, None))

    def values(self, thetas: np.ndarray) -> np.ndarray:
        """Gap for each column of ``thetas`` (K, n), with the SDs of the last :meth:`use_hinv`."""
        n = thetas.shape[1]
        if self.target is not None:
            sign = 1.0 if self.goal == "demote" else -1.0
            m = thetas[self.target] - thetas[self.others]
            if self.ci_aware:
                m = m + sign * self.z * self._sd[:, None]
            kth = np.partition(m, self.k - 1, axis=0)[self.k - 1]
            return sign * kth
        ins, outs = thetas[self.in_set], thetas[~self.in_set]
        if not self.ci_aware:
            return ins.min(axis=0) - outs.max(axis=0)
        m = ins[:, None, :] - outs[None, :, :] + self.z * self._sd[:, :, None]
        return m.reshape(-1, n).min(axis=0)

    def value(self, theta: np.ndarray, hinv: np.ndarray | None = None) -> float:
        if hinv is not None:
            self.use_hinv(hinv)
        return float(self.values(theta[:, None])[0])

    def broken(self, theta: np.ndarray, hinv: np.ndarray | None = None) -> bool:
        return self.value(theta, hinv) < -TIE_TOL

    def order(self, theta: np.ndarray, players) -> list[str]:
        """The top-k players under ``theta`` (what the audit reports as ``final_top``)."""
        return [str(p) for p in np.asarray(players)[np.argsort(-theta, kind="stable")[: self.k]]]


class PairGap(TopKGap):
    """The claim "A is ahead of B" on the style-adjusted θ: ``f = θ_A − θ_B`` (``ci_aware``:
    ``+ z·sd_AB``, broken only when B is *significantly* ahead). Broken iff ``f < −10⁻⁹``. Shares
    :class:`TopKGap`'s ``value``/``broken``; ``reference_top``/``order`` list A and B by score."""

    def __init__(self, state: StyleState, player_a: str, player_b: str, ci_aware: bool = False, level: float = 0.95):
        from statistics import NormalDist

        from bayesrank.influence.objectives import claimed_pair

        self.a, self.b = claimed_pair(state.data.index_of, state.theta, player_a, player_b, "the style-adjusted fit")
        self.k = 1
        self.ci_aware = bool(ci_aware)
        self.z = NormalDist().inv_cdf(0.5 + level / 2) if ci_aware else 0.0
        self.reference_top = [str(player_a), str(player_b)]
        self.name = f"pair:{player_a}>{player_b}" + ("+ci" if ci_aware else "")
        self._sd = 0.0
        self.use_hinv(state.hinv)

    def use_hinv(self, hinv: np.ndarray) -> None:
        if self.ci_aware:
            self._sd = float(np.sqrt(max(hinv[self.a, self.a] + hinv[self.b, self.b] - 2 * hinv[self.a, self.b], 0.0)))

    def values(self, thetas: np.ndarray) -> np.ndarray:
        return thetas[self.a] - thetas[self.b] + self.z * self._sd

    def order(self, theta: np.ndarray, players) -> list[str]:
        ab = [self.a, self.b] if theta[self.a] >= theta[self.b] else [self.b, self.a]
        return [str(players[i]) for i in ab]


# ---------------------------------------------------------------------------------------- candidates
@dataclass
class Candidates:
    """Candidate actions: row, new outcome (add/flip), capacity (battles), per-battle G and C."""

    kind: str
    row: np.ndarray
    y_new: np.ndarray
    capacity: np.ndarray
    g: np.ndarray
    c: np.ndarray

    def __len__(self) -> int:
        return len(self.row)


def candidates(state: StyleState, kind: str) -> Candidates:
    """Every row-level action of ``kind`` on the current data (see the module docstring)."""
    if kind not in ACTIONS:
        raise InputError(f"unknown action {kind!r}; expected one of {ACTIONS}")
    d = state.data
    rows = np.flatnonzero(d.freq > 0)
    p, s, c = state.per_battle(rows)
    v = d.weight[rows]
    if kind == "drop":
        return Candidates(kind, rows, d.y[rows], d.freq[rows], -s, -c)
    if kind == "flip":
        ok = d.y[rows] != 0.5
        rows, p, v = rows[ok], p[ok], v[ok]
        y = d.y[rows]
        return Candidates(kind, rows, 1.0 - y, d.freq[rows], v * (2 * y - 1), np.zeros(len(rows)))
    both = np.concatenate([rows, rows])
    y_new = np.concatenate([np.ones(len(rows)), np.zeros(len(rows))])
    pp, vv, cc = np.concatenate([p, p]), np.concatenate([v, v]), np.concatenate([c, c])
    return Candidates(kind, both, y_new, np.full(len(both), np.inf), vv * (pp - y_new), cc)


def predicted_params(state: StyleState, cand: Candidates, m=1.0, order: str = "1sN", idx=None) -> np.ndarray:
    """Predicted φ after ``m`` applications of each candidate, one row each ((n, K+p)): first order or 1sN."""
    sel = np.arange(len(cand)) if idx is None else np.atleast_1d(idx)
    rows = cand.row[sel]
    h = state.hx(rows)
    m = np.broadcast_to(np.asarray(m, dtype=float), (len(sel),))
    g = m * cand.g[sel]
    if order == "first":
        scale = -g
    elif order == "1sN":
        d, k = state.data, state.n_players
        a = h[np.arange(len(rows)), d.i[rows]] - h[np.arange(len(rows)), d.j[rows]]  # x_nᵀ H⁻¹ x_n
        if d.n_features:
            a = a + np.einsum("nf,nf->n", h[:, k:], d.X[rows])
        scale = -g / (1 + m * cand.c[sel] * a)
    else:
        raise InputError(f"order must be 'first' or '1sN', got {order!r}")
    return state.params[None, :] + scale[:, None] * h


def predicted_change(state: StyleState, objective: TopKGap, cand: Candidates, m=1.0, order: str = "1sN",
                     chunk: int = 4096) -> np.ndarray:
    """Predicted change of the objective for ``m`` applications of every candidate."""
    f0 = objective.value(state.theta)
    out = np.empty(len(cand))
    k = state.n_players
    m = np.broadcast_to(np.asarray(m, dtype=float), (len(cand),))
    for lo in range(0, len(cand), chunk):
        sl = np.arange(lo, min(len(cand), lo + chunk))
        out[sl] = objective.values(predicted_params(state, cand, m[sl], order, sl)[:, :k].T) - f0
    return out


def apply(data: BattleData, cand: Candidates, idx: int, m: float) -> BattleData:
    """The data after ``m`` applications of candidate ``idx``."""
    n = int(cand.row[idx])
    if cand.kind == "drop":
        freq = data.freq.copy()
        freq[n] -= m
        return data.with_rows(freq=freq)
    if cand.kind == "flip" and m >= data.freq[n]:
        y = data.y.copy()
        y[n] = cand.y_new[idx]
        return data.with_rows(y=y)
    out = data
    if cand.kind == "flip":
        freq = data.freq.copy()
        freq[n] -= m
        out = data.with_rows(freq=freq)
    added = out.append(data.i[n], data.j[n], cand.y_new[idx], m, data.X[n], data.weight[n])
    if data.raw is not None:
        added = added.with_rows(raw=None)
    return added


# ---------------------------------------------------------------------------------------- audit
@dataclass
class StyleAudit(Result):
    """Greedy audit of one objective × one action type on the style-controlled model."""

    schema = "style_audit"

    objective: str
    action: str
    model: str
    broken: bool
    verified: bool
    budget: int | None
    budget_limit: int
    n_comparisons: float
    reference_top: list
    final_top: list
    initial_value: float
    final_value: float
    reason: str
    actions: pd.DataFrame
    curve: pd.DataFrame
    n_refits: int
    seconds: float
    diagnostics: Diagnostics
    final_theta: np.ndarray | None = field(default=None, repr=False)

    @property
    def fraction(self) -> float | None:
        return None if self.budget is None else self.budget / self.n_comparisons

    def table(self) -> pd.DataFrame:
        return self.actions

    def summary(self) -> str:
        head = (f"{self.model}: {self.objective} audit with {self.action} actions — "
                + (f"BROKEN by {self.budget} battles ({self.fraction:.3%} of {self.n_comparisons:g}); "
                   f"verified by a cold-start refit: {self.verified}" if self.broken else
                   f"not broken ({self.reason})"))
        lines = [head, f"reference top: {self.reference_top} → after: {self.final_top}", self.diagnostics.line()]
        if len(self.actions):
            lines.append(self.actions.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            **self._envelope(), "objective": self.objective, "action": self.action, "model": self.model,
            "broken": bool(self.broken), "verified": bool(self.verified), "budget": self.budget,
            "fraction": self.fraction, "budget_limit": int(self.budget_limit), "n_comparisons": self.n_comparisons,
            "reference_top": list(self.reference_top), "final_top": list(self.final_top),
            "initial_value": self.initial_value, "final_value": self.final_value, "reason": self.reason,
            "n_refits": int(self.n_refits), "seconds": self.seconds,
            "actions": self.actions.to_dict(orient="records"), "curve": self.curve.to_dict(orient="records"),
        }

    def plot(self, ax=None, **kwargs):
        import matplotlib.pyplot as plt

        if ax is None:
            fig, ax = plt.subplots(figsize=(5, 3.5))
        else:
            fig = ax.figure
        ax.plot(self.curve["budget"], self.curve["refit"], "o-", label="exact refit")
        ax.plot(self.curve["budget"], self.curve["predicted"], "x--", label="1sN prediction")
        ax.axhline(0, color="0.5", lw=0.8)
        ax.set_xlabel(f"battles ({self.action})")
        ax.set_ylabel(f"{self.objective} gap (logit)")
        ax.legend(fontsize=8)
        return fig


def _refit(state: StyleState, data: BattleData, start=None) -> StyleState:
    return StyleState.fit(data, state.ridge, state.beta_ridge, start=state.params if start is None else start)


def _choose_m(state, objective, cand, idx, cap) -> float:
    """Smallest integer m ≤ cap that the 1sN predicts to break (doubling, then bisection); else cap."""
    def breaks(m):
        return objective.values(predicted_params(state, cand, m, "1sN", idx)[:, : state.n_players].T)[0] < -TIE_TOL

    if cap <= 1:
        return float(cap)
    m = 1.0
    while m < cap and not breaks(m):
        m = min(cap, 2 * m)
    if not breaks(m):
        return float(cap)
    lo, hi = (m / 2 if m > 1 else 0.0), m
    while hi - lo > 1:
        mid = np.floor((lo + hi) / 2)
        lo, hi = (lo, mid) if breaks(mid) else (mid, hi)
    return float(hi)


def style_audit(state: StyleState, kind: str = "flip", k: int = 1, budget: int | None = None,
                step_cap: int | None = None, max_steps: int = 2000, model: str = "style-controlled BT",
                ci_aware: bool = False, level: float = 0.95, target: str | None = None,
                goal: str | None = None, pair: tuple[str, str] | None = None) -> StyleAudit:
    """Greedy influence-ranked audit of the top-k set (or, with ``pair=(A, B)``, of the claim
    "A is ahead of B") with ``kind`` actions, verified by exact refits (see the module docstring).
    ``budget`` defaults to 5% of the battles; ``step_cap`` (the most battles one step may act on) to
    0.2% of them (at least 1)."""
    t0 = time.perf_counter()
    if not state.converged:
        raise NoFiniteEstimateError("the reference fit did not converge; cannot audit it")
    n_total = state.data.n_comparisons
    budget = int(max(1, np.ceil(0.05 * n_total))) if budget is None else int(budget)
    step_cap = int(max(1, np.ceil(0.002 * n_total))) if step_cap is None else int(step_cap)
    if budget < 1 or step_cap < 1:
        raise InputError("budget and step_cap must be positive numbers of battles")
    objective = (PairGap(state, *pair, ci_aware=ci_aware, level=level) if pair is not None
                 else TopKGap(state, k, ci_aware=ci_aware, level=level, target=target, goal=goal))
    f0 = objective.value(state.theta, state.hinv)
    st, used, n_refits, broken, reason = state, 0.0, 0, False, ""
    curve = [{"budget": 0.0, "predicted": f0, "refit": f0}]
    log = []
    for _ in range(max_steps):
        if used >= budget:
            reason = f"not broken within budget ({budget} battles)"
            break
        cand = candidates(st, kind)
        if len(cand) == 0:
            reason = "no candidate actions left"
            break
        objective.use_hinv(st.hinv)  # predictions hold the pair SDs of the current fit fixed
        score = predicted_change(st, objective, cand)
        best = int(np.argmin(score))
        if not score[best] < 0:
            reason = "no remaining action moves the top-k gap towards a break (not broken)"
            break
        room = float(min(budget - used, step_cap, cand.capacity[best]))
        m = _choose_m(st, objective, cand, best, room)
        predicted = curve[-1]["refit"] + float(predicted_change(st, objective, Candidates(
            kind, cand.row[[best]], cand.y_new[[best]], cand.capacity[[best]], cand.g[[best]], cand.c[[best]]), m)[0])
        new_data = apply(st.data, cand, best, m)
        new = _refit(st, new_data)
        n_refits += 1
        if not new.converged:
            reason = "an action left no finite estimate (stopped)"
            break
        prev, prev_used = st, used
        st, used = new, used + m
        val = objective.value(st.theta, st.hinv)
        curve.append({"budget": used, "predicted": predicted, "refit": val})
        step = (best, m)
        if objective.broken(st.theta, st.hinv):
            broken = True
            if m > 1:  # trim: shortest prefix of this step that still breaks (exact refits)
                lo, hi = 0.0, m
                while hi - lo > 1:
                    mid = np.floor((lo + hi) / 2)
                    trial = _refit(prev, apply(prev.data, cand, best, mid))
                    n_refits += 1
                    lo, hi = (lo, mid) if trial.converged and objective.broken(trial.theta, trial.hinv) else (mid, hi)
                if hi < m:
                    st = _refit(prev, apply(prev.data, cand, best, hi))
                    n_refits += 1
                    used = prev_used + hi
                    step = (best, hi)
                    curve[-1].update(budget=used, refit=objective.value(st.theta, st.hinv))
            log.append(_action_row(prev, cand, *step))
            reason = "broken"
            break
        log.append(_action_row(prev, cand, *step))
    else:
        reason = f"stopped after {max_steps} greedy steps (not broken)"
    verified, final_theta = False, st.theta
    diag = Diagnostics.optimizer("refit", st.converged, st.gradient_norm, status="converged" if st.converged else "failed")
    if broken:
        cold = StyleState.fit(st.data, st.ridge, st.beta_ridge, start=None)
        n_refits += 1
        verified = bool(cold.converged and objective.broken(cold.theta, cold.hinv))
        final_theta = cold.theta
        st = cold
        diag = Diagnostics.optimizer("cold-start refit", cold.converged, cold.gradient_norm,
                                     status="converged" if cold.converged else "failed")
    return StyleAudit(
        objective=objective.name, action=kind, model=model, broken=broken, verified=verified,
        budget=int(round(used)) if broken else None, budget_limit=budget, n_comparisons=n_total,
        reference_top=objective.reference_top, final_top=objective.order(final_theta, state.players), initial_value=f0,
        final_value=objective.value(final_theta, st.hinv), reason=reason, actions=_actions_frame(log), curve=pd.DataFrame(curve),
        n_refits=n_refits, seconds=time.perf_counter() - t0, diagnostics=diag, final_theta=final_theta,
    )


def _action_row(state: StyleState, cand: Candidates, idx: int, m: float) -> dict:
    d = state.data
    n = int(cand.row[idx])
    rec = {"kind": cand.kind, "row": n, "player_a": str(d.players[d.i[n]]), "player_b": str(d.players[d.j[n]]),
           "y": float(d.y[n]), "count": float(m)}
    if cand.kind != "drop":
        rec["y_new"] = float(cand.y_new[idx])
    for f, name in enumerate(d.features):
        rec[name] = float(d.X[n, f])
    return rec


def _actions_frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows) if rows else pd.DataFrame(columns=["kind", "row", "player_a", "player_b", "y", "count"])


def row_influence(state: StyleState, kind: str = "drop", k: int = 1, order: str = "1sN") -> pd.DataFrame:
    """Predicted change of the top-k gap for one application of every candidate action (one row
    per candidate), sorted from the most damaging."""
    cand = candidates(state, kind)
    objective = TopKGap(state, k)
    delta = predicted_change(state, objective, cand, 1.0, order)
    d = state.data
    df = pd.DataFrame({"row": cand.row, "player_a": d.players[d.i[cand.row]], "player_b": d.players[d.j[cand.row]],
                       "y": d.y[cand.row], "y_new": cand.y_new, "delta_gap": delta})
    return df.sort_values("delta_gap", kind="stable").reset_index(drop=True)
