"""Bradley-Terry likelihoods on pair rows, with selectable tie treatment.

For row ``r`` (player ``i`` listed first, ``j`` second) let ``d`` be its linear predictor
(``θ_i − θ_j`` [+ α] [+ X_r β]) and ``(w_i, w_j, t)`` its outcome counts.

- ``ties="half"`` (LMArena / arena-rank convention): a tie is half a win for each side,
  ``ℓ = −[(w_i + t/2) log σ(d) + (w_j + t/2) log σ(−d)]``.
- ``ties="drop"``: ties are excluded (and counted as excluded), ``ℓ = −[w_i log σ(d) + w_j log σ(−d)]``.
- ``ties="davidson"`` (Davidson 1970): with ``ν = e^λ``,
  ``P(i) = e^{d/2}/Z``, ``P(j) = e^{−d/2}/Z``, ``P(tie) = ν/Z``, ``Z = e^{d/2} + e^{−d/2} + ν``;
  the extra parameter ``λ = log ν`` is estimated jointly.

Every tie model exposes, per row and per batch replicate, the loss and its derivatives with
respect to the row's linear predictor ``d`` (``η``: θ_i − θ_j plus any position effect and
feature terms) and its extra parameters ``λ``; :mod:`bayesrank.bt.mle` chains them to every
parameter through ``x_r = (e_i − e_j | 1 | X_r)``. A new tie model is one subclass of
:class:`TieModel` here (``pair_terms``, ``outcome_scores``, ``outcome_probs``).
Outcome cells (a-win, b-win, tie) are kept separate so per-comparison
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
        """Loss (B,R), gradient (B,R,1+e) and Hessian (B,R,1+e,1+e) w.r.t. (d[, λ]); counts (B,R,3)."""
        return self.terms(d, lam, self.sufficient(counts))

    def sufficient(self, counts):
        """What :meth:`terms` needs of the counts (computed once per Newton run: the counts do not change)."""
        return counts

    def terms(self, d, lam, suff):
        """:meth:`pair_terms` from :meth:`sufficient` statistics."""
        raise NotImplementedError

    def outcome_scores(self, d, lam):
        """Per-comparison loss gradient w.r.t. (d[, λ]) for each outcome cell: (…,R,3,1+e) for d (…,R)."""
        raise NotImplementedError

    def outcome_probs(self, d, lam):
        """(…,3) probabilities of [i wins, j wins, tie] under the model (tie prob 0 if binary)."""
        raise NotImplementedError

    def outcome_hessians(self, d, lam):
        """Per-comparison loss Hessian w.r.t. (d[, λ]) for each outcome cell: (…,R,3,1+e,1+e)
        (the audits' curvature of an action)."""
        raise NotImplementedError

    def outcome_thirds(self, d, lam):
        """Per-comparison third derivatives of the loss w.r.t. (d[, λ]) for each outcome cell:
        (…,R,3,1+e,1+e,1+e) (how the curvature moves with the parameters: the audits' CI screens)."""
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

    def sufficient(self, counts):
        """(w_i, n = w_i + w_j): the effective wins of player i and the effective comparisons."""
        wi, wj = self.effective(counts)
        return np.ascontiguousarray(wi), np.ascontiguousarray(wi + wj)

    def terms(self, d, lam, suff):
        wi, n = suff
        sp = np.logaddexp(0.0, d)  # softplus(d) = −log σ(−d)
        loss = n * sp - wi * d  # −[w_i log σ(d) + w_j log σ(−d)]
        p = np.exp(d - sp)  # σ(d), from the same softplus
        grad = (n * p - wi)[..., None]
        hess = (n * p * (1.0 - p))[..., None, None]
        return loss, grad, hess

    def outcome_scores(self, d, lam):
        p = expit(d)[..., None]
        s = p - np.where(np.isnan(self.targets), 0.0, self.targets)
        if self.tie_weight == 0.0:
            s[..., 2] = 0.0
        return s[..., None]

    def outcome_probs(self, d, lam):
        p = expit(d)
        return np.stack([p, 1.0 - p, np.zeros_like(p)], axis=-1)

    def outcome_hessians(self, d, lam):
        p = expit(d)
        c = np.repeat((p * (1.0 - p))[..., None], 3, axis=-1)
        if self.tie_weight == 0.0:
            c[..., 2] = 0.0
        return c[..., None, None]

    def outcome_thirds(self, d, lam):
        """``σ(1 − σ)(1 − 2σ)`` for every cell that carries likelihood."""
        p = expit(d)
        t = np.repeat((p * (1.0 - p) * (1.0 - 2.0 * p))[..., None], 3, axis=-1)
        if self.tie_weight == 0.0:
            t[..., 2] = 0.0
        return t[..., None, None, None]


class Davidson(TieModel):
    """Davidson tie model: outcome logits ``(d/2, −d/2, λ)`` under a softmax."""

    name = "davidson"
    n_extra = 1
    # rows: outcome logits as linear functions of (d, λ)
    J = np.array([[0.5, 0.0], [-0.5, 0.0], [0.0, 1.0]])

    def _logits(self, d, lam):
        lam = np.broadcast_to(np.asarray(lam, dtype=float), np.shape(d))
        return np.stack([0.5 * d, -0.5 * d, lam], axis=-1)

    def sufficient(self, counts):
        return counts, counts.sum(axis=-1)

    def terms(self, d, lam, suff):
        counts, n = suff
        a = self._logits(d, lam)
        lse = logsumexp(a, axis=-1)
        loss = -(counts * a).sum(axis=-1) + n * lse
        p = np.exp(a - lse[..., None])
        resid = n[..., None] * p - counts  # (B,R,3)
        grad = resid @ self.J  # (B,R,2)
        cov = p[..., :, None] * np.eye(3) - p[..., :, None] * p[..., None, :]
        hess = n[..., None, None] * np.einsum("oa,...op,pb->...ab", self.J, cov, self.J)
        return loss, grad, hess

    def outcome_scores(self, d, lam):
        a = self._logits(d, lam)
        p = np.exp(a - logsumexp(a, axis=-1)[..., None])  # (…,R,3)
        # per-comparison loss for outcome o: −a_o + lse; gradient: J^T (p − e_o)
        return (p[..., None, :] - np.eye(3)) @ self.J  # (…,R,3,2)

    def outcome_probs(self, d, lam):
        a = self._logits(d, lam)
        return np.exp(a - logsumexp(a, axis=-1)[..., None])

    def outcome_hessians(self, d, lam):
        p = self.outcome_probs(d, lam)  # the Hessian of −a_o + lse does not depend on the outcome o
        cov = p[..., :, None] * np.eye(3) - p[..., :, None] * p[..., None, :]
        h = np.einsum("oa,...op,pb->...ab", self.J, cov, self.J)
        return np.repeat(h[..., None, :, :], 3, axis=-3)

    def outcome_thirds(self, d, lam):
        """The softmax's third cumulant ``κ_ijk = p_i δ_ij δ_ik − p_i p_k δ_ij − p_i p_j δ_ik − p_i p_j δ_jk
        + 2 p_i p_j p_k`` of the logits, mapped to (d, λ) by ``J`` (the same for every outcome)."""
        p = self.outcome_probs(d, lam)
        eye = np.eye(3)
        k3 = (np.einsum("...i,ij,ik->...ijk", p, eye, eye)
              - np.einsum("...i,...k,ij->...ijk", p, p, eye)
              - np.einsum("...i,...j,ik->...ijk", p, p, eye)
              - np.einsum("...i,...j,jk->...ijk", p, p, eye)
              + 2.0 * np.einsum("...i,...j,...k->...ijk", p, p, p))
        t = np.einsum("...ijk,ia,jb,kc->...abc", k3, self.J, self.J, self.J)
        return np.repeat(t[..., None, :, :, :], 3, axis=-4)


def tie_model(ties: str) -> TieModel:
    if ties in ("half", "drop"):
        return BinaryTies(ties)
    if ties == "davidson":
        return Davidson()
    raise ValueError(f"ties must be one of {TIE_MODELS}, got {ties!r}")
