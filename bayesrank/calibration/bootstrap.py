"""Percentile bootstrap for calibration estimators and for the paired gap (items resampled jointly)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .estimators import ESTIMATORS, validate_pair


@dataclass
class BootstrapResult:
    estimate: float
    lo: float
    hi: float
    draws: np.ndarray
    level: float

    def to_dict(self) -> dict:
        return {"estimate": self.estimate, "ci": [self.lo, self.hi], "level": self.level, "n_boot": int(self.draws.size)}


def _ci(draws: np.ndarray, level: float) -> tuple[float, float]:
    a = (1 - level) / 2
    d = draws[np.isfinite(draws)]
    if d.size == 0:
        return float("nan"), float("nan")
    return float(np.quantile(d, a)), float(np.quantile(d, 1 - a))


def bootstrap_estimator(name: str, confidence, correct, n_boot: int = 1000, level: float = 0.95, seed: int = 0) -> BootstrapResult:
    """Estimator ``name`` with a percentile bootstrap CI (items resampled with replacement)."""
    c, y = validate_pair(confidence, correct)
    fn = ESTIMATORS[name]
    rng = np.random.default_rng(seed)
    draws = np.empty(n_boot)
    for b in range(n_boot):
        idx = rng.integers(0, c.size, c.size)
        draws[b] = fn(c[idx], y[idx])
    lo, hi = _ci(draws, level)
    return BootstrapResult(fn(c, y), lo, hi, draws, level)


def bootstrap_gap(
    name: str, verbal, token, correct, n_boot: int = 1000, level: float = 0.95, seed: int = 0
) -> tuple[BootstrapResult, BootstrapResult, BootstrapResult]:
    """Paired bootstrap of ``g = E(verbal) − E(token)``: the same resampled items feed both signals,
    so the CI of g reflects their correlation. Returns (verbal, token, gap) results."""
    v, y = validate_pair(verbal, correct, name="verbal confidence")
    t, _ = validate_pair(token, correct, name="token confidence")
    fn = ESTIMATORS[name]
    rng = np.random.default_rng(seed)
    dv, dt = np.empty(n_boot), np.empty(n_boot)
    for b in range(n_boot):
        idx = rng.integers(0, v.size, v.size)
        dv[b] = fn(v[idx], y[idx])
        dt[b] = fn(t[idx], y[idx])
    ev, et = fn(v, y), fn(t, y)
    res = []
    for est, d in ((ev, dv), (et, dt), (ev - et, dv - dt)):
        lo, hi = _ci(d, level)
        res.append(BootstrapResult(float(est), lo, hi, d, level))
    return tuple(res)
