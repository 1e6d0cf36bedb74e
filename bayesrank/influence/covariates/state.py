"""The fitted row-level BT an audit perturbs (style features, a position effect, clusters), its
row-level candidate actions, and their predicted effect on ``φ̂ = (θ̂, [α̂,] β̂)`` and on ``H⁻¹``.

Battles with covariates do not aggregate to pair counts, so every action acts on one *row* ``n``
(a comparison row of :class:`~bayesrank.data.rows.PairRows`, with its pair, outcome shares and
covariates ``z_n = ([1,] d_n)``), ``m`` times:

- ``drop``  remove m of the row's battles (frequency ``f_n → f_n − m``);
- ``flip``  reverse m of its outcomes (``y → 1 − y``; ties have no reverse), covariates kept;
- ``add``   add m copies of the battle (same pair, same covariates) with the outcome chosen by the
            actor (player a wins, or player b wins): "all outcomes" restricted to observed battles.

With ``x_n = (e_a − e_b, z_n)``, ``h_n = H⁻¹x_n``, ``a_n = x_nᵀH⁻¹x_n`` (H⁻¹ on the sum-to-zero space)
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

from bayesrank.bt.likelihood import expit, tie_model
from bayesrank.bt.mle import DIVERGED, Design, constrained_covariance, covariance, default_interval, identified, newton, objective
from bayesrank.data.rows import PairRows
from bayesrank.errors import InputError

ACTIONS = ("drop", "flip", "add")
#: the row-level audit's likelihood: binary BT with ties as half-wins (ties='drop' removes tie rows first)
HALF = tie_model("half")


@dataclass
class StyleState:
    """A fitted BT on comparison rows (:class:`~bayesrank.data.rows.PairRows` with ``unit=True``):
    φ̂ = (θ̂, [α̂,] β̂), Hessian H and H⁻¹ (sum-to-zero); ``position``: the model has a position effect."""

    data: PairRows
    params: np.ndarray
    hessian: np.ndarray
    ridge: float = 0.0
    beta_ridge: float = 0.0
    converged: bool = True
    gradient_norm: float = 0.0
    hinv: np.ndarray = field(default=None, repr=False)
    position: bool = False
    ties: str = "half"

    def __post_init__(self):
        if self.hinv is None:
            try:
                self.hinv = constrained_covariance(self.hessian, self.data.n_players)
            except np.linalg.LinAlgError:  # singular on the sum-to-zero space: not identified (fit flags it)
                self.hinv = np.full_like(self.hessian, np.nan)

    @classmethod
    def fit(cls, data: PairRows, ridge: float = 0.0, beta_ridge: float = 0.0, start=None, position: bool = False,
            ties: str = "half") -> StyleState:
        """Row-level Newton MLE (:func:`bayesrank.bt.mle.newton`). ``converged`` also requires a finite,
        *identified* estimate: |θ| below ``bt.mle.DIVERGED`` (else the MLE runs off to infinity) and
        ``QᵀHQ`` well conditioned on the sum-to-zero space (a player without battles, or a disconnected
        comparison graph, leaves a direction of θ that Newton does not move: the "estimate" there is arbitrary)."""
        res = newton(HALF, data, start=start, ridge=ridge, tol=1e-11, position=position, beta_ridge=beta_ridge)
        params, hess = res.params[0], res.hessian[0]
        ok = bool(res.converged[0] and np.all(np.isfinite(params))
                  and np.max(np.abs(params[: data.n_players])) < DIVERGED and identified(hess, data.n_players))
        return cls(data, params, hess, ridge, beta_ridge, ok, float(res.gradient_norm[0]), position=position,
                   ties=ties)

    @property
    def design(self) -> Design:
        d = self.__dict__.get("_design")
        if d is None or d.rows is not self.data:
            d = self.__dict__["_design"] = Design(self.data, HALF, self.position)
        return d

    @property
    def Z(self) -> np.ndarray:
        """(N, q) covariates of each row: ``[1 | X]`` with a position effect, else ``X``."""
        return self.design.Z

    @property
    def covariate_names(self) -> list[str]:
        return (["position"] if self.position else []) + [str(f) for f in self.data.features]

    def covariance_kind(self, kind: str = "auto") -> str:
        """``auto`` → the package's default interval (``bt.mle.default_interval``): cluster-robust when
        the rows carry clusters, ``sandwich`` when some outcomes are fractional (ties as half-wins, a
        soft judge's shares) or weighted, ``fisher`` otherwise."""
        if kind not in ("auto", "fisher", "sandwich", "cluster"):
            raise InputError(f"covariance must be auto, fisher, sandwich or cluster, got {kind!r}")
        if kind != "auto":
            return kind
        d = self.data
        y = d.share[d.total > 0]
        return default_interval("half", bool(((y > 0) & (y < 1)).any()), clustered=d.cluster is not None,
                                weighted=d.weighted)

    def covariance(self, kind: str = "auto") -> np.ndarray:
        """Covariance of φ̂ on the sum-to-zero space: Fisher ``H⁻¹``, the sandwich ``H⁻¹BH⁻¹`` or the
        cluster-robust sandwich (``bt.mle.covariance``), cached per state."""
        kind = self.covariance_kind(kind)
        if kind == "fisher":
            return self.hinv
        cache = self.__dict__.setdefault("_covariances", {})
        if kind not in cache:
            cache[kind] = covariance(HALF, self.data, self.params, self.hessian, kind, position=self.position,
                                     hinv=self.hinv)
        return cache[kind]

    def refit(self, data: PairRows, start=None) -> StyleState:
        """Exact refit of ``data`` with this state's penalties (warm start at φ̂ unless ``start``)."""
        return StyleState.fit(data, self.ridge, self.beta_ridge, start=self.params if start is None else start,
                              position=self.position, ties=self.ties)

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
        """``H⁻¹ x_n`` for rows, one per row: (n, K+q) (H⁻¹ is symmetric: row gathers)."""
        d, k = self.data, self.n_players
        out = self.hinv[d.i[rows]] - self.hinv[d.j[rows]]
        if self.Z.shape[1]:
            out += self.Z[rows] @ self.hinv[k:]
        return out

    def x_dot(self, rows: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """``x_nᵀ v`` for each row n and each column v of ``vectors`` ((K+q,) or (K+q, m))."""
        d, k = self.data, self.n_players
        out = vectors[d.i[rows]] - vectors[d.j[rows]]
        if self.Z.shape[1]:
            out = out + self.Z[rows] @ vectors[k:]
        return out

    def loss_terms(self, params: np.ndarray | None = None):
        """(η, σ(η), per-row loss weight ``f·v``) of every row at ``params`` (default φ̂)."""
        params = self.params if params is None else params
        eta = self.design.eta(params[None])[0]
        return eta, expit(eta), self.data.total * self.data.weight

    def chain(self, row_values: np.ndarray) -> np.ndarray:
        """``Σ_n row_values_n x_n`` ((K+q,))."""
        return self.design.gradient(np.asarray(row_values, dtype=float)[None, :, None])[0]

    def per_battle(self, rows: np.ndarray):
        """(σ(η_n), score s_n = v(σ − y), curvature c_n = vσ(1 − σ)) per battle of each row (y: the share won by i)."""
        _, p, _ = self.loss_terms()
        v = self.data.weight[rows]
        y = self.data.share[rows]
        return p[rows], v * (p[rows] - y), v * p[rows] * (1 - p[rows])


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
    freq, share = d.total, d.share
    rows = np.flatnonzero(freq > 0)
    p, s, c = state.per_battle(rows)
    v = d.weight[rows]
    if kind == "drop":
        return Candidates(kind, rows, share[rows], freq[rows], -s, -c)
    if kind == "flip":
        ok = share[rows] != 0.5
        rows, p, v = rows[ok], p[ok], v[ok]
        y = share[rows]
        return Candidates(kind, rows, 1.0 - y, freq[rows], v * (2 * y - 1), np.zeros(len(rows)))
    both = np.concatenate([rows, rows])
    y_new = np.concatenate([np.ones(len(rows)), np.zeros(len(rows))])
    pp, vv, cc = np.concatenate([p, p]), np.concatenate([v, v]), np.concatenate([c, c])
    return Candidates(kind, both, y_new, np.full(len(both), np.inf), vv * (pp - y_new), cc)


def leverage(state: StyleState, rows: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``a_n = x_nᵀ H⁻¹ x_n`` from ``h = H⁻¹ x_n`` (one row of ``h`` per row n)."""
    d, k, n = state.data, state.n_players, np.arange(len(rows))
    a = h[n, d.i[rows]] - h[n, d.j[rows]]
    if state.Z.shape[1]:
        a = a + np.einsum("nf,nf->n", h[:, k:], state.Z[rows])
    return a


def predicted_params(state: StyleState, cand: Candidates, m=1.0, order: str = "1sN", idx=None) -> np.ndarray:
    """Predicted φ after ``m`` applications of each candidate, one row each ((n, K+q)): first order or 1sN."""
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


def apply(data: PairRows, cand: Candidates, idx: int, m: float) -> PairRows:
    """The data after ``m`` applications of candidate ``idx`` (a row holds ``f`` identical comparisons:
    dropping ``m`` scales it by ``(f − m)/f``; a flip swaps its outcome shares; an add appends the
    comparison with the chosen outcome)."""
    n = int(cand.row[idx])
    c = data.counts
    f = float(c[n].sum())
    if cand.kind == "drop":
        counts = c.copy()
        counts[n] *= (f - m) / f
        return data.with_counts(counts)
    if cand.kind == "flip" and m >= f:
        counts = c.copy()
        counts[n] = c[n, [1, 0, 2]]
        return data.with_counts(counts)
    out = data
    if cand.kind == "flip":
        counts = c.copy()
        counts[n] *= (f - m) / f
        out = data.with_counts(counts)
        new = c[n, [1, 0, 2]] * (m / f)
    else:
        new = np.array([m, 0.0, 0.0]) if cand.y_new[idx] == 1.0 else np.array([0.0, m, 0.0])
    return out.append(data.i[n], data.j[n], new, data.X[n], data.weight[n] if data.weighted else None)


def apply_batch(data: PairRows, cand: Candidates, batch) -> PairRows:
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
        _, g, _ = objective(HALF, new, phi[None], ridge=state.ridge, beta_ridge=state.beta_ridge,
                            position=state.position)
        step = state.hinv @ g[0]
        phi = phi - (step - coef * (h @ g[0]) * h)
    return new, phi


def newton_point_covariance(state: StyleState, cand: Candidates, idx: int, m: float, sweeps: int = 2) -> np.ndarray:
    """``H⁻¹`` (sum-to-zero) of the perturbed data at its Newton point (:func:`newton_point`)."""
    new, phi = newton_point(state, cand, idx, m, sweeps)
    _, _, hess = objective(HALF, new, phi[None], ridge=state.ridge, beta_ridge=state.beta_ridge,
                           position=state.position)
    return constrained_covariance(hess[0], state.n_players)
