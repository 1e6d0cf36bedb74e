"""Calibration estimators for a binary correctness signal ``y`` and a confidence ``c`` in [0, 1].

Every function takes ``(confidence, correct)`` arrays of equal length and returns a float.
Definitions (N items, bins B_b, n_b = |B_b|):

- ``ece``      equal-width binned ECE  ``Σ_b (n_b/N) |acc_b − conf_b|`` with right-closed bins
               ``[0, 1/K], (1/K, 2/K], …`` (the convention of scikit-learn's ``calibration_curve`` and
               of Guo et al. 2017).
- ``ece_em``   equal-mass binned ECE: bin edges are the K-quantiles of ``c`` (``np.percentile``,
               scikit-learn's ``strategy="quantile"``); tied confidences stay in one bin.
- ``kde``      KDE-ECE of Zhang, Kailkhura & Han (2020, "Mix-n-Match"): triweight kernels with
               bandwidth ``std(c | y=1)·(2N)^(-1/5)``, reflection at 0 and 1, accuracy curve
               ``acc(c) = min(1, ȳ·f₁(c)/f(c))`` and ``∫|c − acc(c)| f(c) dc / ∫ f(c) dc``, computed on the
               authors' grid (2^14 points on [−0.6, 1.6]) with linear binning and FFT convolution.
- ``ks``       KS calibration error of Gupta et al. (2021): ``max_t |Σ_{c_i ≤ t} (c_i − y_i)| / N``
               (evaluated at the distinct confidence values, so ties cannot change the answer).
- ``smece``    smooth ECE of Błasiok & Nakkiran (2023) with relplot's discretisation (reflected
               Gaussian kernel on a grid, bandwidth σ* solving ``smECE_σ = σ`` by bisection).
- ``ece2_debiased``  debiased squared ℓ2 binned calibration error of Kumar, Liang & Ma (2019,
               "Verified uncertainty calibration"): ``Σ_b (n_b/N)[(ȳ_b − c̄_b)² − ȳ_b(1 − ȳ_b)/(n_b − 1)]``
               over equal-mass bins (their ``get_equal_bins``); bins with fewer than 2 items count 0.
               On the SQUARED scale (not clipped, may be negative): see :func:`ece2_debiased`.
- ``brier``    ``mean((c − y)²)``;  ``nll``  ``−mean(y log c + (1−y) log(1−c))`` (c clipped to
               [1e-15, 1 − 1e-15]);  ``auroc``  Mann–Whitney probability that a correct item has higher
               confidence than an incorrect one (ties count 1/2).
"""

from __future__ import annotations

import numpy as np
from scipy.signal import fftconvolve

from bayesrank.errors import InputError

__all__ = [
    "ESTIMATORS",
    "CALIBRATION_ERRORS",
    "ece",
    "ece_equal_mass",
    "kde_ece",
    "ks_error",
    "smooth_ece",
    "ece2_debiased",
    "ece2_plugin",
    "kumar_equal_mass_edges",
    "discrete_edges",
    "brier",
    "nll",
    "auroc",
    "estimate",
    "validate_pair",
]


def validate_pair(confidence, correct, *, name: str = "confidence") -> tuple[np.ndarray, np.ndarray]:
    """Check arrays: same length, non-empty, finite confidences in [0, 1], correctness in {0, 1}."""
    c = np.asarray(confidence, dtype=float).ravel()
    y_raw = np.asarray(correct)
    if y_raw.dtype == bool:
        y = y_raw.astype(float).ravel()
    else:
        y = np.asarray(y_raw, dtype=float).ravel()
    if c.shape != y.shape:
        raise InputError(f"{name} has {c.size} values but correctness has {y.size}; expected equal lengths")
    if c.size == 0:
        raise InputError(f"{name}: empty group (0 items); need at least one item to estimate calibration")
    bad = ~np.isfinite(c)
    if bad.any():
        raise InputError(f"{name}: row {int(np.flatnonzero(bad)[0])} is {c[bad][0]}; expected a finite probability in [0, 1]")
    bad = (c < 0) | (c > 1)
    if bad.any():
        raise InputError(f"{name}: row {int(np.flatnonzero(bad)[0])} is {float(c[bad][0]):g}; expected a probability in [0, 1]")
    bad = ~((y == 0) | (y == 1))
    if bad.any():
        raise InputError(f"correctness: row {int(np.flatnonzero(bad)[0])} is {float(y[bad][0]):g}; expected binary 0/1 (or True/False)")
    return c, y


# ----------------------------------------------------------------------------- binned ECE
def _binned_ece(c: np.ndarray, y: np.ndarray, edges: np.ndarray) -> float:
    n_bins = len(edges) - 1
    ids = np.searchsorted(edges[1:-1], c)  # right-closed bins, exactly as sklearn.calibration_curve
    s_c = np.bincount(ids, weights=c, minlength=n_bins)
    s_y = np.bincount(ids, weights=y, minlength=n_bins)
    return float(np.abs(s_y - s_c).sum() / c.size)  # Σ (n_b/N)|acc_b − conf_b| = Σ |Σy − Σc| / N


def ece(confidence, correct, n_bins: int = 10) -> float:
    """Equal-width ECE ``Σ_b (n_b/N)|acc_b − conf_b|`` with ``n_bins`` right-closed bins on [0, 1]."""
    c = np.ascontiguousarray(confidence, dtype=float).ravel()
    y = np.ascontiguousarray(correct, dtype=float).ravel()
    if c.shape == y.shape and c.size > 0:
        val = _ece_uniform_kernel()(c, y, int(n_bins))
        if val >= 0:  # the fused kernel validated every row
            return float(val)
    c, y = validate_pair(confidence, correct)  # raises the detailed error
    return _binned_ece(c, y, np.linspace(0.0, 1.0, int(n_bins) + 1))


_ECE_KERNEL = None


def _ece_uniform_kernel():
    """One pass over the data: validate, bin and sum ``y − c`` per bin; returns −1 if any row is
    invalid. Bins are exactly ``searchsorted(linspace(0, 1, K+1)[1:-1], c)``: the interior edges of
    ``np.linspace`` are ``k * (1/K)``, and ``int(c*K)`` is off by at most one bin near an edge.
    Compiled with numba (a PyTensor dependency) on first use."""
    global _ECE_KERNEL
    if _ECE_KERNEL is None:
        import numba

        @numba.njit(cache=True, nogil=True)
        def kernel(c, y, k_bins):
            step = 1.0 / k_bins
            acc = np.zeros(k_bins)
            bad = False
            for i in range(c.size):
                ci = c[i]
                yi = y[i]
                ok = (ci >= 0.0) & (ci <= 1.0) & ((yi == 0.0) | (yi == 1.0))
                bad |= not ok
                x = ci * k_bins if ok else 0.0  # never index with an invalid value
                k = int(x)
                if k > k_bins - 1:
                    k = k_bins - 1
                f = x - k
                if f < 1e-9 or f > 1.0 - 1e-9:  # near an edge: compare with the linspace edge exactly
                    if k > 0 and ci <= k * step:
                        k -= 1
                    elif k < k_bins - 1 and ci > (k + 1) * step:
                        k += 1
                acc[k] += yi - ci
            if bad:
                return -1.0
            return np.abs(acc).sum() / c.size

        _ECE_KERNEL = kernel
    return _ECE_KERNEL


def ece_equal_mass(confidence, correct, n_bins: int = 10) -> float:
    """Equal-mass ECE: edges at the ``n_bins``-quantiles of the confidences (ties share a bin)."""
    c, y = validate_pair(confidence, correct)
    edges = np.percentile(c, np.linspace(0, 100, int(n_bins) + 1))
    return _binned_ece(c, y, edges)


# ----------------------------------------------------------------------------- KDE-ECE
KDE_GRID = np.linspace(-0.6, 1.6, num=2**14)


def _linear_binning(x: np.ndarray, grid: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Linear binning of (weighted) points onto an equidistant grid, weights normalised to sum 1 (as KDEpy)."""
    dx = (grid[-1] - grid[0]) / (len(grid) - 1)
    pos = (x - grid[0]) / dx
    left = np.floor(pos).astype(np.int64)
    frac = pos - left
    w = np.ones_like(x) if weights is None else weights
    out = np.bincount(left, weights=w * (1.0 - frac), minlength=len(grid) + 1)
    out += np.bincount(left + 1, weights=w * frac, minlength=len(grid) + 1)
    return out[: len(grid)] / w.sum()


def _triweight_fft_kde(x: np.ndarray, bw: float, grid: np.ndarray) -> np.ndarray:
    """Triweight KDE (kernel standard deviation ``bw``) on ``grid`` of ``x`` with the points below 1/2
    mirrored about 0 and those above about 1 (the authors' ``mirror_1d``)."""
    return _triweight_fft_kde_weighted(x, None, bw, grid)


def _triweight_fft_kde_weighted(x: np.ndarray, w: np.ndarray | None, bw: float, grid: np.ndarray) -> np.ndarray:
    """The same KDE with point weights ``w`` (mirrored points keep their weight); ``None``: unit weights."""
    lo, hi = x < 0.5, x >= 0.5
    mirrored = np.concatenate([-x[lo], x, 2.0 - x[hi]])
    mw = None if w is None else np.concatenate([w[lo], w, w[hi]])
    data = _linear_binning(mirrored, grid, mw)
    dx = (grid[-1] - grid[0]) / (len(grid) - 1)
    real_bw = bw * 3.0  # triweight has variance 1/9 on support [-1, 1]
    half = int(min(np.floor(real_bw / dx), len(grid)))
    u = np.linspace(-dx * half, dx * half, 2 * half + 1) / real_bw
    kern = np.where(u * u < 1, (1 - u * u) ** 3, 0.0) * (35.0 / 32.0) / real_bw
    dens = fftconvolve(data, kern, mode="same") if half > 0 else data * kern[0]
    dens = dens + np.finfo(float).eps
    dens[(grid <= 0.0) | (grid >= 1.0)] = 0.0
    return dens * 2.0


def kde_ece(confidence, correct, order: int = 1, min_bandwidth: float = 1e-3) -> float:
    """KDE-ECE of Zhang et al. (2020) (see module docstring). ``min_bandwidth`` guards the degenerate
    case where every correct item has the same confidence (the authors' code would divide by zero)."""
    c, y = validate_pair(confidence, correct)
    grid = KDE_GRID
    pos = c[y == 1]
    if pos.size == 0:  # no correct item: accuracy curve is identically 0
        return float(np.mean(np.abs(c) ** order)) if order != 1 else float(np.mean(c))
    bw = max(float(np.std(pos)) * (2 * c.size) ** -0.2, min_bandwidth)
    pp1 = _triweight_fft_kde(pos, bw, grid)
    pp2 = _triweight_fft_kde(c, bw, grid)
    perc = float(np.mean(y))
    valid = np.maximum(pp1, pp2) > 1e-6
    with np.errstate(divide="ignore", invalid="ignore"):
        acc = np.minimum(perc * pp1 / pp2, 1.0)
    ok = valid & ~np.isnan(acc)
    integral = np.where(ok, np.abs(grid - np.where(ok, acc, 0.0)) ** order * pp2, 0.0)
    # the authors' loop carries the previous value through low-density gaps (for i > 1)
    idx = np.where(ok | (np.arange(grid.size) <= 1), np.arange(grid.size), 0)
    idx = np.maximum.accumulate(idx)
    integral = integral[idx]
    ind = (grid >= 0.0) & (grid <= 1.0)
    return float(np.trapezoid(integral[ind], grid[ind]) / np.trapezoid(pp2[ind], grid[ind]))


# ----------------------------------------------------------------------------- KS
def ks_error(confidence, correct) -> float:
    """KS calibration error ``max_t |Σ_{c_i ≤ t}(c_i − y_i)|/N`` (Gupta et al. 2021), evaluated at
    the distinct confidence values. Correct and incorrect items are sorted separately and merged,
    so ties are handled as blocks and no argsort is needed."""
    c, y = validate_pair(confidence, correct)
    pos = np.sort(c[y == 1])
    neg = np.sort(c[y == 0])
    return float(_ks_merge_kernel()(pos, neg) / c.size)


_KS_KERNEL = None


def _ks_merge_kernel():
    global _KS_KERNEL
    if _KS_KERNEL is None:
        import numba

        @numba.njit(cache=True, nogil=True)
        def kernel(pos, neg):
            i = 0
            j = 0
            n_pos = pos.size
            n_neg = neg.size
            cum = 0.0
            best = 0.0
            while i < n_pos or j < n_neg:
                if j >= n_neg or (i < n_pos and pos[i] <= neg[j]):
                    v = pos[i]
                else:
                    v = neg[j]
                while i < n_pos and pos[i] == v:
                    cum += v - 1.0
                    i += 1
                while j < n_neg and neg[j] == v:
                    cum += v
                    j += 1
                if abs(cum) > best:
                    best = abs(cum)
            return best

        _KS_KERNEL = kernel
    return _KS_KERNEL


# ----------------------------------------------------------------------------- smooth ECE
SMECE_MESH_POINTS = 200  # relplot.config.smECE_mesh_pts


def _round_to_grid(f: np.ndarray, w: np.ndarray, m: int) -> np.ndarray:
    bins = (f * (m - 1)).astype(np.int64).clip(0, m - 2)
    frac = f * (m - 1) - bins
    out = np.bincount(bins, weights=(1 - frac) * w, minlength=m)
    out += np.bincount(bins + 1, weights=frac * w, minlength=m)
    return out


def _reflected_gaussian_smooth(grid_vals: np.ndarray, sigma: float, m: int) -> np.ndarray:
    """relplot's ReflectedGaussianKernel.convolve for the rows of ``grid_vals`` (one FFT for all rows;
    relplot uses np.convolve per row: the same sum, computed in O(m log m))."""
    t = np.linspace(0, 1, m)
    ker = np.exp(-(t - 0.5) * (t - 0.5) / (2 * sigma**2)) / (np.sqrt(2 * np.pi) * sigma)
    vals = np.atleast_2d(grid_vals)
    ext = np.concatenate([np.flip(vals, axis=1)[:, :-1], vals, np.flip(vals, axis=1)[:, 1:]], axis=1)
    n_full = ext.shape[1] + m - 1
    n_fft = _next_fast_len(n_full)
    full = np.fft.irfft(np.fft.rfft(ext, n_fft, axis=1) * np.fft.rfft(ker, n_fft), n_fft, axis=1)
    start = (m - 1) + m // 2  # 'valid' part starts at m-1; relplot then keeps [m//2, m//2 + m)
    return full[:, start : start + m]


def _next_fast_len(n: int) -> int:
    from scipy.fft import next_fast_len

    return next_fast_len(n, real=True)


def _interpolate(t: np.ndarray, v: np.ndarray) -> np.ndarray:
    k = len(v)
    size = 1 / (k - 1)
    inds = (t * (k - 1)).astype(int).clip(0, k - 2)
    r = (t - inds * size) / size
    return v[inds] * (1 - r) + v[inds + 1] * r


class _SmoothECE:
    """smECE_σ for many σ on the same data; grid binnings are cached per grid size. ``residual``
    (default ``c − y``) and ``density`` (default 1) are the per-item weights of the two smoothed
    series (the posterior functional passes ``w·(c − p)`` and ``w``)."""

    def __init__(self, c: np.ndarray, y: np.ndarray | None = None, *, residual=None, density=None):
        self.c = c
        self.r = c - y if residual is None else residual
        self.d = np.ones_like(c) if density is None else density
        self._cache: dict[int, np.ndarray] = {}

    def _binned(self, m: int):
        if m not in self._cache:
            self._cache[m] = np.vstack([_round_to_grid(self.c, self.r, m), _round_to_grid(self.c, self.d, m)])
        return self._cache[m]

    def __call__(self, sigma: float) -> float:
        ev = max(round(10 / sigma), SMECE_MESH_POINTS)
        t = np.linspace(0, 1, ev)
        m = max(2000, round(20 / sigma)) // 2 + 1
        sm = _reflected_gaussian_smooth(self._binned(m), sigma, m)
        rs = _interpolate(t, sm[0])
        dens = _interpolate(t, sm[1]) + 0.0001
        rs = rs / dens
        return float(np.sum(np.abs(rs) * dens) / np.sum(dens))


def smooth_ece(confidence, correct, sigma: float | None = None, eps: float = 0.001, return_sigma: bool = False):
    """Smooth ECE (Błasiok & Nakkiran 2023): ``smECE_σ = ∫ |r̂_σ(t)| δ̂_σ(t) dt / ∫ δ̂_σ`` with
    ``r̂_σ`` the kernel-smoothed residual ``c − y`` and ``δ̂_σ`` the smoothed density (reflected
    Gaussian kernel); σ* is the fixed point ``smECE_σ = σ`` found by 10 bisection steps (relplot)."""
    c, y = validate_pair(confidence, correct)
    f = _SmoothECE(c, y)
    s = float(sigma) if sigma is not None else smece_sigma(f, eps)
    val = f(s)
    return (val, s) if return_sigma else val


def smece_sigma(f, eps: float = 0.001) -> float:
    """relplot's bandwidth: σ* with ``smECE_σ = σ``, 10 bisection steps on (0, 1] (1 if smECE_1 ≥ 1)."""
    def ok(a):
        return a < eps or a < f(a)

    if ok(1.0):
        return 1.0
    hi, lo = 1.0, 0.0
    for _ in range(10):
        mid = (hi + lo) / 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return hi


def _round_to_grid_rows(f: np.ndarray, w: np.ndarray, m: int) -> np.ndarray:
    """:func:`_round_to_grid` of every row of (k, N) ``f`` and ``w`` (one bincount: the same sums)."""
    k = f.shape[0]
    bins = (f * (m - 1)).astype(np.int64).clip(0, m - 2)
    frac = f * (m - 1) - bins
    idx = (bins + m * np.arange(k)[:, None]).ravel()
    out = np.bincount(idx, weights=((1 - frac) * w).ravel(), minlength=k * m)
    out += np.bincount(idx + 1, weights=(frac * w).ravel(), minlength=k * m)
    return out.reshape(k, m)


def _smece_rows_at(c: np.ndarray, y: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """smECE_σ of row r of (k, N) ``c``, ``y`` at ``sigma[r]``: :class:`_SmoothECE` for every row
    at once, rows grouped by their grid sizes (same arithmetic, batched FFTs)."""
    out = np.empty(len(sigma))
    ev = np.maximum(np.round(10 / sigma), SMECE_MESH_POINTS).astype(np.int64)
    m = np.maximum(2000, np.round(20 / sigma)).astype(np.int64) // 2 + 1
    for e, mm in set(zip(ev.tolist(), m.tolist())):
        sel = np.flatnonzero((ev == e) & (m == mm))
        cs, s = c[sel], sigma[sel]
        vals = np.stack([_round_to_grid_rows(cs, cs - y[sel], mm), _round_to_grid_rows(cs, np.ones_like(cs), mm)], axis=1)
        t = np.linspace(0, 1, mm)
        ker = np.exp(-(t - 0.5) * (t - 0.5) / (2 * s**2)[:, None]) / (np.sqrt(2 * np.pi) * s)[:, None]
        ext = np.concatenate([np.flip(vals, axis=2)[..., :-1], vals, np.flip(vals, axis=2)[..., 1:]], axis=2)
        n_fft = _next_fast_len(ext.shape[2] + mm - 1)
        full = np.fft.irfft(np.fft.rfft(ext, n_fft, axis=2) * np.fft.rfft(ker, n_fft, axis=1)[:, None, :], n_fft, axis=2)
        start = (mm - 1) + mm // 2
        sm = full[..., start : start + mm]
        te = np.linspace(0, 1, e)
        rs = _interpolate_rows(te, sm[:, 0])
        dens = _interpolate_rows(te, sm[:, 1]) + 0.0001
        rs = rs / dens
        out[sel] = np.sum(np.abs(rs) * dens, axis=1) / np.sum(dens, axis=1)
    return out


def _interpolate_rows(t: np.ndarray, v: np.ndarray) -> np.ndarray:
    k = v.shape[1]
    size = 1 / (k - 1)
    inds = (t * (k - 1)).astype(int).clip(0, k - 2)
    r = (t - inds * size) / size
    return v[:, inds] * (1 - r) + v[:, inds + 1] * r


def smooth_ece_rows(confidence, correct, eps: float = 0.001) -> np.ndarray:
    """:func:`smooth_ece` of every row of (k, N) ``confidence`` and ``correct`` (e.g. bootstrap
    resamples of validated data), σ*'s bisection run for all rows at once: the numbers of k calls."""
    c = np.asarray(confidence, dtype=float)
    y = np.asarray(correct, dtype=float)
    k = c.shape[0]
    val1 = _smece_rows_at(c, y, np.ones(k))
    at_one = (1.0 < eps) | (1.0 < val1)  # smece_sigma's ok(1.0)
    lo, hi = np.zeros(k), np.ones(k)
    act = np.flatnonzero(~at_one)
    for _ in range(10):
        if not len(act):
            break
        mid = (hi[act] + lo[act]) / 2
        ok = mid < eps  # evaluated only where needed (a tiny σ needs a large grid), as smece_sigma
        need = ~ok
        if need.any():
            ok[need] = mid[need] < _smece_rows_at(c[act[need]], y[act[need]], mid[need])
        lo[act] = np.where(ok, mid, lo[act])
        hi[act] = np.where(ok, hi[act], mid)
    out = val1.copy()
    if len(act):
        out[act] = _smece_rows_at(c[act], y[act], hi[act])
    return out


# ----------------------------------------------------------------------------- debiased ℓ2 ECE
def kumar_equal_mass_edges(confidence, n_bins: int = 10) -> np.ndarray:
    """Upper bin edges of Kumar et al.'s ``get_equal_bins``: the sorted confidences split by
    ``np.array_split`` into ``min(n_bins, N)`` parts, an edge at the midpoint between the last value
    of a part and the first of the next, then 1.0; duplicates removed. Bin b is ``(e_{b−1}, e_b]``
    (``searchsorted(edges, c)``), so tied confidences share a bin."""
    s = np.sort(np.asarray(confidence, dtype=float).ravel())
    k = min(int(n_bins), s.size)
    sizes = np.full(k, s.size // k)
    sizes[: s.size % k] += 1
    starts = np.cumsum(sizes)[:-1]  # first index of parts 1 .. k−1
    return np.unique(np.append((s[starts - 1] + s[starts]) / 2.0, 1.0))


def discrete_edges(confidence) -> np.ndarray:
    """Upper bin edges of Kumar et al.'s ``get_discrete_bins``: one bin per distinct confidence
    (edges at the midpoints between consecutive distinct values, then 1.0)."""
    u = np.unique(np.asarray(confidence, dtype=float).ravel())
    return np.append((u[:-1] + u[1:]) / 2.0, 1.0)


def _edges(c: np.ndarray, n_bins, binning: str) -> np.ndarray:
    if binning == "equal_mass":
        return kumar_equal_mass_edges(c, _check_bins(n_bins))
    if binning == "discrete":
        return discrete_edges(c)
    raise InputError(f"binning={binning!r}; expected 'equal_mass' or 'discrete'")


def _check_bins(n_bins) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise InputError(f"n_bins={n_bins!r}; expected a positive integer number of bins")
    return int(n_bins)


def squared_binned_terms(c: np.ndarray, y: np.ndarray, edges: np.ndarray, weights: np.ndarray | None = None):
    """Per bin of ``edges`` (upper edges, right-closed): total weight ``n_b`` (item count when
    ``weights`` is None), mean confidence ``c̄_b`` and mean label/probability ``ȳ_b``; empty bins NaN."""
    ids = np.searchsorted(edges, c)
    w = np.ones_like(c) if weights is None else weights
    nb = np.bincount(ids, weights=w, minlength=edges.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        cb = np.bincount(ids, weights=w * c, minlength=edges.size) / nb
        yb = np.bincount(ids, weights=w * y, minlength=edges.size) / nb
    return nb, cb, yb


def ece2_plugin(confidence, probability, n_bins: int = 10, binning: str = "equal_mass") -> float:
    """Plug-in squared ℓ2 binned calibration error ``Σ_b (n_b/N)(ȳ_b − c̄_b)²`` on Kumar et al.'s
    equal-mass bins (``binning="discrete"``: one bin per distinct confidence). ``probability`` may be labels or probabilities
    in [0, 1]: with labels this is the estimator Kumar et al. debias (biased upwards by
    ``Σ_b Var(ȳ_b)·n_b/N``); with ``P(y=1 | item)`` on a large sample it is the population value
    ``Σ_b P(b)(E[y | b] − E[c | b])²`` that :func:`ece2_debiased` estimates."""
    c = np.asarray(confidence, dtype=float).ravel()
    p = np.asarray(probability, dtype=float).ravel()
    if c.shape != p.shape or c.size == 0:
        raise InputError(f"confidence has {c.size} values and probability {p.size}; expected equal, non-zero lengths")
    bad = ~(np.isfinite(c) & np.isfinite(p) & (c >= 0) & (c <= 1) & (p >= 0) & (p <= 1))
    if bad.any():
        raise InputError(f"row {int(np.flatnonzero(bad)[0])}: confidence and probability must be finite values in [0, 1]")
    nb, cb, yb = squared_binned_terms(c, p, _edges(c, n_bins, binning))
    ok = nb > 0
    return float(np.sum(nb[ok] * (yb[ok] - cb[ok]) ** 2) / c.size)


def ece2_debiased(confidence, correct, n_bins: int = 10, binning: str = "equal_mass") -> float:
    """Debiased squared ℓ2 calibration error (Kumar, Liang & Ma 2019, ``unbiased_square_ce``):

    ``Σ_b (n_b/N) [(ȳ_b − c̄_b)² − ȳ_b(1 − ȳ_b)/(n_b − 1)]`` over bins with ``n_b ≥ 2`` (others
    count 0), bins from :func:`kumar_equal_mass_edges` (``binning="discrete"``: one bin per distinct
    confidence, :func:`discrete_edges`, the bins Kumar et al. use for a discrete readout). Given the bins and the confidences, the
    ``y_i`` of bin b are independent Bernoulli(π_b) when the confidence is constant within a bin (a
    discrete readout, or a binned model: Kumar et al.'s setting), so ``E(ȳ_b − c̄_b)² = (π_b − c̄_b)²
    + π_b(1 − π_b)/n_b`` and ``E[ȳ_b(1 − ȳ_b)] = π_b(1 − π_b)(n_b − 1)/n_b``: the correction removes
    the label-noise term exactly. With confidences varying inside a bin the residual bias is
    ``[Var(c | b) − 2 Cov(c, y | b)]/N`` summed over bins (order bin-width²/N).

    Reported on the squared scale, NOT clipped at 0 (a negative value is an unbiased estimate of a
    small error); Kumar et al.'s ``get_calibration_error`` returns ``sqrt(max(·, 0))``, which is
    biased upwards near 0 — the bias this estimator exists to remove. The gap of two signals is
    ``ece2_debiased(verbal) − ece2_debiased(token)``, an unbiased estimate of the difference of
    squared errors."""
    c, y = validate_pair(confidence, correct)
    nb, cb, yb = squared_binned_terms(c, y, _edges(c, n_bins, binning))
    ok = nb >= 2
    terms = (yb[ok] - cb[ok]) ** 2 - yb[ok] * (1.0 - yb[ok]) / (nb[ok] - 1.0)
    return float(np.sum(nb[ok] * terms) / c.size)


# ----------------------------------------------------------------------------- scores
def brier(confidence, correct) -> float:
    """Brier score ``mean((c − y)²)``."""
    c, y = validate_pair(confidence, correct)
    return float(np.mean((c - y) ** 2))


def nll(confidence, correct, clip: float = 1e-15) -> float:
    """Negative log-likelihood ``−mean(y log c + (1−y) log(1−c))``, c clipped to [clip, 1−clip]."""
    c, y = validate_pair(confidence, correct)
    c = np.clip(c, clip, 1 - clip)
    return float(-np.mean(np.where(y == 1, np.log(c), np.log1p(-c))))


def auroc(confidence, correct) -> float:
    """AUROC of confidence for separating correct from incorrect items (ties count 1/2);
    NaN when only one class is present."""
    c, y = validate_pair(confidence, correct)
    pos, neg = np.sort(c[y == 1]), np.sort(c[y == 0])
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    less = np.searchsorted(neg, pos, side="left")
    leq = np.searchsorted(neg, pos, side="right")
    return float((less.sum() + 0.5 * (leq - less).sum()) / (pos.size * neg.size))


CALIBRATION_ERRORS = {
    "ece": ece,
    "ece_em": ece_equal_mass,
    "kde": kde_ece,
    "ks": ks_error,
    "smece": smooth_ece,
    "ece2_debiased": ece2_debiased,
}
SCORES = {"brier": brier, "nll": nll, "auroc": auroc}
ESTIMATORS = {**CALIBRATION_ERRORS, **SCORES}
# estimators with a batched form over rows of resamples (same numbers as row by row; the bootstrap uses it)
ROW_ESTIMATORS = {"smece": smooth_ece_rows}


def estimate(name: str, confidence, correct) -> float:
    """Evaluate the estimator called ``name`` (one of ``ESTIMATORS``)."""
    try:
        fn = ESTIMATORS[name]
    except KeyError:
        raise InputError(f"unknown estimator {name!r}; expected one of {', '.join(ESTIMATORS)}") from None
    return fn(confidence, correct)
