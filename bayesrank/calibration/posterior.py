"""Posterior of the calibration gap: a monotone calibration curve per (cell, signal) in PyMC.

Model (see ``models/calibration.md``). For curve k (one per cell × signal) with confidences c_i,
x_i = logit(clip(c_i, 1e-4, 1 − 1e-4)) and knots κ_k0 < … < κ_kS at quantiles of x:

    y_i | c_i ~ Bernoulli(q_k(c_i)),   q_k(c) = sigmoid(a_k + Σ_s β_ks · ramp_ks(x)),
    ramp_ks(x) = clip((x − κ_ks)/(κ_k,s+1 − κ_ks), 0, 1),   β_ks = (κ_k,s+1 − κ_ks) · slope_ks,
    a_k ~ Normal(κ_k0, 2.5),   slope_ks ~ HalfNormal(2.5).

Non-negative slopes make q_k non-decreasing in c (a degree-1 I-spline in logit space); slope 1
on every segment with a_k = κ_k0 is perfect calibration. The likelihood runs on sufficient
statistics (successes / trials at each distinct confidence).

Calibration errors are *derived quantities* of the curve, evaluated on the observed confidences
with the noisy labels replaced by the curve's accuracy q_i (so they carry no label-noise bias):
``ece``/``ece_em`` the binned functionals, ``ks`` the cumulative functional, and ``L1`` =
mean_i |q(c_i) − c_i| (the population calibration error that ``kde`` and ``smece`` estimate).
The gap is ``g = CE(verbal) − CE(token)`` per draw, giving its posterior mean, credible
interval and P(g < 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.errors import InputError

from .estimators import validate_pair

SIGNALS = ("verbal", "token")
POSTERIOR_FUNCTIONALS = {"ece": "ece", "ece_em": "ece_em", "ks": "ks", "kde": "L1", "smece": "L1", "L1": "L1"}
_CLIP = 1e-4


def _logit(c):
    c = np.clip(c, _CLIP, 1 - _CLIP)
    return np.log(c / (1 - c))


@dataclass
class _Curve:
    cell: str
    signal: str
    c_unique: np.ndarray  # distinct confidences
    n: np.ndarray  # trials per distinct confidence
    k: np.ndarray  # successes per distinct confidence
    knots: np.ndarray
    lik_c: np.ndarray  # likelihood levels (confidences rounded to ``resolution``)
    lik_n: np.ndarray
    lik_k: np.ndarray


def _counts(c, y):
    cu, inv = np.unique(c, return_inverse=True)
    return cu, np.bincount(inv, minlength=cu.size).astype(float), np.bincount(inv, weights=y, minlength=cu.size)


def _make_curve(cell, signal, c, y, n_knots, resolution):
    cu, n, k = _counts(c, y)
    if resolution:
        lc, ln, lk = _counts(np.clip(np.round(c / resolution) * resolution, 0.0, 1.0), y)
    else:
        lc, ln, lk = cu, n, k
    x = _logit(c)
    knots = np.unique(np.quantile(x, np.linspace(0, 1, n_knots)))
    return _Curve(cell, signal, cu, n, k, knots, lc, ln, lk)


def _ramps(x: np.ndarray, knots: np.ndarray) -> np.ndarray:
    if knots.size < 2:
        return np.zeros((x.size, 0))
    lo, hi = knots[:-1], knots[1:]
    return np.clip((x[:, None] - lo[None, :]) / (hi - lo)[None, :], 0.0, 1.0)


@dataclass
class GapPosterior:
    """Fitted gap posterior: the PyMC model, its DataTree and per-curve data."""

    model: object
    idata: object
    curves: list[_Curve]
    cells: list[str]
    level: float = 0.95
    _q: dict = field(default_factory=dict, repr=False)

    def curve_draws(self, cell: str, signal: str) -> np.ndarray:
        """Posterior draws (draws × distinct confidences) of the curve's accuracy q(c)."""
        key = (cell, signal)
        if key not in self._q:
            post = self.idata["posterior"]
            a = post["a"].values.reshape(-1, len(self.curves))
            beta = post["beta"].values.reshape(a.shape[0], -1)
            j = self._curve_index(cell, signal)
            lo, hi = self._offsets[j], self._offsets[j + 1]
            sub = tuple(arr[lo:hi] for arr in self._layout[:4])
            self._q[key] = 1 / (1 + np.exp(-_curve_eta(a, beta, sub)))
        return self._q[key]

    def diagnostics(self) -> dict:
        """Sampler diagnostics: divergences, max R-hat and min bulk ESS over ``a`` and ``slope``."""
        import arviz as az

        summ = az.summary(self.idata, var_names=["a", "slope"])
        div = int(np.asarray(self.idata["sample_stats"]["diverging"]).sum())
        return {"divergences": div, "max_r_hat": float(summ["r_hat"].max()), "min_ess_bulk": float(summ["ess_bulk"].min())}

    def _curve_index(self, cell, signal):
        for j, cv in enumerate(self.curves):
            if cv.cell == cell and cv.signal == signal:
                return j
        raise KeyError((cell, signal))

    @property
    def _offsets(self):
        return np.concatenate([[0], np.cumsum([cv.c_unique.size for cv in self.curves])])

    def functional_draws(self, cell: str, signal: str, functional: str, n_bins: int = 10) -> np.ndarray:
        """Draws of a calibration functional of the posterior curve (see module docstring)."""
        cv = self.curves[self._curve_index(cell, signal)]
        q = self.curve_draws(cell, signal)
        c, w = cv.c_unique, cv.n
        N = w.sum()
        resid = (q - c[None, :]) * w[None, :]
        if functional in ("ece", "ece_em"):
            if functional == "ece":
                edges = np.linspace(0, 1, n_bins + 1)
            else:
                edges = np.percentile(np.repeat(c, w.astype(int)), np.linspace(0, 100, n_bins + 1))
            ids = np.searchsorted(edges[1:-1], c)
            M = np.zeros((c.size, n_bins))
            M[np.arange(c.size), ids] = 1.0
            return np.abs(resid @ M).sum(axis=1) / N
        if functional == "ks":
            return np.max(np.abs(np.cumsum(resid, axis=1)), axis=1) / N
        if functional == "L1":
            return np.abs(q - c[None, :]) @ w / N
        raise InputError(f"unknown posterior functional {functional!r}")

    def gap_summary(self, estimators=("ece", "kde", "ks", "smece")) -> pd.DataFrame:
        """Per cell and estimator: posterior of CE(verbal), CE(token) and g, with P(g < 0)."""
        a = (1 - self.level) / 2
        rows = []
        for cell in self.cells:
            for est in estimators:
                fnl = POSTERIOR_FUNCTIONALS.get(est)
                if fnl is None:
                    continue
                dv = self.functional_draws(cell, "verbal", fnl)
                dt = self.functional_draws(cell, "token", fnl)
                g = dv - dt
                rows.append(
                    dict(
                        cell=cell, estimator=est, functional=fnl,
                        verbal_mean=dv.mean(), token_mean=dt.mean(),
                        post_mean=g.mean(), post_lo=np.quantile(g, a), post_hi=np.quantile(g, 1 - a),
                        p_gap_negative=float(np.mean(g < 0)),
                    )
                )
        return pd.DataFrame(rows)

    def reliability(self, cell: str, signal: str, n_bins: int = 10, seed: int = 0) -> pd.DataFrame:
        """Posterior predictive reliability table: per equal-width bin the observed accuracy, the
        mean confidence, and the 5/50/95% quantiles of the replicated accuracy y_rep ~ Bin(n, q)."""
        cv = self.curves[self._curve_index(cell, signal)]
        q = self.curve_draws(cell, signal)
        rng = np.random.default_rng(seed)
        yrep = rng.binomial(cv.n.astype(int)[None, :], q)
        ids = np.searchsorted(np.linspace(0, 1, n_bins + 1)[1:-1], cv.c_unique)
        rows = []
        for b in range(n_bins):
            m = ids == b
            nb = cv.n[m].sum()
            if nb == 0:
                continue
            rep = yrep[:, m].sum(axis=1) / nb
            curve = (q[:, m] * cv.n[m]).sum(axis=1) / nb
            rows.append(
                dict(bin=b, n=int(nb), confidence=float((cv.c_unique[m] * cv.n[m]).sum() / nb),
                     observed=float(cv.k[m].sum() / nb), curve_mean=float(curve.mean()),
                     rep_lo=float(np.quantile(rep, 0.05)), rep_median=float(np.median(rep)), rep_hi=float(np.quantile(rep, 0.95)))
            )
        return pd.DataFrame(rows)

    def curve_on_grid(self, cell: str, signal: str, grid=None) -> pd.DataFrame:
        """Posterior mean and 90% band of q(c) on a grid of confidences (for plots)."""
        grid = np.linspace(0.005, 0.995, 100) if grid is None else np.asarray(grid)
        j = self._curve_index(cell, signal)
        cv = self.curves[j]
        post = self.idata["posterior"]
        a = post["a"].values.reshape(-1, len(self.curves))[:, j]
        beta = post["beta"].values.reshape(-1, post["beta"].shape[-1])
        start = int(self._layout[2][self._offsets[j]])
        ns = max(cv.knots.size - 1, 0)
        R = _ramps(_logit(grid), cv.knots)
        eta = a[:, None] + (beta[:, start : start + ns] @ R.T if ns else 0.0)
        q = 1 / (1 + np.exp(-eta))
        return pd.DataFrame(dict(confidence=grid, mean=q.mean(0), lo=np.quantile(q, 0.05, axis=0), hi=np.quantile(q, 0.95, axis=0)))

    _layout: tuple = field(default=(), repr=False)


def _level_layout(curves, attr: str = "c_unique"):
    """For every (curve, distinct confidence) level: curve index, global segment index, the index of
    the curve's first segment and the fractional position inside the segment. With these,
    ``Σ_s β_s ramp_s(x) = Σ_{s0 ≤ s < g} β_s + β_g · frac`` (ramps below are 1, above are 0)."""
    seg_start, widths, start = [], [], 0
    curve_idx, gseg, s0, frac = [], [], [], []
    for j, cv in enumerate(curves):
        ns = max(cv.knots.size - 1, 0)
        seg_start.append(start)
        widths.extend(np.diff(cv.knots))
        x = _logit(getattr(cv, attr))
        if ns == 0:
            g = np.zeros(x.size, dtype=int)
            f = np.zeros(x.size)
            first = 0
        else:
            loc = np.clip(np.searchsorted(cv.knots, x, side="right") - 1, 0, ns - 1)
            f = np.clip((x - cv.knots[loc]) / (cv.knots[loc + 1] - cv.knots[loc]), 0.0, 1.0)
            g = start + loc
            first = start
        curve_idx.append(np.full(x.size, j))
        gseg.append(g)
        s0.append(np.full(x.size, first))
        frac.append(f)
        start += ns
    return (np.concatenate(curve_idx), np.concatenate(gseg), np.concatenate(s0), np.concatenate(frac),
            np.asarray(widths, dtype=float), start)


def _curve_eta(a, beta, layout, xp=np):
    """Linear predictor of every level for parameters ``a`` (curves) and ``beta`` (segments);
    works for numpy draws (leading sample axes) and pytensor tensors."""
    curve_idx, gseg, s0, frac = layout[:4]
    if xp is np:
        zero = np.zeros(beta.shape[:-1] + (1,))
        cum = np.concatenate([zero, np.cumsum(beta, axis=-1)], axis=-1)
        bpad = np.concatenate([beta, zero], axis=-1)
        return a[..., curve_idx] + cum[..., gseg] - cum[..., s0] + bpad[..., gseg] * frac
    import pytensor.tensor as pt

    cum = pt.concatenate([pt.zeros(1), pt.cumsum(beta)])
    bpad = pt.concatenate([beta, pt.zeros(1)])
    return a[curve_idx] + cum[gseg] - cum[s0] + bpad[gseg] * frac


def build_gap_model(cells: dict[str, tuple], n_knots: int = 6, resolution: float | None = 1e-3):
    """PyMC model for ``cells = {name: (verbal, token, correct)}``; returns (model, curves, layout).

    The likelihood aggregates items whose confidences agree after rounding to ``resolution``
    (default 0.001; ``None``: exact distinct values). The returned ``layout`` is for the exact
    distinct confidences, on which every derived quantity is evaluated."""
    import pymc as pm

    curves: list[_Curve] = []
    for name, (v, t, y) in cells.items():
        v, y = validate_pair(v, y, name=f"verbal confidence [{name}]")
        t, _ = validate_pair(t, y, name=f"token confidence [{name}]")
        curves.append(_make_curve(name, "verbal", v, y, n_knots, resolution))
        curves.append(_make_curve(name, "token", t, y, n_knots, resolution))
    layout = _level_layout(curves, "lik_c")
    widths, n_seg = layout[4], layout[5]
    n_trials = np.concatenate([cv.lik_n for cv in curves])
    k_succ = np.concatenate([cv.lik_k for cv in curves])
    first_knot = np.array([cv.knots[0] for cv in curves])
    coords = {"curve": [f"{cv.cell}|{cv.signal}" for cv in curves], "segment": [f"s{s}" for s in range(max(n_seg, 1))],
              "level": np.arange(n_trials.size)}
    with pm.Model(coords=coords) as model:
        a = pm.Normal("a", mu=first_knot, sigma=2.5, dims="curve")
        slope = pm.HalfNormal("slope", sigma=2.5, dims="segment")
        w = widths if n_seg else np.zeros(1)
        beta = pm.Deterministic("beta", slope * w, dims="segment")
        eta = _curve_eta(a, beta, layout, xp=None)
        pm.Binomial("successes", n=n_trials, logit_p=eta, observed=k_succ, dims="level")
    return model, curves, _level_layout(curves, "c_unique")


def fit_gap_posterior(
    cells: dict[str, tuple],
    *,
    n_knots: int = 6,
    resolution: float | None = 1e-3,
    draws: int = 500,
    tune: int = 500,
    chains: int = 2,
    seed: int = 0,
    level: float = 0.95,
    progressbar: bool = False,
    nuts_sampler: str = "pymc",
    target_accept: float = 0.9,
) -> GapPosterior:
    """Fit the monotone-curve model by NUTS (``chains`` sequential chains, explicit ``seed``)."""
    import pymc as pm

    model, curves, layout = build_gap_model(cells, n_knots=n_knots, resolution=resolution)
    with model:
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed,
                          progressbar=progressbar, compute_convergence_checks=False, nuts_sampler=nuts_sampler,
                          target_accept=target_accept)
    gp = GapPosterior(model, idata, curves, list(cells), level)
    gp._layout = layout
    return gp
