"""Fisher-information uncertainty for the constrained HJA MLE, on the constraint manifold.

Over-parametrised coordinates ``θ = (μ, γ, vec V, vec U)`` (P = (N+K)(1+r)). The loss depends on θ
only through the score matrix up to row constants, so it is invariant along the gauge orbits
(``μ → μ + c1``, ``V → V + 1bᵀ``, ``(μ, U) → (μ + Vc, U − γcᵀ)``, rotations/scalings of ``(U, V)``,
``(γ, μ) → (cγ, μ/c)``). Condition 1 is a slice through these orbits: its constraints
``c(θ) = 0`` (Σμ, 1ᵀV, 1ᵀU, Σγ − K, Vᵀμ, VᵀV − I, off-diagonal UᵀU) are transversal to the orbits.
Let ``T`` be an orthonormal basis of the tangent space ``ker ∂c/∂θ`` at θ̂. The map
``t ↦ reanchor(θ̂ + T t)`` is a local chart of the identified model whose derivative at 0 is ``T``
and whose loss equals ``L(θ̂ + T t)``, so the asymptotic covariance of θ̂ is

    Σ = T (Tᵀ I T)⁻¹ Tᵀ,     I = Jᵀ diag(n p(1−p)) J   (expected/Fisher information)

with ``J = ∂η/∂θ`` (R × P); ``information="observed"`` adds ``Σ_r (n_r p_r − y_r) ∂²η_r/∂θ²``.
Contrasts, judge deviations and pairwise probabilities get delta-method Wald intervals.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import null_space
from scipy.special import expit

from bayesrank.errors import InputError
from bayesrank.hja.anchor import HJAParams
from bayesrank.hja.data import JudgePairCounts


def eta_jacobian(counts: JudgePairCounts, p: HJAParams) -> np.ndarray:
    """Dense ``J = ∂η/∂θ`` (R × P) for ``θ = (μ, γ, vec V, vec U)`` (row-major vec)."""
    K, N, r = counts.n_judges, counts.n_items, p.rank
    R = counts.n_rows
    P = (N + K) * (1 + r)
    J = np.zeros((R, P))
    rows = np.arange(R)
    k, i, j = counts.k, counts.i, counts.j
    g = p.gamma[k]
    J[rows, i] += g
    J[rows, j] -= g
    J[rows, N + k] = p.mu[i] - p.mu[j]
    offV = N + K
    offU = N + K + N * r
    for c in range(r):
        u = p.U[k, c]
        J[rows, offV + i * r + c] += u
        J[rows, offV + j * r + c] -= u
        J[rows, offU + k * r + c] = p.V[i, c] - p.V[j, c]
    return J


def _eta_second_derivative_sum(counts: JudgePairCounts, p: HJAParams, weights: np.ndarray) -> np.ndarray:
    """``Σ_r w_r ∂²η_r/∂θ²`` (P × P): η is bilinear, so only (μ,γ) and (V,U) cross terms are nonzero."""
    K, N, r = counts.n_judges, counts.n_items, p.rank
    P = (N + K) * (1 + r)
    H = np.zeros((P, P))
    k, i, j = counts.k, counts.i, counts.j
    np.add.at(H, (i, N + k), weights)
    np.add.at(H, (j, N + k), -weights)
    offV, offU = N + K, N + K + N * r
    for c in range(r):
        np.add.at(H, (offV + i * r + c, offU + k * r + c), weights)
        np.add.at(H, (offV + j * r + c, offU + k * r + c), -weights)
    return H + H.T


def information(counts: JudgePairCounts, p: HJAParams, kind: str = "fisher") -> np.ndarray:
    """Fisher (expected) or observed information of the over-parametrised loss at ``p`` (P × P)."""
    from bayesrank.hja.mle import linear_predictor

    J = eta_jacobian(counts, p)
    pr = expit(linear_predictor(counts, p))
    w = counts.n * pr * (1 - pr)
    I = J.T @ (w[:, None] * J)
    if kind == "observed":
        I = I + _eta_second_derivative_sum(counts, p, counts.n * pr - counts.y)
    elif kind != "fisher":
        raise ValueError(f"information must be 'fisher' or 'observed', got {kind!r}")
    return I


def constraint_jacobian(p: HJAParams) -> np.ndarray:
    """``∂c/∂θ`` for the 2 + 3r + r² identification constraints (rows) at ``p``."""
    K, N, r = len(p.gamma), len(p.mu), p.rank
    P = (N + K) * (1 + r)
    offV, offU = N + K, N + K + N * r
    rows = []

    def vidx(c):
        return offV + np.arange(N) * r + c

    def uidx(c):
        return offU + np.arange(K) * r + c

    e = np.zeros(P); e[:N] = 1; rows.append(e)  # Σμ
    e = np.zeros(P); e[N:N + K] = 1; rows.append(e)  # Σγ
    for c in range(r):
        e = np.zeros(P); e[vidx(c)] = 1; rows.append(e)  # 1ᵀV_c
        e = np.zeros(P); e[uidx(c)] = 1; rows.append(e)  # 1ᵀU_c
        e = np.zeros(P); e[:N] = p.V[:, c]; e[vidx(c)] = p.mu; rows.append(e)  # μᵀV_c
    for a in range(r):
        for b in range(a, r):  # V_aᵀV_b
            e = np.zeros(P); e[vidx(a)] += p.V[:, b]; e[vidx(b)] += p.V[:, a]; rows.append(e)
    for a in range(r):
        for b in range(a + 1, r):  # U_aᵀU_b
            e = np.zeros(P); e[uidx(a)] += p.U[:, b]; e[uidx(b)] += p.U[:, a]; rows.append(e)
    return np.array(rows)


class NotIdentifiedError(InputError):
    """The information is singular on the constraint manifold: the model of this rank is not
    identified by these data (e.g. a player compared by one judge only: with r ≥ 1 its residual
    ``U_k V_i`` cannot be told apart from its consensus score ``γ_k μ_i``)."""


def manifold_covariance(counts: JudgePairCounts, p: HJAParams, kind: str = "fisher") -> np.ndarray:
    """``Σ = T (Tᵀ I T)⁻¹ Tᵀ`` (P × P) in θ coordinates; raises :class:`NotIdentifiedError` if the
    information is singular on T."""
    from bayesrank.hja.data import items_seen_by_one_judge

    T = null_space(constraint_jacobian(p))
    I = information(counts, p, kind)
    M = T.T @ I @ T
    ev = np.linalg.eigvalsh(M)
    if ev.min() <= 1e-10 * max(ev.max(), 1e-300):
        single = items_seen_by_one_judge(counts) if p.rank else []
        cause = (f"; {len(single)} player(s) are compared by one judge only ({', '.join(map(str, single[:6]))}"
                 f"{', …' if len(single) > 6 else ''}), so their residual is confounded with their score"
                 if single else "")
        raise NotIdentifiedError(
            f"HJA of rank {p.rank} is not identified: its Fisher information is singular on the constraint manifold "
            f"(smallest eigenvalue {ev.min():.3g}){cause} — use a smaller rank"
        )
    return T @ np.linalg.solve(M, T.T)


def slices(n_judges: int, n_items: int, rank: int) -> dict:
    K, N, r = n_judges, n_items, rank
    return {"mu": slice(0, N), "gamma": slice(N, N + K), "V": slice(N + K, N + K + N * r),
            "U": slice(N + K + N * r, (N + K) * (1 + r))}


def deviation_gradient(p: HJAParams, residual_only: bool = False) -> np.ndarray:
    """Gradient (K·N × P) of judge deviations ``D_ki = S_ki − μ_i = (γ_k − 1)μ_i + U_k·V_i·``
    (``residual_only``: of the structured residual ``R_ki = U_k·V_i·``)."""
    K, N, r = len(p.gamma), len(p.mu), p.rank
    P = (N + K) * (1 + r)
    sl = slices(K, N, r)
    G = np.zeros((K, N, P))
    kk, ii = np.meshgrid(np.arange(K), np.arange(N), indexing="ij")
    if not residual_only:
        G[kk, ii, ii] = (p.gamma - 1.0)[:, None] * np.ones((1, N))
        G[kk, ii, sl["gamma"].start + kk] = np.broadcast_to(p.mu[None, :], (K, N))
    for c in range(r):
        G[kk, ii, sl["V"].start + ii * r + c] = np.broadcast_to(p.U[:, c][:, None], (K, N))
        G[kk, ii, sl["U"].start + kk * r + c] = np.broadcast_to(p.V[:, c][None, :], (K, N))
    return G.reshape(K * N, P)


def probability_gradient(p: HJAParams, k, i, j) -> tuple[np.ndarray, np.ndarray]:
    """``p_kij = σ(S_ki − S_kj)`` and its gradient (m × P) for index arrays ``k, i, j``."""
    from bayesrank.hja.data import JudgePairCounts

    k, i, j = map(np.atleast_1d, (k, i, j))
    K, N = len(p.gamma), len(p.mu)
    dummy = JudgePairCounts(np.arange(K), np.arange(N), k, i, j, np.zeros(len(k)), np.zeros(len(k)))
    J = eta_jacobian(dummy, p)
    S = p.scores
    prob = expit(S[k, i] - S[k, j])
    return prob, (prob * (1 - prob))[:, None] * J
