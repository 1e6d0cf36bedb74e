"""Audit objectives on the style-controlled BT — the plain audit's objectives, on the adjusted θ.

Every objective has a *driver* ``value(θ, H⁻¹)`` that the attacker decreases and a hard criterion
``broken(θ, H⁻¹)`` checked on exact refits; ``delta(state, candidates, m, order)`` predicts the
driver's change (:mod:`.state`: first order or one-step Newton, 1sN).

- :class:`TopKGap` — ``f = min_{a ∈ S, b ∉ S} (θ_a − θ_b + z·sd_ab)`` against the reference top-k
  ``S`` (k = 1: "who is #1"; targeted demote/promote variants); ``z = 0`` for point estimates, the
  normal quantile of ``level`` in the CI-aware mode (a change counts only when an outsider is
  *significantly* ahead; ``sd_ab² = (e_a − e_b)ᵀH⁻¹(e_a − e_b)``). Broken iff ``f < −10⁻⁹`` (an exact
  tie is not a change). CI-aware predictions hold the pair SDs of the current fit fixed; every
  break is checked with the refit's own H⁻¹.
- :class:`PairGap` — "A is ahead of B": ``f = θ_A − θ_B (+ z·sd_AB)``.
- :class:`StyleTau` — the plain audit's ``tanh`` surrogate of Kendall's τ
  (:class:`bayesrank.influence.objectives.SmoothTau`) on the adjusted θ, against a reference order
  (the fit's own, or a reported one, e.g. the plain leaderboard's). Broken iff the hard Kendall τ-b
  is ≤ ``threshold`` (0.9). Candidates are screened by first order, the best 128 refined by the 1sN.
- :class:`StyleVariance` — ``ci-player:NAME`` (``v = e_tᵀH⁻¹e_t``) or ``ci-trace`` (``v`` = the trace
  of the θ block of H⁻¹), driver ``ratio − v/v₀`` for the attack that inflates the uncertainty
  (broken iff ``v ≥ ratio·v₀``) or ``v/v₀ − ratio`` for the constructive reduction. With
  ``z = H⁻¹u`` and ``dH = C x xᵀ + Σ_s w_s c'_s x_s x_sᵀ (x_sᵀΔφ)`` (``c' = vσ(1 − σ)(1 − 2σ)``):

      linear:  Δv = (−mC (x_nᵀz)² + mG x_nᵀH⁻¹q) / (1 + mC a_n),   q = Σ_s w_s c'_s (x_sᵀz)² x_s

  (trace: ``(xᵀz)²`` becomes ``‖(H⁻¹x)_θ‖²``), ``O(N)`` once and ``O(1)`` per candidate; the 1sN is
  ``v`` of the Hessian rebuilt at the Newton point of the perturbed data
  (:func:`.state.newton_point_covariance`), for the best 32 of the linear screen.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from bayesrank.errors import InputError
from bayesrank.influence.covariates.state import (
    Candidates,
    StyleState,
    leverage,
    newton_point_covariance,
    predicted_params,
)
from bayesrank.influence.objectives import (
    OBJECTIVE_HELP,
    SmoothTau,
    claimed_pair,
    split_mode_suffix,
)

TIE_TOL = 1e-9


class StyleObjective:
    """Shared protocol. θ-objectives define ``values(thetas (K, n))`` (the driver on columns); the
    driver is the criterion unless ``driver_is_criterion`` is False (τ). ``preselect_order`` names a
    cheap prediction order used to screen candidates before the 1sN (``preselect_size`` are refined;
    :func:`bayesrank.influence.greedy.score_candidates`, shared with the plain audit)."""

    name = "objective"
    k = 1
    reference_top: tuple | list = ()
    driver_is_criterion = True
    uses_hinv = False
    preselect_order: str | None = None
    preselect_size = 128

    def use_hinv(self, hinv: np.ndarray) -> None:
        """Fix the covariance-dependent parts of :meth:`values` (CI-aware and significance margins)."""

    def covariance_at(self, state: StyleState) -> np.ndarray:
        """The covariance the criterion uses on a fitted state: its Fisher ``H⁻¹`` (the significance
        margins: the state's default interval)."""
        return state.hinv

    def use_state(self, state: StyleState) -> None:
        """Fix the covariance-dependent parts from a fitted state (:meth:`covariance_at`)."""
        self.use_hinv(self.covariance_at(state))

    def value_at(self, state: StyleState) -> float:
        """The driver on a fitted state (what the greedy loop records after each exact refit)."""
        return self.value(state.theta, self.covariance_at(state))

    def broken_at(self, state: StyleState) -> bool:
        """The criterion on a fitted state (checked on every exact refit)."""
        return self.broken(state.theta, self.covariance_at(state))

    def _breaks(self, f: float) -> bool:
        """The criterion on a driver value: ``f < −10⁻⁹`` (an exact tie is no change)."""
        return f < -TIE_TOL

    def values(self, thetas: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def value(self, theta: np.ndarray, hinv: np.ndarray | None = None) -> float:
        if hinv is not None:
            self.use_hinv(hinv)
        return float(self.values(np.asarray(theta)[:, None])[0])

    def broken(self, theta: np.ndarray, hinv: np.ndarray | None = None) -> bool:
        return self._breaks(self.value(theta, hinv))

    def delta(self, state: StyleState, cand: Candidates, m=1.0, order: str = "1sN", chunk: int = 4096) -> np.ndarray:
        """Predicted change of the driver for ``m`` applications of every candidate."""
        k = state.n_players
        f0 = float(self.values(state.theta[:, None])[0])
        m = np.broadcast_to(np.asarray(m, dtype=float), (len(cand),))
        out = np.empty(len(cand))
        for lo in range(0, len(cand), chunk):
            sl = np.arange(lo, min(len(cand), lo + chunk))
            out[sl] = self.values(predicted_params(state, cand, m[sl], order, sl)[:, :k].T) - f0
        return out

    def predicted_broken(self, state: StyleState, cand: Candidates, idx: int, m: float) -> bool:
        """Does the 1sN predict a break for ``m`` applications of candidate ``idx``?"""
        theta = predicted_params(state, cand, m, "1sN", idx)[0, : state.n_players]
        return self._breaks(float(self.values(theta[:, None])[0]))

    def describe(self) -> dict:
        """The objective's settings (the audit JSON's ``objective_details``)."""
        return {"name": self.name}

    def order(self, theta: np.ndarray, players) -> list[str]:
        """The top-k players under ``theta`` (what the audit reports as ``final_top``)."""
        return [str(p) for p in np.asarray(players)[np.argsort(-theta, kind="stable")[: self.k]]]


class TopKGap(StyleObjective):
    """Top-k membership gap against the reference top-k ``S`` (``z = 0``: point estimates;
    ``ci_aware=True``: ``z`` = the two-sided normal quantile of ``level`` and
    ``sd_ab² = (e_a − e_b)ᵀH⁻¹(e_a − e_b)`` from the Fisher information, so a change counts only when
    it is significant — the glossary's rule):

    * untargeted: ``f = min_{a ∈ S, b ∉ S} (θ_a − θ_b + z·sd_ab)`` (the set changes);
    * ``goal="demote"`` a member t: ``f = k-th smallest_b (θ_t − θ_b + z·sd_tb)`` (k others ahead of t);
    * ``goal="promote"`` an outsider t: ``f = −k-th smallest_b (θ_t − θ_b − z·sd_tb)`` (t enters).

    Broken iff ``f < −10⁻⁹``."""

    def __init__(self, state: StyleState, k: int = 1, ci_aware: bool = False, level: float = 0.95,
                 target: str | None = None, goal: str | None = None, significance: bool = False,
                 covariance: str = "auto"):
        if not isinstance(k, (int, np.integer)) or not 1 <= k < state.n_players:
            raise InputError(f"k must be an integer in 1..{state.n_players - 1}, got {k!r}")
        self.k = int(k)
        self.in_set = np.zeros(state.n_players, bool)
        self.in_set[state.ranking()[: self.k]] = True
        self.reference_top = [str(p) for p in state.players[self.in_set]]
        self._mode(state, ci_aware, significance, level, covariance)
        if significance and (target is not None or goal is not None):
            raise InputError("the significance mode audits the top-k set or a pair claim, not a targeted promote/demote")
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
        self.name = (f"top{self.k}" if self.target is None else f"{goal}:{target}@top{self.k}") + self.suffix
        self._sd = None
        self._check_significant(state)

    def _mode(self, state, ci_aware: bool, significance: bool, level: float, covariance: str) -> None:
        """Point (``z = 0``), CI-aware (``z = z_level``, Fisher H⁻¹) or significance mode (``z = −z_level``,
        the state's default interval: broken when the claim is no longer significant)."""
        if ci_aware and significance:
            raise InputError("--ci-aware and --significance are different questions; choose one")
        z = NormalDist().inv_cdf(0.5 + level / 2)
        self.ci_aware, self.significance = bool(ci_aware), bool(significance)
        self.uses_hinv = self.ci_aware or self.significance
        self.z = z if ci_aware else (-z if significance else 0.0)
        state.covariance_kind(covariance)  # validates the name
        self.covariance = covariance if significance else "fisher"  # "auto": resolved on every state
        self.suffix = "+ci" if ci_aware else ("+sig" if significance else "")

    def _check_significant(self, state) -> None:
        """Set the SDs from ``state``; the significance mode must start significant."""
        self.use_state(state)
        if self.significance and not self.value_at(state) > 0:
            raise InputError(f"the claim {self.name.removesuffix('+sig')} is not significant on the style-adjusted fit "
                             f"({state.covariance_kind(self.covariance)} covariance); nothing to overturn")

    def covariance_at(self, state: StyleState) -> np.ndarray:
        """SDs from the state's own covariance: the significance mode's kind is resolved on each state
        (``auto``: sandwich while some outcome is fractional, Fisher once none is — as the review would)."""
        return state.covariance(self.covariance) if self.significance else state.hinv

    def _breaks(self, f: float) -> bool:
        """``f < −10⁻⁹`` (an exact tie is no change); significance mode ``f ≤ 0``, the review's rule."""
        return f <= 0 if self.significance else f < -TIE_TOL

    def describe(self) -> dict:
        mode = "ci" if self.ci_aware else ("significance" if self.significance else "point")
        return {"name": self.name, "mode": mode, "z": abs(self.z), "covariance": self.covariance,
                "reference_top": list(self.reference_top)}

    def use_hinv(self, hinv: np.ndarray) -> None:
        """Set the pair SDs used by :meth:`values` from a covariance (H⁻¹, or the significance
        mode's covariance)."""
        if not self.uses_hinv:
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
        if not self.uses_hinv:
            return ins.min(axis=0) - outs.max(axis=0)
        m = ins[:, None, :] - outs[None, :, :] + self.z * self._sd[:, :, None]
        return m.reshape(-1, n).min(axis=0)


class PairGap(TopKGap):
    """The claim "A is ahead of B" on the style-adjusted θ: ``f = θ_A − θ_B`` (``ci_aware``:
    ``+ z·sd_AB``, broken only when B is *significantly* ahead). Broken iff ``f < −10⁻⁹``;
    ``reference_top``/``order`` list A and B by score."""

    def __init__(self, state: StyleState, player_a: str, player_b: str, ci_aware: bool = False, level: float = 0.95,
                 significance: bool = False, covariance: str = "auto"):
        self.a, self.b = claimed_pair(state.data.index_of, state.theta, player_a, player_b, "the style-adjusted fit")
        self.k = 1
        self._mode(state, ci_aware, significance, level, covariance)
        self.target = None
        self.reference_top = [str(player_a), str(player_b)]
        self.name = f"pair:{player_a}>{player_b}" + self.suffix
        self._sd = 0.0
        self._check_significant(state)

    def use_hinv(self, hinv: np.ndarray) -> None:
        if self.uses_hinv:
            self._sd = float(np.sqrt(max(hinv[self.a, self.a] + hinv[self.b, self.b] - 2 * hinv[self.a, self.b], 0.0)))

    def values(self, thetas: np.ndarray) -> np.ndarray:
        return thetas[self.a] - thetas[self.b] + self.z * self._sd

    def order(self, theta: np.ndarray, players) -> list[str]:
        ab = [self.a, self.b] if theta[self.a] >= theta[self.b] else [self.b, self.a]
        return [str(players[i]) for i in ab]


class StyleTau(SmoothTau, StyleObjective):
    """Kendall τ against a reference order on the style-adjusted θ (module docstring). ``reference``
    (K,) scores define the reference order (default: the fit's own θ̂; e.g. the plain fit's scores to
    ask whether the *reported* order survives); the temperature is the median gap between
    neighbours of the fit's θ̂."""

    preselect_order = "first"
    preselect_size = 128

    def __init__(self, state: StyleState, reference: np.ndarray | None = None, temperature: float | None = None,
                 threshold: float = 0.9):
        SmoothTau.__init__(self, state, temperature, threshold)
        if reference is not None:
            reference = np.asarray(reference, dtype=float)
            if reference.shape != (state.n_players,):
                raise InputError(f"reference scores must have one value per player ({state.n_players}), "
                                 f"got shape {reference.shape}")
            self.reference = reference.copy()
            self.sign = np.sign(reference[:, None] - reference[None, :])
            self.usign = self.sign[self.ua, self.ub]
            self._ref_signs = None
        self.k = state.n_players
        self.reference_top = [str(p) for p in state.players[np.argsort(-self.reference, kind="stable")]]
        if self.broken(state.theta):
            raise InputError(f"the fit's order is already at Kendall τ = {self.hard_tau(state.theta):.3f} ≤ "
                             f"{threshold} from the reference order; nothing to overturn")

    def value(self, theta, hinv=None) -> float:
        return SmoothTau.value(self, theta)

    def values(self, thetas):
        return SmoothTau.values(self, thetas)

    def broken(self, theta, hinv=None) -> bool:
        return SmoothTau.broken(self, theta)

    def delta(self, state, cand, m=1.0, order="1sN", chunk=4096):
        if order != "first":
            return StyleObjective.delta(self, state, cand, m, order, chunk)
        m = np.broadcast_to(np.asarray(m, dtype=float), (len(cand),))
        grad = np.zeros(len(state.params))
        grad[: state.n_players] = self.gradient(state.theta)
        return -m * cand.g * state.x_dot(cand.row, state.hinv @ grad)  # ∇fᵀΔθ, Δφ = −mG H⁻¹x

    def predicted_broken(self, state, cand, idx, m) -> bool:
        return self.broken(predicted_params(state, cand, m, "1sN", idx)[0, : state.n_players])

    def describe(self) -> dict:
        return {"name": "tau", "threshold": self.threshold, "temperature": self.temperature}


class StyleVariance(StyleObjective):
    """``ci-player:NAME`` / ``ci-trace`` on the style-controlled BT (module docstring); ``mode``
    ``inflate`` (attack: broken when ``v ≥ ratio·v₀``) or ``reduce`` (reached when ``v ≤ ratio·v₀``)."""

    uses_hinv = True
    preselect_order = "linear"
    preselect_size = 32

    def __init__(self, state: StyleState, target: str | None = None, mode: str = "inflate", ratio: float | None = None):
        if mode not in ("inflate", "reduce"):
            raise InputError(f"CI mode must be inflate or reduce, got {mode!r}")
        self.ratio = ratio if ratio is not None else (1.5 if mode == "inflate" else 0.5)
        if mode == "inflate" and not self.ratio > 1 or mode == "reduce" and not 0 < self.ratio < 1:
            raise InputError(f"variance ratio {self.ratio} does not fit mode {mode!r} (inflate: >1, reduce: in (0,1))")
        self.k = state.n_players
        self.target = None if target is None else state.data.index_of(target)
        self.name = "ci-trace" if target is None else f"ci-player:{target}"
        self.reference_top = [str(p) for p in state.players[state.ranking()]] if target is None else [str(target)]
        self.mode, self.sign = mode, (-1.0 if mode == "inflate" else 1.0)
        self.v0 = self.variance(state.hinv)

    def variance(self, hinv: np.ndarray) -> float:
        return float(hinv[self.target, self.target] if self.target is not None else np.trace(hinv[: self.k, : self.k]))

    def value(self, theta, hinv=None) -> float:
        r = self.variance(hinv) / self.v0
        return self.ratio - r if self.mode == "inflate" else r - self.ratio

    def _breaks(self, f: float) -> bool:
        return f <= 0  # the ratio is reached

    def order(self, theta, players) -> list[str]:
        return list(self.reference_top) if self.target is not None else StyleObjective.order(self, theta, players)

    def delta(self, state, cand, m=1.0, order="1sN", chunk=4096):
        """Predicted change of the driver: ``order`` = ``linear`` (all candidates) or ``1sN``."""
        m = np.broadcast_to(np.asarray(m, dtype=float), (len(cand),))
        if order == "1sN":
            v = np.array([self.variance(newton_point_covariance(state, cand, n, m[n])) for n in range(len(cand))])
            return self.sign * (v - self.variance(state.hinv)) / self.v0  # change from the current fit
        if order != "linear":
            raise InputError(f"unknown prediction order {order!r} for {self.name}; expected linear or 1sN")
        quad, xhq = self._linear_terms(state, cand.row, chunk)
        mc = m * cand.c
        h = state.hx(cand.row)
        dv = (-mc * quad + m * cand.g * xhq) / (1 + mc * leverage(state, cand.row, h))
        return self.sign * dv / self.v0

    def _quadratic(self, state: StyleState, rows: np.ndarray) -> np.ndarray:
        """``(x_nᵀz)²`` (ci-player, ``z = H⁻¹e_t``) or ``‖(H⁻¹x_n)_θ‖²`` (trace) for each row."""
        if self.target is not None:
            return state.x_dot(rows, state.hinv[:, self.target]) ** 2
        return (state.hx(rows)[:, : self.k] ** 2).sum(axis=1)

    def _linear_terms(self, state: StyleState, rows: np.ndarray, chunk: int):
        """(quadratic term of each candidate row, ``x_nᵀ H⁻¹ q``) with q over all battles."""
        d = state.data
        _, p, fw = state.loss_terms()
        every = np.arange(d.n_rows)
        quad_all = np.empty(d.n_rows)
        for lo in range(0, d.n_rows, chunk):
            quad_all[lo:lo + chunk] = self._quadratic(state, every[lo:lo + chunk])
        q = state.chain(fw * p * (1 - p) * (1 - 2 * p) * quad_all)  # Σ_s w_s c'_s Q_s x_s
        return quad_all[rows], state.x_dot(rows, state.hinv @ q)

    def predicted_broken(self, state, cand, idx, m) -> bool:
        return self.broken(None, newton_point_covariance(state, cand, idx, m))

    def describe(self) -> dict:
        return {"name": self.name, "mode": self.mode, "variance_ratio": self.ratio, "v0": self.v0,
                "covariance": "fisher"}


def style_objective(spec: str, state: StyleState, *, ci_aware: bool = False, level: float = 0.95,
                    target: str | None = None, goal: str | None = None, significance: bool = False,
                    covariance: str = "auto", reference=None,
                    tau_threshold: float = 0.9, temperature: float | None = None, ci_mode: str = "inflate",
                    ci_ratio: float | None = None) -> StyleObjective:
    """``top1 | topk:K | pair:A>B | tau | ci-player:NAME | ci-trace`` → a style objective (the plain
    audit's names: :func:`bayesrank.influence.objectives.parse_objective`)."""
    spec, ci_aware, significance = split_mode_suffix(spec, state.players, ci_aware, significance)
    if spec == "top1" or spec.startswith("topk:"):
        try:
            k = 1 if spec == "top1" else int(spec.split(":", 1)[1])
        except ValueError:
            raise InputError(f"topk:K needs an integer K, got {spec!r}") from None
        return TopKGap(state, k, ci_aware=ci_aware, level=level, target=target, goal=goal, significance=significance,
                       covariance=covariance)
    if (ci_aware or significance) and (spec in ("tau", "order") or spec.startswith("ci-")):
        flag = "--ci-aware" if ci_aware else "--significance"
        raise InputError(f"{flag} applies to top1, topk:K and pair:A>B claims, not to {spec!r}")
    if spec in ("tau", "order"):
        return StyleTau(state, reference, temperature, tau_threshold)
    if spec.startswith("ci-player:"):
        return StyleVariance(state, spec.split(":", 1)[1], ci_mode, ci_ratio)
    if spec == "ci-trace":
        return StyleVariance(state, None, ci_mode, ci_ratio)
    if spec.startswith("pair:") or ">" in spec:
        from bayesrank.data.claims import split_pair_claim

        a, b = split_pair_claim(spec.removeprefix("pair:"), state.players)
        return PairGap(state, a, b, ci_aware=ci_aware, level=level, significance=significance, covariance=covariance)
    raise InputError(f"unknown objective {spec!r}; expected {OBJECTIVE_HELP}")
