"""Independent reference implementations used by the tests and benchmarks/bench_calibration.py.

- ECE (equal width / equal mass): scikit-learn's ``calibration_curve`` bin statistics (netcal,
  the issue's suggested reference, hard-depends on torch, pyro-ppl and gpytorch and is therefore not
  installable here; see docs/calibration.md).
- KDE-ECE: a port of Zhang, Kailkhura & Han's ``ece_kde_binary`` (Mix-n-Match repository, binary
  case) with KDEpy's ``FFTKDE`` exactly as the authors call it (their torch calls replaced by numpy).
- KS: Gupta et al. (2021)'s algorithm as published (argsort, cumulative sums, max absolute gap).
- smooth ECE: ``relplot.smECE`` itself.
"""

from __future__ import annotations

import numpy as np


def sklearn_ece(c, y, n_bins=10, strategy="uniform"):
    from sklearn.calibration import calibration_curve

    c = np.asarray(c, float)
    y = np.asarray(y, float)
    prob_true, prob_pred = calibration_curve(y, c, n_bins=n_bins, strategy=strategy)
    if strategy == "quantile":
        edges = np.percentile(c, np.linspace(0, 100, n_bins + 1))
    else:
        edges = np.linspace(0, 1, n_bins + 1)
    counts = np.bincount(np.searchsorted(edges[1:-1], c), minlength=n_bins)
    counts = counts[counts > 0]
    return float(np.sum(counts / len(c) * np.abs(prob_true - prob_pred)))


def _mirror_1d(d, xmin=None, xmax=None):
    """Zhang et al.'s ``mirror_1d``."""
    if xmin is not None and xmax is not None:
        xmed = (xmin + xmax) / 2
        return np.concatenate(((2 * xmin - d[d < xmed]).reshape(-1, 1), d, (2 * xmax - d[d >= xmed]).reshape(-1, 1)))
    raise ValueError


def zhang_kde_ece(c, y, order=1):
    """Zhang et al. (2020) ``ece_kde_binary`` for a binary (confidence, correct) problem."""
    from KDEpy import FFTKDE

    p = np.clip(np.asarray(c, float), 1e-256, 1 - 1e-256)
    label = np.asarray(y, float)
    x_int = np.linspace(-0.6, 1.6, num=2**14)
    N = p.shape[0]
    p_b = p
    label_binary = label
    method = "triweight"
    dconf_1 = p_b[np.where(label_binary == 1)].reshape(-1, 1)
    kbw = np.std(dconf_1) * (N * 2) ** -0.2
    low_bound, up_bound = 0.0, 1.0
    dconf_1m = _mirror_1d(dconf_1, low_bound, up_bound)
    pp1 = FFTKDE(bw=kbw, kernel=method).fit(dconf_1m).evaluate(x_int)
    pp1[x_int <= low_bound] = 0
    pp1[x_int >= up_bound] = 0
    pp1 = pp1 * 2
    pred_b_int = p.reshape(-1, 1)
    pred_b_intm = _mirror_1d(pred_b_int, low_bound, up_bound)
    pp2 = FFTKDE(bw=kbw, kernel=method).fit(pred_b_intm).evaluate(x_int)
    pp2[x_int <= low_bound] = 0
    pp2[x_int >= up_bound] = 0
    pp2 = pp2 * 2
    perc = np.mean(label)
    integral = np.zeros(x_int.shape)
    for i in range(x_int.shape[0]):  # the authors' loop; their argmin(|x_int - conf|) is i itself
        conf = x_int[i]
        if np.max([pp1[i], pp2[i]]) > 1e-6:
            accu = np.min([perc * pp1[i] / pp2[i], 1.0])
            if not np.isnan(accu):
                integral[i] = np.abs(conf - accu) ** order * pp2[i]
        elif i > 1:
            integral[i] = integral[i - 1]
    ind = np.where((x_int >= low_bound) & (x_int <= up_bound))
    return float(np.trapezoid(integral[ind], x_int[ind]) / np.trapezoid(pp2[ind], x_int[ind]))


def gupta_ks(c, y):
    """Gupta et al. (2021) KS calibration error: sort by confidence, max |cumsum(c - y)| / N."""
    c = np.asarray(c, float)
    y = np.asarray(y, float)
    order = np.argsort(c)
    n = len(c)
    integrated_acc = np.cumsum(y[order]) / n
    integrated_conf = np.cumsum(c[order]) / n
    return float(np.max(np.abs(integrated_conf - integrated_acc)))


def relplot_smece(c, y):
    import relplot

    return float(relplot.smECE(np.asarray(c, float), np.asarray(y, float)))
