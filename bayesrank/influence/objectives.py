"""Audit objectives and their predicted change under candidate actions.

Every objective has a smooth *driver* ``value(θ, H⁻¹)`` that the attacker decreases and a hard
criterion ``broken(θ, H⁻¹)`` checked on exact refits:

- :class:`TopK` (gap objective): pairwise margins ``M_ab = θ_a − θ_b + z·sd_ab`` with
  ``sd_ab² = (e_a − e_b)ᵀ Σ (e_a − e_b)`` (``z = 0`` for point estimates, ``z = +1.96`` in the
  CI-aware mode, where a rank change counts only when it is significant, ``Σ = H⁻¹``; ``z = −1.96``
  in the significance mode, see below):
  untargeted ``f = min_{a ∈ S, b ∉ S} M_ab`` (``S`` = reference top-k; top-1 is k = 1);
  demote t: ``f = k-th smallest_b M_tb``; promote t: ``f = −(K−k)-th largest_b (θ_t − θ_b − z·sd_tb)``.
  Broken iff ``f < −10⁻⁹`` (the top-k set changes / the target leaves or enters it; an exact tie
  — possible with symmetric data — is not a change, whatever the rounding of the refit).
- :class:`PairMargin` (``pair:A>B``, the claim "A is ahead of B"): ``f = θ_A − θ_B + z·sd_AB``,
  broken iff ``f < −10⁻⁹`` (point: B is ahead; CI-aware: B is *significantly* ahead). It shares
  TopK's margin machinery (:class:`_Margin`: gradient, 1sN, CI-aware ``z·Δsd``).
- **Significance mode** (``+sig``; untargeted top-k and pair claims): ``f = min over the claim's
  contrasts of (θ_a − θ_b − z·sd_ab)``, broken iff ``f < −10⁻⁹``: the claim is no longer
  significant by the review's intersection–union contrast test. ``Σ`` is the covariance of the
  review's (and ``bt.fit("mle")``'s) default interval on the *perturbed* data
  (:meth:`BTState.covariance` ``"auto"``: sandwich when ties are scored as half-wins and present,
  Fisher ``H⁻¹`` otherwise); every exact check (greedy steps, trimming, cold-start verification)
  uses it (:meth:`Objective.broken_at`). Predictions rank candidates with the Fisher ``Δsd`` scaled
  by ``ρ_ab = sd_ab(Σ)/sd_ab(H⁻¹)`` at the current exact state (so prediction and exact value
  agree before the step). A reversal implies loss of significance (``θ_a − θ_b < 0`` ⇒ ``f < 0``),
  so the smallest significance-breaking perturbation is at most the smallest reversal.
- :class:`SmoothTau`: ``τ_s(θ) = mean_{a<b} sign(θ̂_a − θ̂_b) tanh((θ_a − θ_b)/T)`` against the
  reference ranking θ̂; the temperature ``T`` defaults to the median gap between neighbours of
  the reference ranking (so swapping two neighbours moves τ_s by O(1/#pairs)). Broken iff the hard
  Kendall τ between refit and reference ranking is ≤ ``threshold`` (default 0.9).
- :class:`CIObjective` (``ci-player``: ``v = e_tᵀ H⁻¹ e_t``; ``ci-trace``: ``v = tr H⁻¹``), driver
  ``ratio − v/v₀`` for an attack that inflates uncertainty (broken iff ``v ≥ ratio·v₀``) or
  ``v/v₀ − ratio`` for the constructive reduction (reached iff ``v ≤ ratio·v₀``).

Predictions for ``m`` applications of a candidate on pair r (``G``, ``C`` from
:meth:`Candidates.gc`, ``h = H⁻¹x_r``, ``a = x_rᵀH⁻¹x_r``):

    first order:  Δθ = −mG h                    one-step Newton:  Δθ = −mG h / (1 + mC a)

(the 1sN is the Newton step on the perturbed loss from θ̂: ``(H + mC x xᵀ)⁻¹`` by Sherman–Morrison;
for a single drop, ``C = −c`` and ``1/(1 − c a)`` is the leverage correction ``1/(1 − h_n)``).
θ-objectives are linearised (``∇fᵀΔθ``) in first order and evaluated exactly at ``θ̂ + Δθ`` in 1sN.
CI objectives use ``d(H⁻¹)/dw = −H⁻¹ (dH/dw) H⁻¹`` with ``dH/dw = C x xᵀ + Σ_s W_s c'(d_s) x_s x_sᵀ (x_sᵀ dθ̂/dw)``:

    first order:  Δv = −mC (xᵀz)²            − qᵀΔθ,     z = H⁻¹u, q = Σ_s W_s c'_s (x_sᵀz)² x_s
    linear 1sN:   Δv = −mC (xᵀz)²/(1 + mC a) − qᵀΔθ_1sN  (exact rank-one update of the curvature)
    1sN:          Δv = uᵀ H(θ_N, w')⁻¹ u − v₀             (H rebuilt at the Newton point θ_N)

(for the trace, ``(xᵀz)²`` becomes ``‖H⁻¹x‖²`` and ``q`` sums over ``z = H⁻¹e_t`` for all t).
The 1sN of a CI objective is, as for every objective, the objective evaluated at the Newton
point: the Hessian of the perturbed data ``w'`` at ``θ_N`` is rebuilt and inverted (``O(K³)`` per
candidate). Because ``v`` depends on θ through every pair's curvature, ``θ_N`` is the one-step
Newton point refined by two chord sweeps with the same Sherman–Morrison matrix (``O(R + K²)``
each; each sweep multiplies the θ error by O(‖Δθ‖)). ``order="1sN-plain"`` skips the sweep. On ATP
drops and adds (220 players) Spearman vs exact refits: linear 0.971–0.992, plain 0.952–0.995,
1sN ≥ 0.9965 (``examples/influence_ci_accuracy.py``, docs/influence.md). The linear 1sN (``O(1)`` per candidate after one
``O(R K)`` pass) is what the audit uses to preselect candidates for the full 1sN.
"""

from __future__ import annotations

import numpy as np

from bayesrank.data.claims import (
    TAU_THRESHOLD,  # the order claim / R_τ: broken at Kendall τ ≤ 0.9
)
from bayesrank.errors import InputError
from bayesrank.influence.actions import Candidates
from bayesrank.influence.state import BTState

Z95 = 1.959963984540054
TIE_TOL = 1e-9  # a margin within ±1e-9 logits is an exact tie (e.g. symmetric data), not a rank change
NEWTON_POINT = {"1sN": 2, "1sN-plain": 0}  # CI objectives: chord sweeps after the Newton step


def _pair_sd(hinv, a, b):
    return np.sqrt(np.maximum(hinv[a, a] + hinv[b, b] - 2 * hinv[a, b], 0.0))


def _pad(u, n: int) -> np.ndarray:
    """θ-vector ``u`` (K,) as a vector over every parameter φ (P,) (zero on α, β, λ)."""
    u = np.asarray(u, float)
    if len(u) == n:
        return u
    out = np.zeros(n)
    out[: len(u)] = u
    return out


def _large(objective, state, cand=None) -> bool:
    """A large sparse board and an objective its screened solves score (:mod:`bayesrank.influence.large`)."""
    if not getattr(state, "large", False) or (cand is not None and cand.members is not None):
        return False
    from bayesrank.influence import large

    return large.supported(objective)


def _chunks(n, size):
    for lo in range(0, n, size):
        yield slice(lo, min(n, lo + size))


def newton_point_precision(state: BTState, cand: Candidates, m=1.0, chord_steps: int = 2, chunk: int = 64):
    """Yield ``(slice, M)`` with ``M[n] = H(θ_n, w + m·δ_n) + 11ᵀ/K`` for chunks of candidates.

    ``θ_n`` is the one-step Newton point ``θ̂ − (H + mC xxᵀ)⁻¹ m g`` refined by ``chord_steps``
    sweeps ``θ ← θ − (H + mC xxᵀ)⁻¹ ∇L'(θ)`` with the same Sherman–Morrison matrix (``O(R + K²)``
    each). ``H = Σ_r Σ_o w_ro c_o(d_r) x_r x_rᵀ + ridge·I`` is rebuilt from the per-match
    derivatives (``state.match_derivatives``, so the PyMC state gives the same numbers). ``1`` is an
    eigenvector of ``H`` (eigenvalue ``ridge``), so ``C = M⁻¹ − 11ᵀ/(K(1 + ridge))`` is the
    covariance on the sum-to-zero space (= ``bt.mle.constrained_covariance(H)``).
    """
    from bayesrank.bt.mle import (  # the MLE's own per-pair → K assembly
        _assemble,
        _gradient,
    )

    m = np.broadcast_to(np.asarray(m, dtype=float), (len(cand),))
    c = state.counts
    k = state.n_players
    ii, jj, table, cr, cdelta = c.i, c.j, c.weighted_counts(), cand.r, cand.delta
    if c.unit or c.ordered:  # comparison rows: the Hessian only needs the pair totals (rows aggregated)
        swap = c.i > c.j
        uniq, inv = np.unique(np.minimum(c.i, c.j) * k + np.maximum(c.i, c.j), return_inverse=True)
        w = np.where(swap[:, None], table[:, [1, 0, 2]], table)
        table = np.zeros((len(uniq), 3))
        np.add.at(table, inv, w)
        ii, jj = uniq // k, uniq % k
        cr = inv[cand.r]
        cdelta = np.where(swap[cand.r][:, None], cand.delta[:, [1, 0, 2]], cand.delta) * c.weight[cand.r][:, None]
    g, cc = cand.gc(state)
    a = state.leverage_base(cand.i, cand.j)
    scale = -m * g / (1 + m * cc * a)
    coef = m * cc / (1 + m * cc * a)
    diag = np.arange(k)

    def per_pair(th, which, sl, cols):
        """Σ_o w'_ro ∂ℓ_o(d_r) (score: which=0, curvature: which=1) for every pair, (nb, R)."""
        out = state.match_derivatives(th[ii] - th[jj], which)  # (R, nb, 3)
        tot = np.einsum("ro,rno->rn", table, out)
        r = cr[sl]
        tot[r, cols] += m[sl] * (cdelta[sl] * out[r, cols, :]).sum(axis=1)  # the candidate's own cell
        return tot.T

    for sl in _chunks(len(cand), chunk):
        cols = np.arange(sl.stop - sl.start)
        hx = state.hx(cand.i[sl], cand.j[sl])  # (K, nb)
        th = state.theta[:, None] + scale[sl] * hx
        for _ in range(chord_steps if state.penalty is None else 0):  # the sweeps solve the unpenalised score
            grad = _gradient(ii, jj, k, 0, per_pair(th, 0, sl, cols)[..., None]).T + state.ridge * th
            grad -= grad.mean(axis=0)
            th = th - (state.hinv @ grad - coef[sl] * (grad * hx).sum(axis=0) * hx)
        big = _assemble(ii, jj, k, 0, per_pair(th, 1, sl, cols)[..., None, None]) + 1.0 / k
        big[:, diag, diag] += state.ridge
        yield sl, big


def newton_point_covariance(state: BTState, cand: Candidates, idx: int, m: float, chord_steps: int = 2) -> np.ndarray:
    """``H⁻¹`` (sum-to-zero) of candidate ``idx`` applied ``m`` times, at its (refined) Newton point:
    the one-step Newton φ refined by ``chord_steps`` sweeps ``φ ← φ − M⁻¹∇L'(φ)`` with the Woodbury
    matrix ``M = H + J mC Jᵀ`` of the perturbed data, where the Hessian is rebuilt (the vectorised
    pair-count path :func:`newton_point_precision` for zero-feature binary models)."""
    if state.fast and cand.members is None:
        one = cand.take(np.array([idx]))
        (_, big), = newton_point_precision(state, one, m, chord_steps)
        k = state.n_players
        return np.linalg.inv(big[0]) - 1.0 / (k * (1.0 + state.ridge))
    from bayesrank.bt.mle import constrained_covariance
    from bayesrank.bt.mle import objective as loss
    from bayesrank.influence.actions import apply

    new = apply(state.counts, cand, idx, m)
    minv = state.predicted_hinv(cand, idx, m)
    phi = state.params + state.shift(cand, m, "1sN", [idx])[0]
    opts = {"ridge": state.ridge, "beta_ridge": state.beta_ridge, "position": state.position}
    for _ in range(chord_steps):
        _, g, _ = loss(state.model, new, phi[None], **opts)
        gg = g[0].copy()
        gg[: state.n_players] -= gg[: state.n_players].mean()
        phi = phi - minv @ gg
    _, _, hess = loss(state.model, new, phi[None], **opts)
    return constrained_covariance(hess[0], state.n_players)


class Objective:
    name = "objective"
    uses_hinv = False
    ci_aware = False  # margins only: a reversal counts when significant
    significance = False  # margins only: broken when the claim is no longer significant
    preselect_order: str | None = None  # a cheap ``delta`` order the audit screens candidates with
    preselect_size = 128  # candidates of the cheap order refined by the 1sN
    driver_is_criterion = True  # broken(θ) ⟺ value(θ) below the threshold (False: a smooth surrogate)
    covariance: str  # margins: the covariance of the significance test (BTState.covariance's kind)

    def value(self, theta, hinv) -> float:
        raise NotImplementedError

    def broken(self, theta, hinv) -> bool:
        raise NotImplementedError

    # the hard criterion on an exact fit (refit or base state: counts, θ̂, H⁻¹); margins in the
    # significance mode use the covariance of the review's interval there, everything else H⁻¹
    def value_at(self, state: BTState) -> float:
        return self.value(state.theta, state.hinv)

    def broken_at(self, state: BTState) -> bool:
        return bool(self.broken(state.theta, state.hinv))

    def broken_predicted(self, state: BTState, theta, hinv) -> bool:
        """The criterion at a *predicted* (θ, H⁻¹) from the exact ``state`` (greedy's step sizes)."""
        return bool(self.broken(theta, hinv))

    # θ-objectives: gradient and (vectorised) value on columns of Θ (K, n)
    def gradient(self, theta, hinv) -> np.ndarray:
        raise NotImplementedError

    def values(self, thetas: np.ndarray) -> np.ndarray:
        return np.array([self.value(thetas[:, c], None) for c in range(thetas.shape[1])])

    def delta(self, state: BTState, cand: Candidates, m=1.0, order: str = "1sN", chunk: int = 2048) -> np.ndarray:
        """Predicted change of ``value`` for ``m`` applications of every candidate (``order`` =
        ``"first"``: the influence function, ``∇fᵀΔφ``; ``"1sN"``: ``f`` at the one-step Newton point)."""
        if _large(self, state, cand):  # a large sparse board: screened solves (bayesrank.influence.large)
            from bayesrank.influence import large

            return large.delta(self, state, cand, m, order)
        m = np.broadcast_to(np.asarray(m, dtype=float), (len(cand),))
        k = state.n_players
        out = np.empty(len(cand))
        if state.fast and cand.members is None:  # zero-feature binary: Sherman–Morrison on pair gathers
            g, c = cand.gc(state)
            mg, mc = m * g, m * c
            if order == "first":
                u = state.hinv @ self.gradient(state.theta, state.hinv)
                return -mg * (u[cand.i] - u[cand.j])
            scale = -mg / (1 + mc * state.leverage_base(cand.i, cand.j))
            f0 = self.value(state.theta, state.hinv)
            for sl in _chunks(len(cand), chunk):
                out[sl] = self.values(state.theta[:, None] + scale[sl] * state.hx(cand.i[sl], cand.j[sl])) - f0
            return out
        if order == "first":
            grad = _pad(self.gradient(state.theta, state.hinv), state.n_params)
            for sl in _chunks(len(cand), chunk):
                out[sl] = state.shift(cand, m, "first", np.arange(sl.start, sl.stop)) @ grad
            return out
        f0 = self.value(state.theta, state.hinv)
        for sl in _chunks(len(cand), chunk):
            d = state.shift(cand, m, "1sN", np.arange(sl.start, sl.stop))
            out[sl] = self.values(state.theta[:, None] + d[:, :k].T) - f0
        return out

    def predicted_theta(self, state: BTState, cand: Candidates, idx: int, m: float, order="1sN"):
        if state.fast and cand.members is None:
            (g,), (c,) = cand.take([idx]).gc(state)
            den = 1.0 if order == "first" else 1 + m * c * state.leverage_base(cand.i[idx], cand.j[idx])
            return state.theta - m * g * state.hx(cand.i[idx], cand.j[idx]) / den
        return state.theta + state.shift(cand, m, "first" if order == "first" else "1sN", [idx])[0, : state.n_players]

    def predicted_hinv(self, state: BTState, cand: Candidates, idx: int, m: float):
        """Woodbury curvature update (φ-shift term ignored)."""
        if _large(self, state, cand):
            from bayesrank.influence import large

            return large.predicted_hinv(state, cand, idx, m)
        if state.fast and cand.members is None:
            _, (c,) = cand.take([idx]).gc(state)
            h = state.hx(cand.i[idx], cand.j[idx])
            a = state.leverage_base(cand.i[idx], cand.j[idx])
            return state.hinv - (m * c) * np.outer(h, h) / (1 + m * c * a)
        return state.predicted_hinv(cand, idx, m)

    def top(self, theta, players) -> list[str]:
        """The players the objective is about, best first, under ``theta`` (``reference_top`` /
        ``final_top`` of an audit): the whole ranking unless an objective says otherwise."""
        return [str(p) for p in np.asarray(players)[np.argsort(-np.asarray(theta), kind="stable")]]

    def reference_order(self, state) -> list[str]:
        """:meth:`top` on the unperturbed data (τ against a reported order: that order)."""
        return self.top(state.theta, state.players)

    def describe(self) -> dict:
        return {"name": self.name}


MARGIN_MODES = ("point", "ci", "significance")


class _Margin(Objective):
    """Shared machinery of the margin objectives ``f = uᵀθ + z·sd(uᵀθ)`` at an *active* contrast
    ``u = sign·(e_a − e_b)`` (:class:`TopK`, :class:`PairMargin`). ``mode``:

    - ``point`` (``z = 0``): compares point estimates;
    - ``ci`` (``z = +z_level``, ``sd`` from the Fisher ``H⁻¹``, also on exact refits): ``f < 0``
      means the reversal is significant by the pairwise-contrast test (``θ_b − θ_a > z·sd``);
    - ``significance`` (``z = −z_level``, ``sd`` from the covariance ``covariance`` of
      :meth:`BTState.covariance`, default ``auto`` = the review's): ``f < 0`` means some contrast
      the claim needs is no longer significant (``θ_a − θ_b ≤ z·sd``).

    ``value``/``broken`` take the covariance they are given (predictions pass the Fisher ``H⁻¹``
    and ``rho``); :meth:`value_at`/:meth:`broken_at` use the mode's own covariance of an exact fit."""

    mode = "point"
    z = 0.0  # signed coefficient of sd in f
    level_z = 0.0  # two-sided normal quantile of the level (0 in point mode)
    covariance = "fisher"

    def _set_mode(self, mode: str, z: float, covariance: str = "auto") -> None:
        if mode not in MARGIN_MODES:
            raise InputError(f"margin mode must be one of {MARGIN_MODES}, got {mode!r}")
        self.mode = mode
        self.level_z = 0.0 if mode == "point" else float(z)
        self.z = {"point": 0.0, "ci": self.level_z, "significance": -self.level_z}[mode]
        self.uses_hinv = mode != "point"
        self.covariance = covariance if mode == "significance" else "fisher"
        self.suffix = {"point": "", "ci": "+ci", "significance": "+sig"}[mode]

    @property
    def ci_aware(self) -> bool:
        return self.mode == "ci"

    @property
    def significance(self) -> bool:
        return self.mode == "significance"

    def _margins(self, theta, hinv, rho=None):
        """(value, a, b, sign) at θ, Σ: the active pair and the sign of ``θ_a − θ_b`` in f;
        ``rho`` rescales the contrasts' sd (see :meth:`_rho`)."""
        raise NotImplementedError

    def _contrast_sd(self, cov) -> np.ndarray:
        """sd of every contrast the claim needs under ``cov`` (the shape ``rho`` takes)."""
        raise NotImplementedError

    def _rho(self, state: BTState):
        """``sd(Σ)/sd(H⁻¹)`` per contrast at an exact state (None when Σ is the Fisher ``H⁻¹``)."""
        if state.covariance_kind(self.covariance) == "fisher":
            return None
        return self._contrast_sd(state.covariance(self.covariance)) / self._contrast_sd(state.hinv)

    def _check_significant(self, state: BTState, claim: str) -> None:
        """Significance mode: the claim must be significant on the unperturbed data."""
        if not self.significance:
            return
        if _large(self, state):
            from bayesrank.influence import large

            f, a, b = large.significance_margins(self, state)
        else:
            f, a, b, _ = self._margins(state.theta, state.covariance(self.covariance))
        if not f > 0:
            raise InputError(
                f"the claim {claim} is not significant on the data (weakest contrast {state.players[a]} − "
                f"{state.players[b]}: θ_a − θ_b − z·sd = {f:.4g}, {state.covariance_kind(self.covariance)} "
                "covariance); nothing to overturn")

    @property
    def preselect_order(self):
        return "linear" if self.uses_hinv else None

    # CI-aware and significance margins: the variance term only adjusts the point change, so fewer
    # candidates need the Newton-point refinement (arena, top-1/top-5 × drop/flip/add: the same
    # budgets with 16, 32 and 128, in 0.6× the time with 32)
    preselect_size = 32

    def value(self, theta, hinv=None) -> float:
        return self._margins(theta, hinv)[0]

    def _breaks(self, f: float) -> bool:
        """Point and CI-aware modes: ``f < −10⁻⁹`` (an exact tie is no change). Significance mode:
        ``f ≤ 0`` — exactly the review's rule (supported iff every lower bound is > 0)."""
        return f <= 0 if self.significance else f < -TIE_TOL

    def broken(self, theta, hinv=None) -> bool:
        return self._breaks(self.value(theta, hinv))

    def value_at(self, state: BTState) -> float:
        if self.significance and _large(self, state):
            from bayesrank.influence import large

            return large.significance_margins(self, state)[0]
        return self._margins(state.theta, state.covariance(self.covariance) if self.uses_hinv else None)[0]

    def broken_at(self, state: BTState) -> bool:
        return self._breaks(self.value_at(state))

    def broken_predicted(self, state, theta, hinv) -> bool:
        if self.significance and _large(self, state):
            from bayesrank.influence import large

            ro = (hinv.h, hinv.coef) if isinstance(hinv, large.RankOne) else None
            return self._breaks(large.significance_margins(self, state, theta, ro)[0])
        if not state.fast:  # comparison rows: the SDs of the current fit's own covariance, held fixed
            return self._breaks(self._margins(theta, state.covariance(self.covariance))[0])
        rho = self._rho(state) if self.significance else None
        return self._breaks(self._margins(theta, hinv, rho)[0])

    def contrast(self, theta, hinv=None) -> np.ndarray:
        """``u`` of the active pair at (θ, Σ)."""
        _, a, b, sign = self._margins(theta, hinv)
        return self._unit(len(theta), a, b, sign)

    @staticmethod
    def _unit(k, a, b, sign=1.0):
        u = np.zeros(k)
        u[a] += sign
        u[b] -= sign
        return u

    def gradient(self, theta, hinv=None):
        return self.contrast(theta, hinv)

    def _point_delta(self, state, cand, m, order, chunk):
        return Objective.delta(self, state, cand, m, order, chunk)

    def delta(self, state, cand, m=1.0, order="1sN", chunk=2048):
        """Point mode: the predicted change of the margin. CI-aware and significance modes: active
        pair fixed at the current state, ``Δ(uᵀθ) + z·ρ·Δsd`` with ``Δsd = sqrt(v₀ + Δv) − sqrt(v₀)``,
        ``v = uᵀH⁻¹u`` and ``Δv`` the :class:`ContrastVariance` prediction of ``order``
        (``"linear"``: the cheap screening score); ``ρ = sd(Σ)/sd(H⁻¹)`` of the active contrast
        (1 for Fisher). With ``z < 0`` (significance) a growing variance lowers f, as it should.
        On comparison rows (features, a position effect, Davidson, outcome shares) the predictions
        hold the SDs of the current exact fit fixed (its own covariance; a Newton-point variance per
        candidate would cost an O(N) pass); every break is still checked on the exact refit."""
        if _large(self, state, cand):
            from bayesrank.influence import large

            return large.delta(self, state, cand, m, order)
        if not self.uses_hinv:
            return self._point_delta(state, cand, m, "first" if order == "first" else "1sN", chunk)
        rho = self._rho(state) if self.significance else None
        _, a, b, sign = self._margins(state.theta, state.hinv, rho)
        u = self._unit(state.n_players, a, b, sign)
        point = ThetaContrast(u).delta(state, cand, m, "first" if order == "first" else "1sN")
        if not state.fast:  # comparison rows: the active contrast's SD held at the current fit
            return point
        var = ContrastVariance(u).delta(state, cand, m, order)
        v0 = float(u @ state.hinv[: len(u), : len(u)] @ u)
        scale = 1.0 if rho is None else float(self._rho_of(rho, a, b))
        return point + self.z * scale * (np.sqrt(np.maximum(v0 + var, 0.0)) - np.sqrt(v0))

    def _rho_of(self, rho, a, b):
        """The entry of ``rho`` for the contrast (a, b)."""
        raise NotImplementedError

    def mode_details(self) -> dict:
        d = {"ci_aware": self.ci_aware, "mode": self.mode, "z": self.level_z}
        if self.significance:
            d["covariance"] = self.covariance
        return d


class TopK(_Margin):
    """Top-k membership gap (see module docstring); ``k = 1`` is the top-1 objective."""

    def __init__(self, state: BTState, k: int = 1, target: str | None = None, goal: str | None = None,
                 ci_aware: bool = False, z: float = Z95, significance: bool = False, covariance: str = "auto"):
        kk = state.n_players
        if not isinstance(k, (int, np.integer)) or not 1 <= k < kk:
            raise InputError(f"k must be an integer in 1..{kk - 1} (number of players − 1), got {k!r}")
        if ci_aware and significance:
            raise InputError("--ci-aware (a significant reversal) and --significance (loss of significance) "
                             "are two different objectives; choose one")
        self.k = int(k)
        self._set_mode("significance" if significance else "ci" if ci_aware else "point", z, covariance)
        order = state.ranking()
        self.reference_top = np.sort(order[: self.k])
        self.players = state.players
        self.in_set = np.zeros(kk, bool)
        self.in_set[self.reference_top] = True
        self._ins = np.flatnonzero(self.in_set)
        self._outs = np.flatnonzero(~self.in_set)
        self.target = None
        self.goal = None
        if target is not None or goal is not None:
            if target is None or goal not in ("promote", "demote"):
                raise InputError("a targeted audit needs --target NAME and --goal promote|demote")
            if significance:
                raise InputError("--significance applies to untargeted claims (top1, topk:K, pair:A>B), not to "
                                 "--target/--goal")
            t = state.counts.index_of(target)
            if goal == "promote" and self.in_set[t]:
                raise InputError(f"{target!r} is already in the top-{self.k}; nothing to promote (use --goal demote)")
            if goal == "demote" and not self.in_set[t]:
                raise InputError(f"{target!r} is not in the top-{self.k}; nothing to demote (use --goal promote)")
            self.target, self.goal = t, goal
        self.name = (f"top{self.k}" if self.target is None else f"{goal}:{state.players[self.target]}@top{self.k}") + (
            self.suffix)
        self.n_players = kk
        self._check_significant(state, "top1" if self.k == 1 else f"topk:{self.k}")

    def _contrast_sd(self, cov):
        return _pair_sd(cov, self._ins[:, None], self._outs[None, :])

    def _rho_of(self, rho, a, b):
        return rho[np.searchsorted(self._ins, a), np.searchsorted(self._outs, b)]

    def _margins(self, theta, hinv, rho=None):
        kk = self.n_players
        if self.target is None:
            ins, outs = self._ins, self._outs
            m = theta[ins][:, None] - theta[outs][None, :]
            if self.z and hinv is not None:
                sd = self._contrast_sd(hinv)
                m = m + self.z * (sd if rho is None else sd * rho)
            a_, b_ = np.unravel_index(np.argmin(m), m.shape)
            return float(m[a_, b_]), ins[a_], outs[b_], 1.0
        t = self.target
        others = np.delete(np.arange(kk), t)
        sd = _pair_sd(hinv, t, others) if (self.z and hinv is not None) else 0.0
        if self.goal == "demote":
            m = theta[t] - theta[others] + self.z * sd
            pos = np.argsort(m, kind="stable")[self.k - 1]
            return float(m[pos]), t, others[pos], 1.0
        m = theta[t] - theta[others] - self.z * sd
        pos = np.argsort(-m, kind="stable")[kk - self.k - 1]
        return float(-m[pos]), t, others[pos], -1.0

    def values(self, thetas):
        if self.target is None:
            ins = thetas[self.in_set]
            outs = thetas[~self.in_set]
            return ins.min(axis=0) - outs.max(axis=0)
        t = self.target
        others = np.delete(thetas, t, axis=0)
        srt = np.sort(others, axis=0)  # ascending
        kth_largest = srt[-self.k]
        return thetas[t] - kth_largest if self.goal == "demote" else kth_largest - thetas[t]

    def top(self, theta, players):
        """The top-k players under ``theta`` (the targeted audits: with the target's place)."""
        return Objective.top(self, theta, players)[: self.k]

    def describe(self):
        d = {"name": self.name, "k": self.k, **self.mode_details(),
             "reference_top": [str(self.players[i]) for i in self.reference_top]}
        if self.target is not None:
            d.update(target=str(self.players[self.target]), goal=self.goal)
        return d


def claimed_pair(index_of, theta, player_a: str, player_b: str, where: str = "the data") -> tuple[int, int]:
    """Indices (a, b) of the claim "A is ahead of B", checked to hold at ``theta`` (an InputError
    otherwise: a claim that is already false has nothing to overturn)."""
    a, b = index_of(player_a), index_of(player_b)
    if a == b:
        raise InputError(f"the claim {player_a}>{player_b} compares a player with itself")
    gap = float(theta[a] - theta[b])
    if not gap > TIE_TOL:
        raise InputError(f"the claim {player_a!r} > {player_b!r} does not hold on {where} "
                         f"(θ_A − θ_B = {gap:.4g}); audit '{player_b}>{player_a}' instead")
    return a, b


class PairMargin(_Margin):
    """The claim "A is ahead of B": ``f = θ_A − θ_B`` (+ ``z·sd(θ_A − θ_B)`` CI-aware), broken
    when A is no longer ahead (CI-aware: when B is *significantly* ahead of A; significance mode,
    ``f = θ_A − θ_B − z·sd``: when A is no longer *significantly* ahead of B)."""

    def __init__(self, state: BTState, player_a: str, player_b: str, ci_aware: bool = False, z: float = Z95,
                 significance: bool = False, covariance: str = "auto"):
        if ci_aware and significance:
            raise InputError("--ci-aware (a significant reversal) and --significance (loss of significance) "
                             "are two different objectives; choose one")
        self.a, self.b = a, b = claimed_pair(state.counts.index_of, state.theta, player_a, player_b)
        self.player_a, self.player_b = str(player_a), str(player_b)
        self.u = np.zeros(state.n_players)
        self.u[a], self.u[b] = 1.0, -1.0
        self._set_mode("significance" if significance else "ci" if ci_aware else "point", z, covariance)
        self.name = f"{self.player_a}>{self.player_b}" + self.suffix
        self._check_significant(state, f"{self.player_a}>{self.player_b}")

    def _contrast_sd(self, cov):
        return float(_pair_sd(cov, self.a, self.b))

    def _rho_of(self, rho, a, b):
        return rho

    def _margins(self, theta, hinv, rho=None):
        sd = float(_pair_sd(hinv, self.a, self.b)) if (self.z and hinv is not None) else 0.0
        if rho is not None:
            sd *= rho
        return float(theta[self.a] - theta[self.b] + self.z * sd), self.a, self.b, 1.0

    def values(self, thetas):
        return self.u @ thetas

    def _point_delta(self, state, cand, m, order, chunk):
        return ThetaContrast(self.u).delta(state, cand, m, order)  # linear in θ: closed form

    def top(self, theta, players):
        ab = [self.a, self.b] if theta[self.a] >= theta[self.b] else [self.b, self.a]
        return [str(players[i]) for i in ab]

    def describe(self):
        return {"name": self.name, "player_a": self.player_a, "player_b": self.player_b, **self.mode_details()}


class ThetaContrast(Objective):
    """Linear ``f = uᵀθ`` (used for fixed-pair gaps, e.g. the top-1 gap ``θ_1 − θ_2``)."""

    def __init__(self, u):
        self.u = np.asarray(u, float)
        self.name = "contrast"

    def value(self, theta, hinv=None):
        return float(self.u @ theta)

    def broken(self, theta, hinv=None):
        return self.value(theta) < -TIE_TOL

    def gradient(self, theta, hinv=None):
        return self.u

    def values(self, thetas):
        return self.u @ thetas

    def delta(self, state, cand, m=1.0, order="1sN", chunk=2048):
        m = np.broadcast_to(np.asarray(m, dtype=float), (len(cand),))
        u = _pad(self.u, state.n_params)
        if state.fast and cand.members is None:  # zero-feature binary: closed form on pair gathers
            g, c = cand.gc(state)
            w = state.hinv @ u
            b = w[cand.i] - w[cand.j]
            if order == "first":
                return -m * g * b
            a = state.leverage_base(cand.i, cand.j)
            return -m * g * b / (1 + m * c * a)
        out = np.empty(len(cand))
        for sl in _chunks(len(cand), chunk):
            out[sl] = state.shift(cand, m, "first" if order == "first" else "1sN", np.arange(sl.start, sl.stop)) @ u
        return out


def top1_gap(state: BTState) -> ThetaContrast:
    """``θ_(1) − θ_(2)`` of the reference ranking."""
    order = state.ranking()
    u = np.zeros(state.n_players)
    u[order[0]], u[order[1]] = 1.0, -1.0
    obj = ThetaContrast(u)
    obj.name = "top1_gap"
    return obj


class SmoothTau(Objective):
    """tanh surrogate of Kendall's τ against the reference ranking (see module docstring)."""

    def __init__(self, state: BTState, temperature: float | None = None, threshold: float = TAU_THRESHOLD,
                 reference: np.ndarray | None = None):
        self.reference = state.theta.copy()
        if reference is not None:
            reference = np.asarray(reference, dtype=float)
            if reference.shape != (state.n_players,):
                raise InputError(f"reference scores must have one value per player ({state.n_players}), "
                                 f"got shape {reference.shape}")
            self.reference = reference.copy()
        srt = np.sort(state.theta)
        self.temperature = float(temperature) if temperature else float(np.median(np.diff(srt)))
        if not self.temperature > 0:
            raise InputError("tau temperature must be > 0")
        if not -1 <= threshold < 1:
            raise InputError(f"tau threshold must be in [-1, 1), got {threshold}")
        self.threshold = threshold
        kk = state.n_players
        self.sign = np.sign(self.reference[:, None] - self.reference[None, :])
        self.norm = kk * (kk - 1)  # ordered pairs: mean over a<b = sum over a≠b / (K(K−1))
        self.ua, self.ub = np.triu_indices(kk, 1)
        self.usign = self.sign[self.ua, self.ub]
        self.name = "tau"
        self.preselect_order = "first"
        self.driver_is_criterion = False  # tanh surrogate driver, hard Kendall τ criterion
        if reference is not None and self.broken(state.theta):  # a reported order the fit contradicts
            raise InputError(f"the fit's order is already at Kendall τ = {self.hard_tau(state.theta):.3f} ≤ "
                             f"{threshold} from the reference order; nothing to overturn")

    def value(self, theta, hinv=None):
        t = np.tanh((theta[:, None] - theta[None, :]) / self.temperature)
        return float((self.sign * t).sum() / self.norm)

    def values(self, thetas):
        out = np.empty(thetas.shape[1])
        for sl in _chunks(thetas.shape[1], 64):
            th = thetas[:, sl]
            t = np.tanh((th[self.ua] - th[self.ub]) / self.temperature)
            out[sl] = 2 * (self.usign @ t) / self.norm
        return out

    def gradient(self, theta, hinv=None):
        t = np.tanh((theta[:, None] - theta[None, :]) / self.temperature)
        w = self.sign * (1 - t**2) / self.temperature
        return 2 * w.sum(axis=1) / self.norm

    def _tie_signs(self, x):
        d = x[self.ua] - x[self.ub]
        return np.where(np.abs(d) <= TIE_TOL, 0.0, np.sign(d))

    @property
    def _reference_signs(self):
        if getattr(self, "_ref_signs", None) is None:
            self._ref_signs = self._tie_signs(self.reference)
        return self._ref_signs

    def hard_tau(self, theta) -> float:
        """Kendall τ-b between θ and the reference; score differences within ±10⁻⁹ are ties (as for
        the top-k margins: the rounding of a refit must not decide a discordance)."""
        s, r = self._tie_signs(np.asarray(theta, float)), self._reference_signs
        den = np.sqrt(np.count_nonzero(s) * np.count_nonzero(r))
        return float((s * r).sum() / den) if den > 0 else float("nan")

    def broken(self, theta, hinv=None):
        return self.hard_tau(theta) <= self.threshold

    def describe(self):
        return {"name": "tau", "temperature": self.temperature, "threshold": self.threshold}

    def top(self, theta, players):
        return Objective.top(self, theta, players)

    def reference_order(self, state):
        return Objective.top(self, self.reference, state.players)


class _Variance(Objective):
    """Shared predictions of a variance ``v`` of ``H⁻¹`` (module docstring): the vectorised pair-count
    formulas for zero-feature binary models, the row-level ones (``x_r = (e_i − e_j | Z_r)``) otherwise;
    for Davidson ties and whole-cluster actions the linear screen is the exact Woodbury update of the
    curvature plus the φ-shift term ``−qᵀΔφ`` (``q``: :meth:`BTState.third_derivative_vector`; ``Δφ``
    the first-order or one-step Newton shift) and the 1sN the Newton-point covariance per candidate."""

    uses_hinv = True

    def _quadratic(self, state, rows, hj):
        """(n,) ``(x_rᵀz)²`` or ``‖(H⁻¹x_r)_θ‖²`` of each candidate row."""
        raise NotImplementedError

    def _third(self, state):
        """``q`` of the linear formula (P,)."""
        raise NotImplementedError

    def _of(self, hinv) -> float:
        return self.value(None, hinv)

    def _curvature_deltas(self, state, cand, m) -> np.ndarray:
        """``v((H + J mC Jᵀ)⁻¹) − v(H⁻¹)`` per candidate (the Woodbury curvature term)."""
        v0 = self._of(state.hinv)
        return np.array([self._of(state.predicted_hinv(cand, n, m[n])) - v0 for n in range(len(cand))])

    def delta(self, state, cand, m=1.0, order="1sN", chunk=2048):
        m = np.broadcast_to(np.asarray(m, dtype=float), (len(cand),))
        if order in NEWTON_POINT:
            if state.fast and cand.members is None:
                return self._fast_newton_point(state, cand, m, order)
            v0 = self._of(state.hinv)
            return np.array([self._of(newton_point_covariance(state, cand, n, m[n], NEWTON_POINT[order])) - v0
                             for n in range(len(cand))])
        if state.fast and cand.members is None:
            return self._fast_linear(state, cand, m, order, chunk)
        if cand.members is not None or state.n_local > 1:  # Woodbury curvature term + the φ-shift term −qᵀΔφ
            direct = self._curvature_deltas(state, cand, m)
            q = self._third(state)
            shift = np.concatenate([state.shift(cand, m, "first" if order == "first" else "1sN",
                                                np.arange(sl.start, sl.stop)) for sl in _chunks(len(cand), chunk)]) \
                if len(cand) else np.zeros((0, state.n_params))
            return direct - shift @ q
        g, c = cand.local(state)
        g, c = g[:, 0], c[:, 0, 0]
        out = np.empty(len(cand))
        hq = state.hinv @ self._third(state)
        for sl in _chunks(len(cand), chunk):
            rows = cand.r[sl]
            hj = state.hj(rows)
            quad = self._quadratic(state, rows, hj)
            xhq = state.x_dot(rows, hq)
            lin = -m[sl] * c[sl] * quad + m[sl] * g[sl] * xhq
            out[sl] = lin if order == "first" else lin / (1 + m[sl] * c[sl] * state.leverage(rows, hj)[:, 0, 0])
        return out


class ContrastVariance(_Variance):
    """``v = uᵀ H⁻¹ u`` as a function of the data (the CI-player objective for ``u = e_t``)."""

    def __init__(self, u):
        self.u = np.asarray(u, float)
        self.name = "variance"

    def value(self, theta, hinv):
        u = _pad(self.u, len(hinv))
        return float(u @ hinv @ u)

    def _curvature_deltas(self, state, cand, m):
        if cand.members is None:
            return super()._curvature_deltas(state, cand, m)
        return state.group_quadratic_change(cand, m, _pad(self.u, state.n_params))  # batched over the clusters

    def _quadratic(self, state, rows, hj):
        return state.x_dot(rows, state.hinv @ _pad(self.u, state.n_params)) ** 2

    def _third(self, state):
        return state.third_derivative_vector(state.hinv @ _pad(self.u, state.n_params))

    def _fast_newton_point(self, state, cand, m, order):
        k, out = state.n_players, np.empty(len(cand))
        shift = self.u.sum() ** 2 / (k * (1.0 + state.ridge))
        for sl, big in newton_point_precision(state, cand, m, NEWTON_POINT[order]):
            z = np.linalg.solve(big, np.broadcast_to(self.u, (big.shape[0], k))[..., None])[..., 0]
            out[sl] = z @ self.u - shift
        return out - self.value(None, state.hinv)

    def _fast_linear(self, state, cand, m, order, chunk):
        g, c = cand.gc(state)
        z = state.hinv @ self.u
        xz = z[cand.i] - z[cand.j]
        q = state.third_derivative_vector(z)
        hq = state.hinv @ q
        xhq = hq[cand.i] - hq[cand.j]  # qᵀ H⁻¹ x
        if order == "first":
            return -m * c * xz**2 + m * g * xhq
        a = state.leverage_base(cand.i, cand.j)
        den = 1 + m * c * a
        return (-m * c * xz**2 + m * g * xhq) / den


class TraceVariance(_Variance):
    """``v = tr (H⁻¹)_θθ`` (sum of the players' variances)."""

    name = "trace"

    def __init__(self, k: int):
        self.k = int(k)

    def value(self, theta, hinv):
        return float(np.trace(hinv[: self.k, : self.k]))

    def _quadratic(self, state, rows, hj):
        return (hj[:, : self.k, 0] ** 2).sum(axis=1)

    def _third(self, state):
        return state.third_derivative_vector(state.hinv[:, : self.k])

    def _fast_newton_point(self, state, cand, m, order):
        out = np.empty(len(cand))
        for sl, big in newton_point_precision(state, cand, m, NEWTON_POINT[order]):
            out[sl] = np.trace(np.linalg.inv(big), axis1=1, axis2=2) - 1.0 / (1.0 + state.ridge)
        return out - self.value(None, state.hinv)

    def _fast_linear(self, state, cand, m, order, chunk=4096):
        g, c = cand.gc(state)
        h2 = np.empty(len(cand))
        for sl in _chunks(len(cand), chunk):
            h2[sl] = (state.hx(cand.i[sl], cand.j[sl]) ** 2).sum(axis=0)
        q = state.third_derivative_vector(state.hinv)
        hq = state.hinv @ q
        xhq = hq[cand.i] - hq[cand.j]
        if order == "first":
            return -m * c * h2 + m * g * xhq
        a = state.leverage_base(cand.i, cand.j)
        return (-m * c * h2 + m * g * xhq) / (1 + m * c * a)


class CIObjective(Objective):
    """CI objective on ``ci-player:NAME`` or ``ci-trace``: ``mode="inflate"`` (attack, broken when
    ``v ≥ ratio·v₀``) or ``mode="reduce"`` (constructive, reached when ``v ≤ ratio·v₀``)."""

    uses_hinv = True
    preselect_order = "linear"

    def __init__(self, state: BTState, target: str | None = None, mode: str = "inflate", ratio: float | None = None):
        if mode not in ("inflate", "reduce"):
            raise InputError(f"CI mode must be inflate or reduce, got {mode!r}")
        if target is None:
            self.inner = TraceVariance(state.n_players)
            self.name = "ci-trace"
        else:
            t = state.counts.index_of(target)
            u = np.zeros(state.n_players)
            u[t] = 1.0
            self.inner = ContrastVariance(u)
            self.name = f"ci-player:{target}"
        self.mode = mode
        self.ratio = ratio if ratio is not None else (1.5 if mode == "inflate" else 0.5)
        if mode == "inflate" and not self.ratio > 1 or mode == "reduce" and not 0 < self.ratio < 1:
            raise InputError(f"variance ratio {self.ratio} does not fit mode {mode!r} (inflate: >1, reduce: in (0,1))")
        self.v0 = self.inner.value(state.theta, state.hinv)
        self.sign = -1.0 if mode == "inflate" else 1.0
        self.target = target

    def variance(self, hinv) -> float:
        return self.inner.value(None, hinv)

    def value(self, theta, hinv):
        r = self.variance(hinv) / self.v0
        return self.ratio - r if self.mode == "inflate" else r - self.ratio

    def broken(self, theta, hinv):
        return self.value(theta, hinv) <= 0

    def delta(self, state, cand, m=1.0, order="1sN", chunk=2048):
        """Predicted change of the driver: ``order`` = first | linear | 1sN | 1sN-plain (module doc)."""
        if order not in ("first", "linear", *NEWTON_POINT):
            raise InputError(f"unknown prediction order {order!r}; expected first, linear, 1sN or 1sN-plain")
        return self.sign * self.inner.delta(state, cand, m, order) / self.v0

    def predicted_hinv(self, state, cand, idx, m):
        """``H⁻¹`` at the one-step Newton point (curvature rebuilt there; see module docstring)."""
        return newton_point_covariance(state, cand, idx, m)

    def describe(self):
        return {"name": self.name, "mode": self.mode, "variance_ratio": self.ratio, "v0": self.v0}

    def top(self, theta, players):
        return [str(self.target)] if self.target is not None else Objective.top(self, theta, players)


def z_of_level(level: float) -> float:
    """Two-sided normal quantile ``z`` of an interval ``level`` (0.95 → 1.95996)."""
    from statistics import NormalDist

    if not 0 < level < 1:
        raise InputError(f"level must be in (0, 1), got {level}")
    return NormalDist().inv_cdf(0.5 + level / 2)


OBJECTIVE_HELP = "top1 | topk:K | pair:A>B (or A>B) | tau (or order) | ci-player:NAME | ci-trace"
MODE_SUFFIXES = {"+sig": "significance", "+ci": "ci"}


def _names_a_pair(spec: str, players) -> bool:
    """``spec`` (with any suffix) is already ``[pair:]A>B`` with two players of the data."""
    from bayesrank.data.claims import split_pair_claim

    if not (spec.startswith("pair:") or ">" in spec):
        return False
    try:
        split_pair_claim(spec.removeprefix("pair:"), players)
    except InputError:
        return False
    return True


def split_mode_suffix(spec: str, players, ci_aware: bool = False, significance: bool = False):
    """``(spec without a +ci/+sig suffix, ci_aware, significance)`` — a suffix is kept when the whole
    spec already names a pair of players (a player may be called "X+ci")."""
    for suffix, mode in MODE_SUFFIXES.items():
        if spec.endswith(suffix) and not _names_a_pair(spec, players):
            spec = spec[: -len(suffix)]
            ci_aware = ci_aware or mode == "ci"
            significance = significance or mode == "significance"
    return spec, ci_aware, significance


def parse_objective(spec: str, state: BTState, ci_aware=False, target=None, goal=None, level: float = 0.95,
                    significance: bool = False, covariance: str = "auto", **kw) -> Objective:
    """``top1 | topk:K | pair:A>B | tau | ci-player:NAME | ci-trace`` → an :class:`Objective`.

    ``ci_aware`` (margin objectives: top-k and pair claims) counts a reversal only when it is
    significant at ``level`` by the pairwise-contrast test; ``significance`` (untargeted top-k and
    pair claims) breaks the claim when it is no longer significant at ``level`` (covariance
    ``covariance``, default the review's: :meth:`BTState.covariance`). The suffixes ``+ci`` and
    ``+sig`` (``top1+sig``, ``topk:3+sig``, ``pair:A>B+sig``) select the same modes. ``A>B``
    without the prefix and ``order`` (for ``tau``) are accepted as the review's claim names."""
    spec, ci_aware, significance = split_mode_suffix(spec, state.players, ci_aware, significance)
    if significance and not (spec == "top1" or spec.startswith(("topk:", "pair:")) or ">" in spec):
        raise InputError(f"--significance applies to top1, topk:K and pair:A>B claims, not to {spec!r}")
    z = z_of_level(level)
    margin = {"ci_aware": ci_aware, "z": z, "significance": significance, "covariance": covariance}
    if spec == "top1":
        return TopK(state, 1, target, goal, **margin)
    if spec.startswith("topk:"):
        try:
            k = int(spec.split(":", 1)[1])
        except ValueError:
            raise InputError(f"topk:K needs an integer K, got {spec!r}") from None
        return TopK(state, k, target, goal, **margin)
    if (ci_aware or significance) and (spec in ("tau", "order") or spec.startswith("ci-")):
        flag = "--ci-aware" if ci_aware else "--significance"
        raise InputError(f"{flag} applies to top1, topk:K and pair:A>B claims, not to {spec!r}")
    if spec in ("tau", "order"):
        return SmoothTau(state, kw.get("temperature"), kw.get("tau_threshold", TAU_THRESHOLD), kw.get("reference"))
    if spec.startswith("ci-player:"):
        name = spec.split(":", 1)[1]
        return CIObjective(state, name, kw.get("ci_mode", "inflate"), kw.get("ci_ratio"))
    if spec == "ci-trace":
        return CIObjective(state, None, kw.get("ci_mode", "inflate"), kw.get("ci_ratio"))
    if spec.startswith("pair:") or ">" in spec:
        from bayesrank.data.claims import split_pair_claim

        a, b = split_pair_claim(spec.removeprefix("pair:"), state.players)
        return PairMargin(state, a, b, **margin)
    raise InputError(f"unknown objective {spec!r}; expected {OBJECTIVE_HELP}")
