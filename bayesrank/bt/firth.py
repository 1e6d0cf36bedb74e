"""Firth's bias-reduced Bradley–Terry: finite scores, and profile-likelihood intervals, when the MLE is
infinite (a player who never lost or never won).

With pair rows ``r`` (players ``i < j``; ``y_r`` = wins of ``i`` with a tie counted as half a win,
``n_r`` comparisons; ties dropped with ``ties="drop"``), ``p_r = σ(θ_i − θ_j)`` and
``x_r = e_i − e_j``, the estimate maximises the penalised log-likelihood

    ℓ*(θ) = Σ_r [y_r log p_r + (n_r − y_r) log(1 − p_r)] + ½ log det I(θ),   I(θ) = Σ_r n_r p_r(1 − p_r) x_r x_rᵀ

on ``Σθ = 0`` (the determinant of I restricted to that space: ``det(I + 11ᵀ/K)``). ½ log det I is
Jeffreys' prior; Firth (1993) showed it removes the O(1/n) bias, and it keeps the estimate finite in
a connected comparison graph however the wins fall (Kosmidis & Firth 2021: full-rank design).
Logistic Firth on the BT design matrix is exactly this (without ties).

**Estimate.** For binomial rows the gradient of ℓ* is the score of the data with ``h_r/2`` added to
each side's wins, ``h_r = n_r p_r(1 − p_r) x_rᵀ I⁻ x_r`` (the leverages; Heinze & Schemper 2002).
So the estimate is the fixed point of the package's one Newton solver
(:func:`bayesrank.bt.mle.newton`) on these pseudo-counts: the leverages are recomputed at each
fit until the scores stop moving. **Intervals** are profile penalised likelihood intervals
(Heinze & Schemper 2002): ``{t : 2[ℓ*(θ̂) − max_{cᵀθ = t} ℓ*(θ)] ≤ χ²₁(level)}`` for a contrast
``cᵀθ`` (a player's score, or θ_a − θ_b), found by root finding on ``t``; the constrained maxima are
modified-score Fisher scoring steps on the rest of the space. Everything is batched over a leading
replicate axis (simulations fit thousands of data sets at once).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesrank.errors import InputError, NoFiniteEstimateError, NumericalError

LIMIT = 30.0  # logits: a profile bound beyond this is reported as infinite


def _expit(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _log_expit(x):
    return -np.logaddexp(0.0, -x)


def binomial_rows(counts, ties: str = "half"):
    """(i, j, y, n): each pair row's successes for ``i`` and its number of comparisons; ``counts``
    (R, 3) or (B, R, 3) of [wins_i, wins_j, ties], or pair counts."""
    if ties not in ("half", "drop"):
        raise InputError(f"Firth's bias reduction is implemented for ties='half' or 'drop', got {ties!r}")
    c = np.asarray(counts.counts if hasattr(counts, "counts") else counts, dtype=float)
    c = c[None] if c.ndim == 2 else c
    tie = c[..., 2] if ties == "half" else 0.0
    return c[..., 0] + 0.5 * tie, c[..., 0] + c[..., 1] + tie


@dataclass
class Pieces:
    """Everything ℓ* needs at θ (B, K): probabilities, information and its regularised inverse,
    leverages, the modified score and ℓ* itself."""

    p: np.ndarray          # (B, R)
    info: np.ndarray       # (B, K, K)
    inverse: np.ndarray    # (B, K, K) of I + 11ᵀ/K
    leverage: np.ndarray   # (B, R)
    score: np.ndarray      # (B, K) modified score
    value: np.ndarray      # (B,) ℓ*
    metric: np.ndarray | None = None  # (B, K, K) inverse of I_h + 11ᵀ/K (``metric=True``)


def _inverse_logdet(m: np.ndarray):
    """Inverse and log-determinant of symmetric positive definite matrices (B, K, K): one batched
    LU for small K, Cholesky (LAPACK potrf/potri, a third of the work) per matrix for large K."""
    b, k = m.shape[:2]
    if k < 48:
        return np.linalg.inv(m), np.linalg.slogdet(m)[1]
    from scipy.linalg import lapack

    inverse = np.empty_like(m)
    logdet = np.empty(b)
    upper = np.triu_indices(k, 1)
    for r in range(b):
        c, info = lapack.dpotrf(m[r], lower=1, clean=0)
        if info != 0:  # not numerically positive definite: LU
            inverse[r], logdet[r] = np.linalg.inv(m[r]), np.linalg.slogdet(m[r])[1]
            continue
        logdet[r] = 2.0 * np.log(np.diagonal(c)).sum()
        inv, info = lapack.dpotri(c, lower=1)
        inv[upper] = inv.T[upper]
        inverse[r] = inv
    return inverse, logdet


def _information(w: np.ndarray, i: np.ndarray, j: np.ndarray, k: int) -> np.ndarray:
    """(B, K, K) Σ_r w_r x_r x_rᵀ for pair-row weights ``w`` (B, R)."""
    b = len(w)
    info = np.zeros((b, k * k))
    offs = (np.arange(b) * k * k)[:, None]
    for rows, cols, sign in ((i, i, 1.0), (j, j, 1.0), (i, j, -1.0), (j, i, -1.0)):
        info += np.bincount((offs + rows * k + cols).ravel(), (sign * w).ravel(), b * k * k).reshape(b, k * k)
    return info.reshape(b, k, k)


def pieces(theta: np.ndarray, i: np.ndarray, j: np.ndarray, y: np.ndarray, n: np.ndarray,
           metric: bool = False) -> Pieces:
    """ℓ*, its gradient (the modified score) and the information at ``theta`` (B, K). ``metric``:
    also the inverse of ``I_h + 11ᵀ/K``, ``I_h = Σ_r (n_r + h_r) p_r(1 − p_r) x_r x_rᵀ``: the
    curvature of the pseudo-count likelihood (the one Newton's), which includes most of the
    penalty's — far-out players of separated data converge in a few steps with it, where the
    information alone gives them a slow linear rate."""
    b, k = theta.shape
    d = theta[:, i] - theta[:, j]
    p = _expit(d)
    w = n * p * (1.0 - p)
    info = _information(w, i, j, k)
    reg = info + 1.0 / k + 1e-12 * np.eye(k)  # the jitter keeps θ far out (p ≈ 0 or 1) invertible
    inverse, logdet = _inverse_logdet(reg)
    lev = w * (inverse[:, i, i] + inverse[:, j, j] - 2.0 * inverse[:, i, j])
    g = y - n * p + lev * (0.5 - p)
    score = np.zeros((b, k * 1))
    offs1 = (np.arange(b) * k)[:, None]
    score += np.bincount((offs1 + i).ravel(), g.ravel(), b * k).reshape(b, k)
    score -= np.bincount((offs1 + j).ravel(), g.ravel(), b * k).reshape(b, k)
    loglik = (y * _log_expit(d) + (n - y) * _log_expit(-d)).sum(axis=1)
    value = loglik + 0.5 * logdet
    out = Pieces(p, info, inverse, lev, score, value)
    if metric:
        out.metric = _inverse_logdet(reg + _information(lev * p * (1.0 - p), i, j, k))[0]
    return out


@dataclass
class FirthFit:
    """Firth estimates (B, K) on Σθ = 0, the penalised log-likelihood there and the information."""

    theta: np.ndarray
    value: np.ndarray
    info: np.ndarray
    iterations: int
    converged: np.ndarray

    def wald_cov(self) -> np.ndarray:
        """(B, K, K) inverse information on Σθ = 0 at the estimate (Wald covariance of θ̂*)."""
        k = self.theta.shape[1]
        inv = np.linalg.inv(self.info + 1.0 / k)
        return inv - 1.0 / k


def connected_replicates(i, j, n, k: int) -> np.ndarray:
    """(B,) whether each replicate's comparison graph (pairs with ``n > 0``) is connected."""
    from bayesrank.data.aggregate import _components

    seen = n > 0
    out = np.ones(len(n), dtype=bool)
    rows = np.flatnonzero(~seen.all(axis=1)) if len(n) > 1 else np.arange(len(n))
    if len(n) > 1 and len(rows) < len(n):  # the replicates using every pair row share one graph
        out[:] = _components(k, i, j)[0] == 1
    for b in rows:
        out[b] = _components(k, i[seen[b]], j[seen[b]])[0] == 1
    return out


def firth_fit(counts, ties: str = "half", batch_counts=None, tol: float = 1e-9, max_iter: int = 200,
              start=None, strict: bool = True) -> FirthFit:
    """Firth estimate of every replicate (``batch_counts`` (B, R, 3) on ``counts``' pair rows, or the
    counts themselves): the fixed point of :func:`bayesrank.bt.mle.newton` on the pseudo-counts
    ``wins + h/2`` (module docstring). Replicates stop one by one. Raises :class:`NumericalError`
    when some replicate does not converge (a disconnected comparison graph), unless ``strict=False``
    (then see ``converged``)."""
    from bayesrank.bt.likelihood import tie_model
    from bayesrank.bt.mle import newton

    i, j = np.asarray(counts.i), np.asarray(counts.j)
    base = np.asarray(counts.counts if batch_counts is None else batch_counts, dtype=float)
    base = base[None] if base.ndim == 2 else base
    if ties == "drop":
        base = base.copy()
        base[..., 2] = 0.0
    y, n = binomial_rows(base, ties)
    k = counts.n_players
    theta = np.zeros((base.shape[0], k)) if start is None else np.array(np.broadcast_to(start, (base.shape[0], k)))
    model = tie_model("half")
    converged = np.zeros(base.shape[0], dtype=bool)
    connected = connected_replicates(i, j, n, k)
    if strict and not connected.all():
        raise NoFiniteEstimateError(
            "Firth's bias reduction needs a connected comparison graph: "
            + ("the players fall into groups never compared with each other" if len(connected) == 1 else
               f"{int((~connected).sum())} of {len(connected)} data sets have groups of players never compared "
               "with each other"))
    theta[~connected] = np.nan
    active = np.flatnonzero(connected)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (the count is reported after the loop)
        sub = base[active]
        h = pieces(theta[active], i, j, y[active], n[active]).leverage
        aug = sub.copy()
        aug[..., 0] += h / 2
        aug[..., 1] += h / 2
        res = newton(model, counts, batch_counts=aug, start=theta[active], tol=tol)
        new = res.params[:, :k]
        ok = np.isfinite(new).all(axis=1)
        done = ok & (np.abs(new - theta[active]).max(axis=1) < tol)
        theta[active[ok]] = new[ok]
        converged[active[done]] = True
        active = active[~done & ok]
        if len(active) == 0:
            break
    value, info = np.full(len(theta), np.nan), np.full((len(theta), k, k), np.nan)
    ok = np.flatnonzero(np.isfinite(theta).all(axis=1))
    if len(ok):
        final = pieces(theta[ok], i, j, y[ok], n[ok])
        value[ok], info[ok] = final.value, final.info
    if strict and not converged.all():
        bad = int((~converged).sum())
        raise NumericalError(f"Firth's bias-reduced fit did not converge in {max_iter} iterations for {bad} of "
                             f"{len(converged)} data sets (the comparison graph may be disconnected)")
    return FirthFit(theta, value, info, it, converged)


def _rows(x, rows):
    """``x[rows]`` for per-replicate arrays, ``x`` itself when shared by every replicate (one row)."""
    return x[rows] if x.shape[0] > 1 else x


def profile_max(t, c, i, j, y, n, start, tol: float = 1e-8, max_iter: int = 100, value_tol: float = 1e-11):
    """max ℓ* subject to cᵀθ = t, per replicate (``t`` (B,); ``c`` (K,) or one contrast per replicate
    (B, K); ``y``, ``n`` (B, R) or (1, R) shared; ``start`` (B, K), e.g. the unconstrained estimate).
    Modified-score scoring with the constraint: with ``M = I_h + 11ᵀ/K`` (:func:`pieces`'s
    ``metric``), ``u = M⁻¹g`` and ``v = M⁻¹c``, the step
    ``u − v·(cᵀu + cᵀθ − t)/(cᵀv)`` maximises the quadratic model on ``cᵀθ = t`` (and keeps
    ``Σθ``: 1 is an eigenvector of ``M``). The first step lands on the constraint; after it, step
    halving keeps ℓ* increasing. Replicates stop one by one (only the unconverged ones are iterated)."""
    b = len(start)
    c = np.broadcast_to(np.asarray(c, dtype=float), start.shape)
    c = c - c.mean(axis=1, keepdims=True)
    t = np.broadcast_to(np.asarray(t, dtype=float), (b,))
    theta = np.array(start, dtype=float)
    cur = pieces(theta, i, j, _rows(y, np.arange(b)), _rows(n, np.arange(b)), metric=True)
    value = np.full(b, -np.inf)  # off the constraint: the first step is taken whole
    active = np.arange(b)
    score, inverse = cur.score, cur.metric
    for _ in range(max_iter):
        ca = c[active]
        u = np.einsum("bkl,bl->bk", inverse, score)
        v = np.einsum("bkl,bl->bk", inverse, ca)
        gap = (ca * theta[active]).sum(axis=1) - t[active]
        step = u - (((ca * u).sum(axis=1) + gap) / (ca * v).sum(axis=1))[:, None] * v
        scale = np.ones(len(active))
        yy, nn = _rows(y, active), _rows(n, active)
        base = theta[active]
        cand = base + step
        new = pieces(cand, i, j, yy, nn, metric=True)
        old = value[active]
        worse = new.value < old - 1e-12 * np.abs(old)
        for _half in range(30):  # halve the steps that lowered ℓ*, re-evaluating only those
            if not worse.any():
                break
            w = np.flatnonzero(worse)
            scale[w] /= 2
            cand[w] = base[w] + scale[w, None] * step[w]
            sub = pieces(cand[w], i, j, _rows(yy, w), _rows(nn, w), metric=True)
            new.value[w], new.score[w], new.metric[w] = sub.value, sub.score, sub.metric
            worse[w] = sub.value < old[w] - 1e-12 * np.abs(old[w])
        theta[active] = cand
        value[active] = new.value
        # stop when θ stops moving or ℓ* stops rising (the profile needs the value; far-out players
        # of separated data creep on at a linear rate with no effect on it)
        moving = (np.abs(scale[:, None] * step).max(axis=1) >= tol) & ~(new.value - old < value_tol)
        if not moving.any():
            break
        active = active[moving]
        score, inverse = new.score[moving], new.metric[moving]
    return theta, value


@dataclass
class ProfileInterval:
    """Profile penalised likelihood interval of ``cᵀθ`` per replicate (±inf beyond :data:`LIMIT`)
    and the penalised likelihood-ratio p-value of ``cᵀθ = 0``."""

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    p_value: np.ndarray     # two-sided: chi²₁ tail of the penalised likelihood-ratio statistic
    statistic: np.ndarray   # its signed root sign(t̂)·√(2[ℓ*(θ̂) − max_{cᵀθ=0} ℓ*]): one-sided p = Φ(−statistic)


def profile_interval(counts, fit: FirthFit, c, level: float = 0.95, ties: str = "half", batch_counts=None,
                     tol: float = 1e-7, p_value: bool = True, max_iter: int = 40, sides=(-1, 1),
                     chunk: int = 32) -> ProfileInterval:
    """The profile penalised likelihood interval (module docstring) of a contrast, all at once:
    ``c`` (K,) for every replicate of ``batch_counts``, or (m, K) m contrasts of one data set. Each
    bound solves ``r(t) = ±z`` for the signed root of the profile deviance
    ``r(t) = sign(t − t̂)·√(2[ℓ*(θ̂) − max_{cᵀθ=t} ℓ*(θ)])`` (nearly linear in ``t``; Venzon &
    Moolgavkar 1988) by false position (Illinois), starting from the Wald bound. ``sides``: the
    bounds to compute (``(-1,)``: the lower only, the other is NaN; ``()``: the test only).
    Contrasts of one data set are processed ``chunk`` at a time (each needs K × K matrices)."""
    c = np.asarray(c, dtype=float)
    if c.ndim == 2 and fit.theta.shape[0] == 1 and len(c) > chunk:
        parts = [profile_interval(counts, fit, c[lo: lo + chunk], level, ties, batch_counts, tol, p_value, max_iter,
                                  sides, chunk) for lo in range(0, len(c), chunk)]
        return ProfileInterval(*(np.concatenate([getattr(q, f) for q in parts])
                                 for f in ("estimate", "lower", "upper", "p_value", "statistic")))
    return _profile_interval(counts, fit, c, level, ties, batch_counts, tol, p_value, max_iter, sides)


def _profile_interval(counts, fit, c, level, ties, batch_counts, tol, p_value, max_iter, sides) -> ProfileInterval:
    from scipy.stats import chi2, norm

    i, j = np.asarray(counts.i), np.asarray(counts.j)
    base = np.asarray(counts.counts if batch_counts is None else batch_counts, dtype=float)
    base = base[None] if base.ndim == 2 else base
    y, n = binomial_rows(base, ties)
    c = np.atleast_2d(c)
    c = c - c.mean(axis=1, keepdims=True)
    b = max(len(c), fit.theta.shape[0])
    c = np.broadcast_to(c, (b, c.shape[1]))
    theta_hat = np.array(np.broadcast_to(fit.theta, c.shape))
    value_hat = np.broadcast_to(fit.value, (b,))
    z = float(norm.ppf(0.5 + level / 2))
    est = (theta_hat * c).sum(axis=1)
    cov = fit.wald_cov()
    var = np.einsum("bk,kl,bl->b", c, cov[0], c) if len(cov) == 1 else np.einsum("bk,bkl,bl->b", c, cov, c)
    se = np.sqrt(np.maximum(var, 1e-12))

    def signed_root(t, start, rows=None):
        """r(t) of the replicates ``rows`` (all by default)."""
        rows = np.arange(len(t)) if rows is None else rows
        theta, value = profile_max(t[rows], c[rows], i, j, _rows(y, rows), _rows(n, rows), start[rows])
        r = np.sign(t[rows] - est[rows]) * np.sqrt(np.maximum(2.0 * (value_hat[rows] - value), 0.0))
        return r, theta

    bounds = {-1.0: np.full(b, np.nan), 1.0: np.full(b, np.nan)}
    for sign in map(float, sides):
        target = sign * z
        t_in, r_in = est.copy(), np.zeros(b)           # inside: |r| < z
        t_cur = est + sign * z * se
        r_cur, theta = signed_root(t_cur, theta_hat)
        t_out, r_out = np.full(b, np.nan), np.full(b, np.nan)
        for _ in range(max_iter):
            outside = sign * (r_cur - target) >= 0
            t_out = np.where(outside, t_cur, t_out)
            r_out = np.where(outside, r_cur, r_out)
            t_in = np.where(outside, t_in, t_cur)
            r_in = np.where(outside, r_in, r_cur)
            done = np.abs(r_cur - target) < 1e-9 * max(1.0, z) + 1e-12
            bracketed = np.isfinite(t_out)
            width = np.where(bracketed, np.abs(t_out - t_in), np.inf)
            if np.all(done | (width < tol) | (np.abs(t_in - est) >= LIMIT)):
                break
            # false position inside the bracket, secant extrapolation (at most ×4) before it
            with np.errstate(divide="ignore", invalid="ignore"):
                slope = np.where(bracketed, (r_out - r_in) / np.where(bracketed & (t_out != t_in), t_out - t_in, 1.0),
                                 (r_cur - r_in) / np.where(t_cur != t_in, t_cur - t_in, 1.0))
            slope = np.where(np.abs(slope) > 1e-12, slope, sign * 1e-12)
            t_new = t_in + (target - r_in) / slope
            t_new = np.where(bracketed, np.clip(t_new, np.minimum(t_in, t_out), np.maximum(t_in, t_out)),
                             est + sign * np.minimum(np.abs(t_new - est), 4.0 * np.abs(t_cur - est) + se))
            t_new = np.where(bracketed | (np.abs(t_new - est) <= LIMIT + 1), t_new, est + sign * (LIMIT + 1))
            todo = np.flatnonzero(~(done | (width < tol)))
            t_cur = np.where(done, t_cur, t_new)
            r_new, theta_new = signed_root(t_cur, theta, todo)
            r_cur = r_cur.copy()
            r_cur[todo] = r_new
            theta = theta.copy()
            theta[todo] = theta_new
        found = np.isfinite(t_out) | (np.abs(r_cur - target) < 1e-6)
        with np.errstate(divide="ignore", invalid="ignore"):
            interp = np.where(r_out != r_in, t_in + (target - r_in) * (t_out - t_in) / (r_out - r_in), t_in)
        bound = np.where(np.abs(r_cur - target) < 1e-6, t_cur, np.where(np.isfinite(t_out), interp, t_cur))
        bounds[sign] = np.where(found, bound, sign * np.inf)
    p, stat = np.full(b, np.nan), np.full(b, np.nan)
    if p_value:
        _, value0 = profile_max(np.zeros(b), c, i, j, y, n, theta_hat)
        dev = np.maximum(2.0 * (value_hat - value0), 0.0)
        p, stat = chi2.sf(dev, 1), np.sign(est) * np.sqrt(dev)
    return ProfileInterval(est, bounds[-1.0], bounds[1.0], p, stat)
