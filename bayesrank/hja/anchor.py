"""Re-anchoring: map any HJA parameters to the identified representative of their score matrix.

The likelihood depends on ``(γ, μ, U, V)`` only through the judge score matrix
``S = γμᵀ + UVᵀ`` (K × N) up to a constant per judge row. Re-anchoring (Algorithm C.2 of the
seed) picks the unique representative satisfying Condition 1:

1. centre the rows of ``S`` (a per-judge constant does not change any pairwise probability);
2. ``μ = (1/K) Σ_k S_k·`` (consensus = judge average; centred because the rows are);
3. ``γ_k = ⟨S_k·, μ⟩ / ‖μ‖²`` — then ``Σγ = ⟨Σ_k S_k, μ⟩/‖μ‖² = K``;
4. ``W = S − γμᵀ`` has ``Wμ = 0``, ``W1 = 0`` and ``1ᵀW = Kμ − Kμ = 0``; since ``μ`` lies in the
   row space of ``S`` (rank ≤ r+1), ``rank W ≤ r`` and its rank-r SVD ``W = P diag(s) Qᵀ`` is exact;
5. ``U = P diag(s)`` (judge rows sum to zero, orthogonal columns with norms ``s`` decreasing),
   ``V = Q`` (orthonormal, centred, orthogonal to μ);
6. sign convention: column ``c`` of ``V`` is flipped (with column ``c`` of ``U``) so that its entry
   at the anchor item ``a_c`` is positive (default ``a_c = argmax_i |V_ic|``).

The map leaves ``S`` (hence the likelihood) unchanged, so re-anchoring after a block update never
increases the loss.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesrank.errors import InputError


@dataclass
class HJAParams:
    """Identified HJA parameters: ``gamma`` (K,), ``mu`` (N,), ``U`` (K, r), ``V`` (N, r)."""

    gamma: np.ndarray
    mu: np.ndarray
    U: np.ndarray
    V: np.ndarray

    @property
    def rank(self) -> int:
        return self.V.shape[1]

    @property
    def scores(self) -> np.ndarray:
        """Judge score matrix ``S = γμᵀ + UVᵀ`` (K × N)."""
        return np.outer(self.gamma, self.mu) + self.U @ self.V.T

    @property
    def singular_values(self) -> np.ndarray:
        return np.linalg.norm(self.U, axis=0)

    def copy(self) -> HJAParams:
        return HJAParams(self.gamma.copy(), self.mu.copy(), self.U.copy(), self.V.copy())

    def to_vector(self) -> np.ndarray:
        """Over-parametrised coordinates ``θ = (μ, γ, vec V, vec U)`` (row-major vec)."""
        return np.concatenate([self.mu, self.gamma, self.V.ravel(), self.U.ravel()])

    @classmethod
    def from_vector(cls, theta: np.ndarray, n_judges: int, n_items: int, rank: int) -> HJAParams:
        K, N, r = n_judges, n_items, rank
        mu = theta[:N]
        gamma = theta[N:N + K]
        V = theta[N + K:N + K + N * r].reshape(N, r)
        U = theta[N + K + N * r:].reshape(K, r)
        return cls(gamma.copy(), mu.copy(), U.copy(), V.copy())


def sign_anchors(V: np.ndarray) -> np.ndarray:
    """Default sign anchors: the item with the largest absolute loading in each column of ``V``."""
    return np.abs(V).argmax(axis=0) if V.size else np.zeros(0, dtype=int)


def reanchor_scores(S: np.ndarray, rank: int, anchors=None) -> HJAParams:
    """Identified :class:`HJAParams` of rank ``rank`` for a score matrix ``S`` (steps 1–6 above).

    If ``S`` has rank > ``rank`` + 1 the residual is truncated to its best rank-``rank`` approximation.
    """
    S = S - S.mean(axis=1, keepdims=True)
    mu = S.mean(axis=0)
    nrm2 = float(mu @ mu)
    if not np.isfinite(nrm2) or nrm2 < 1e-24:
        raise InputError("the judges' average score vector is zero: no aggregate judge signal, the consensus "
                         "direction is not identified (Proposition 1 needs a nonzero aggregate signal)")
    gamma = S @ mu / nrm2
    W = S - np.outer(gamma, mu)
    if rank == 0:
        return HJAParams(gamma, mu, np.zeros((len(gamma), 0)), np.zeros((len(mu), 0)))
    P, s, Qt = np.linalg.svd(W, full_matrices=False)
    U = P[:, :rank] * s[:rank]
    V = Qt[:rank].T.copy()
    a = sign_anchors(V) if anchors is None else np.asarray(anchors, dtype=int)
    flip = np.where(V[a, np.arange(rank)] < 0, -1.0, 1.0)
    return HJAParams(gamma, mu, U * flip, V * flip)


def reanchor(params: HJAParams, anchors=None) -> HJAParams:
    """Re-anchor arbitrary parameters (same score matrix up to row constants, identified)."""
    return reanchor_scores(params.scores, params.rank, anchors)


def constraint_violations(gamma, mu, U, V, anchors=None) -> dict:
    """Largest absolute violation of each identification condition (arrays may carry leading draw dims).

    ``gamma`` (..., K), ``mu`` (..., N), ``U`` (..., K, r), ``V`` (..., N, r).
    """
    gamma, mu, U, V = map(np.asarray, (gamma, mu, U, V))
    K = gamma.shape[-1]
    r = V.shape[-1]
    out = {
        "sum_mu": np.abs(mu.sum(-1)).max(),
        "sum_gamma_minus_K": np.abs(gamma.sum(-1) - K).max(),
    }
    if r:
        eye = np.eye(r)
        vtv = np.einsum("...ia,...ib->...ab", V, V)
        utu = np.einsum("...ka,...kb->...ab", U, U)
        s = np.sqrt(np.einsum("...aa->...a", utu))
        out.update({
            "V_columns_centred": np.abs(V.sum(-2)).max(),
            "U_judge_rows_sum_zero": np.abs(U.sum(-2)).max(),
            "V_orthonormal": np.abs(vtv - eye).max(),
            "U_columns_orthogonal": np.abs(utu * (1 - eye)).max(),
            "mu_orthogonal_to_V": np.abs(np.einsum("...i,...ia->...a", mu, V)).max(),
            # ordered singular values: s_1 >= s_2 >= ... >= 0 (violation = largest increase)
            "singular_values_ordered": max(0.0, float(np.diff(s, axis=-1).max())) if r > 1 else 0.0,
        })
        if anchors is not None:
            a = np.asarray(anchors, dtype=int)
            out["sign_convention"] = max(0.0, float(-V[..., a, np.arange(r)].min()))
    return {k: float(v) for k, v in out.items()}
