"""The one fitted Bradley–Terry state an audit perturbs, its local derivatives and exact refits.

The state holds the MLE ``φ̂ = (θ̂, [α̂,] β̂, [λ̂])`` of pair rows (:class:`~bayesrank.data.rows.PairRows`:
aggregated pair counts, ``p = 0``, or comparison rows with features, a position effect and clusters)
under one tie model (:mod:`bayesrank.bt.likelihood`: half, drop, Davidson), its Hessian ``H`` and
``H⁻¹ = Q (QᵀHQ)⁻¹ Qᵀ`` on the sum-to-zero space (``bt.mle.constrained_covariance``).

Row ``r`` enters the loss through its *local parameters* ``ψ_r = J_rᵀφ = (η_r[, λ])`` with
``J_r = [x_r | e_λ]``, ``x_r = (e_i − e_j | Z_r)`` (``L = 1 + n_extra`` columns). Per comparison in
outcome cell ``o`` the tie model gives the loss gradient ``s_o(ψ)`` (L,) and Hessian ``c_o(ψ)`` (L, L);
an action that changes row r's counts by ``m·δ`` (3,) changes the loss gradient at φ̂ by
``J_r m G`` and the Hessian by ``J_r m C J_rᵀ``, with ``G = v Σ_o δ_o s_o`` and ``C = v Σ_o δ_o c_o``
(``v`` the row's importance weight). With ``A = J_rᵀH⁻¹J_r``:

    first order (influence function):  Δφ = −H⁻¹J_r m G
    one-step Newton (1sN):             Δφ = −H⁻¹J_r (I + m C A)⁻¹ m G     (Woodbury)

For ``L = 1`` (half/drop ties) ``(I + mCA)⁻¹ = 1/(1 + mCa)``: Sherman–Morrison, the leverage
correction ``1/(1 − c a)`` of a single drop. A whole-cluster action stacks its rows' ``J_r``
(:meth:`BTState.shift`).

Fast path of the zero-feature binary case (``p = 0``, no position, half/drop ties): refits keep the
pair rows and run batched Newton with the closed form ``(H + 11ᵀ/K)⁻¹ − 11ᵀ/(K(1 + ridge))`` of
``H⁻¹`` and a win-graph edge check, and :func:`chord_refit` solves one-pair perturbations by the
chord iteration.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bayesrank.bt.likelihood import expit, tie_model
from bayesrank.bt.mle import (
    Design,
    constrained_covariance,
    covariance,
    default_interval,
    diverged,
    identified,
    newton,
    objective,
)
from bayesrank.data.aggregate import PairCounts, comparison_graph
from bayesrank.data.rows import PairRows
from bayesrank.errors import InputError, NoFiniteEstimateError

SUPPORTED_TIES = ("half", "drop", "davidson")
COVARIANCE_KINDS = ("auto", "fisher", "sandwich", "cluster")
OUTCOMES = ("a_wins", "b_wins", "tie")  # cells of row (player_a, player_b) = (i, j)
GROUP_BATCH_FLOATS = 4_000_000  # whole-cluster candidates: the most floats of one stacked batch of H⁻¹J_r columns


def outcome_targets(ties: str) -> np.ndarray:
    """``y_o`` per outcome cell of the binary models; NaN marks a cell without likelihood (ties under ``drop``)."""
    return np.array([1.0, 0.0, 0.5 if ties == "half" else np.nan])


def per_match_derivatives(d: np.ndarray, ties: str, which: int | None = None):
    """Binary models: (score (…,3), curvature (…,3), third (…,3)) of the per-match loss w.r.t. ``d``;
    ``which`` (0, 1 or 2): that one alone (the others are not computed)."""
    p = expit(d)[..., None]
    y = outcome_targets(ties)
    active = ~np.isnan(y)
    parts = (lambda: p - y if active.all() else np.where(active, p - np.nan_to_num(y), 0.0),  # half: no mask
             lambda: np.where(active, p * (1 - p), 0.0),
             lambda: np.where(active, p * (1 - p) * (1 - 2 * p), 0.0))
    return parts[which]() if which is not None else tuple(part() for part in parts)


def complete_pairs(counts: PairCounts) -> PairCounts:
    """Same data on every unordered pair ``i < j`` (unobserved pairs get zero counts), so that
    adds on new pairs (``add_space="pairs"``) are refitted with the same pair index."""
    k = counts.n_players
    ii, jj = np.triu_indices(k, 1)
    code = counts.i * k + counts.j
    full = np.zeros((len(ii), 3))
    pos = np.searchsorted(ii * k + jj, code)
    full[pos] = counts.counts
    return PairCounts(counts.players, ii.astype(np.int64), jj.astype(np.int64), full[:, 0], full[:, 1], full[:, 2],
                      excluded=counts.excluded)


def with_pair_templates(state: BTState) -> BTState:
    """Comparison rows: the same fit with one empty template row per unordered pair ``i < j`` at the
    end (player i listed first — a position effect applies as to any comparison listed so —, the
    equal-style feature values :func:`bayesrank.data.features.equal_style`, a cluster of its own), so
    that adds may give any pair a new comparison (``add_space="pairs"``); adds copy only these rows."""
    from bayesrank.data.features import equal_style

    c = state.counts
    k = state.n_players
    ii, jj = np.triu_indices(k, 1)
    x = np.broadcast_to(equal_style(c.features, c.transform), (len(ii), c.n_features))
    rows = c.append(ii, jj, np.zeros((len(ii), 3)), x)
    return BTState(rows, state.ties, state.ridge, state.params, state.hessian, state.hinv, state.fit_info,
                   position=state.position, beta_ridge=state.beta_ridge, penalty=state.penalty,
                   add_rows=np.arange(c.n_rows, rows.n_rows))


def check_ties(ties: str) -> None:
    if ties not in SUPPORTED_TIES:
        raise InputError(f"the audit supports ties in {SUPPORTED_TIES}, got {ties!r}")


@dataclass
class BTState:
    """A fitted BT on ``counts`` (pair rows): φ̂ (``params``), Hessian ``H`` and ``H⁻¹`` (sum-to-zero);
    ``position``: the model has a position effect; ``converged``: the fit is a finite, identified MLE."""

    counts: PairRows
    ties: str
    ridge: float
    params: np.ndarray
    hessian: np.ndarray | None
    hinv: np.ndarray = field(default=None, repr=False, compare=False)
    fit_info: dict | None = field(default=None, repr=False)  # the base fit's Newton: converged, iterations
    position: bool = False
    beta_ridge: float = 0.0
    converged: bool = True
    _cache: dict = field(default_factory=dict, repr=False, compare=False)
    penalty: str | None = None  # "firth": θ̂ and every refit are Firth's bias-reduced estimates (bt.firth)
    add_rows: np.ndarray | None = None  # comparison rows: the rows adds copy (None: the observed ones)

    def __post_init__(self):
        self.params = np.asarray(self.params, dtype=float)
        if self.large:  # a large sparse board: H, H⁻¹ dense only on demand; solves by the sparse factor
            return
        if self.hinv is None:
            try:
                self.hinv = constrained_covariance(self.hessian, self.counts.n_players)
            except np.linalg.LinAlgError:  # singular on the sum-to-zero space: not identified
                self.hinv = np.full_like(self.hessian, np.nan)
                self.converged = False

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def fit(cls, counts: PairRows, ties: str = "half", ridge: float = 0.0, start=None, penalty: str | None = None, *,
            position: bool = False, beta_ridge: float = 0.0) -> BTState:
        """Newton MLE of ``counts`` (raises :class:`NoFiniteEstimateError` when there is none; ``ridge``:
        penalised by (ridge/2)·Σθ²), or with ``penalty="firth"`` Firth's bias-reduced estimate of the
        zero-feature binary model (finite when a player never won or never lost; :mod:`bayesrank.bt.firth`):
        its Hessian is the information at that estimate, and every refit of an audit is a Firth fit."""
        check_ties(ties)
        if penalty == "firth":
            from bayesrank.bt.firth import firth_fit

            if ridge:
                raise InputError("Firth's bias reduction and a ridge penalty are alternatives: pass one")
            if counts.n_features or position or ties == "davidson" or counts.unit:
                raise InputError("Firth's bias reduction is available for the zero-feature binary model on pair "
                                 "counts (no --style, --position-effect, Davidson ties or comparison rows)")
            f = firth_fit(counts, ties=ties, start=start)
            return cls(counts, ties, 0.0, f.theta[0], f.info[0], penalty="firth",
                       fit_info={"method": "Firth bias-reduced MLE", "converged": True, "iterations": int(f.iterations)})
        if penalty is not None:
            raise InputError(f"penalty must be None or 'firth', got {penalty!r}")
        if ties == "drop" and counts.unit and counts.has_ties:
            counts = counts.without_ties()
        if ridge == 0:
            if ties == "davidson" or counts.n_features or position or counts.unit or counts.cluster is not None:
                from bayesrank.bt.mle import check_finite_mle

                check_finite_mle(counts, ties, ridge)
            else:
                rep = comparison_graph(counts, ties=ties)
                if not rep.finite_mle:
                    raise NoFiniteEstimateError("no finite maximum-likelihood estimate: " + rep.advice())
        simple = not (counts.n_features or position or ties == "davidson")
        tol = 1e-10 if simple else 1e-11
        res = newton(tie_model(ties), counts, start=start, ridge=ridge, tol=tol, position=position,
                     beta_ridge=beta_ridge)
        params, hess = res.params[0], res.hessian[0]
        k = counts.n_players
        ok = bool(res.converged[0] and np.all(np.isfinite(params)))
        if not simple:
            ok = ok and not diverged(params[None], k, len(params) - k - tie_model(ties).n_extra)[0] \
                and identified(hess, k)
        if not ok:
            raise NoFiniteEstimateError("Newton did not converge to a finite, identified MLE: use ridge>0"
                                        + (" / beta_ridge>0 or fewer features" if not simple else ""))
        method = "Newton MLE" if ridge == 0 else f"Newton ridge MLE (ridge {ridge:g})"
        st = cls(counts, ties, ridge, params, hess, fit_info={"method": method, "converged": True,
                                                               "iterations": int(res.iterations)},
                 position=position, beta_ridge=beta_ridge)
        if res.factor is not None and st.large:
            st._cache["factor"] = res.factor
        return st

    def refit(self, counts: PairRows, start=None) -> BTState:
        """Exact refit of ``counts`` with this state's model and penalties, warm-started at φ̂ (or
        ``start``; zeros for a cold start: ``start=0``). ``converged=False`` flags a perturbed data set
        without a finite, identified MLE (the audit bans the action that made it)."""
        x0 = self.params if start is None else np.broadcast_to(np.asarray(start, float), self.params.shape)
        if self.large and counts.n_rows == self.counts.n_rows:
            from bayesrank.influence.large import refit_large

            return refit_large(self, counts, x0, cold=start is not None)
        if self.fast and counts.n_rows == self.counts.n_rows:
            rf = refit(self, counts.counts[None], with_hinv=True, start=x0)
            ok = bool(rf.ok[0])
            if not ok:
                return self._failed(counts)
            return BTState(counts, self.ties, self.ridge, rf.params[0], rf.hessian[0], rf.hinv[0],
                           position=self.position, beta_ridge=self.beta_ridge, penalty=self.penalty,
                           add_rows=self.add_rows)
        k = self.n_players
        if self.ties == "davidson":
            t, n = float(counts.ties.sum()), counts.n_comparisons
            if not 0 < t < n:
                return self._failed(counts)
        res = newton(self.model, counts, start=x0, ridge=self.ridge, tol=1e-11, position=self.position,
                     beta_ridge=self.beta_ridge)
        params, hess = res.params[0], res.hessian[0]
        ok = bool(res.converged[0] and np.all(np.isfinite(params))
                  and not diverged(params[None], k, self.n_params - k - self.n_extra)[0] and identified(hess, k))
        if not ok:
            return self._failed(counts)
        return BTState(counts, self.ties, self.ridge, params, hess, position=self.position,
                       beta_ridge=self.beta_ridge, add_rows=self.add_rows)

    def _failed(self, counts):
        nan = None if self.large else np.full_like(self.hessian, np.nan)
        return BTState(counts, self.ties, self.ridge, np.full_like(self.params, np.nan), nan, nan,
                       position=self.position, beta_ridge=self.beta_ridge, converged=False, penalty=self.penalty,
                       add_rows=self.add_rows)

    def with_fit(self, table: np.ndarray, fit: Refit, n: int = 0) -> BTState:
        """The state of the perturbed count ``table`` (same rows) at replicate ``n`` of its exact refit ``fit``."""
        th = fit.params if fit.params.ndim == 1 else fit.params[n]
        hess = None if fit.hessian is None else (fit.hessian if fit.hessian.ndim == 2 else fit.hessian[n])
        hinv = None if fit.hinv is None else (fit.hinv if fit.hinv.ndim == 2 else fit.hinv[n])
        return BTState(self.counts.with_counts(table), self.ties, self.ridge, th,
                       self.hessian if hess is None else hess, hinv, position=self.position,
                       beta_ridge=self.beta_ridge, penalty=self.penalty, add_rows=self.add_rows)

    # --- large sparse boards (bayesrank.bt.sparse) ---------------------------------------------
    @property
    def large(self) -> bool:
        """A large board on a sparse comparison graph, zero-feature binary model, no penalty: the state
        keeps a sparse factorisation of ``H`` and forms ``H`` and ``H⁻¹`` densely only when asked
        (:mod:`bayesrank.influence.large`)."""
        v = self.__dict__.get("_large")
        if v is None:
            from bayesrank.bt import sparse

            c = self.counts
            v = bool(self.penalty is None and not self.position and self.ties in ("half", "drop")
                     and len(self.params) == c.n_players and not c.unit and c.cluster is None
                     and sparse.applies(c.n_players, int((c.total > 0).sum())))
            self.__dict__["_large"] = v
        return v

    @property
    def factor(self):
        """Sparse factorisation of ``H(θ̂)`` (:class:`bayesrank.bt.sparse.HessianFactor`), cached."""
        f = self._cache.get("factor")
        if f is None:
            from bayesrank.bt import sparse

            c = self.counts
            wi, n = sparse.effective_counts(c.weighted_counts(), self.ties)
            _, _, h = sparse._loss_grad_curv(self.theta, c.i, c.j, c.n_players, wi, n, self.ridge)
            f = self._cache["factor"] = sparse.HessianFactor.of_rows(c.i, c.j, c.n_players, h, self.ridge)
        return f

    def solve(self, g: np.ndarray) -> np.ndarray:
        """``H⁻¹ g`` on the sum-to-zero space (``g`` (P,) or (P, m)): sparse solves on a large board."""
        if self.large:
            return self.factor.solve(g)
        return self.hinv @ g

    # --- the model -----------------------------------------------------------------------------
    @property
    def model(self):
        return tie_model(self.ties)

    @property
    def design(self) -> Design:
        d = self._cache.get("design")
        if d is None or d.rows is not self.counts:
            d = self._cache["design"] = Design(self.counts, self.model, self.position)
        return d

    @property
    def fast(self) -> bool:
        """The zero-feature binary case: θ only (refits and chord iterations on pair counts)."""
        return self.n_params == self.n_players

    @property
    def players(self) -> np.ndarray:
        return self.counts.players

    @property
    def n_players(self) -> int:
        return self.counts.n_players

    @property
    def n_params(self) -> int:
        return len(self.params)

    @property
    def n_extra(self) -> int:
        return self.model.n_extra

    @property
    def n_local(self) -> int:
        """``L``: local parameters of a row (η, and λ under Davidson)."""
        return 1 + self.n_extra

    @property
    def theta(self) -> np.ndarray:
        return self.params[: self.n_players]

    @property
    def Z(self) -> np.ndarray:
        """(R, q) covariates of each row: ``[1 | X]`` with a position effect, else ``X``."""
        return self.design.Z

    @property
    def covariate_names(self) -> list[str]:
        return (["position"] if self.position else []) + [str(f) for f in self.counts.features]

    @property
    def n_matches(self) -> float:
        return float(self.counts.counts.sum())

    @property
    def gradient_norm_value(self) -> float:
        return self.gradient_norm()

    def ranking(self) -> np.ndarray:
        """Player indices from best to worst."""
        return np.argsort(-self.theta, kind="stable")

    def gradient_norm(self) -> float:
        """‖∇L(φ̂)‖ on the sum-to-zero space (the loss the fit minimised, penalties included; Firth: the
        modified score)."""
        if self.penalty == "firth":
            from bayesrank.bt.firth import binomial_rows, pieces

            c = self.counts.counts.copy()
            if self.ties != "half":
                c[:, 2] = 0.0
            y, n = binomial_rows(c, self.ties)
            return float(np.linalg.norm(pieces(self.theta[None], self.counts.i, self.counts.j, y, n).score[0]))
        _, g, _ = objective(self.model, self.counts, self.params[None], ridge=self.ridge, position=self.position,
                            beta_ridge=self.beta_ridge)
        g = g[0].copy()
        k = self.n_players
        g[:k] -= g[:k].mean()
        return float(np.linalg.norm(g))

    # --- covariances ----------------------------------------------------------------------------
    def covariance_kind(self, kind: str = "auto") -> str:
        """``auto`` → the package's one default interval (``bt.mle.default_interval``, as
        ``bt.fit("mle")`` and the review): cluster-robust with clusters, sandwich with half-win ties,
        outcome shares or weights, Fisher otherwise; other kinds are returned as is."""
        if kind not in COVARIANCE_KINDS:
            raise InputError(f"covariance must be one of {COVARIANCE_KINDS}, got {kind!r}")
        if kind != "auto":
            return kind
        d = self.counts
        return default_interval(self.ties, d.has_ties, d.fractional, d.cluster is not None, d.weighted)

    def covariance(self, kind: str = "auto") -> np.ndarray:
        """Covariance of φ̂ on the sum-to-zero space (``bt.mle.covariance``), cached per state."""
        kind = self.covariance_kind(kind)
        if kind == "fisher":
            return self.hinv
        cache = self._cache.setdefault("cov", {})
        if kind not in cache:
            cache[kind] = covariance(self.model, self.counts, self.params, self.hessian, kind,
                                     position=self.position, hinv=self.hinv)
        return cache[kind]

    # --- local derivatives of rows --------------------------------------------------------------
    def local_derivatives(self, rows: np.ndarray, params: np.ndarray | None = None):
        """(score (n,3,L), curvature (n,3,L,L)) per comparison of each outcome cell of ``rows`` w.r.t.
        the local parameters ψ = (η[, λ]), times the row's importance weight."""
        params = self.params if params is None else params
        d = self.counts
        eta = params[d.i[rows]] - params[d.j[rows]]
        if self.Z.shape[1]:
            k = self.n_players
            eta = eta + self.Z[rows] @ params[k:k + self.Z.shape[1]]
        lam = params[-1:] if self.n_extra else None
        m = self.model
        s = m.outcome_scores(eta, lam)
        c = m.outcome_hessians(eta, lam)
        v = d.weight[rows]
        return s * v[:, None, None], c * v[:, None, None, None]

    def derivatives(self, i, j):
        """Binary zero-feature models: (score, curvature, third) (n,3) of one match on pairs (i, j) at θ̂."""
        return self.match_derivatives(self.theta[i] - self.theta[j])

    def match_derivatives(self, d, which: int | None = None):
        """Binary models: (score, curvature, third) (…,3) of the per-match loss at linear predictors ``d``
        (``which``: only that one of the three)."""
        if self.n_extra:
            raise InputError("per-match derivatives in d alone exist for binary tie models (half, drop)")
        return per_match_derivatives(d, self.ties, which)

    def eta(self, params: np.ndarray | None = None) -> np.ndarray:
        p = self.params if params is None else params
        return self.design.eta(p[None])[0]

    def hj(self, rows: np.ndarray) -> np.ndarray:
        """``H⁻¹J_r`` for each row: (n, P, L) (H⁻¹ symmetric: row gathers)."""
        d, k = self.counts, self.n_players
        h = self.hinv[d.i[rows]] - self.hinv[d.j[rows]]
        if self.Z.shape[1]:
            h = h + self.Z[rows] @ self.hinv[k:k + self.Z.shape[1]]
        if not self.n_extra:
            return h[:, :, None]
        lam = np.broadcast_to(self.hinv[-1], h.shape)
        return np.stack([h, lam], axis=2)

    def j_dot(self, rows: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """``J_rᵀ v`` for each row and column of ``vectors`` ((P,) → (n, L); (P, m) → (n, L, m))."""
        d, k = self.counts, self.n_players
        out = vectors[d.i[rows]] - vectors[d.j[rows]]
        if self.Z.shape[1]:
            out = out + np.tensordot(self.Z[rows], vectors[k:k + self.Z.shape[1]], axes=(1, 0))
        if not self.n_extra:
            return out[:, None]
        lam = np.broadcast_to(vectors[-1], out.shape)
        return np.stack([out, lam], axis=1)

    def x_dot(self, rows: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """``x_rᵀ v`` (the η direction of :meth:`j_dot`)."""
        return self.j_dot(rows, vectors)[:, 0]

    def leverage(self, rows: np.ndarray, hj: np.ndarray | None = None) -> np.ndarray:
        """``A_r = J_rᵀ H⁻¹ J_r``: (n, L, L)."""
        hj = self.hj(rows) if hj is None else hj
        d, k, n = self.counts, self.n_players, np.arange(len(rows))
        a = hj[n, d.i[rows]] - hj[n, d.j[rows]]  # (n, L)
        if self.Z.shape[1]:
            a = a + np.einsum("nql,nq->nl", hj[:, k:k + self.Z.shape[1]], self.Z[rows])
        if not self.n_extra:
            return a[:, None, :]
        return np.stack([a, hj[:, -1]], axis=1)

    def hx(self, i, j) -> np.ndarray:
        """Zero-feature models: ``H⁻¹ x`` for pairs (i, j): (K, n) (a large board: one sparse solve per pair)."""
        if self.large:
            ii, jj = np.atleast_1d(i), np.atleast_1d(j)
            x = np.zeros((self.n_players, len(ii)))
            x[ii, np.arange(len(ii))] += 1.0
            x[jj, np.arange(len(ii))] -= 1.0
            out = self.factor.solve(x)
            return out if np.ndim(i) else out[:, 0]
        return self.hinv[:, i] - self.hinv[:, j]

    def leverage_base(self, i, j) -> np.ndarray:
        """Zero-feature models: ``a = xᵀ H⁻¹ x`` for pairs (i, j)."""
        if self.large:
            ii, jj = np.atleast_1d(i), np.atleast_1d(j)
            h = self.hx(ii, jj)
            n = np.arange(len(ii))
            a = h[ii, n] - h[jj, n]
            return a if np.ndim(i) else a[0]
        h = self.hinv
        return h[i, i] + h[j, j] - 2 * h[i, j]

    def per_battle(self, rows: np.ndarray):
        """(σ(η_r), score, curvature) per comparison of each row at its outcome shares (binary models)."""
        p = expit(self.eta()[rows])
        v = self.counts.weight[rows]
        y = self.counts.share[rows]
        return p, v * (p - y), v * p * (1 - p)

    def third_derivative_vector(self, z: np.ndarray) -> np.ndarray:
        """``q = Σ_r J_r t_r`` with ``t_r[l] = Σ_ab (J_rᵀz)_a (J_rᵀz)_b T_r[a, b, l]``, ``T_r`` the third
        derivatives of row r's loss in ψ = (η[, λ]) (the tie model's ``outcome_thirds`` times the
        row's weighted counts): ``zᵀ (dH[Δφ]) z = qᵀΔφ``, how the curvature moves with φ (z: (P,) or
        (P,m) summed over columns). Binary models: ``q = Σ_r W_r c'(η_r) (x_rᵀ z)² x_r``."""
        d = self.counts
        if self.fast and not d.weighted:  # the per-match derivatives (a PyMC state supplies its own)
            _, _, c3 = self.derivatives(d.i, d.j)
            xz = z[d.i] - z[d.j]
            xz2 = (xz**2).sum(axis=1) if xz.ndim == 2 else xz**2
            coef = self.effective_weight() * c3[:, 0] * xz2
            k = self.n_players
            return np.bincount(d.i, coef, k) - np.bincount(d.j, coef, k)
        rows = np.arange(d.n_rows)
        eta = self.eta()
        lam = self.params[-1:] if self.n_extra else None
        third = np.einsum("ro,roabc->rabc", d.weighted_counts(), self.model.outcome_thirds(eta, lam))
        jz = self.j_dot(rows, z)  # (R, L) or (R, L, m)
        if jz.ndim == 2:
            jz = jz[..., None]
        t = np.einsum("ram,rbm,rabc->rc", jz, jz, third)
        return self.design.gradient(t[None])[0]

    def effective_weight(self) -> np.ndarray:
        """``W_r``: comparisons of row r that carry likelihood (ties count under ``half`` and Davidson)."""
        c = self.counts.counts
        return c[:, 0] + c[:, 1] + (c[:, 2] if self.ties != "drop" else 0.0)

    # --- predictions ------------------------------------------------------------------------------
    def shift(self, cand, m=1.0, order: str = "1sN", idx=None) -> np.ndarray:
        """Predicted ``Δφ`` (n, P) after ``m`` applications of each candidate (``idx``: a subset), by
        the influence function (``order="first"``) or one Newton step (module docstring)."""
        sel = np.arange(len(cand)) if idx is None else np.atleast_1d(idx)
        m = np.broadcast_to(np.asarray(m, dtype=float), (len(cand),))[sel] if np.ndim(m) else np.full(len(sel), float(m))
        if cand.members is not None:
            if order == "first":
                return self._group_first(cand, sel, m)
            if order not in ("1sN", "linear"):
                raise InputError(f"order must be 'first' or '1sN', got {order!r}")
            return self._group_newton(cand, sel, m)
        rows = cand.r[sel]
        g, c = cand.local(self, sel)  # (n, L), (n, L, L)
        hj = self.hj(rows)
        mg = m[:, None] * g
        if order == "first":
            w = -mg
        elif order in ("1sN", "linear"):
            a = self.leverage(rows, hj)
            if self.n_local == 1:
                w = -mg / (1 + m * c[:, 0, 0] * a[:, 0, 0])[:, None]
            else:
                eye = np.eye(self.n_local)
                w = -np.linalg.solve(eye + m[:, None, None] * c @ a, mg[..., None])[..., 0]
        else:
            raise InputError(f"order must be 'first' or '1sN', got {order!r}")
        return np.einsum("npl,nl->np", hj, w)

    def _group_jacobian(self, rows):
        """(P, M·L) stacked ``H⁻¹J_r`` and (M·L, M·L) ``JᵀH⁻¹J`` of a group of rows."""
        hj = self.hj(rows)  # (M, P, L)
        big = hj.transpose(1, 0, 2).reshape(self.n_params, -1)
        jd = self.j_dot(rows, big)  # (M, L, M·L)
        return big, jd.reshape(-1, big.shape[1])

    def _group_first(self, cand, sel, m) -> np.ndarray:
        """First-order Δφ of group candidates ``sel``: the sum of their rows' ``−H⁻¹J_r G_r`` (vectorised)."""
        ptr, rows, deltas = cand.members
        parts = [np.arange(ptr[n], ptr[n + 1]) for n in sel]
        if not parts:
            return np.zeros((0, self.n_params))
        idx = np.concatenate(parts)
        s, _ = self.local_derivatives(rows[idx])
        g = np.einsum("mo,mol->ml", deltas[idx], s)
        per_row = -np.einsum("mpl,ml->mp", self.hj(rows[idx]), g)
        starts = np.concatenate([[0], np.cumsum([len(q) for q in parts])[:-1]])
        return np.add.reduceat(per_row, starts, axis=0) * np.asarray(m, float)[:, None]

    def _group_batches(self, cand, sel, m, chunk: int = GROUP_BATCH_FLOATS):
        """The whole-cluster candidates ``sel`` (``m`` applications each) in batches of one size M:
        ``(which, B, A, C, g)`` with, per group, ``B = [H⁻¹J_r]`` (G, P, M·L), ``A = JᵀB`` as
        (G, M, L, M·L), ``C`` its rows' curvature blocks (G, M, L, L) and ``g`` their scores (G, M·L),
        both times m; ``which`` indexes ``sel``. ``chunk``: the most floats of a batch's ``B``."""
        ptr, rows_all, deltas_all = cand.members
        sel = np.asarray(sel, dtype=np.int64)
        sizes = ptr[sel + 1] - ptr[sel]
        d, k, f, P, L = self.counts, self.n_players, self.Z.shape[1], self.n_params, self.n_local
        for size in np.unique(sizes):
            M = int(size)
            if M == 0:
                continue
            which_all = np.flatnonzero(sizes == size)
            step = max(1, chunk // (P * M * L))
            for lo in range(0, len(which_all), step):
                which = which_all[lo:lo + step]
                G = len(which)
                idx = (ptr[sel[which]][:, None] + np.arange(M)).ravel()
                rows, delta = rows_all[idx], deltas_all[idx]
                s, c = self.local_derivatives(rows)  # (G·M, 3, L), (G·M, 3, L, L)
                mm = np.asarray(m, dtype=float)[which]
                g = (delta[:, :, None] * s).sum(axis=1).reshape(G, M * L) * mm[:, None]
                big = self.hj(rows).reshape(G, M, P, L).transpose(0, 2, 1, 3).reshape(G, P, M * L)
                gi = np.arange(G)[:, None]
                ii, jj = d.i[rows].reshape(G, M), d.j[rows].reshape(G, M)
                a = big[gi, ii] - big[gi, jj]  # (G, M, M·L): J_rᵀ B per row r of each group
                if f:
                    a = a + np.einsum("gmf,gfq->gmq", self.Z[rows].reshape(G, M, f), big[:, k:k + f])
                a = np.stack([a, np.broadcast_to(big[:, -1][:, None], a.shape)], axis=2) if self.n_extra \
                    else a[:, :, None]
                cc = np.einsum("gmo,gmolk->gmlk", delta.reshape(G, M, 3), c.reshape(G, M, 3, L, L)) \
                    * mm[:, None, None, None]
                yield which, big, a, cc, g

    @staticmethod
    def _woodbury_factor(a, cc):
        """``I + C A`` (G, M·L, M·L) of a batch (C block diagonal)."""
        G, M, L, ML = a.shape
        return np.eye(ML) + np.einsum("gmlk,gmkq->gmlq", cc, a).reshape(G, ML, ML)

    def _group_newton(self, cand, sel, m, chunk: int = GROUP_BATCH_FLOATS) -> np.ndarray:
        """One-step Newton Δφ of whole-cluster candidates ``sel``, batched (:meth:`_group_batches`):
        per group ``−B (I + C A)⁻¹ g`` (equal to one solve per group, tests/influence/test_group_newton.py)."""
        out = np.zeros((len(sel), self.n_params))
        for which, big, a, cc, g in self._group_batches(cand, sel, m, chunk):
            sol = np.linalg.solve(self._woodbury_factor(a, cc), g[..., None])[..., 0]
            out[which] = -np.einsum("gpq,gq->gp", big, sol)
        return out

    def group_quadratic_change(self, cand, m, u: np.ndarray, chunk: int = GROUP_BATCH_FLOATS) -> np.ndarray:
        """``uᵀ(H + J mC Jᵀ)⁻¹u − uᵀH⁻¹u`` of every whole-cluster candidate (the curvature update of
        :meth:`predicted_hinv` by Woodbury, ``−(Bᵀu)ᵀ (I + C A)⁻¹ C (Bᵀu)``), batched."""
        m = np.broadcast_to(np.asarray(m, dtype=float), (len(cand),))
        out = np.zeros(len(cand))
        for which, big, a, cc, _ in self._group_batches(cand, np.arange(len(cand)), m, chunk):
            G, M, L, ML = a.shape
            bu = np.einsum("gpq,p->gq", big, u)
            cbu = np.einsum("gmlk,gmk->gml", cc, bu.reshape(G, M, L)).reshape(G, ML)
            sol = np.linalg.solve(self._woodbury_factor(a, cc), cbu[..., None])[..., 0]
            out[which] = -np.einsum("gq,gq->g", bu, sol)
        return out

    def predicted_hinv(self, cand, idx: int, m: float) -> np.ndarray:
        """``(H + J mC Jᵀ)⁻¹`` by Woodbury (the curvature update; the shift of φ ignored)."""
        if cand.members is not None:
            rows, delta = cand.member_rows(idx)
            _, c = self.local_derivatives(rows)
            big, a = self._group_jacobian(rows)
            cc = _block_diag(np.einsum("mo,molk->mlk", delta, c) * m)
        else:
            rows = cand.r[[idx]]
            _, c = cand.local(self, [idx])
            hj = self.hj(rows)
            big, a, cc = hj[0], self.leverage(rows, hj)[0], m * c[0]
        inner = np.linalg.solve(np.eye(len(cc)) + cc @ a, cc)
        return self.hinv - big @ inner @ big.T


def _lazy_matrix(name: str, build):
    """A field of :class:`BTState` that a large board forms densely only when it is read."""
    key = "_" + name

    def get(self):
        v = self.__dict__.get(key)
        if v is None and self.__dict__.get("_large"):
            v = self.__dict__[key] = build(self)
        return v

    def put(self, value):
        self.__dict__[key] = value

    return property(get, put)


BTState.hessian = _lazy_matrix("hessian", lambda st: st.factor.dense())
BTState.hinv = _lazy_matrix("hinv", lambda st: constrained_covariance(st.hessian, st.n_players))


def _block_diag(blocks: np.ndarray) -> np.ndarray:
    mm, ll, _ = blocks.shape
    out = np.zeros((mm * ll, mm * ll))
    for q in range(mm):
        out[q * ll:(q + 1) * ll, q * ll:(q + 1) * ll] = blocks[q]
    return out


@dataclass
class Refit:
    """Exact refits of B perturbed datasets: φ (B,P), H⁻¹ (B,P,P), finite/converged flags."""

    params: np.ndarray
    hinv: np.ndarray | None
    ok: np.ndarray
    hessian: np.ndarray | None = None
    k: int | None = None

    @property
    def theta(self) -> np.ndarray:
        """θ (…, K) of every replicate."""
        return self.params if self.k is None else self.params[..., : self.k]


def refit(state: BTState, batch_counts: np.ndarray, with_hinv: bool = False, start=None, chunk: int = 256) -> Refit:
    """Exact MLE of each perturbed count table ``batch_counts`` (B,R,3) on ``state.counts``' rows,
    by batched Newton warm-started at φ̂. A replicate whose data admit no finite MLE (some player
    never wins or never loses; Davidson: no ties or only ties; features that separate) is flagged
    ``ok=False`` and its φ set to NaN."""
    batch_counts = np.asarray(batch_counts, dtype=float)
    b = batch_counts.shape[0]
    k, p = state.n_players, state.n_params
    model = state.model
    thetas = np.full((b, p), np.nan)
    hinvs = np.full((b, p, p), np.nan) if with_hinv else None
    hess = np.full((b, p, p), np.nan) if with_hinv else None
    ok = np.ones(b, dtype=bool)
    if state.penalty == "firth":
        return _firth_refit(state, batch_counts, with_hinv, start, chunk)
    if state.ridge == 0:
        base_edges = _edges(state.counts, state.counts.counts, state.ties)
        for m in range(b):
            if np.all(_edges(state.counts, batch_counts[m], state.ties) >= base_edges):
                continue  # no win/loss edge lost: strong connectivity (finite MLE) is preserved
            rows = state.counts.with_counts(batch_counts[m])
            simple = not (rows.unit or rows.ordered or rows.cluster is not None or rows.n_features)
            ok[m] = comparison_graph(rows if simple else rows.pairs(), ties=state.ties).finite_mle
    if state.ties == "davidson":
        t, n = batch_counts[..., 2].sum(axis=1), batch_counts.sum(axis=(1, 2))
        ok &= (t > 0) & (t < n)
    idx = np.flatnonzero(ok)
    x0 = state.params if start is None else start
    for lo in range(0, len(idx), chunk):
        sel = idx[lo : lo + chunk]
        res = newton(model, state.counts, batch_counts=batch_counts[sel], start=x0, ridge=state.ridge, tol=1e-11,
                     position=state.position, beta_ridge=state.beta_ridge)
        thetas[sel] = res.params
        conv = res.converged
        if not state.fast:
            conv = conv & ~diverged(res.params, k, p - k - state.n_extra)
        ok[sel] = conv
        if with_hinv:
            if state.fast:  # Q(QᵀHQ)⁻¹Qᵀ = (H + 11ᵀ/K)⁻¹ − 11ᵀ/(K(1 + ridge)): 1 is an eigenvector of H
                hinvs[sel] = np.linalg.inv(res.hessian + 1.0 / k) - 1.0 / (k * (1.0 + state.ridge))
            else:
                for q, s in enumerate(sel):
                    try:
                        hinvs[s] = constrained_covariance(res.hessian[q], k)
                    except np.linalg.LinAlgError:
                        ok[s] = False
            hess[sel] = res.hessian
    thetas[~ok] = np.nan
    return Refit(thetas, hinvs, ok, hess, k)


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
            good = lo + np.flatnonzero(f.converged)  # a disconnected table has no estimate (NaN)
            hinvs[good] = np.linalg.inv(f.info[f.converged] + 1.0 / k) - 1.0 / k
    thetas[~ok] = np.nan
    if with_hinv:
        hinvs[~ok] = np.nan
    return Refit(thetas, hinvs, ok, hess, k)


def _edges(rows: PairRows, table: np.ndarray, ties: str) -> np.ndarray:
    """(R,2) booleans: row r has an i→j (i beat j) / j→i edge in the win graph."""
    t = table[:, 2] > 0 if ties in ("half", "davidson") else np.zeros(len(table), bool)
    return np.column_stack([(table[:, 0] > 0) | t, (table[:, 1] > 0) | t])


def refit_one(state: BTState, counts_table: np.ndarray, with_hinv: bool = True) -> Refit:
    r = refit(state, counts_table[None], with_hinv=with_hinv)
    return Refit(r.params[0], None if r.hinv is None else r.hinv[0], bool(r.ok[0]),
                 None if r.hessian is None else r.hessian[0], r.k)


def chord_refit(state: BTState, batch_counts: np.ndarray, pair: np.ndarray, dcurv: np.ndarray,
                tol: float = 1e-11, max_iter: int = 60) -> Refit:
    """Zero-feature binary models: exact MLE of B tables that differ from the state's on one pair
    each (``pair`` (B,)), by the chord (fixed-matrix Newton) iteration ``θ ← θ − M⁻¹∇L'(θ)`` with
    ``M = H + ΔC x xᵀ`` applied by Sherman–Morrison (``dcurv`` = change of that pair's curvature
    weight ΔC). The fixed point is the exact MLE; the iteration converges linearly at rate O(‖Δθ‖),
    so a few O(R + K²) sweeps replace Newton's O(K³) solves. Replicates that do not reach ``tol``
    are flagged ``ok=False`` (fall back to :func:`refit`)."""
    if not state.fast:
        raise InputError("chord refits are the zero-feature binary fast path; use refit()")
    if state.penalty is not None:  # the chord iteration solves the unpenalised score
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
    return Refit(theta, None, ok, None, k)
