"""The fitted style-controlled BT an audit perturbs, its row-level candidate actions, and their
predicted effect on ``φ̂ = (θ̂, β̂)`` and on ``H⁻¹``.

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
    add:   G = m v (σ − y'),  C = m c               (y' = 1: a wins, 0: b wins)

    first order (influence function):  Δφ = −G h_n
    one-step Newton (1sN):             Δφ = −G h_n / (1 + C a_n)     (Sherman–Morrison)

The 1sN is exactly one Newton step on the perturbed loss from φ̂ (tested). For a single drop,
``1/(1 − m c a)`` is the leverage correction.

Objectives that depend on ``H⁻¹`` (the CI objectives) need ``H`` after the action:
:func:`newton_point_covariance` rebuilds the Hessian of the perturbed data at the *Newton point* —
the 1sN φ refined by ``sweeps`` chord steps ``φ ← φ − (H + C x xᵀ)⁻¹ ∇L'(φ)`` with the same
Sherman–Morrison matrix (each sweep multiplies the error of φ by O(‖Δφ‖)) — and inverts it on the
sum-to-zero space.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bayesrank.bt.mle import constrained_covariance, constraint_basis, default_interval
from bayesrank.bt.style import DIVERGED, BattleData, loss_terms, meat, newton, objective
from bayesrank.errors import InputError

ACTIONS = ("drop", "flip", "add")


def identified(hessian: np.ndarray, data: BattleData, rcond: float = 1e-10) -> bool:
    """``QᵀHQ`` (the Hessian on the sum-to-zero space) has no eigenvalue below ``rcond`` × its largest."""
    q = constraint_basis(data.n_players, data.n_features)
    w = np.linalg.eigvalsh(q.T @ hessian @ q)
    return bool(w[0] > rcond * w[-1])


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
            try:
                self.hinv = constrained_covariance(self.hessian, self.data.n_players, self.data.n_features)
            except np.linalg.LinAlgError:  # singular on the sum-to-zero space: not identified (fit flags it)
                self.hinv = np.full_like(self.hessian, np.nan)

    @classmethod
    def fit(cls, data: BattleData, ridge: float = 0.0, beta_ridge: float = 0.0, start=None) -> StyleState:
        """Row-level Newton MLE. ``converged`` also requires a finite, *identified* estimate: |θ| below
        ``bt.style.DIVERGED`` (else the MLE runs off to infinity) and ``QᵀHQ`` well conditioned on the
        sum-to-zero space (a player without battles, or a disconnected comparison graph, leaves a
        direction of θ that Newton does not move: the "estimate" there is arbitrary)."""
        res = newton(data, start=start, ridge=ridge, beta_ridge=beta_ridge, tol=1e-11)
        ok = bool(res.converged and np.all(np.isfinite(res.params))
                  and np.max(np.abs(res.params[: data.n_players])) < DIVERGED and identified(res.hessian, data))
        return cls(data, res.params, res.hessian, ridge, beta_ridge, ok, res.gradient_norm)

    def covariance_kind(self, kind: str = "auto") -> str:
        """``auto`` → the package's default interval (``bt.mle.default_interval``): ``sandwich`` when
        some outcomes are fractional (ties as half-wins, a soft judge's shares), ``fisher`` otherwise."""
        if kind not in ("auto", "fisher", "sandwich"):
            raise InputError(f"covariance must be auto, fisher or sandwich, got {kind!r}")
        if kind != "auto":
            return kind
        y = self.data.y[self.data.freq > 0]
        return default_interval("half", bool(((y > 0) & (y < 1)).any()))

    def covariance(self, kind: str = "auto") -> np.ndarray:
        """Covariance of φ̂ on the sum-to-zero space: Fisher ``H⁻¹`` or the sandwich ``H⁻¹BH⁻¹``
        (``bt.style.covariance``; cluster-robust when the data carry clusters), cached per state."""
        kind = self.covariance_kind(kind)
        if kind == "fisher":
            return self.hinv
        cache = self.__dict__.setdefault("_covariances", {})
        if kind not in cache:
            cache[kind] = self.hinv @ meat(self.data, self.params) @ self.hinv
        return cache[kind]

    def refit(self, data: BattleData, start=None) -> StyleState:
        """Exact refit of ``data`` with this state's penalties (warm start at φ̂ unless ``start``)."""
        return StyleState.fit(data, self.ridge, self.beta_ridge, start=self.params if start is None else start)

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

    def x_dot(self, rows: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """``x_nᵀ v`` for each row n and each column v of ``vectors`` ((K+p,) or (K+p, q))."""
        d, k = self.data, self.n_players
        out = vectors[d.i[rows]] - vectors[d.j[rows]]
        if d.n_features:
            out = out + d.X[rows] @ vectors[k:]
        return out

    def per_battle(self, rows: np.ndarray):
        """(σ(η_n), score s_n = v(σ − y), curvature c_n = vσ(1 − σ)) per battle of each row."""
        _, p, _ = loss_terms(self.data, self.params)
        v = self.data.weight[rows]
        return p[rows], v * (p[rows] - self.data.y[rows]), v * p[rows] * (1 - p[rows])


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

    def take(self, idx) -> Candidates:
        idx = np.atleast_1d(idx)
        return Candidates(self.kind, self.row[idx], self.y_new[idx], self.capacity[idx], self.g[idx], self.c[idx])


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


def leverage(state: StyleState, rows: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``a_n = x_nᵀ H⁻¹ x_n`` from ``h = H⁻¹ x_n`` (one row of ``h`` per row n)."""
    d, k, n = state.data, state.n_players, np.arange(len(rows))
    a = h[n, d.i[rows]] - h[n, d.j[rows]]
    if d.n_features:
        a = a + np.einsum("nf,nf->n", h[:, k:], d.X[rows])
    return a


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
        scale = -g / (1 + m * cand.c[sel] * leverage(state, rows, h))
    else:
        raise InputError(f"order must be 'first' or '1sN', got {order!r}")
    return state.params[None, :] + scale[:, None] * h


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


def apply_batch(data: BattleData, cand: Candidates, batch) -> BattleData:
    """The data after a step's ``[(candidate, m), ...]`` (distinct rows; added rows go to the end,
    so the row indices of the others are unchanged)."""
    for idx, m in batch:
        data = apply(data, cand, idx, m)
    return data


def newton_point(state: StyleState, cand: Candidates, idx: int, m: float, sweeps: int = 2):
    """(perturbed data, Newton point φ_N) for ``m`` applications of candidate ``idx``: the 1sN φ
    refined by ``sweeps`` chord steps with the Sherman–Morrison matrix ``(H + mC x xᵀ)⁻¹``."""
    new = apply(state.data, cand, idx, m)
    h = state.hx(cand.row[[idx]])[0]
    a = float(leverage(state, cand.row[[idx]], h[None, :])[0])
    coef = m * cand.c[idx] / (1 + m * cand.c[idx] * a)
    phi = predicted_params(state, cand, m, "1sN", idx)[0]
    for _ in range(sweeps):
        _, g, _ = objective(new, phi, state.ridge, state.beta_ridge)
        step = state.hinv @ g
        phi = phi - (step - coef * (h @ g) * h)
    return new, phi


def newton_point_covariance(state: StyleState, cand: Candidates, idx: int, m: float, sweeps: int = 2) -> np.ndarray:
    """``H⁻¹`` (sum-to-zero) of the perturbed data at its Newton point (:func:`newton_point`)."""
    new, phi = newton_point(state, cand, idx, m, sweeps)
    _, _, hess = objective(new, phi, state.ridge, state.beta_ridge)
    return constrained_covariance(hess, state.n_players, state.data.n_features)
