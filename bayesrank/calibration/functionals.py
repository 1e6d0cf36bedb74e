"""Calibration functionals of a weighted (confidence, P(correct)) distribution, over many draws.

Each plug-in estimator of :mod:`.estimators` is a functional ``T(F̂)`` of the empirical
distribution ``F̂`` of (confidence c, correctness y). The same formula applied to a distribution
that puts weight ``w_i`` on item i and replaces the label ``y_i`` by its probability
``p_i = P(y_i = 1 | item i)`` is the functional ``T(F_w, p)`` whose posterior the paired model
reports (``w`` = Bayesian-bootstrap weights over items, ``p`` = a posterior draw). With ``w = 1``
and ``p = y`` every function here equals its plug-in estimator (tested to 1e-9), and its
population limit is the estimator's population limit, so plug-in and posterior estimate the same
quantity.

Every function takes ``c`` (n,), ``p`` (D, n) and ``w`` (D, n) (weights, any positive scale) and
returns (D,) values:

- ``ece``     ``Σ_b |Σ_{i∈b} w_i (p_i − c_i)| / Σ w``  (10 right-closed equal-width bins)
- ``ece_em``  the same with the plug-in's equal-mass edges (10-quantiles of the observed ``c``)
- ``ks``      ``max_t |Σ_{c_i ≤ t} w_i (c_i − p_i)| / Σ w`` at the distinct confidences
- ``smece``   relplot's smooth ECE with residual weights ``w_i (c_i − p_i)`` and density weights
              ``w_i`` (its bandwidth fixed point σ* recomputed for every draw)
- ``kde``     Zhang et al.'s KDE-ECE with the "correct" density weighted by ``w_i p_i`` and the
              confidence density by ``w_i`` (bandwidth from the weighted std of c among correct)
"""

from __future__ import annotations

import numpy as np

from .estimators import KDE_GRID, _SmoothECE, _triweight_fft_kde_weighted, smece_sigma

N_BINS = 10


def _as_draws(c, p, w):
    c = np.asarray(c, float).ravel()
    p = np.atleast_2d(np.asarray(p, float))
    w = np.ones_like(p) if w is None else np.atleast_2d(np.asarray(w, float))
    if p.shape[-1] != c.size or w.shape != p.shape:
        raise ValueError(f"shapes: c {c.shape}, p {p.shape}, w {w.shape}; expected p and w (draws, {c.size})")
    return c, p, w


def _binned(c, p, w, edges):
    ids = np.searchsorted(edges[1:-1], c)  # right-closed bins, as the plug-in estimator
    onehot = np.zeros((c.size, len(edges) - 1))
    onehot[np.arange(c.size), ids] = 1.0
    return np.abs((w * (p - c[None, :])) @ onehot).sum(axis=1) / w.sum(axis=1)


def ece(c, p, w=None, n_bins: int = N_BINS) -> np.ndarray:
    """Equal-width binned ECE functional (see module docstring)."""
    c, p, w = _as_draws(c, p, w)
    return _binned(c, p, w, np.linspace(0.0, 1.0, int(n_bins) + 1))


def ece_em(c, p, w=None, n_bins: int = N_BINS) -> np.ndarray:
    """Equal-mass binned ECE functional, edges = the plug-in's quantile edges of the observed c."""
    c, p, w = _as_draws(c, p, w)
    return _binned(c, p, w, np.percentile(c, np.linspace(0, 100, int(n_bins) + 1)))


def ks(c, p, w=None) -> np.ndarray:
    """KS functional: max over thresholds at distinct confidences of |Σ_{c_i ≤ t} w_i (c_i − p_i)| / Σ w."""
    c, p, w = _as_draws(c, p, w)
    order = np.argsort(c, kind="stable")
    cs = c[order]
    last_of_block = np.r_[cs[1:] != cs[:-1], True]
    cum = np.cumsum((w * (c[None, :] - p))[:, order], axis=1)[:, last_of_block]
    return np.abs(cum).max(axis=1) / w.sum(axis=1)


def _smece_one(c, r, dens_w):
    """relplot's smECE at its fixed point σ* for residual weights ``r`` and density weights ``dens_w``."""
    f = _SmoothECE(c, residual=r, density=dens_w)
    return f(smece_sigma(f))


def smece(c, p, w=None) -> np.ndarray:
    """Smooth ECE functional (relplot discretisation); weights rescaled to sum to n as in the plug-in."""
    c, p, w = _as_draws(c, p, w)
    w = w * (c.size / w.sum(axis=1, keepdims=True))
    return np.array([_smece_one(c, w[d] * (c - p[d]), w[d]) for d in range(p.shape[0])])


def kde(c, p, w=None, min_bandwidth: float = 1e-3) -> np.ndarray:
    """KDE-ECE functional of Zhang et al. (2020) with weighted kernel densities."""
    c, p, w = _as_draws(c, p, w)
    grid = KDE_GRID
    ind = (grid >= 0.0) & (grid <= 1.0)
    out = np.empty(p.shape[0])
    n = c.size
    for d in range(p.shape[0]):
        wp = w[d] * p[d]
        if wp.sum() <= 0:
            out[d] = float(np.sum(w[d] * c) / w[d].sum())
            continue
        mean = np.sum(wp * c) / wp.sum()
        bw = max(float(np.sqrt(np.sum(wp * (c - mean) ** 2) / wp.sum())) * (2 * n) ** -0.2, min_bandwidth)
        pp1 = _triweight_fft_kde_weighted(c, wp, bw, grid)
        pp2 = _triweight_fft_kde_weighted(c, w[d], bw, grid)
        perc = wp.sum() / w[d].sum()
        valid = np.maximum(pp1, pp2) > 1e-6
        with np.errstate(divide="ignore", invalid="ignore"):
            acc = np.minimum(perc * pp1 / pp2, 1.0)
        okm = valid & ~np.isnan(acc)
        integral = np.where(okm, np.abs(grid - np.where(okm, acc, 0.0)) * pp2, 0.0)
        idx = np.where(okm | (np.arange(grid.size) <= 1), np.arange(grid.size), 0)
        integral = integral[np.maximum.accumulate(idx)]
        out[d] = float(np.trapezoid(integral[ind], grid[ind]) / np.trapezoid(pp2[ind], grid[ind]))
    return out


FUNCTIONALS = {"ece": ece, "ece_em": ece_em, "kde": kde, "ks": ks, "smece": smece}
#: functionals costing an FFT per draw: evaluated on at most this many (evenly thinned) draws
EXPENSIVE = {"smece", "kde"}
