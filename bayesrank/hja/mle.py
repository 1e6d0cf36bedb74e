"""Constrained maximum likelihood for HJA: stabilised alternating proximal algorithm with re-anchoring.

Loss (negative log-likelihood on aggregated counts, half-tie convention)::

    L(γ, μ, U, V) = −Σ_r [ y_r log σ(η_r) + (n_r − y_r) log σ(−η_r) ],
    η_r = γ_k (μ_i − μ_j) + U_k· (V_i· − V_j·)ᵀ          (row r = judge k, pair i < j)

Algorithm 1 (seed): repeat until the loss and the score matrix stop changing
  1. judge block: for every judge at once, ``a_k = (γ_k, U_k·)`` ← argmin L + (ρ/2)‖a_k − a_k^old‖²
     (``η`` is linear in ``a_k`` with features ``M_i − M_j``, ``M = [μ, V]``: damped Newton steps);
  2. re-anchor (:mod:`bayesrank.hja.anchor`);
  3. item block: ``M = [μ, V]`` ← argmin L + (ρ/2)‖M − M^old‖² (``η`` linear in M; damped Newton);
  4. re-anchor.
Several starts (spectral start from per-judge Bradley–Terry fits plus random perturbations) are run;
the best loss wins and a :class:`StartsDisagreeWarning` is raised when converged starts reach
different optima.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, log_expit

from bayesrank.hja.anchor import HJAParams, reanchor, reanchor_scores, sign_anchors
from bayesrank.hja.data import JudgePairCounts


class StartsDisagreeWarning(UserWarning):
    """Different starts of the non-convex HJA likelihood converged to different optima."""


class NotConvergedWarning(UserWarning):
    """The alternating algorithm hit its iteration limit before meeting the tolerance."""


def linear_predictor(counts: JudgePairCounts, p: HJAParams) -> np.ndarray:
    """``η_r = S_{k,i} − S_{k,j}`` for every row."""
    M = np.column_stack([p.mu, p.V])
    A = np.column_stack([p.gamma, p.U])
    return np.einsum("rc,rc->r", A[counts.k], M[counts.i] - M[counts.j])


def loss_terms(counts: JudgePairCounts, eta: np.ndarray) -> np.ndarray:
    return -(counts.y * log_expit(eta) + (counts.n - counts.y) * log_expit(-eta))


def neg_loglik(counts: JudgePairCounts, p: HJAParams) -> float:
    return float(loss_terms(counts, linear_predictor(counts, p)).sum())


def gradient(counts: JudgePairCounts, p: HJAParams) -> np.ndarray:
    """``∇L`` in the over-parametrised coordinates ``θ = (μ, γ, vec V, vec U)``: ``Jᵀ(n σ(η) − y)``.

    ``L`` is constant along the gauge orbits, so ``∇L`` is orthogonal to them and vanishes exactly at a
    stationary point of the identified model (its norm is the convergence criterion of the MLE)."""
    from bayesrank.hja.fisher import eta_jacobian

    resid = counts.n * expit(linear_predictor(counts, p)) - counts.y
    return eta_jacobian(counts, p).T @ resid


def manifold_newton(counts: JudgePairCounts, p: HJAParams, anchors=None, max_iter: int = 30,
                    gtol: float = 1e-9) -> tuple[HJAParams, int, bool]:
    """Newton's method on the constraint manifold from ``p`` (polishes the alternating algorithm).

    Step ``θ ← reanchor(θ − T (Tᵀ H T)⁻¹ Tᵀ ∇L)`` with ``T`` an orthonormal basis of the constraints'
    tangent space and ``H`` the observed information (the expected one when ``TᵀHT`` is not positive
    definite), halving the step until the loss does not increase. Quadratic convergence near a
    non-degenerate optimum. Returns ``(params, iterations, ‖∇L‖ ≤ gtol)``.
    """
    from scipy.linalg import null_space

    from bayesrank.hja.fisher import constraint_jacobian, information

    K, N, r = counts.n_judges, counts.n_items, p.rank
    loss = neg_loglik(counts, p)
    g = gradient(counts, p)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (the count is reported after the loop)
        if np.linalg.norm(g) <= gtol:
            return p, it - 1, True
        T = null_space(constraint_jacobian(p))
        gt = T.T @ g
        step = None
        for kind in ("observed", "fisher"):
            M = T.T @ information(counts, p, kind) @ T
            try:
                np.linalg.cholesky(M)
            except np.linalg.LinAlgError:
                continue
            step = T @ np.linalg.solve(M, gt)
            break
        if step is None:
            return p, it, False
        theta = p.to_vector()
        t = 1.0
        for _ in range(40):
            cand = reanchor(HJAParams.from_vector(theta - t * step, K, N, r), anchors)
            new = neg_loglik(counts, cand)
            if new <= loss + 1e-13 * max(1.0, abs(loss)):
                break
            t /= 2
        else:
            return p, it, False
        g_new = gradient(counts, cand)
        if new >= loss and np.linalg.norm(g_new) >= np.linalg.norm(g):  # no progress at rounding level
            return p, it, bool(np.linalg.norm(g) <= gtol)
        p, loss, g = cand, new, g_new
    return p, it, bool(np.linalg.norm(g) <= gtol)


def _judge_block(counts, p: HJAParams, rho: float, steps: int) -> HJAParams:
    """Proximal Newton on ``a_k = (γ_k, U_k)`` for all judges at once (each judge is its own problem)."""
    K = counts.n_judges
    M = np.column_stack([p.mu, p.V])
    X = M[counts.i] - M[counts.j]  # (R, 1+r) features
    A0 = np.column_stack([p.gamma, p.U])
    A = A0.copy()
    c = A.shape[1]

    def block_loss(A):
        eta = np.einsum("rc,rc->r", A[counts.k], X)
        return np.bincount(counts.k, loss_terms(counts, eta), K) + 0.5 * rho * ((A - A0) ** 2).sum(1), eta

    f, eta = block_loss(A)
    for _ in range(steps):
        pr = expit(eta)
        g_r = counts.n * pr - counts.y
        w_r = counts.n * pr * (1 - pr)
        G = np.zeros((K, c))
        np.add.at(G, counts.k, g_r[:, None] * X)
        G += rho * (A - A0)
        H = np.zeros((K, c, c))
        np.add.at(H, counts.k, w_r[:, None, None] * X[:, :, None] * X[:, None, :])
        H += (rho + 1e-12) * np.eye(c)
        step = np.linalg.solve(H, G[..., None])[..., 0]
        t = np.ones(K)
        for _ in range(30):
            cand = A - t[:, None] * step
            fc, eta_c = block_loss(cand)
            worse = fc > f + 1e-12 * np.abs(f)
            if not worse.any():
                break
            t = np.where(worse, t / 2, t)
        keep = ~worse
        A = np.where(keep[:, None], cand, A)
        f = np.where(keep, fc, f)
        eta = np.einsum("rc,rc->r", A[counts.k], X)
        if np.abs(t[:, None] * step).max() < 1e-12:
            break
    return HJAParams(A[:, 0].copy(), p.mu.copy(), A[:, 1:].copy(), p.V.copy())


def _item_block(counts, p: HJAParams, rho: float, steps: int) -> HJAParams:
    """Proximal Newton on ``M = [μ, V]`` (N × (1+r)); ``η_r = a_k·(M_i − M_j)``."""
    N = counts.n_items
    A = np.column_stack([p.gamma, p.U])
    Ak = A[counts.k]  # (R, c)
    c = A.shape[1]
    M0 = np.column_stack([p.mu, p.V])
    M = M0.copy()
    P = N * c

    def block_loss(M):
        eta = np.einsum("rc,rc->r", Ak, M[counts.i] - M[counts.j])
        return float(loss_terms(counts, eta).sum() + 0.5 * rho * ((M - M0) ** 2).sum()), eta

    f, eta = block_loss(M)
    outer = Ak[:, :, None] * Ak[:, None, :]  # (R, c, c)
    ii = counts.i[:, None] * c + np.arange(c)  # flat indices of M_i entries
    jj = counts.j[:, None] * c + np.arange(c)
    for _ in range(steps):
        pr = expit(eta)
        g_r = counts.n * pr - counts.y
        w_r = counts.n * pr * (1 - pr)
        G = np.zeros(P)
        np.add.at(G, ii, g_r[:, None] * Ak)
        np.add.at(G, jj, -g_r[:, None] * Ak)
        G += rho * (M - M0).ravel()
        blocks = w_r[:, None, None] * outer
        H = np.zeros(P * P)
        for rows, cols, sign in ((ii, ii, 1.0), (jj, jj, 1.0), (ii, jj, -1.0), (jj, ii, -1.0)):
            flat = rows[:, :, None] * P + cols[:, None, :]
            H += np.bincount(flat.ravel(), (sign * blocks).ravel(), P * P)
        H = H.reshape(P, P) + (rho + 1e-12) * np.eye(P)
        step = np.linalg.solve(H, G).reshape(N, c)
        t = 1.0
        for _ in range(30):
            cand = M - t * step
            fc, eta_c = block_loss(cand)
            if fc <= f + 1e-12 * abs(f):
                break
            t /= 2
        else:
            break
        M, f, eta = cand, fc, eta_c
        if np.abs(t * step).max() < 1e-12:
            break
    return HJAParams(p.gamma.copy(), M[:, 0].copy(), p.U.copy(), M[:, 1:].copy())


@dataclass
class AlternatingResult:
    params: HJAParams
    loss: float
    iterations: int
    converged: bool
    history: list = field(default_factory=list)


def alternating_fit(
    counts: JudgePairCounts, start: HJAParams, rho: float = 1e-3, tol: float = 1e-9, max_iter: int = 2000,
    newton_steps: int = 3, anchors=None,
) -> AlternatingResult:
    """Algorithm 1 from ``start``: alternate proximal judge and item blocks, re-anchoring after each.

    Converged when the relative loss decrease is below ``tol`` and the score matrix moved by less than
    ``sqrt(tol)`` (max abs entry) in one sweep.
    """
    p = reanchor(start, anchors)
    loss = neg_loglik(counts, p)
    history = [loss]
    converged = False
    it = 0
    scale = max(1.0, counts.total)
    for it in range(1, max_iter + 1):  # noqa: B007 (the count is reported after the loop)
        S_old = p.scores
        p = reanchor(_judge_block(counts, p, rho, newton_steps), anchors)
        p = reanchor(_item_block(counts, p, rho, newton_steps), anchors)
        new = neg_loglik(counts, p)
        history.append(new)
        moved = np.abs(p.scores - S_old).max()
        if (loss - new) <= tol * scale and moved < np.sqrt(tol):
            loss = new
            converged = True
            break
        loss = new
    return AlternatingResult(p, loss, it, converged, history)


def per_judge_scores(counts: JudgePairCounts, ridge: float = 1e-2) -> np.ndarray:
    """Per-judge ridge Bradley–Terry scores (K × N): the spectral start's raw material."""
    from bayesrank.bt.likelihood import tie_model
    from bayesrank.bt.mle import newton

    pooled_pairs = counts.pooled()
    m = counts.n_items
    code_all = pooled_pairs.i * m + pooled_pairs.j
    pos = {c: r for r, c in enumerate(code_all)}
    rows = np.array([pos[c] for c in counts.i * m + counts.j])
    batch = np.zeros((counts.n_judges, pooled_pairs.n_pairs, 3))
    batch[counts.k, rows, 0] = counts.y
    batch[counts.k, rows, 1] = counts.n - counts.y
    res = newton(tie_model("half"), pooled_pairs, batch_counts=batch, ridge=ridge)
    return res.params


def spectral_start(counts: JudgePairCounts, rank: int, anchors=None) -> HJAParams:
    """Start from per-judge ridge BT score rows, truncated to rank r+1, then re-anchored."""
    S = per_judge_scores(counts)
    S = S - S.mean(axis=1, keepdims=True)
    P, s, Qt = np.linalg.svd(S, full_matrices=False)
    q = rank + 1
    S_q = (P[:, :q] * s[:q]) @ Qt[:q]
    # keep the consensus in the judges' common direction even if the truncation flipped nothing
    return reanchor_scores(S_q, rank, anchors)


def perturbed_start(p: HJAParams, rng: np.random.Generator, scale: float = 0.5) -> HJAParams:
    S = p.scores
    noise = rng.normal(size=S.shape) * scale * (S.std() + 1e-3)
    return reanchor_scores(S + _low_rank(noise, p.rank + 1), p.rank)


def _low_rank(X, q):
    P, s, Qt = np.linalg.svd(X, full_matrices=False)
    return (P[:, :q] * s[:q]) @ Qt[:q]


@dataclass
class MultiStartResult:
    best: AlternatingResult
    starts: list
    disagree: bool
    max_score_gap: float
    gradient_norm: float = float("nan")
    newton_iterations: int = 0
    newton_converged: bool = False


def fit_constrained_mle(
    counts: JudgePairCounts, rank: int, n_starts: int = 3, seed: int = 0, rho: float = 1e-3, tol: float = 1e-9,
    max_iter: int = 2000, agree_tol: float = 1e-3, anchors=None, warn: bool = True, polish: bool = True,
    gtol: float = 1e-9,
) -> MultiStartResult:
    """Run :func:`alternating_fit` from ``n_starts`` starts; keep the best; warn if optima differ.

    Starts: the spectral start (per-judge ridge BT score rows truncated to rank r+1, re-anchored) and
    ``n_starts − 1`` random low-rank perturbations of it. The starts *disagree* when some start's final
    loss exceeds the best by more than ``agree_tol`` × max(1, comparisons/1000) nats; then a
    :class:`StartsDisagreeWarning` is raised and the best optimum is reported (``max_score_gap`` =
    largest entry-wise difference between the starts' identified score matrices).

    ``polish``: the best optimum is refined by :func:`manifold_newton` until ``‖∇L‖ ≤ gtol``; the final
    gradient norm is returned (``gradient_norm``) and is the convergence criterion reported by
    :class:`bayesrank.protocol.Diagnostics`. A :class:`NotConvergedWarning` is raised when neither the
    alternating algorithm nor the Newton polish met its tolerance.
    """
    rng = np.random.default_rng(seed)
    base = spectral_start(counts, rank, anchors)
    starts = [base] + [perturbed_start(base, rng) for _ in range(max(0, n_starts - 1))]
    results = [alternating_fit(counts, s, rho=rho, tol=tol, max_iter=max_iter, anchors=anchors) for s in starts]
    best = min(results, key=lambda r: r.loss)
    if anchors is None and rank:
        a = sign_anchors(best.params.V)
        results = [AlternatingResult(reanchor(r.params, a), r.loss, r.iterations, r.converged, r.history)
                   for r in results]
        best = min(results, key=lambda r: r.loss)
    loss_tol = agree_tol * max(1.0, counts.total / 1000.0)
    gaps = [np.abs(r.params.scores - best.params.scores).max() for r in results]
    disagree = any((r.loss - best.loss) > loss_tol for r in results)
    if warn and disagree:
        losses = ", ".join(f"{r.loss:.4f}" for r in results)
        warnings.warn(
            f"HJA starts disagree: final negative log-likelihoods {losses} (best {best.loss:.4f}); the likelihood "
            "is non-convex — the best optimum is reported; consider a smaller rank or more starts",
            StartsDisagreeWarning, stacklevel=2,
        )
    n_newton, newton_ok = 0, False
    if polish:
        a = anchors if anchors is not None else (sign_anchors(best.params.V) if rank else None)
        p, n_newton, newton_ok = manifold_newton(counts, best.params, a, gtol=gtol)
        best = AlternatingResult(p, neg_loglik(counts, p), best.iterations, best.converged,
                                 best.history + [neg_loglik(counts, p)])
    gnorm = float(np.linalg.norm(gradient(counts, best.params)))
    if warn and not (best.converged or newton_ok):
        warnings.warn(f"HJA alternating algorithm did not converge in {max_iter} sweeps (gradient norm {gnorm:.3g})",
                      NotConvergedWarning, stacklevel=2)
    return MultiStartResult(best, results, disagree, float(max(gaps)), gnorm, n_newton, newton_ok)
