"""Bradley-Terry likelihoods on aggregated pair counts, with selectable tie treatment.

For pair ``r = {i, j}`` let ``d = θ_i − θ_j`` and counts ``(w_i, w_j, t)``.

- ``ties="half"`` (LMArena / arena-rank convention): a tie is half a win for each side,
  ``ℓ = −[(w_i + t/2) log σ(d) + (w_j + t/2) log σ(−d)]``.
- ``ties="drop"``: ties are excluded (and counted as excluded), ``ℓ = −[w_i log σ(d) + w_j log σ(−d)]``.
- ``ties="davidson"`` (Davidson 1970): with ``ν = e^λ``,
  ``P(i) = e^{d/2}/Z``, ``P(j) = e^{−d/2}/Z``, ``P(tie) = ν/Z``, ``Z = e^{d/2} + e^{−d/2} + ν``;
  the extra parameter ``λ = log ν`` is estimated jointly.

Every tie model exposes, per pair and per batch replicate, the loss and its derivatives with
respect to the pair's linear predictors ``(d[, λ])``; :mod:`bayesrank.bt.mle` chains them to θ
through ``x_r = e_i − e_j``. Outcome cells (a-win, b-win, tie) are kept separate so per-comparison
scores (for sandwich CIs and influence functions) are exact.
"""

from __future__ import annotations

import numpy as np


# numpy forms of scipy.special's expit / log_expit / logsumexp (the MLE path then loads no scipy.special)
def expit(x):
    """Logistic σ(x) = 1 / (1 + e^{−x}), evaluated without overflow."""
    e = np.exp(-np.abs(x))
    return np.where(np.asarray(x) >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def log_expit(x):
    """log σ(x) = −log(1 + e^{−x})."""
    return -np.logaddexp(0.0, -np.asarray(x, dtype=float))


def logsumexp(a, axis=-1):
    """log Σ exp(a) along ``axis``, shifted by the finite maximum."""
    a = np.asarray(a, dtype=float)
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return np.log(np.sum(np.exp(a - m), axis=axis)) + np.squeeze(m, axis=axis)

TIE_MODELS = ("half", "drop", "davidson")


class TieModel:
    """Base: ``n_extra`` extra parameters; per-outcome targets define the per-comparison loss."""

    name: str
    n_extra: int = 0

    def pair_terms(self, d, lam, counts):
        """Loss (B,R), gradient (B,R,P) and Hessian (B,R,P,P) w.r.t. (d[, λ]); counts (B,R,3)."""
        raise NotImplementedError

    def outcome_scores(self, d, lam):
        """Per-comparison loss gradient for each outcome cell: (R,3,P) at one parameter value."""
        raise NotImplementedError

    def outcome_probs(self, d, lam):
        """(…,3) probabilities of [i wins, j wins, tie] under the model (tie prob 0 if binary)."""
        raise NotImplementedError


class BinaryTies(TieModel):
    """Binary BT; ties are half-wins (``half``) or ignored (``drop``)."""

    #: target y per outcome cell [i wins, j wins, tie]
    def __init__(self, mode: str):
        self.name = mode
        self.targets = np.array([1.0, 0.0, 0.5 if mode == "half" else np.nan])
        self.tie_weight = 1.0 if mode == "half" else 0.0

    def effective(self, counts):
        """(w_i + t/2, w_j + t/2) or (w_i, w_j)."""
        half = 0.5 * self.tie_weight * counts[..., 2]
        return counts[..., 0] + half, counts[..., 1] + half

    def pair_terms(self, d, lam, counts):
        wi, wj = self.effective(counts)
        p = expit(d)
        loss = -(wi * log_expit(d) + wj * log_expit(-d))
        grad = ((wi + wj) * p - wi)[..., None]
        hess = ((wi + wj) * p * (1.0 - p))[..., None, None]
        return loss, grad, hess

    def outcome_scores(self, d, lam):
        p = expit(d)[:, None]
        s = p - np.where(np.isnan(self.targets), 0.0, self.targets)[None, :]
        if self.tie_weight == 0.0:
            s[:, 2] = 0.0
        return s[..., None]

    def outcome_probs(self, d, lam):
        p = expit(d)
        return np.stack([p, 1.0 - p, np.zeros_like(p)], axis=-1)


class Davidson(TieModel):
    """Davidson tie model: outcome logits ``(d/2, −d/2, λ)`` under a softmax."""

    name = "davidson"
    n_extra = 1
    # rows: outcome logits as linear functions of (d, λ)
    J = np.array([[0.5, 0.0], [-0.5, 0.0], [0.0, 1.0]])

    def _logits(self, d, lam):
        lam = np.broadcast_to(np.asarray(lam, dtype=float), np.shape(d))
        return np.stack([0.5 * d, -0.5 * d, lam], axis=-1)

    def pair_terms(self, d, lam, counts):
        a = self._logits(d, lam)
        lse = logsumexp(a, axis=-1)
        n = counts.sum(axis=-1)
        loss = -(counts * a).sum(axis=-1) + n * lse
        p = np.exp(a - lse[..., None])
        resid = n[..., None] * p - counts  # (B,R,3)
        grad = resid @ self.J  # (B,R,2)
        cov = p[..., :, None] * np.eye(3) - p[..., :, None] * p[..., None, :]
        hess = n[..., None, None] * np.einsum("oa,...op,pb->...ab", self.J, cov, self.J)
        return loss, grad, hess

    def outcome_scores(self, d, lam):
        a = self._logits(d, lam)
        p = np.exp(a - logsumexp(a, axis=-1)[..., None])  # (R,3)
        # per-comparison loss for outcome o: −a_o + lse; gradient: J^T (p − e_o)
        return (p[:, None, :] - np.eye(3)[None]) @ self.J  # (R,3,2)

    def outcome_probs(self, d, lam):
        a = self._logits(d, lam)
        return np.exp(a - logsumexp(a, axis=-1)[..., None])


def tie_model(ties: str) -> TieModel:
    if ties in ("half", "drop"):
        return BinaryTies(ties)
    if ties == "davidson":
        return Davidson()
    raise ValueError(f"ties must be one of {TIE_MODELS}, got {ties!r}")
