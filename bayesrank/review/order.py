"""The order claim's frequentist test: a Kendall τ bound from simultaneous contrast intervals.

The claim: Kendall τ between the true order and the reported one exceeds 0.9. Its test must hold
its size where the reported order is least trustworthy — near ties — so it is built from the
simultaneous two-sided contrast tests (max-|t| over all pairs, Gaussian N(0, Σ) Monte Carlo or
bootstrap errors; the critical value of the simultaneous rank sets, :mod:`bayesrank.bt.ranks`),
not from the spread of τ between draws around θ̂ (which treats θ̂ as the truth):

* "a significantly ahead of b" when ``(θ̂_a − θ̂_b)/sd_ab > c``. On the event E that no pair is
  declared in the wrong direction (or declared while tied), ``P(E) ≥ 1 − P(max|t| > c)``, every
  declaration holds in the true order, hence so does its transitive closure ``G``;
* every pair outside ``G`` ordered as reported may be discordant, so on E
  ``τ ≥ τ_L = 1 − 2u/N`` with ``u`` = pairs the closure does not order as reported and ``N`` =
  all pairs (τ-b with ties in the true order is at least as large);
* a pair is declared at level L when its single-step max-|t| adjusted p-value
  ``(1 + #{draws with max|t| ≥ t_ab}) / (1 + S)`` is below 1 − L; ``τ_L`` is the bound of those
  declarations. The claim's p-value is the adjusted p-value at ``c*``, the smallest t whose
  declarations (every pair with t ≥ c*) still give a bound above 0.9; since the bound grows with
  the declarations, ``p < 1 − L`` exactly when ``τ_L > 0.9``: supported.

False support needs a significant pair in the wrong direction: its probability is at most
``P(max|t| ≥ c*) ≤ 1 − L``, the size of the two-sided test of a data-selected claim (for two
players the test is the two-sided contrast test). The bound is conservative (not every set of
``u`` pairs can be discordant at once); near ties it supports nothing, as it should.
"""

from __future__ import annotations

import numpy as np

from bayesrank.data.claims import TAU_THRESHOLD

N_SIM = 10_000


def closure(g: np.ndarray) -> np.ndarray:
    """Transitive closure of a boolean relation (repeated squaring)."""
    r = g.astype(bool).copy()
    while True:
        nxt = r | ((r.astype(np.float32) @ r.astype(np.float32)) > 0)
        if (nxt == r).all():
            return r
        r = nxt


def tau_bound(declared: np.ndarray, reference: np.ndarray) -> float:
    """``1 − 2u/N``: ``declared[a, b]`` = a declared ahead of b; u = pairs the closure of the
    declarations does not order as ``reference`` does (strictly), N = all pairs."""
    k = len(reference)
    n = k * (k - 1) // 2
    g = closure(declared)
    concordant = g & (reference[:, None] > reference[None, :])
    return 1.0 - 2.0 * (n - int(concordant.sum())) / n


def max_abs_t(errors: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Per error draw, ``max_{a<b} |Z_a − Z_b| / sd_ab`` (= max over the ordered pairs of
    ``(Z_a − Z_b)/sd_ab``, as :func:`bayesrank.bt.ranks.max_t`; float32, one triangle)."""
    e = np.asarray(errors, dtype=np.float32)
    k = e.shape[1]
    out = np.zeros(e.shape[0], dtype=np.float32)
    inv = np.where(sd > 0, 1.0 / np.where(sd > 0, sd, 1.0), 0.0).astype(np.float32)
    for a in range(k - 1):
        t = np.abs(e[:, a : a + 1] - e[:, a + 1 :]) * inv[a, a + 1 :]
        np.maximum(out, t.max(axis=1), out=out)
    return out.astype(float)


def order_test(score, cov, reference, level: float, *, seed: int = 0, errors=None, n_sim: int = N_SIM) -> dict:
    """The test of the module docstring: ``{tau_lower, p_value, critical_value, supported, ...}``.

    ``score``/``cov``: θ̂ and its covariance; ``reference``: the reported order's scores;
    ``errors``: (S, K) draws of θ̂ − θ (bootstrap), else ``n_sim`` draws of N(0, cov) (``seed``)."""
    from bayesrank.bt.ranks import contrast_sd, gaussian_errors

    th = np.asarray(score, dtype=float)
    ref = np.asarray(reference, dtype=float)
    k = len(th)
    sd = contrast_sd(np.asarray(cov, dtype=float)[:k, :k])
    if errors is None:
        errors = gaussian_errors(np.asarray(cov, dtype=float)[:k, :k], n_sim, seed)
    m = np.sort(max_abs_t(np.asarray(errors, dtype=float), sd))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (th[:, None] - th[None, :]) / np.where(sd > 0, sd, np.nan)
    t = np.nan_to_num(t, nan=0.0)
    crit = float(np.quantile(m, level))

    def adjusted(x):
        """Single-step max-|t| adjusted p-value of a pair with t = x: (1 + #{max|t| ≥ x}) / (1 + S)."""
        return (1 + (len(m) - np.searchsorted(m, x, side="left"))) / (1 + len(m))

    # the declarations at level L: adjusted p < 1 − L (the same Monte Carlo convention as the claim's p)
    tau_lower = tau_bound((t > 0) & (adjusted(t) < 1 - level), ref)
    # c*: declare the j largest positive t's; τ_L grows with j (monotone): bisect the smallest j with τ_L > 0.9
    flat = np.flatnonzero((t > 0).ravel())
    vals = t.ravel()[flat]
    order = np.argsort(-vals, kind="stable")
    flat, vals = flat[order], vals[order]

    def bound(j):
        g = np.zeros(k * k, dtype=bool)
        g[flat[:j]] = True
        return tau_bound(g.reshape(k, k), ref)

    c_star, p = None, 1.0
    if len(vals) and bound(len(vals)) > TAU_THRESHOLD:  # bound(0) = −1: nothing declared
        lo, hi = 0, len(vals)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if bound(mid) > TAU_THRESHOLD else (mid, hi)
        c_star = float(vals[hi - 1])
        p = float(adjusted(c_star))
    return {"tau_lower": tau_lower, "p_value": min(1.0, p), "critical_value": crit, "c_star": c_star,
            "supported": bool(p < 1 - level), "n_pairs": k * (k - 1) // 2, "n_errors": int(len(m))}
