"""Side-by-side timing of every calibration estimator vs its reference implementation.

    python benchmarks/bench_calibration.py [--n 1000000] [--repeats 3]

References (see tests/calibration/references.py): scikit-learn ``calibration_curve`` (binned ECE,
equal-width and quantile), ``relplot.binnedECE`` (its own bin convention, timing only), Zhang et al.'s
KDE-ECE with KDEpy's FFTKDE, Gupta et al.'s KS algorithm, ``relplot.smECE``, and scikit-learn's
``brier_score_loss``, ``log_loss`` and ``roc_auc_score``. Each timing is the best of ``--repeats``
runs on the same data in one process; the ratio is reference time / bayesrank time (> 1: faster).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "calibration"))

import references as R  # noqa: E402
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score  # noqa: E402

from bayesrank.calibration import estimators as E  # noqa: E402


def best_of(fn, repeats):
    best, val = np.inf, None
    for _ in range(repeats):
        t = time.perf_counter()
        val = fn()
        best = min(best, time.perf_counter() - t)
    return best, val


def main(n: int = 1_000_000, repeats: int = 3, seed: int = 0):
    import relplot
    import relplot.metrics

    rng = np.random.default_rng(seed)
    c = rng.uniform(size=n)
    y = (rng.uniform(size=n) < c**2).astype(float)
    ci = np.clip(c, 1e-6, 1 - 1e-6)
    cases = [
        ("ece (10 equal-width bins)", lambda: E.ece(c, y), "sklearn calibration_curve", lambda: R.sklearn_ece(c, y, 10, "uniform")),
        ("ece (10 equal-width bins)", lambda: E.ece(c, y), "relplot.binnedECE*", lambda: relplot.metrics.binnedECE(c, y, 10)),
        ("ece_em (10 equal-mass bins)", lambda: E.ece_equal_mass(c, y), "sklearn calibration_curve(quantile)", lambda: R.sklearn_ece(c, y, 10, "quantile")),
        ("kde (KDE-ECE)", lambda: E.kde_ece(c, y), "Zhang et al. + KDEpy FFTKDE", lambda: R.zhang_kde_ece(c, y)),
        ("ks (KS-cal)", lambda: E.ks_error(c, y), "Gupta et al. argsort+cumsum", lambda: R.gupta_ks(c, y)),
        ("smece (smooth ECE)", lambda: E.smooth_ece(c, y), "relplot.smECE", lambda: relplot.smECE(c, y)),
        ("brier", lambda: E.brier(c, y), "sklearn brier_score_loss", lambda: brier_score_loss(y, c)),
        ("nll", lambda: E.nll(ci, y), "sklearn log_loss", lambda: log_loss(y, ci)),
        ("auroc", lambda: E.auroc(c, y), "sklearn roc_auc_score", lambda: roc_auc_score(y, c)),
    ]
    print(f"n = {n:,} predictions, best of {repeats}")
    header = f"{'estimator':30s} {'bayesrank s':>12s} {'reference':38s} {'ref s':>9s} {'ref/ours':>9s} {'|diff|':>9s}"
    print(header)
    print("-" * len(header))
    rows = []
    for name, ours, ref_name, ref in cases:
        t_o, v_o = best_of(ours, repeats)
        t_r, v_r = best_of(ref, repeats)
        rows.append((name, t_o, ref_name, t_r, t_r / t_o, abs(v_o - v_r)))
        print(f"{name:30s} {t_o:12.4f} {ref_name:38s} {t_r:9.4f} {t_r / t_o:9.1f} {abs(v_o - v_r):9.1e}")
    print("* relplot.binnedECE puts c = 1.0 in an extra bin and uses floor(c*10) (left-closed bins): its value can differ.")
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    main(a.n, a.repeats)
