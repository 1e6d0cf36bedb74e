"""Coverage of the gap intervals by simulation with a known population gap.

Truth (``simulate``): every item has a latent accuracy ``p ~ Beta(a, b)`` and ``y ~ Bernoulli(p)``;
the verbal readout is ``p + verbal_shift + N(0, verbal_noise²)`` rounded to the scale
0.5, 0.6, …, 1.0 (a stated confidence), the token readout is
``sigmoid(token_slope · logit p + token_shift + N(0, token_noise²))`` (an over-confident probability).
``E[y | v, t] = E[p | v, t]`` is *not* in the paired model's family (logit-additive curves), so the
study also checks robustness to that misspecification.

True gap of estimator E: ``T_E(verbal) − T_E(token)`` of the population, computed on
``n_population`` simulated items with the label replaced by its probability p (the functional of
:mod:`.functionals` with unit weights; Monte Carlo error ~1e-4 at 2·10⁶ items). It is the limit of
both the plug-in estimate and the posterior functional. (KDE-ECE has no fixed population value at
finite n: its bandwidth shrinks with n; it is left out.) For ``ece2_debiased`` the population value
is the UN-debiased squared error ``Σ_b P(b)(E[y | b] − E[c | b])²`` on the population's equal-mass
bins (:func:`.estimators.ece2_plugin` with labels = p): the quantity the debiasing makes the
estimator unbiased for (the plug-in with Bernoulli labels overshoots it by the label variance).

Per replication: the paired posterior's equal-tailed interval (NUTS via nutpie, model compiled once
and re-used with new data; skipped with ``posterior=False`` and for estimators without a posterior
functional, e.g. ``ece2_debiased``) and the paired bootstrap interval of the plug-in gap (for a
debiased estimator also its percentile, basic and recentred variants: :mod:`.bootstrap`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .bootstrap import BOOTSTRAP_WORLD_TRUTH, INTERVALS, bootstrap_gap
from .estimators import ece2_plugin
from .functionals import FUNCTIONALS

VERBAL_LEVELS = np.round(np.arange(0.5, 1.0001, 0.1), 10)
COVERAGE_ESTIMATORS = ("ece", "ece_em", "ks", "smece")


@dataclass(frozen=True)
class Truth:
    """Simulation truth (see module docstring)."""

    a: float = 3.0
    b: float = 1.5
    verbal_shift: float = 0.06
    verbal_noise: float = 0.12
    token_slope: float = 2.0
    token_shift: float = 0.8
    token_noise: float = 0.5

    def simulate(self, n: int, rng: np.random.Generator):
        """(verbal, token, correct, p) for ``n`` items."""
        p = rng.beta(self.a, self.b, size=n)
        y = (rng.uniform(size=n) < p).astype(float)
        raw = np.clip(p + self.verbal_shift + rng.normal(0, self.verbal_noise, n), VERBAL_LEVELS[0], VERBAL_LEVELS[-1])
        v = VERBAL_LEVELS[np.rint((raw - VERBAL_LEVELS[0]) / 0.1).astype(int)]
        pc = np.clip(p, 1e-9, 1 - 1e-9)
        eta = self.token_slope * np.log(pc / (1 - pc)) + self.token_shift + rng.normal(0, self.token_noise, n)
        return v, 1.0 / (1.0 + np.exp(-eta)), y, p

    def population_gaps(self, estimators=COVERAGE_ESTIMATORS, n_population: int = 2_000_000, seed: int = 12345) -> dict:
        """True gap per estimator: the functional on ``n_population`` items with labels = p."""
        v, t, _, p = self.simulate(n_population, np.random.default_rng(seed))
        return {e: population_functional(e, v, p) - population_functional(e, t, p) for e in estimators}


def population_functional(estimator: str, c: np.ndarray, p: np.ndarray) -> float:
    """The population value estimated by ``estimator`` on a large sample with labels replaced by
    their probabilities ``p`` (see the module docstring)."""
    if estimator == "ece2_debiased":
        return ece2_plugin(c, p)
    return float(FUNCTIONALS[estimator](c, p[None, :])[0])


class _ReusedModel:
    """The paired model compiled by nutpie once per number of items and segments: the data are
    padded with empty rows to one row per item (the most distinct confidence pairs a replication can
    have; empty rows leave the posterior unchanged), and each replication swaps the data of the
    compiled model of its shape."""

    def __init__(self, n_knots):
        self.compiled = {}
        self.n_knots = n_knots

    def fit(self, cells, *, draws, tune, seed, level):
        import nutpie

        from .posterior import GapPosterior, build_paired_model, layout_data

        rows = sum(len(c[2]) for c in cells.values())
        data, parsed, lay = layout_data(cells, self.n_knots, pad_rows=rows)
        shape = (rows, lay.widths.size)
        if shape not in self.compiled:
            model, _, _ = build_paired_model(cells, n_knots=self.n_knots, data_containers=True, pad_rows=rows)
            self.compiled[shape] = nutpie.compile_pymc_model(model)
        trace = nutpie.sample(self.compiled[shape].with_data(**data), draws=draws, tune=tune, chains=2, cores=1, seed=seed,
                              progress_bar=False, adaptation="low_rank")
        return GapPosterior(trace, parsed, lay, level=level, seed=seed, sampler="nutpie")


def run_coverage(
    reps,
    *,
    n_items: int = 800,
    truth: Truth = Truth(),
    estimators=COVERAGE_ESTIMATORS,
    level: float = 0.95,
    n_boot: int = 500,
    expensive_n_boot: int = 300,
    expensive_draws: int = 200,
    draws: int = 1000,
    tune: int = 500,
    n_knots: int = 6,
    seed: int = 0,
    true_gaps: dict | None = None,
    progress=None,
    posterior: bool = True,
) -> pd.DataFrame:
    """One row per (replication, estimator) for replications ``reps`` (an int n: 0..n−1; or the
    indices, each seeding its own stream): true gap, plug-in gap, bootstrap and posterior
    intervals, whether each covers, and the sampler diagnostics. smece/kde cost an FFT per draw and
    per resample: ``expensive_draws`` thinned posterior draws and ``expensive_n_boot`` resamples.
    ``posterior=False``: bootstrap only (posterior columns NaN, ``converged`` NaN)."""
    reps = range(reps) if isinstance(reps, int) else reps
    true_gaps = true_gaps or truth.population_gaps(estimators)
    model = _ReusedModel(n_knots)
    rows = []
    for r in reps:
        rng = np.random.default_rng([seed, r])
        v, t, y, _ = truth.simulate(n_items, rng)
        cells = {"sim": (v, t, y)}
        t0 = time.process_time()
        post_seed = int(rng.integers(2**31))  # drawn even without a posterior: the bootstrap seeds stay the same
        post = diag = None
        if posterior:
            post = model.fit(cells, draws=draws, tune=tune, seed=post_seed, level=level)
            post.max_expensive_draws = expensive_draws
            diag = post.diagnostics
        for est in estimators:
            nb = expensive_n_boot if est in ("smece", "kde") else n_boot
            _, _, bg = bootstrap_gap(est, v, t, y, n_boot=nb, level=level, seed=int(rng.integers(2**31)))
            tg = true_gaps[est]
            row = dict(rep=r, estimator=est, true_gap=tg, plugin_gap=bg.estimate, boot_lo=bg.lo, boot_hi=bg.hi,
                       boot_covers=bool(bg.lo <= tg <= bg.hi), post_mean=np.nan, post_lo=np.nan, post_hi=np.nan,
                       post_covers=np.nan, converged=np.nan, rhat_max=np.nan, divergences=np.nan)
            if est in BOOTSTRAP_WORLD_TRUTH:
                row["world_truth_gap"] = bg.world_truth
                for method in INTERVALS:
                    lo, hi = bg.interval(method)
                    row.update({f"{method}_lo": lo, f"{method}_hi": hi, f"{method}_covers": bool(lo <= tg <= hi)})
            if post is not None and est in FUNCTIONALS:
                g = post.gap_draws("sim", est)
                a = (1 - level) / 2
                plo, phi = np.quantile(g, [a, 1 - a])
                row.update(post_mean=float(g.mean()), post_lo=float(plo), post_hi=float(phi), post_covers=bool(plo <= tg <= phi),
                           converged=diag.converged, rhat_max=diag.rhat_max, divergences=diag.divergences)
            rows.append({**row, "cpu_seconds": time.process_time() - t0})
        if progress is not None:
            progress(r, rows)
    return pd.DataFrame(rows)


def coverage_table(results: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per estimator: coverage of both intervals with Monte Carlo SEs, mean widths, bias (posterior
    columns NaN where no posterior was run; for a debiased estimator also the coverage of its
    percentile / basic / recentred bootstrap intervals and the plug-in bias's Monte Carlo SE)."""
    out = []
    for est, g in results.groupby("estimator", sort=False):
        n = len(g)
        se = float(np.sqrt(level * (1 - level) / n))
        post = g["post_covers"].dropna()
        err = g["plugin_gap"] - g["true_gap"]
        row = dict(estimator=est, replications=n, true_gap=float(g["true_gap"].iloc[0]),
                   posterior_coverage=float(post.astype(float).mean()) if len(post) else np.nan,
                   bootstrap_coverage=float(g["boot_covers"].mean()),
                   mc_se_at_nominal=se, posterior_width=float((g["post_hi"] - g["post_lo"]).mean()),
                   bootstrap_width=float((g["boot_hi"] - g["boot_lo"]).mean()),
                   posterior_mean_bias=float((g["post_mean"] - g["true_gap"]).mean()),
                   plugin_bias=float(err.mean()), plugin_bias_mc_se=float(err.std(ddof=1) / np.sqrt(n)) if n > 1 else np.nan,
                   not_converged=int(post.index.size - g.loc[post.index, "converged"].astype(bool).sum()) if len(post) else 0)
        for method in INTERVALS:
            col = f"{method}_covers"
            if col in g.columns and g[col].notna().all():
                row[f"bootstrap_{method}_coverage"] = float(g[col].astype(float).mean())
        out.append(row)
    return pd.DataFrame(out)
