"""MCMC convergence summaries of draws ``(P, chains, draws)``, vectorised over the P parameters:
rank-normalised split R-hat and bulk/tail effective sample sizes (Vehtari, Gelman, Simpson,
Carpenter & Bürkner 2021), computed as ArviZ 1 (``arviz_stats``) computes them, so the
convergence verdicts do not need ArviZ (tests/stats/test_convergence.py compares every value).

* split chains: the first and the last ⌊n/2⌋ draws of each chain are two chains;
* z-scale: ranks r over all draws of a parameter (ties averaged), z = Φ⁻¹((r − 3/8)/(S + 1/4));
* R-hat of (m chains × n draws): √((B/W + n − 1)/n), B = n·var(chain means), W = mean(chain variances);
  rank R-hat = max(R-hat(z(split)), R-hat(z(|split − median|)));
* ESS = m·n/τ, τ = −1 + 2 Σ ρ̂_t over Geyer's initial positive (then monotone) sequence of
  autocorrelations (FFT autocovariances), τ ≥ 1/log10(m·n); bulk = ESS of z(split); tail = the smaller
  ESS of the indicators 1{x ≤ q} at the 0.11 and 0.89 quantiles (ArviZ 1's default ``ci_prob`` 0.89);
  mean = ESS of split.
"""

from __future__ import annotations

import numpy as np

#: tail ESS quantiles: ArviZ 1's ``ess(method="tail")`` default (``rcParams["stats.ci_prob"] = 0.89``)
TAIL_PROB = 0.89


def _invalid(x: np.ndarray, min_chains: int) -> np.ndarray:
    """(P,) True where ArviZ returns NaN: a NaN draw, fewer than 4 draws or ``min_chains`` chains."""
    bad = np.isnan(x).any(axis=(1, 2))
    return bad | (x.shape[-1] < 4) | (x.shape[-2] < min_chains)


def split_chains(x: np.ndarray) -> np.ndarray:
    """(P, 2m, ⌊n/2⌋): each chain's first and last halves as two chains."""
    half = x.shape[-1] // 2
    return np.concatenate([x[..., :half], x[..., x.shape[-1] - half:]], axis=-2)


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n along the last axis of ``x`` (2-D), ties given their average rank
    (``scipy.stats.rankdata(method="average")``, without importing scipy.stats)."""
    out = np.empty(x.shape, dtype=float)
    for q, row in enumerate(x):
        _, inv, cnt = np.unique(row, return_inverse=True, return_counts=True)
        out[q] = (np.cumsum(cnt) - (cnt - 1) / 2.0)[inv]
    return out


def z_scale(x: np.ndarray) -> np.ndarray:
    """Rank-normalised draws: Φ⁻¹ of the Blom-offset ranks over each parameter's draws."""
    from scipy.special import ndtri

    p, m, n = x.shape
    r = average_ranks(x.reshape(p, m * n))
    return ndtri((r - 0.375) / (m * n + 0.25)).reshape(x.shape)


def _rhat(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    between = n * np.var(x.mean(axis=-1), axis=-1, ddof=1)
    within = np.var(x, axis=-1, ddof=1).mean(axis=-1)
    return np.sqrt((between / within + n - 1) / n)


def rhat(x: np.ndarray) -> np.ndarray:
    """(P,) rank-normalised split R-hat of draws (P, chains, draws)."""
    x = np.asarray(x, dtype=float)
    s = split_chains(x)
    folded = np.abs(s - np.median(s.reshape(s.shape[0], -1), axis=-1)[:, None, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.maximum(_rhat(z_scale(s)), _rhat(z_scale(folded)))
    return np.where(_invalid(x, 2), np.nan, out)


def _autocov(x: np.ndarray) -> np.ndarray:
    from scipy.fft import next_fast_len

    n = x.shape[-1]
    m = next_fast_len(2 * n)
    x = x - x.mean(axis=-1, keepdims=True)
    f = np.fft.rfft(x, n=m, axis=-1)
    f *= np.conjugate(f)
    return np.fft.irfft(f, n=m, axis=-1)[..., :n] / n


def _ess(x: np.ndarray) -> np.ndarray:
    """(P,) ESS of chains x (P, m, n) by Geyer's initial monotone sequence."""
    p, m, n = x.shape
    out = np.empty(p)
    acov = _autocov(x)
    mean_var = acov[:, :, 0].mean(axis=-1) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if m > 1:
        var_plus = var_plus + np.var(x.mean(axis=-1), axis=-1, ddof=1)
    rho = 1.0 - (mean_var[:, None] - acov.mean(axis=1)) / var_plus[:, None]  # (P, n) ρ̂_t
    constant = (x.max(axis=(1, 2)) - x.min(axis=(1, 2))) < np.finfo(float).resolution
    floor = 1.0 / np.log10(m * n)
    for q in range(p):
        if constant[q]:
            out[q] = m * n
            continue
        r = rho[q]
        t_rho = np.zeros(n)
        t_rho[0] = 1.0
        even, odd = 1.0, r[1]
        t_rho[1] = odd
        t = 1
        while t < n - 3 and even + odd > 0.0:  # initial positive sequence
            even, odd = r[t + 1], r[t + 2]
            if even + odd >= 0:
                t_rho[t + 1], t_rho[t + 2] = even, odd
            t += 2
        max_t = t - 2
        if even > 0:
            t_rho[max_t + 1] = even
        t = 1
        while t <= max_t - 2:  # initial monotone sequence
            if t_rho[t + 1] + t_rho[t + 2] > t_rho[t - 1] + t_rho[t]:
                t_rho[t + 1] = t_rho[t + 2] = (t_rho[t - 1] + t_rho[t]) / 2.0
            t += 2
        tau = -1.0 + 2.0 * t_rho[: max_t + 1].sum() + t_rho[max_t + 1: max_t + 2].sum()
        out[q] = np.nan if np.isnan(t_rho).any() else m * n / max(tau, floor)
    return out


def ess_bulk(x: np.ndarray) -> np.ndarray:
    """(P,) bulk ESS: of the rank-normalised split chains."""
    x = np.asarray(x, dtype=float)
    return _guarded(x, lambda y: _ess(z_scale(split_chains(y))))


def ess_tail(x: np.ndarray, prob: float = TAIL_PROB) -> np.ndarray:
    """(P,) tail ESS: the smaller ESS of the indicators at the 1 − prob and prob quantiles."""
    def tail(y):
        flat = y.reshape(y.shape[0], -1)
        out = []
        for p in sorted((prob, 1 - prob)):
            q = np.quantile(flat, p, axis=-1)
            out.append(_ess(split_chains((y <= q[:, None, None]).astype(float))))
        return np.minimum(*out)

    return _guarded(np.asarray(x, dtype=float), tail)


def ess_mean(x: np.ndarray) -> np.ndarray:
    """(P,) ESS of the mean: of the split chains."""
    return _guarded(np.asarray(x, dtype=float), lambda y: _ess(split_chains(y)))


def _guarded(x: np.ndarray, fn) -> np.ndarray:
    """fn on the valid parameters, NaN for the others (as ArviZ)."""
    out = np.full(x.shape[0], np.nan)
    ok = ~_invalid(x, 1)
    if ok.any():
        with np.errstate(invalid="ignore", divide="ignore"):
            out[ok] = fn(x[ok])
    return out


def stacked(posterior, names) -> np.ndarray:
    """(P, chains, draws) of the variables ``names`` of an xarray posterior (every element a parameter)."""
    parts = []
    for v in names:
        a = np.asarray(posterior[v].transpose("chain", "draw", ...), dtype=float)
        parts.append(a.reshape(a.shape[0], a.shape[1], -1).transpose(2, 0, 1))
    return np.concatenate(parts, axis=0)
