"""Token-probability readouts of an answer span from its per-token log-probabilities.

- ``T1``: geometric mean of the span's token probabilities, ``exp(mean_j log p_j)``.
- ``T2``: probability of the first answer token, ``exp(log p_1)``.
- Yes/No readouts (``yes_no_confidence``): the probability of the answer the model gave, either raw
  (``p(answer token)``) or normalised over the two candidate tokens (``p(answer)/(p(Yes)+p(No))``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bayesrank.errors import InputError

READOUTS = ("T1", "T2")


def _check_logprobs(lp, row=None) -> np.ndarray:
    where = f"row {row}: " if row is not None else ""
    a = np.asarray(lp, dtype=float).ravel()
    if a.size == 0:
        raise InputError(f"{where}empty answer span; expected at least one token log-probability")
    if not np.all(np.isfinite(a)):
        raise InputError(f"{where}non-finite token log-probability {a[~np.isfinite(a)][0]}; expected finite values ≤ 0")
    if np.any(a > 1e-9):
        raise InputError(
            f"{where}positive token log-probability {a[a > 1e-9][0]:.6g}; expected log-probabilities ≤ 0 "
            "(did you pass probabilities or logits instead of log-probabilities?)"
        )
    return np.minimum(a, 0.0)


def t1_geometric_mean(logprobs: Sequence[float], row=None) -> float:
    """T1 = ``exp(mean(log p_j))`` over the answer span."""
    return float(np.exp(np.mean(_check_logprobs(logprobs, row))))


def t2_first_token(logprobs: Sequence[float], row=None) -> float:
    """T2 = ``exp(log p_1)``, the probability of the first answer token."""
    return float(np.exp(_check_logprobs(logprobs, row)[0]))


def span_confidence(logprob_lists, readout: str = "T1", index=None) -> np.ndarray:
    """Apply readout ``T1`` or ``T2`` to each span; errors name the offending row."""
    if readout not in READOUTS:
        raise InputError(f"unknown token readout {readout!r}; expected one of {READOUTS}")
    fn = t1_geometric_mean if readout == "T1" else t2_first_token
    rows = list(index) if index is not None else range(len(logprob_lists))
    return np.array([fn(lp, row=r) for lp, r in zip(logprob_lists, rows)], dtype=float)


def yes_no_confidence(answer, yes_prob, no_prob, normalize: bool = True) -> np.ndarray:
    """Token confidence in the given Yes/No answer: ``p(ans)`` or ``p(ans)/(p(Yes)+p(No))``."""
    ans = np.asarray([str(a).strip().lower() for a in answer])
    yes = np.asarray(yes_prob, dtype=float)
    no = np.asarray(no_prob, dtype=float)
    chosen = np.where(ans == "yes", yes, np.where(ans == "no", no, np.nan))
    if normalize:
        with np.errstate(invalid="ignore", divide="ignore"):
            chosen = chosen / (yes + no)
    return chosen
