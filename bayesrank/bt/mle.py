"""Bradley-Terry maximum likelihood by Newton's method on aggregated counts, with Fisher,
sandwich and bootstrap uncertainty.

Parameters ``φ = (θ_1..θ_K[, λ])`` on the identified space ``Σθ = 0``. With ``x_r = e_i − e_j``
the loss is ``L(φ) = Σ_r ℓ_r(x_rᵀθ, λ) + (ridge/2)‖θ‖²``. With an orthonormal basis ``Q`` of the
constraint space, ``Σ = Q (QᵀHQ)⁻¹ Qᵀ`` is the covariance of θ̂ under the sum-to-zero constraint
(= the Moore-Penrose inverse ``H⁺`` on θ for a connected graph). Newton steps
solve ``(H + uuᵀ/K) s = g`` with ``u = (1_K, 0)``: since ``Hu = 0`` and ``g ⟂ u``, ``s`` solves ``Hs = g``
and stays on ``Σθ = 0``.
Everything is batched over a leading replicate axis, so bootstrap refits run as one Newton solve.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from bayesrank.bt.likelihood import TieModel, tie_model
from bayesrank.data.aggregate import PairCounts, comparison_graph
from bayesrank.errors import NoFiniteEstimateError


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


def _assemble(ii, jj, k, n_extra, per_pair):
    """Sum per-pair (B,R,P,P) blocks w.r.t. (d, λ…) into (B, K+n_extra, K+n_extra) via x_r = e_i − e_j."""
    b, r = per_pair.shape[:2]
    p = k + n_extra
    out = np.zeros((b, p * p))
    offs = (np.arange(b) * p * p)[:, None]
    hdd = per_pair[..., 0, 0]
    for (rows, cols, sign) in ((ii, ii, 1.0), (jj, jj, 1.0), (ii, jj, -1.0), (jj, ii, -1.0)):
        out += np.bincount((offs + rows * p + cols).ravel(), (sign * hdd).ravel(), b * p * p).reshape(b, p * p)
    for e in range(n_extra):
        col = k + e
        hde = per_pair[..., 0, 1 + e]
        for (rows, sign) in ((ii, 1.0), (jj, -1.0)):
            v = np.bincount((offs + rows * p + col).ravel(), (sign * hde).ravel(), b * p * p).reshape(b, p * p)
            vt = np.bincount((offs + col * p + rows).ravel(), (sign * hde).ravel(), b * p * p).reshape(b, p * p)
            out += v + vt
        for f in range(n_extra):
            out[:, col * p + k + f] += per_pair[..., 1 + e, 1 + f].sum(axis=1)
    return out.reshape(b, p, p)


def _gradient(ii, jj, k, n_extra, g):
    """Chain per-pair gradients (B,R,P) to (B, K+n_extra)."""
    b = g.shape[0]
    offs = (np.arange(b) * k)[:, None]
    gt = np.bincount((offs + ii).ravel(), g[..., 0].ravel(), b * k) - np.bincount(
        (offs + jj).ravel(), g[..., 0].ravel(), b * k
    )
    parts = [gt.reshape(b, k)]
    if n_extra:
        parts.append(g[..., 1:].sum(axis=1))
    return np.concatenate(parts, axis=1)


@dataclass
class NewtonResult:
    params: np.ndarray  # (B, P)
    loss: np.ndarray  # (B,)
    hessian: np.ndarray  # (B, P, P)
    iterations: int
    converged: np.ndarray  # (B,)
    gradient: np.ndarray | None = None  # (B, P) gradient of the minimised loss at ``params``

    @property
    def gradient_norm(self) -> np.ndarray:
        """(B,) Euclidean norm of the gradient of the objective actually minimised, at the returned point."""
        return np.linalg.norm(self.gradient, axis=1)


def objective(
    model: TieModel, counts: PairCounts, params: np.ndarray, batch_counts=None, ridge: float = 0.0, derivatives: bool = True
):
    """Loss (B,), and unless ``derivatives=False`` also gradient (B,P) and Hessian (B,P,P), at ``params`` (B,P)."""
    k = counts.n_players
    c = counts.counts[None] if batch_counts is None else batch_counts
    theta = params[:, :k]
    lam = params[:, k] if model.n_extra else None
    d = theta[:, counts.i] - theta[:, counts.j]
    loss_r, g_r, h_r = model.pair_terms(d, lam[:, None] if lam is not None else None, c)
    loss = loss_r.sum(axis=1)
    if ridge:
        loss = loss + 0.5 * ridge * (theta**2).sum(axis=1)
    if not derivatives:
        return loss
    grad = _gradient(counts.i, counts.j, k, model.n_extra, g_r)
    hess = _assemble(counts.i, counts.j, k, model.n_extra, h_r)
    if ridge:
        grad[:, :k] += ridge * theta
        hess[:, np.arange(k), np.arange(k)] += ridge
    return loss, grad, hess


def newton(
    model: TieModel,
    counts: PairCounts,
    batch_counts: np.ndarray | None = None,
    start: np.ndarray | None = None,
    ridge: float = 0.0,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> NewtonResult:
    """Damped Newton on the sum-to-zero space; ``batch_counts`` (B,R,3) fits B datasets at once."""
    k, p = counts.n_players, counts.n_players + model.n_extra
    b = 1 if batch_counts is None else batch_counts.shape[0]
    # H u = 0 and g ⟂ u for u = (1_K, 0): the Newton step solves (H + u uᵀ/K) s = g, which keeps Σθ = 0
    u = np.zeros(p)
    u[:k] = 1.0
    pin = np.outer(u, u) / k
    x = np.zeros((b, p)) if start is None else np.array(np.broadcast_to(start, (b, p)), dtype=float)
    x[:, :k] -= x[:, :k].mean(axis=1, keepdims=True)
    loss, grad, hess = objective(model, counts, x, batch_counts, ridge)
    converged = np.zeros(b, dtype=bool)
    it = 0
    for it in range(1, max_iter + 1):
        try:
            step = np.linalg.solve(hess + pin, grad[..., None])[..., 0]
        except np.linalg.LinAlgError:
            step = np.stack([np.linalg.lstsq(h + pin, g, rcond=None)[0] for h, g in zip(hess, grad)])
        t = np.ones(b)
        for _ in range(40):  # backtracking: halve where the loss went up
            cand = x - t[:, None] * step
            closs = objective(model, counts, cand, batch_counts, ridge, derivatives=False)
            worse = ~(closs <= loss + 1e-12 * np.abs(loss))
            if not worse.any():
                break
            t = np.where(worse, t / 2, t)
        x = cand
        loss, grad, hess = objective(model, counts, x, batch_counts, ridge)
        converged = np.abs(t[:, None] * step).max(axis=1) < tol
        if converged.all():
            break
    return NewtonResult(params=x, loss=loss, hessian=hess, iterations=it, converged=converged, gradient=grad)


def default_interval(ties: str, has_ties: bool) -> str:
    """The package's default interval of the MLE: ``sandwich`` when ties are scored as half-wins
    and the data contain ties (the half-win likelihood misstates the variance of a tie), ``fisher``
    otherwise — for ``bayesrank fit``, the audits' significance mode and the review."""
    return "sandwich" if ties == "half" and has_ties else "fisher"


def constrained_covariance(hessian: np.ndarray, k: int, n_extra: int = 0) -> np.ndarray:
    """``Q (QᵀHQ)⁻¹ Qᵀ``: covariance of φ̂ under ``Σθ = 0`` from the observed information ``H``."""
    q = constraint_basis(k, n_extra)
    return q @ np.linalg.inv(q.T @ hessian @ q) @ q.T


def meat(model: TieModel, counts: PairCounts, params: np.ndarray) -> np.ndarray:
    """``Σ_n s_n s_nᵀ`` over individual comparisons (per-comparison loss gradients ``s_n``)."""
    k = counts.n_players
    theta = params[:k]
    lam = params[k] if model.n_extra else None
    d = theta[counts.i] - theta[counts.j]
    s = model.outcome_scores(d, lam)  # (R,3,P)
    m = np.einsum("ro,roa,rob->rab", counts.counts, s, s)
    return _assemble(counts.i, counts.j, k, model.n_extra, m[None])[0]


def sandwich_covariance(model: TieModel, counts: PairCounts, params: np.ndarray, hessian: np.ndarray) -> np.ndarray:
    """Robust covariance ``H⁺ B H⁺`` (Huber/White) on the sum-to-zero space."""
    k = counts.n_players
    hinv = constrained_covariance(hessian, k, model.n_extra)
    return hinv @ meat(model, counts, params) @ hinv


def check_finite_mle(counts: PairCounts, ties: str, ridge: float) -> None:
    if ridge > 0:
        return
    rep = comparison_graph(counts, ties=ties)
    if not rep.finite_mle:
        raise NoFiniteEstimateError("no finite maximum-likelihood estimate: " + rep.advice())


def fit_newton(counts: PairCounts, ties: str = "half", ridge: float = 0.0, tol: float = 1e-10):
    """Single MLE fit: returns (params, hessian, model, NewtonResult)."""
    model = tie_model(ties)
    check_finite_mle(counts, ties, ridge)
    res = newton(model, counts, ridge=ridge, tol=tol)
    return res.params[0], res.hessian[0], model, res


def bootstrap_counts(counts: PairCounts, n_boot: int, seed: int) -> np.ndarray:
    """(B,R,3) multinomial resamples of the individual comparisons (cells = pair × outcome).

    Equivalent to resampling battles with replacement, as LMArena's bootstrap does; frequency
    weights are the cell sizes (non-integer totals are rounded to the nearest integer draw size).
    """
    cells = counts.counts.ravel()
    total = int(round(cells.sum()))
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(total, cells / cells.sum(), size=n_boot).astype(float)
    return draws.reshape(n_boot, counts.n_pairs, 3)


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


def replicate_has_finite_mle(counts: PairCounts, batch_counts: np.ndarray, ties: str) -> np.ndarray:
    """(B,) bool: the resampled win graph is strongly connected (Zermelo/Ford condition)."""
    from scipy.sparse.csgraph import connected_components

    from bayesrank.data.aggregate import win_graph

    out = np.empty(len(batch_counts), dtype=bool)
    for b, c in enumerate(batch_counts):
        g, _, _ = win_graph(counts.with_counts(c), ties)
        out[b] = connected_components(g, directed=True, connection="strong")[0] == 1
    if ties == "davidson":  # λ needs both ties and decisive outcomes
        t = batch_counts[..., 2].sum(axis=1)
        out &= (t > 0) & (t < batch_counts.sum(axis=(1, 2)))
    return out


def bootstrap_fits(
    counts: PairCounts, ties: str, n_boot: int = 200, seed: int = 0, ridge: float = 0.0,
    start=None, batch: int = 100, progress=None, failed: str = "exclude",
) -> BootstrapFits:
    """Bootstrap MLEs of ``n_boot`` multinomial resamples, fitted in vectorised batches
    (warm-started at ``start``).

    With ``ridge = 0`` a replicate in which the win graph is not strongly connected (a player
    never wins or never loses) has no finite MLE. Such replicates — and any whose Newton fit does
    not converge — are *failed*: counted, and under ``failed="exclude"`` (default) left out of the
    intervals; under ``failed="ridge"`` refitted with ridge 1e-6 and kept. Finite replicates are
    fitted with the user's ridge (0: the exact MLE).
    """
    if failed not in FAILED_POLICIES:
        raise ValueError(f"failed must be one of {FAILED_POLICIES}, got {failed!r}")
    model = tie_model(ties)
    all_counts = bootstrap_counts(counts, n_boot, seed)
    p = counts.n_players + model.n_extra
    params = np.full((n_boot, p), np.nan)
    finite = np.ones(n_boot, dtype=bool) if ridge > 0 else replicate_has_finite_mle(counts, all_counts, ties)
    converged = np.zeros(n_boot, dtype=bool)
    for lo in range(0, n_boot, batch):
        idx = np.arange(lo, min(lo + batch, n_boot))
        ok = idx[finite[idx]]
        if len(ok):
            res = newton(model, counts, batch_counts=all_counts[ok], start=start, ridge=ridge)
            params[ok] = res.params
            converged[ok] = res.converged
        bad = idx[~finite[idx]]
        if len(bad) and failed == "ridge":
            res = newton(model, counts, batch_counts=all_counts[bad], start=start, ridge=FAILED_RIDGE)
            params[bad] = res.params
        if progress is not None:
            progress(len(idx))
    fail = ~(finite & converged)
    if failed == "exclude":
        params[fail] = np.nan
    return BootstrapFits(params=params, failed=fail, no_finite_mle=~finite, policy=failed)
