"""The fitted Bradley–Terry state an audit perturbs, and exact refits of perturbed counts.

Per-match loss for pair ``r = {i, j}`` with ``d = θ_i − θ_j`` and outcome cell ``o`` ∈ {i wins,
j wins, tie}: ``ℓ_o(d) = −[y_o log σ(d) + (1 − y_o) log σ(−d)]`` with ``y = (1, 0, ½)`` for
``ties="half"`` (a tie is half a win each) and tie cells carrying no loss for ``ties="drop"``.
Its derivatives in ``d`` are

    s_o(d) = σ(d) − y_o          (score),
    c(d)   = σ(d) σ(−d)          (curvature, the same for every outcome),
    c'(d)  = c(d) (1 − 2σ(d))    (third derivative, needed by the CI objectives).

With ``x_r = e_i − e_j`` the per-match gradient in θ is ``g = s_o x_r`` and the Hessian of the
total loss is ``H = Σ_r W_r c(d_r) x_r x_rᵀ (+ ridge I)`` (``W_r`` = effective matches of the pair).
``H⁻¹`` below always means ``Q (QᵀHQ)⁻¹ Qᵀ`` on the sum-to-zero space (``bt.mle.constrained_covariance``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit

from bayesrank.bt.likelihood import tie_model
from bayesrank.bt.mle import constrained_covariance, default_interval, newton
from bayesrank.data.aggregate import PairCounts, comparison_graph
from bayesrank.errors import InputError, NoFiniteEstimateError

SUPPORTED_TIES = ("half", "drop")
COVARIANCE_KINDS = ("auto", "fisher", "sandwich")
OUTCOMES = ("a_wins", "b_wins", "tie")  # cells of pair (player_a, player_b) = (i, j), i < j


def outcome_targets(ties: str) -> np.ndarray:
    """``y_o`` per outcome cell; NaN marks a cell without likelihood (ties under ``drop``)."""
    return np.array([1.0, 0.0, 0.5 if ties == "half" else np.nan])


def per_match_derivatives(d: np.ndarray, ties: str):
    """(score (…,3), curvature (…,3), third (…,3)) of the per-match loss w.r.t. ``d``."""
    p = expit(d)[..., None]
    y = outcome_targets(ties)
    active = ~np.isnan(y)
    s = np.where(active, p - np.nan_to_num(y), 0.0)
    c = np.where(active, p * (1 - p), 0.0)
    c3 = np.where(active, p * (1 - p) * (1 - 2 * p), 0.0)
    return s, c, c3


def complete_pairs(counts: PairCounts) -> PairCounts:
    """Same data on every unordered pair ``i < j`` (unobserved pairs get zero counts), so that
    Add actions on new pairs can be refitted with the same pair index."""
    k = counts.n_players
    ii, jj = np.triu_indices(k, 1)
    code = counts.i * k + counts.j
    full = np.zeros((len(ii), 3))
    pos = np.searchsorted(ii * k + jj, code)
    full[pos] = counts.counts
    return PairCounts(counts.players, ii.astype(np.int64), jj.astype(np.int64), full[:, 0], full[:, 1], full[:, 2])


@dataclass
class BTState:
    """A fitted BT model on ``counts``: θ̂, Hessian ``H`` and ``H⁻¹`` (sum-to-zero)."""

    counts: PairCounts
    ties: str
    ridge: float
    theta: np.ndarray
    hessian: np.ndarray
    hinv: np.ndarray = field(default=None)
    fit_info: dict | None = field(default=None, repr=False)  # the base fit's Newton: converged, iterations
    _covariances: dict = field(default_factory=dict, repr=False, compare=False)
    penalty: str | None = None  # "firth": θ̂ and every refit are Firth's bias-reduced estimates (bt.firth)

    def __post_init__(self):
        if self.hinv is None:
            self.hinv = constrained_covariance(self.hessian, self.counts.n_players)

    def covariance_kind(self, kind: str = "auto") -> str:
        """``auto`` → the default interval of ``bt.fit("mle")`` and of the review on these counts:
        ``sandwich`` when ties are scored as half-wins and the data contain ties, ``fisher``
        otherwise (``BradleyTerry.interval_for``); ``fisher`` and ``sandwich`` are returned as is."""
        if kind not in COVARIANCE_KINDS:
            raise InputError(f"covariance must be one of {COVARIANCE_KINDS}, got {kind!r}")
        if kind != "auto":
            return kind
        return default_interval(self.ties, float(self.counts.ties.sum()) > 0)

    def covariance(self, kind: str = "auto") -> np.ndarray:
        """Covariance of θ̂ on the sum-to-zero space: ``fisher`` = ``H⁻¹``; ``sandwich`` =
        ``H⁻¹ B H⁻¹`` with ``B = Σ_n s_n s_nᵀ`` over individual comparisons (``bt.mle.meat``, as
        ``bt.mle.sandwich_covariance``); ``auto`` = :meth:`covariance_kind` (cached per state)."""
        kind = self.covariance_kind(kind)
        if kind == "fisher":
            return self.hinv
        if kind not in self._covariances:
            from bayesrank.bt.mle import meat

            self._covariances[kind] = self.hinv @ meat(tie_model(self.ties), self.counts, self.theta) @ self.hinv
        return self._covariances[kind]

    def with_fit(self, table: np.ndarray, fit: Refit) -> BTState:
        """The state of the perturbed count ``table`` at its exact refit ``fit`` (same pairs, ties, ridge)."""
        return BTState(self.counts.with_counts(table), self.ties, self.ridge, fit.theta, fit.hessian, fit.hinv,
                       penalty=self.penalty)

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def fit(cls, counts: PairCounts, ties: str = "half", ridge: float = 0.0, start=None,
            penalty: str | None = None) -> "BTState":
        """The MLE (``ridge``: penalised by (ridge/2)·Σθ²), or with ``penalty="firth"`` Firth's
        bias-reduced estimate (finite when a player never won or never lost; :mod:`bayesrank.bt.firth`):
        its Hessian is the information at that estimate, and every refit of an audit is a Firth fit."""
        check_ties(ties)
        if penalty == "firth":
            from bayesrank.bt.firth import firth_fit

            if ridge:
                raise InputError("Firth's bias reduction and a ridge penalty are alternatives: pass one")
            f = firth_fit(counts, ties=ties, start=start)
            return cls(counts, ties, 0.0, f.theta[0], f.info[0], penalty="firth",
                       fit_info={"method": "Firth bias-reduced MLE", "converged": True, "iterations": int(f.iterations)})
        if penalty is not None:
            raise InputError(f"penalty must be None or 'firth', got {penalty!r}")
        if ridge == 0:
            rep = comparison_graph(counts, ties=ties)
            if not rep.finite_mle:
                raise NoFiniteEstimateError("no finite maximum-likelihood estimate: " + rep.advice())
        res = newton(tie_model(ties), counts, start=start, ridge=ridge)
        if not res.converged[0]:
            raise NoFiniteEstimateError("Newton did not converge: the MLE may not be finite; use ridge>0")
        return cls(counts, ties, ridge, res.params[0], res.hessian[0],
                   fit_info={"method": "Newton MLE" if ridge == 0 else f"Newton ridge MLE (ridge {ridge:g})",
                             "converged": bool(res.converged[0]), "iterations": int(res.iterations)})

    def gradient_norm(self) -> float:
        """‖∇L(θ̂)‖ on the sum-to-zero space (the loss the fit minimised, ridge included; Firth: the
        modified score)."""
        from bayesrank.bt.mle import objective

        if self.penalty == "firth":
            from bayesrank.bt.firth import binomial_rows, pieces

            y, n = binomial_rows(self.counts.counts if self.ties == "half" else self._without_ties(), self.ties)
            return float(np.linalg.norm(pieces(self.theta[None], self.counts.i, self.counts.j, y, n).score[0]))
        _, g, _ = objective(tie_model(self.ties), self.counts, self.theta[None], ridge=self.ridge)
        g = g[0, : self.n_players]
        return float(np.linalg.norm(g - g.mean()))

    def _without_ties(self) -> np.ndarray:
        c = self.counts.counts.copy()
        c[:, 2] = 0.0
        return c

    # --- per pair quantities ------------------------------------------------------------------
    @property
    def players(self) -> np.ndarray:
        return self.counts.players

    @property
    def n_players(self) -> int:
        return self.counts.n_players

    @property
    def n_matches(self) -> float:
        return float(self.counts.counts.sum())

    def effective_weight(self) -> np.ndarray:
        """``W_r``: matches of pair r that carry likelihood (ties count under ``half``)."""
        c = self.counts.counts
        return c[:, 0] + c[:, 1] + (c[:, 2] if self.ties == "half" else 0.0)

    def match_derivatives(self, d):
        """(score, curvature, third) (…,3) of the per-match loss at linear predictors ``d``."""
        return per_match_derivatives(d, self.ties)

    def derivatives(self, i, j):
        """(score, curvature, third) (n,3) of one match on pairs (i, j) at θ̂."""
        return self.match_derivatives(self.theta[i] - self.theta[j])

    def hx(self, i, j) -> np.ndarray:
        """``H⁻¹ x`` for pairs (i, j): (K, n)."""
        return self.hinv[:, i] - self.hinv[:, j]

    def leverage_base(self, i, j) -> np.ndarray:
        """``a = xᵀ H⁻¹ x`` for pairs (i, j)."""
        h = self.hinv
        return h[i, i] + h[j, j] - 2 * h[i, j]

    def third_derivative_vector(self, z: np.ndarray) -> np.ndarray:
        """``q = Σ_r W_r c'(d_r) (x_rᵀ z)² x_r`` (z: (K,) or (K,m) summed over columns)."""
        c = self.counts
        _, _, c3 = self.derivatives(c.i, c.j)
        xz = z[c.i] - z[c.j]
        xz2 = (xz**2).sum(axis=1) if xz.ndim == 2 else xz**2
        coef = self.effective_weight() * c3[:, 0] * xz2
        k = self.n_players
        return np.bincount(c.i, coef, k) - np.bincount(c.j, coef, k)

    def ranking(self) -> np.ndarray:
        """Player indices from best to worst."""
        return np.argsort(-self.theta, kind="stable")


def check_ties(ties: str) -> None:
    if ties not in SUPPORTED_TIES:
        raise InputError(f"the influence audit supports ties in {SUPPORTED_TIES}, got {ties!r} (Davidson ties: not yet)")


@dataclass
class Refit:
    """Exact refits of B perturbed datasets: θ (B,K), H⁻¹ (B,K,K), finite/converged flags."""

    theta: np.ndarray
    hinv: np.ndarray | None
    ok: np.ndarray
    hessian: np.ndarray | None = None


def refit(state: BTState, batch_counts: np.ndarray, with_hinv: bool = False, start=None, chunk: int = 256) -> Refit:
    """Exact MLE of each perturbed count table ``batch_counts`` (B,R,3) on ``state.counts``' pairs,
    by batched Newton warm-started at θ̂. A replicate whose graph admits no finite MLE (some player
    never wins or never loses) is flagged ``ok=False`` and its θ set to NaN."""
    batch_counts = np.asarray(batch_counts, dtype=float)
    b = batch_counts.shape[0]
    k = state.n_players
    model = tie_model(state.ties)
    thetas = np.full((b, k), np.nan)
    hinvs = np.full((b, k, k), np.nan) if with_hinv else None
    hess = np.full((b, k, k), np.nan) if with_hinv else None
    ok = np.ones(b, dtype=bool)
    if state.penalty == "firth":
        return _firth_refit(state, batch_counts, with_hinv, start, chunk)
    if state.ridge == 0:
        base_edges = _edges(state.counts.counts, state.ties)
        for m in range(b):
            if np.all(_edges(batch_counts[m], state.ties) >= base_edges):
                continue  # no win/loss edge lost: strong connectivity (finite MLE) is preserved
            ok[m] = comparison_graph(state.counts.with_counts(batch_counts[m]), ties=state.ties).finite_mle
    idx = np.flatnonzero(ok)
    x0 = state.theta if start is None else start
    for lo in range(0, len(idx), chunk):
        sel = idx[lo : lo + chunk]
        res = newton(model, state.counts, batch_counts=batch_counts[sel], start=x0, ridge=state.ridge, tol=1e-11)
        thetas[sel] = res.params
        ok[sel] = res.converged
        if with_hinv:  # Q(QᵀHQ)⁻¹Qᵀ = (H + 11ᵀ/K)⁻¹ − 11ᵀ/(K(1 + ridge)): 1 is an eigenvector of H
            hinvs[sel] = np.linalg.inv(res.hessian + 1.0 / k) - 1.0 / (k * (1.0 + state.ridge))
            hess[sel] = res.hessian
    thetas[~ok] = np.nan
    return Refit(thetas, hinvs, ok, hess)


def _firth_refit(state: BTState, batch_counts: np.ndarray, with_hinv: bool, start, chunk: int) -> Refit:
    """:func:`refit` of a Firth state: Firth's estimate of each table (``ok=False`` where the
    perturbed comparison graph is disconnected or the fit does not converge); the Hessian is the
    information at the estimate (its inverse the Wald covariance of the Firth fit)."""
    from bayesrank.bt.firth import firth_fit

    b, k = batch_counts.shape[0], state.n_players
    thetas = np.full((b, k), np.nan)
    hinvs = np.full((b, k, k), np.nan) if with_hinv else None
    hess = np.full((b, k, k), np.nan) if with_hinv else None
    ok = np.zeros(b, dtype=bool)
    x0 = state.theta if start is None else start
    for lo in range(0, b, chunk):
        sl = slice(lo, min(b, lo + chunk))
        f = firth_fit(state.counts, ties=state.ties, batch_counts=batch_counts[sl], start=x0, tol=1e-11,
                      strict=False)
        ok[sl] = f.converged
        thetas[sl] = f.theta
        if with_hinv:
            hess[sl] = f.info
            hinvs[sl] = np.linalg.inv(np.nan_to_num(f.info) + 1.0 / k) - 1.0 / k
    thetas[~ok] = np.nan
    if with_hinv:
        hinvs[~ok] = np.nan
    return Refit(thetas, hinvs, ok, hess)


def _edges(table: np.ndarray, ties: str) -> np.ndarray:
    """(R,2) booleans: pair r has an i→j (i beat j) / j→i edge in the win graph."""
    t = table[:, 2] > 0 if ties == "half" else np.zeros(len(table), bool)
    return np.column_stack([(table[:, 0] > 0) | t, (table[:, 1] > 0) | t])


def refit_one(state: BTState, counts_table: np.ndarray, with_hinv: bool = True) -> Refit:
    r = refit(state, counts_table[None], with_hinv=with_hinv)
    return Refit(r.theta[0], None if r.hinv is None else r.hinv[0], bool(r.ok[0]),
                 None if r.hessian is None else r.hessian[0])


def chord_refit(state: BTState, batch_counts: np.ndarray, pair: np.ndarray, dcurv: np.ndarray,
                tol: float = 1e-11, max_iter: int = 60) -> Refit:
    """Exact MLE of B tables that differ from the state's on one pair each (``pair`` (B,)), by the
    chord (fixed-matrix Newton) iteration ``θ ← θ − M⁻¹∇L'(θ)`` with ``M = H + ΔC x xᵀ`` applied by
    Sherman–Morrison (``dcurv`` = change of that pair's curvature weight ΔC). The fixed point is
    the exact MLE; the iteration converges linearly at rate O(‖Δθ‖), so a few O(R + K²) sweeps
    replace Newton's O(K³) solves. Replicates that do not reach ``tol`` are flagged ``ok=False``
    (fall back to :func:`refit`). Verification of audit breaks uses :func:`refit` (batched Newton).
    A Firth state is refitted by :func:`refit` (the chord iteration solves the unpenalised score)."""
    if state.penalty is not None:
        return refit(state, batch_counts)
    c = state.counts
    k = state.n_players
    b = batch_counts.shape[0]
    half = 0.5 if state.ties == "half" else 0.0
    wi = batch_counts[..., 0] + half * batch_counts[..., 2]
    wj = batch_counts[..., 1] + half * batch_counts[..., 2]
    n = wi + wj
    hxs = state.hinv[:, c.i[pair]] - state.hinv[:, c.j[pair]]  # (K,B)
    a = state.leverage_base(c.i[pair], c.j[pair])
    coef = dcurv / (1 + dcurv * a)
    theta = np.repeat(state.theta[None], b, axis=0)
    ok = np.zeros(b, bool)
    act = np.arange(b)  # replicates still iterating
    for _ in range(max_iter):
        th = theta[act]
        m = len(act)
        offs = (np.arange(m) * k)[:, None]
        d = th[:, c.i] - th[:, c.j]
        gd = n[act] * expit(d) - wi[act]  # (m,R)
        g = (np.bincount((offs + c.i).ravel(), gd.ravel(), m * k) - np.bincount((offs + c.j).ravel(), gd.ravel(), m * k)).reshape(m, k)
        g += state.ridge * th
        g -= g.mean(axis=1, keepdims=True)  # project on the sum-to-zero space
        hx = hxs[:, act].T
        step = g @ state.hinv  # H⁻¹ symmetric
        step -= (coef[act] * (g * hx).sum(axis=1))[:, None] * hx
        theta[act] = th - step
        done = np.abs(step).max(axis=1) < tol
        ok[act[done]] = True
        act = act[~done]
        if len(act) == 0:
            break
    theta[~ok] = np.nan
    return Refit(theta, None, ok)
