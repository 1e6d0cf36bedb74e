"""The one Bradley–Terry core: linear predictor, batched Newton, covariance, finiteness check.

Data are pair rows (:class:`bayesrank.data.rows.PairRows`). Row ``r`` (player ``i`` listed first,
player ``j`` second) has the linear predictor

    η_r = θ_i − θ_j [+ α] [+ X_r β] = x_rᵀ φ_lin,      x_r = (e_i − e_j | 1 | X_r),

with ``α`` the position effect (first-listed side, ``position=True``) and ``β`` the feature
coefficients. The tie model (:mod:`bayesrank.bt.likelihood`: half, drop, Davidson) gives each
row's loss and its derivatives with respect to ``(η[, λ])`` once; they are chained to every
parameter ``φ = (θ_1..θ_K, α, β_1..β_p, λ)`` through ``x_r`` here: the θθ block by one bincount
over pair cells, the θ–covariate and covariate–covariate blocks dense. The loss is

    L(φ) = Σ_r v_r ℓ_r(η_r, λ) + ridge/2 ‖θ‖² + beta_ridge/2 ‖(α, β)‖² [+ tie_ridge/2 λ²]

(``v`` importance weights; the PyMC twin's priors are these penalties: MAP = penalised MLE). With an orthonormal basis ``Q``
of ``{Σθ = 0}``, ``Σ = Q (QᵀHQ)⁻¹ Qᵀ`` is the covariance under the sum-to-zero constraint.
Newton steps solve ``(H + uuᵀ/K) s = g`` with ``u = (1_K, 0)``: since ``Hu = 0`` and ``g ⟂ u``,
``s`` solves ``Hs = g`` and stays on ``Σθ = 0``. Everything is batched over a leading replicate
axis, so bootstrap and audit refits run as one Newton solve.

Covariances (:func:`covariance`): Fisher ``H⁻¹``; sandwich ``H⁻¹ B H⁻¹`` with the meat ``B`` over
independent comparisons (cells: ``Σ_o v² C_o s_o s_oᵀ``; unit rows: ``v² (Σ_o C_o s_o)(…)ᵀ / f``);
cluster-robust ``H⁻¹ (Σ_c S_c S_cᵀ) H⁻¹ · G/(G−1) · (N−1)/(N−k)`` with ``S_c`` the summed scores
of cluster ``c``, ``G`` clusters, ``N`` comparisons and ``k`` free parameters — statsmodels' CRV1
default (``GLM(...).fit(cov_type="cluster")``, ``use_correction=True``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from bayesrank.bt.likelihood import TieModel, tie_model
from bayesrank.data.aggregate import comparison_graph
from bayesrank.data.rows import PairRows
from bayesrank.errors import InputError, NoFiniteEstimateError

#: A logit-scale estimate beyond this means the MLE runs off to infinity (separation), not a finite score.
DIVERGED = 30.0
COVARIANCE_KINDS = ("fisher", "sandwich", "cluster")


@lru_cache(maxsize=32)
def constraint_basis(k: int, n_extra: int = 0) -> np.ndarray:
    """Orthonormal basis (P × P−1) of ``{φ : Σ_{i≤K} φ_i = 0}``, ``P = K + n_extra`` (cached, read-only:
    audits and bootstraps ask for the same basis hundreds of times)."""
    c = np.zeros((1, k + n_extra))
    c[0, :k] = 1.0
    _, _, vh = np.linalg.svd(c, full_matrices=True)  # = scipy.linalg.null_space(c): rows past the rank
    q = np.ascontiguousarray(vh[1:].T)
    q.setflags(write=False)
    return q


# ------------------------------------------------------------------------------- chain rule through x_r
#: bincount over B·K² pair cells (one pass over the rows) while it stays this small, else over B·K twice
PAIR_CELLS_MAX = 4_000_000


def theta_gradient(ii, jj, k: int, g: np.ndarray, code=None) -> np.ndarray:
    """``Σ_r g_r (e_i − e_j)`` per replicate: g (B,R) → (B,K). With the ordered pair codes
    ``code = i·K + j`` one bincount over the pair cells (row sums − column sums) replaces two over players."""
    b = g.shape[0]
    kk = k * k
    if code is not None and b * kk <= PAIR_CELLS_MAX:
        if b == 1:
            cc = np.bincount(code, g[0], kk).reshape(1, k, k)
        else:
            cc = np.bincount(((np.arange(b) * kk)[:, None] + code).ravel(), g.ravel(), b * kk).reshape(b, k, k)
        return cc.sum(axis=2) - cc.sum(axis=1)
    if b == 1:
        return (np.bincount(ii, g[0], k) - np.bincount(jj, g[0], k))[None]
    offs = (np.arange(b) * k)[:, None]
    return (np.bincount((offs + ii).ravel(), g.ravel(), b * k)
            - np.bincount((offs + jj).ravel(), g.ravel(), b * k)).reshape(b, k)


def theta_hessian(code, k: int, h: np.ndarray) -> np.ndarray:
    """``Σ_r h_r (e_i − e_j)(e_i − e_j)ᵀ`` per replicate from one bincount over the ordered pair
    cells ``code = i·K + j``: h (B,R) → (B,K,K)."""
    b = h.shape[0]
    kk = k * k
    if b == 1:
        cc = np.bincount(code, h[0], kk).reshape(1, k, k)
    else:
        cc = np.bincount(((np.arange(b) * kk)[:, None] + code).ravel(), h.ravel(), b * kk).reshape(b, k, k)
    s = cc + cc.transpose(0, 2, 1)
    rows = s.sum(axis=2)
    out = np.negative(s, out=s)  # in place: one (B,K,K) array fewer (the same numbers)
    out[:, np.arange(k), np.arange(k)] += rows
    return out


class Design:
    """The linear predictor of :class:`PairRows` under a tie model: ``x_r = (e_i − e_j | Z_r)`` with
    ``Z = [1 | X]`` (position effect) or ``X``, then the tie model's extra parameters."""

    def __init__(self, rows: PairRows, model: TieModel, position: bool = False):
        if position and not rows.ordered:
            raise InputError("a position effect needs rows in the order the players were listed (ordered rows): "
                             "build them with position_effect=True")
        self.rows, self.model, self.position = rows, model, bool(position)
        self.k = rows.n_players
        self.Z = rows.covariates(position)
        self.q = self.Z.shape[1]
        self.n_extra = model.n_extra
        self.n_params = self.k + self.q + self.n_extra
        self.code = rows.i * self.k + rows.j

    def eta(self, params: np.ndarray) -> np.ndarray:
        """(B,R) linear predictors at params (B,P)."""
        r = self.rows
        d = params[:, r.i] - params[:, r.j]
        if self.q:
            d = d + params[:, self.k:self.k + self.q] @ self.Z.T
        return d

    def lam(self, params: np.ndarray):
        """(B,1) tie parameter (Davidson's log ν), or None."""
        return params[:, -1:] if self.n_extra else None

    def gradient(self, g: np.ndarray) -> np.ndarray:
        """Per-row gradients w.r.t. (η[, λ]) (B,R,1+e) chained to (B,P)."""
        r, k, q = self.rows, self.k, self.q
        parts = [theta_gradient(r.i, r.j, k, g[..., 0], self.code)]
        if q:
            parts.append(g[..., 0] @ self.Z)
        if self.n_extra:
            parts.append(g[..., 1:].sum(axis=1))
        return np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]

    def hessian(self, h: np.ndarray) -> np.ndarray:
        """Per-row Hessians w.r.t. (η[, λ]) (B,R,1+e,1+e) chained to (B,P,P)."""
        r, k, q, e = self.rows, self.k, self.q, self.n_extra
        b = h.shape[0]
        hee = h[..., 0, 0]
        if not q and not e:
            return theta_hessian(self.code, k, hee)
        out = np.zeros((b, self.n_params, self.n_params))
        out[:, :k, :k] = theta_hessian(self.code, k, hee)
        if q:
            z = self.Z
            for f in range(q):
                cross = theta_gradient(r.i, r.j, k, hee * z[:, f], self.code)
                out[:, :k, k + f] = cross
                out[:, k + f, :k] = cross
            if b == 1:
                out[0, k:k + q, k:k + q] = z.T @ (hee[0][:, None] * z)
            else:
                out[:, k:k + q, k:k + q] = np.einsum("br,rf,rg->bfg", hee, z, z)
        if e:
            col = k + q
            hel = h[..., 0, 1]
            cross = theta_gradient(r.i, r.j, k, hel, self.code)
            out[:, :k, col] = cross
            out[:, col, :k] = cross
            if q:
                zl = hel @ self.Z
                out[:, k:k + q, col] = zl
                out[:, col, k:k + q] = zl
            out[:, col, col] = h[..., 1, 1].sum(axis=1)
        return out

    def penalty(self, ridge: float = 0.0, beta_ridge: float = 0.0, tie_ridge: float = 0.0) -> np.ndarray:
        """(P,) quadratic penalty weights: ``ridge`` on θ, ``beta_ridge`` on (α, β), ``tie_ridge`` on λ."""
        pen = np.zeros(self.n_params)
        pen[: self.k] = ridge
        pen[self.k:self.k + self.q] = beta_ridge
        pen[self.k + self.q:] = tie_ridge
        return pen

    def names(self) -> list[str]:
        """Parameter names in the order of φ."""
        out = [str(p) for p in self.rows.players]
        if self.position:
            out.append("position")
        out += list(self.rows.features)
        if self.n_extra:
            out.append("log_nu")
        return out


# ------------------------------------------------------------------------------- loss and Newton
@dataclass
class NewtonResult:
    params: np.ndarray  # (B, P)
    loss: np.ndarray  # (B,)
    hessian: np.ndarray  # (B, P, P)
    iterations: int
    converged: np.ndarray  # (B,)
    gradient: np.ndarray | None = None  # (B, P) gradient of the minimised loss at ``params``
    factor: object | None = None  # large sparse boards: :class:`bayesrank.bt.sparse.HessianFactor` of H(params[0])

    @property
    def gradient_norm(self) -> np.ndarray:
        """(B,) Euclidean norm of the gradient of the objective actually minimised, at the returned point."""
        return np.linalg.norm(self.gradient, axis=1)


def _sufficient(design: Design, batch_counts):
    """The tie model's statistics of the (weighted) counts: computed once per Newton run."""
    rows = design.rows
    return design.model.sufficient(rows.weighted_counts(rows.counts[None] if batch_counts is None else batch_counts))


def _subset(suff, w):
    return tuple(x[w] for x in suff)


def _objective(design: Design, params, suff, pen, derivatives: bool = True):
    loss_r, g_r, h_r = design.model.terms(design.eta(params), design.lam(params), suff)
    loss = loss_r.sum(axis=1)
    if pen is not None:
        loss = loss + 0.5 * (pen * params**2).sum(axis=1)
    if not derivatives:
        return loss
    grad = design.gradient(g_r)
    hess = design.hessian(h_r)
    if pen is not None:
        grad = grad + pen * params
        hess[:, np.arange(design.n_params), np.arange(design.n_params)] += pen
    return loss, grad, hess


def objective(model: TieModel, counts: PairRows, params: np.ndarray, batch_counts=None, ridge: float = 0.0,
              derivatives: bool = True, position: bool = False, beta_ridge: float = 0.0, tie_ridge: float = 0.0):
    """Loss (B,), and unless ``derivatives=False`` also gradient (B,P) and Hessian (B,P,P), at ``params`` (B,P)."""
    design = Design(counts, model, position)
    pen = design.penalty(ridge, beta_ridge, tie_ridge) if (ridge or beta_ridge or tie_ridge) else None
    return _objective(design, np.atleast_2d(params), _sufficient(design, batch_counts), pen, derivatives)


def newton(model: TieModel, counts: PairRows, batch_counts: np.ndarray | None = None, start: np.ndarray | None = None,
           ridge: float = 0.0, tol: float = 1e-10, max_iter: int = 100, *, position: bool = False,
           beta_ridge: float = 0.0, tie_ridge: float = 0.0) -> NewtonResult:
    """Damped Newton on the sum-to-zero space; ``batch_counts`` (B,R,3) fits B datasets on the same
    rows at once. A replicate has converged when its full Newton step is below ``tol``."""
    design = Design(counts, model, position)
    k, p = design.k, design.n_params
    pen = design.penalty(ridge, beta_ridge, tie_ridge) if (ridge or beta_ridge or tie_ridge) else None
    b = 1 if batch_counts is None else batch_counts.shape[0]
    if b == 1 and _sparse_plain(design):
        return _sparse_newton(design, batch_counts, start, ridge, tol, max_iter)
    # H u = 0 and g ⟂ u for u = (1_K, 0): the Newton step solves (H + u uᵀ/K) s = g, which keeps Σθ = 0
    u = np.zeros(p)
    u[:k] = 1.0
    pin = np.outer(u, u) / k
    x = np.zeros((b, p)) if start is None else np.array(np.broadcast_to(start, (b, p)), dtype=float)
    x[:, :k] -= x[:, :k].mean(axis=1, keepdims=True)
    suff = _sufficient(design, batch_counts)
    loss, grad, hess = _objective(design, x, suff, pen)
    converged = np.zeros(b, dtype=bool)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (the count is reported after the loop)
        try:
            step = np.linalg.solve(hess + pin, grad[..., None])[..., 0]
        except np.linalg.LinAlgError:
            step = np.stack([np.linalg.lstsq(h + pin, g, rcond=None)[0] for h, g in zip(hess, grad)])
        t = np.ones(b)
        cand = x - step
        closs, cgrad, chess = _objective(design, cand, suff, pen)
        for _ in range(50):  # backtracking where the loss went up (the full step is almost always taken)
            worse = ~(closs <= loss + 1e-12 * np.abs(loss))
            if not worse.any():
                break
            t = np.where(worse, t / 2, t)
            w = np.flatnonzero(worse)
            sub = suff if b == 1 else _subset(suff, w)
            cand[w] = x[w] - t[w, None] * step[w]
            closs[w], cgrad[w], chess[w] = _objective(design, cand[w], sub, pen)
        x, loss, grad, hess = cand, closs, cgrad, chess
        converged = np.abs(step).max(axis=1) < tol  # the full step: a stalled line search is no optimum
        if converged.all():
            break
    return NewtonResult(params=x, loss=loss, hessian=hess, iterations=it, converged=converged, gradient=grad)


def _sparse_plain(design: Design) -> bool:
    """A large board of the zero-feature binary model on a sparse graph (:mod:`bayesrank.bt.sparse`)."""
    from bayesrank.bt import sparse

    return sparse.applies(design.k, design.rows.n_rows, binary=not design.n_extra, covariates=design.q)


def _sparse_newton(design: Design, batch_counts, start, ridge, tol, max_iter) -> NewtonResult:
    """:func:`newton` by sparse solves (the same steps; the Hessian is returned dense as well)."""
    from bayesrank.bt import sparse

    rows = design.rows
    counts = rows.weighted_counts(rows.counts if batch_counts is None else batch_counts[0])
    fit = sparse.newton(rows.i, rows.j, design.k, counts, design.model.name, ridge=ridge, start=start, tol=tol,
                        max_iter=max_iter)
    return NewtonResult(params=fit.theta[None], loss=np.array([fit.loss]), hessian=fit.factor.dense()[None],
                        iterations=fit.iterations, converged=np.array([fit.converged]),
                        gradient=fit.gradient[None], factor=fit.factor)


def identified(hessian: np.ndarray, k: int, rcond: float = 1e-10) -> bool:
    """``QᵀHQ`` (the Hessian on the sum-to-zero space) has no eigenvalue below ``rcond`` × its largest."""
    q = constraint_basis(k, hessian.shape[0] - k)
    w = np.linalg.eigvalsh(q.T @ hessian @ q)
    return bool(w[0] > rcond * w[-1])


def diverged(params: np.ndarray, k: int, n_linear: int) -> np.ndarray:
    """(B,) the linear parameters (θ, α, β) ran off beyond :data:`DIVERGED` logits (or are not finite)."""
    lin = params[:, : k + n_linear]
    return ~np.isfinite(lin).all(axis=1) | (np.abs(lin).max(axis=1) > DIVERGED)


# ------------------------------------------------------------------------------- finiteness
def check_finite_mle(counts: PairRows, ties: str, ridge: float) -> None:
    """No finite MLE when the win graph is not strongly connected (Zermelo/Ford: a player or group
    that never wins against the rest has θ → −∞ whatever the covariates do), or — for Davidson
    ties — when there are no ties or only ties (λ → ∓∞). Raises :class:`NoFiniteEstimateError`."""
    if ties == "davidson":
        t, n = float(counts.ties.sum()), counts.n_comparisons
        if not 0 < t < n:
            raise NoFiniteEstimateError("no finite Davidson tie parameter: the data have "
                                        + ("no ties" if t == 0 else "only ties") + "; use ties='half' or 'drop'")
    if ridge > 0:
        return
    pairs = counts if (not counts.ordered and counts.cluster is None and not counts.n_features) else counts.pairs()
    rep = comparison_graph(pairs, ties=ties)
    if not rep.finite_mle:
        raise NoFiniteEstimateError("no finite maximum-likelihood estimate: " + rep.advice())


def fit_newton(counts: PairRows, ties: str = "half", ridge: float = 0.0, tol: float = 1e-10, *,
               position: bool = False, beta_ridge: float = 0.0, tie_ridge: float = 0.0, start=None,
               checked: bool = False):
    """Single (penalised) MLE: returns (params, hessian, tie model, NewtonResult). Raises
    :class:`NoFiniteEstimateError` when none exists: the win graph (``checked=True``: already checked),
    or a Newton run that does not converge, runs off to infinity or leaves a direction unidentified
    (the players, the position or the features (quasi-)separate the outcomes)."""
    model = tie_model(ties)
    if not checked:
        check_finite_mle(counts, ties, ridge)
    res = newton(model, counts, start=start, ridge=ridge, tol=tol, position=position, beta_ridge=beta_ridge,
                 tie_ridge=tie_ridge)
    k = counts.n_players
    n_cov = res.params.shape[1] - k - model.n_extra
    if not res.converged[0] or diverged(res.params, k, n_cov)[0] or (n_cov and not identified(res.hessian[0], k)):
        big = float(np.max(np.abs(res.params[0, : k + n_cov]))) if np.isfinite(res.params).all() else np.inf
        what = ("the players, the position effect or the features (quasi-)separate the outcomes"
                if n_cov else "the comparison graph")
        raise NoFiniteEstimateError(
            f"no finite MLE: Newton {'did not converge' if not res.converged[0] else 'ran off or is not identified'} "
            f"(max |estimate| {big:.3g} logits; {what}); try ridge>0 / beta_ridge>0 or fewer features")
    return res.params[0], res.hessian[0], model, res


# ------------------------------------------------------------------------------- covariance
def default_interval(ties: str, has_ties: bool, fractional: bool = False, clustered: bool = False,
                     weighted: bool = False) -> str:
    """The package's one default interval of the MLE (``ci="auto"``) — for ``bayesrank fit`` with
    or without features, the audits' ``covariance="auto"`` and the review:

    - ``cluster`` (cluster-robust sandwich) when the data carry clusters;
    - ``sandwich`` when ties are scored as half-wins and the data contain ties (a tie is a sure
      half point: the half-win likelihood misstates its variance), when some outcomes are split in
      shares, or with importance weights (not frequencies);
    - ``fisher`` otherwise (the likelihood is the data's: its information is exact)."""
    if clustered:
        return "cluster"
    if (ties == "half" and has_ties) or fractional or weighted:
        return "sandwich"
    return "fisher"


def constrained_covariance(hessian: np.ndarray, k: int, n_extra: int = 0) -> np.ndarray:
    """``Q (QᵀHQ)⁻¹ Qᵀ``: covariance of φ̂ under ``Σθ = 0`` from the observed information ``H``
    (``hessian`` (P,P) or (B,P,P); ``n_extra`` is ignored: P − K is read from the shape)."""
    p = hessian.shape[-1]
    u = np.zeros(p)
    u[:k] = 1.0
    hu = hessian @ u
    lam = hu[..., :1] / 1.0  # H u = λ u (the Laplacian's 1 with a ridge λ, the covariates' sums are 0)
    if np.all(np.abs(hu - lam * u) <= 1e-9 * (1.0 + np.abs(hessian).max())) and np.all(lam > -1.0):
        # one inverse instead of two basis products: Q (QᵀHQ)⁻¹ Qᵀ = (H + uuᵀ/K)⁻¹ − uuᵀ/(K(1 + λ))
        pin = np.outer(u, u) / k
        out = np.linalg.inv(hessian + pin) - pin / (1.0 + lam[..., None])
        return 0.5 * (out + np.swapaxes(out, -1, -2))
    q = constraint_basis(k, p - k)
    return q @ np.linalg.inv(q.T @ hessian @ q) @ q.T


def _scores(design: Design, params, batch_counts):
    """(B,R,3,1+e) per-comparison loss gradients w.r.t. (η[, λ]) for each outcome cell, and the counts."""
    rows = design.rows
    lam = design.lam(params)
    s = design.model.outcome_scores(design.eta(params), None if lam is None else lam)
    c = rows.counts[None] if batch_counts is None else batch_counts
    return s, c


def meat(model: TieModel, counts: PairRows, params: np.ndarray, batch_counts=None, *, position: bool = False,
         cluster: bool = False) -> np.ndarray:
    """``B``: the summed outer products of the scores of independent units — comparisons (cells:
    ``Σ_o v² C_o s_o s_oᵀ``; unit rows: ``v² (Σ_o C_o s_o)(Σ_o C_o s_o)ᵀ / f``) or, with
    ``cluster=True``, clusters (``Σ_c S_c S_cᵀ``, no small-sample factor). (P,P) for params (P,),
    (B,P,P) for (B,P)."""
    single = np.ndim(params) == 1
    design = Design(counts, model, position)
    params = np.atleast_2d(params)
    s, c = _scores(design, params, batch_counts)
    v = counts.weight
    if cluster:
        if counts.cluster is None:
            raise InputError("cluster-robust covariance: the rows carry no cluster")
        out = _cluster_meat(design, (c[..., None] * s).sum(axis=2) * v[:, None])
    elif counts.unit:
        u = (c[..., None] * s).sum(axis=2)  # (B,R,1+e): the row's score (its outcome shares times f)
        f = c.sum(axis=2)
        w = np.divide(v**2, f, out=np.zeros_like(f), where=f > 0)
        out = design.hessian(w[..., None, None] * u[..., :, None] * u[..., None, :])
    else:
        s = np.broadcast_to(s, c.shape + s.shape[-1:])
        out = design.hessian(np.einsum("nro,nrox,nroy->nrxy", c * (v**2)[:, None], s, s))
    return out[0] if single else out


def _cluster_meat(design: Design, u: np.ndarray) -> np.ndarray:
    """``Σ_c S_c S_cᵀ`` with ``S_c = Σ_{r∈c} u_r x_r`` (u (B,R,1+e): each row's weighted score)."""
    rows, k, q, e = design.rows, design.k, design.q, design.n_extra
    b = u.shape[0]
    g = rows.n_clusters
    c = rows.cluster
    offs = (np.arange(b) * g)[:, None]
    ue = u[..., 0]
    th = (np.bincount(((offs + c) * k + rows.i).ravel(), ue.ravel(), b * g * k)
          - np.bincount(((offs + c) * k + rows.j).ravel(), ue.ravel(), b * g * k)).reshape(b, g, k)
    parts = [th]
    for f in range(q):
        parts.append(np.bincount((offs + c).ravel(), (ue * design.Z[:, f]).ravel(), b * g).reshape(b, g, 1))
    if e:
        parts.append(np.bincount((offs + c).ravel(), u[..., 1].ravel(), b * g).reshape(b, g, 1))
    s = np.concatenate(parts, axis=2) if len(parts) > 1 else th
    return np.einsum("bgp,bgq->bpq", s, s)


def cluster_correction(counts: PairRows, n_free: int) -> float:
    """statsmodels' CRV1 small-sample factor ``G/(G−1) · (N−1)/(N−k)`` (``G`` clusters, ``N``
    comparisons, ``k`` free parameters)."""
    g, n = counts.n_clusters, counts.n_comparisons
    if g < 2 or n <= n_free:
        raise InputError(f"cluster-robust covariance needs at least 2 clusters and more comparisons than "
                         f"parameters; got {g} clusters of {counts.cluster_name!r}, {n:g} comparisons")
    return g / (g - 1.0) * (n - 1.0) / (n - n_free)


def covariance(model: TieModel, counts: PairRows, params: np.ndarray, hessian: np.ndarray, kind: str = "fisher", *,
               position: bool = False, hinv: np.ndarray | None = None, batch_counts=None) -> np.ndarray:
    """Covariance of φ̂ on the sum-to-zero space: ``fisher`` ``H⁻¹``; ``sandwich`` ``H⁻¹BH⁻¹``
    (independent comparisons); ``cluster`` ``H⁻¹BH⁻¹`` with the cluster meat and statsmodels'
    small-sample factor (module docstring). Single fit (params (P,), hessian (P,P)) or batched
    (params (B,P), hessian (B,P,P), ``batch_counts`` (B,R,3))."""
    if kind not in COVARIANCE_KINDS:
        raise InputError(f"ci must be one of {COVARIANCE_KINDS}, got {kind!r}")
    k = counts.n_players
    hinv = constrained_covariance(hessian, k) if hinv is None else hinv
    if kind == "fisher":
        return hinv
    if kind == "sandwich" and batch_counts is None and np.ndim(params) == 1 and not counts.unit:
        design = Design(counts, model, position)
        if _sparse_plain(design):  # a large sparse board: B = Σ_r b_r x_r x_rᵀ as a sparse Laplacian
            from bayesrank.bt.sparse import laplacian

            s, c = _scores(design, params[None], None)
            b = np.einsum("ro,ro->r", c[0] * (counts.weight**2)[:, None], s[0, ..., 0] ** 2)
            return hinv @ (laplacian(counts.i, counts.j, k, b) @ hinv)
    out = hinv @ meat(model, counts, params, batch_counts, position=position, cluster=kind == "cluster") @ hinv
    if kind == "cluster":
        out = out * cluster_correction(counts, hessian.shape[-1] - 1)
    return out


def sandwich_covariance(model: TieModel, counts: PairRows, params: np.ndarray, hessian: np.ndarray, *,
                        position: bool = False) -> np.ndarray:
    """Robust covariance ``H⁺ B H⁺`` (Huber/White) on the sum-to-zero space."""
    return covariance(model, counts, params, hessian, "sandwich", position=position)


# ------------------------------------------------------------------------------- bootstrap
def bootstrap_counts(counts: PairRows, n_boot: int, seed: int, start: int = 0, stop: int | None = None,
                     rng=None) -> np.ndarray:
    """(B,R,3) resampled counts: whole clusters when the rows carry clusters (each cluster's rows
    times how often it was drawn, G draws), whole rows for comparison rows (unit rows; multinomial
    over the rows with the comparison counts as cell sizes), else the individual comparisons
    (cells = row × outcome). Equivalent to resampling battles (or prompts) with replacement, as
    LMArena's bootstrap does; non-integer totals are rounded to the nearest integer draw size."""
    rng = np.random.default_rng(seed) if rng is None else rng
    c = counts.counts
    if counts.cluster is not None:
        g = counts.n_clusters
        times = rng.multinomial(g, np.full(g, 1.0 / g), size=n_boot).astype(float)
        return c[None] * times[:, counts.cluster, None]
    if counts.unit:
        f = c.sum(axis=1)
        draws = resample_cells(f, n_boot, rng)
        scale = np.divide(draws, f, out=np.zeros_like(draws), where=f > 0)
        return c[None] * scale[..., None]
    return resample_cells(c.ravel(), n_boot, rng).reshape(n_boot, counts.n_rows, 3)


#: nonzero cells from which an integer table may be resampled unit by unit (:func:`resample_cells`)
UNIT_DRAWS_ABOVE = 10_000


def resample_cells(cells: np.ndarray, n_boot: int, rng) -> np.ndarray:
    """(B, C) multinomial draws of ``round(Σ cells)`` units over the cells with probabilities
    ∝ ``cells``: NumPy's sequential-binomial multinomial, or — for integer cells of a large table
    (:data:`UNIT_DRAWS_ABOVE` nonzero cells) when it is cheaper (sparsely filled cells: a binomial per
    nonzero cell costs ~60 ns, a unit drawn by index ~5 ns) — the same law drawn unit by unit: ``n``
    indices uniform over the ``n`` units, counted per cell."""
    total = float(cells.sum())
    n = int(round(total))
    nz = np.flatnonzero(cells)
    if (nz.size >= UNIT_DRAWS_ABOVE and n + cells.size / 2 < 8 * nz.size and n == total
            and np.array_equal(cells, np.round(cells))):
        owner = np.repeat(nz, cells[nz].astype(np.int64))  # unit u belongs to cell owner[u]
        out = np.empty((n_boot, cells.size))
        for b in range(n_boot):
            out[b] = np.bincount(owner[rng.integers(0, n, n)], minlength=cells.size)
        return out
    return rng.multinomial(n, cells / total, size=n_boot).astype(float)


FAILED_POLICIES = ("exclude", "ridge")
#: ridge used for replicates with no finite MLE under ``failed="ridge"``
FAILED_RIDGE = 1e-6


@dataclass
class BootstrapFits:
    """Bootstrap refits: ``params`` (B, P) (NaN rows for excluded failures), ``failed`` (B,) marks
    replicates with no finite MLE or a Newton fit that did not converge, ``policy`` says what was
    done with them (``exclude``: left out of every summary; ``ridge``: refitted with ridge 1e-6)."""

    params: np.ndarray
    failed: np.ndarray
    no_finite_mle: np.ndarray
    policy: str

    @property
    def n_failed(self) -> int:
        return int(self.failed.sum())

    @property
    def used(self) -> np.ndarray:
        """Replicates entering the intervals (all of them under ``ridge``)."""
        return self.params if self.policy == "ridge" else self.params[~self.failed]


def replicate_has_finite_mle(counts: PairRows, batch_counts: np.ndarray, ties: str) -> np.ndarray:
    """(B,) bool: the resampled win graph is strongly connected (Zermelo/Ford condition), from each
    replicate's K × K win matrix (one bincount over pair cells); with Davidson ties also both ties
    and decisive outcomes."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    k = counts.n_players
    tie_edge = ties in ("half", "davidson")
    out = np.empty(len(batch_counts), dtype=bool)
    src, dst = np.concatenate([counts.i, counts.j]), np.concatenate([counts.j, counts.i])
    by_src = np.argsort(src, kind="stable")  # the edges in CSR order: each replicate keeps a subset
    src, dst = src[by_src], dst[by_src]
    for b, c in enumerate(batch_counts):
        w = c[:, 0] + (c[:, 2] if tie_edge else 0.0)
        l_ = c[:, 1] + (c[:, 2] if tie_edge else 0.0)
        edge = (np.concatenate([w, l_]) > 0)[by_src]  # i → j when i beat j (or tied), j → i when j did
        indptr = np.concatenate([[0], np.cumsum(np.bincount(src[edge], minlength=k))])
        g = csr_matrix((np.ones(int(edge.sum())), dst[edge], indptr), shape=(k, k))
        out[b] = connected_components(g, directed=True, connection="strong")[0] == 1
    if ties == "davidson":  # λ needs both ties and decisive outcomes
        t = batch_counts[..., 2].sum(axis=1)
        out &= (t > 0) & (t < batch_counts.sum(axis=(1, 2)))
    return out


def bootstrap_fits(
    counts: PairRows, ties: str, n_boot: int = 200, seed: int = 0, ridge: float = 0.0,
    start=None, batch: int = 100, progress=None, failed: str = "exclude", *, position: bool = False,
    beta_ridge: float = 0.0,
) -> BootstrapFits:
    """Bootstrap MLEs of ``n_boot`` resamples (:func:`bootstrap_counts`), fitted in vectorised
    batches (warm-started at ``start``).

    With ``ridge = 0`` a replicate in which the win graph is not strongly connected (a player
    never wins or never loses) has no finite MLE. Such replicates — and any whose Newton fit does
    not converge or runs off to infinity (separation by the covariates) — are *failed*: counted,
    and under ``failed="exclude"`` (default) left out of the intervals; under ``failed="ridge"``
    refitted with ridge 1e-6 and kept. Finite replicates are fitted with the user's ridge.
    """
    if failed not in FAILED_POLICIES:
        raise ValueError(f"failed must be one of {FAILED_POLICIES}, got {failed!r}")
    model = tie_model(ties)
    k = counts.n_players
    n_cov = counts.covariates(position).shape[1]
    p = k + n_cov + model.n_extra
    batch = int(max(1, min(batch, 20_000_000 // max(1, 3 * counts.n_rows))))  # (batch, R, 3) stays ≤ 20M cells
    rng = np.random.default_rng(seed)
    params = np.full((n_boot, p), np.nan)
    finite = np.ones(n_boot, dtype=bool)
    converged = np.zeros(n_boot, dtype=bool)
    kw = dict(start=start, position=position, beta_ridge=beta_ridge)
    chord = _sparse_chord(counts, model, position, ridge, start)  # large sparse boards: bt.sparse
    for lo in range(0, n_boot, batch):
        idx = np.arange(lo, min(lo + batch, n_boot))
        table = bootstrap_counts(counts, len(idx), seed, rng=rng)
        if ridge == 0:
            finite[idx] = replicate_has_finite_mle(counts, table, ties)
        ok = np.flatnonzero(finite[idx])
        if len(ok) and chord is not None:
            params[idx[ok]], converged[idx[ok]] = chord(table[ok])
        elif len(ok):
            res = newton(model, counts, batch_counts=table[ok], ridge=ridge, **kw)
            params[idx[ok]] = res.params
            converged[idx[ok]] = res.converged & ~diverged(res.params, k, n_cov)
        bad = np.flatnonzero(~finite[idx])
        if len(bad) and failed == "ridge":
            res = newton(model, counts, batch_counts=table[bad], ridge=FAILED_RIDGE, **kw)
            params[idx[bad]] = res.params
        if progress is not None:
            progress(len(idx))
    fail = ~(finite & converged)
    if failed == "exclude":
        params[fail] = np.nan
    return BootstrapFits(params=params, failed=fail, no_finite_mle=~finite, policy=failed)


def _sparse_chord(counts: PairRows, model: TieModel, position: bool, ridge: float, start):
    """On a large sparse board (zero-feature binary model): ``fit(tables) -> (params, converged)``, the
    exact MLE of each table by the chord iteration with the factorisation of ``H`` at ``start`` (the
    reference MLE), Newton for a table the chord does not settle (:mod:`bayesrank.bt.sparse`); else None."""
    from bayesrank.bt import sparse

    design = Design(counts, model, position)
    if start is None or not _sparse_plain(design):
        return None
    theta0 = np.asarray(start, dtype=float).reshape(-1)[: design.k]
    wi, n = sparse.effective_counts(counts.weighted_counts(), model.name)
    _, _, h = sparse._loss_grad_curv(theta0, counts.i, counts.j, design.k, wi, n, ridge)
    factor = sparse.HessianFactor.of_rows(counts.i, counts.j, design.k, h, ridge)

    def fit(tables):
        tables = counts.weighted_counts(tables)
        theta, ok = sparse.chord(counts.i, counts.j, design.k, tables, model.name, factor, theta0, ridge=ridge)
        for b in np.flatnonzero(~ok):
            res = sparse.newton(counts.i, counts.j, design.k, tables[b], model.name, ridge=ridge, start=theta0)
            theta[b], ok[b] = res.theta, res.converged
        ok &= ~diverged(theta, design.k, 0)
        return theta, ok

    return fit


# ------------------------------------------------------------------------------- p = 0 helpers kept for the audits
def _gradient(ii, jj, k, n_extra, g):
    """Chain per-pair gradients (B,R,1+e) of unordered pairs to (B, K+e) (no covariates)."""
    parts = [theta_gradient(ii, jj, k, g[..., 0])]
    if n_extra:
        parts.append(g[..., 1:].sum(axis=1))
    return np.concatenate(parts, axis=1) if n_extra else parts[0]


def _assemble(ii, jj, k, n_extra, per_pair):
    """Sum per-pair (B,R,1+e,1+e) blocks into (B, K+e, K+e) via x_r = e_i − e_j (no covariates)."""
    rows = PairRows(np.arange(k), ii, jj, counts=np.zeros((len(ii), 3)))
    model = tie_model("davidson" if n_extra else "half")
    return Design(rows, model).hessian(per_pair)
