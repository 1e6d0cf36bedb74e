"""Model checking for the Bayesian HJA fit: posterior predictive check per judge, PSIS-LOO, and rank
selection by PSIS-LOO (cross-checked against the held-out log-likelihood rule of
:func:`bayesrank.hja.model.select_rank`).

- **PPC per judge** (Gelman, Meng & Stern 1996, realised discrepancy): for judge k,
  ``X²_k(y, θ) = Σ_{cells c of k} (y_c − n_c p_c)² / (n_c p_c (1 − p_c))`` (Pearson). With replicated
  ``y_rep ~ Binomial(round(n), p)`` from the model's observed variable ``wins`` (PyMC
  ``sample_posterior_predictive``), ``p_k = P(X²_k(y_rep, θ) ≥ X²_k(y, θ) | y)``. A small ``p_k`` says
  judge k's counts vary more around the fitted probabilities than the model allows (overdispersion,
  a missing residual direction). Half-ties make the observed counts *less* variable than binomial
  (a tie is a sure half point), so with many ties ``p_k`` drifts towards 1: the check is conservative
  there.
- **PSIS-LOO** (Vehtari, Gelman & Gabry 2017; ArviZ): pointwise log-likelihood per (judge, pair) cell.
- **rank selection by PSIS-LOO** (:func:`loo_select_rank`): NUTS at r = 0..max_rank; the same
  parsimony rule as the held-out selection — a larger r is chosen only if its elpd beats the current
  choice by more than one standard error of the paired pointwise difference.

The two selections answer slightly different questions (leave one *cell* out vs. hold out a random
20% of the *comparisons* in every cell); on panels with a clear rank they agree (tests/hja/test_checks.py).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _posterior_eta(fit, draw_idx) -> np.ndarray:
    """Linear predictor η (S × R) for the selected posterior draws."""
    d, c = fit.draws, fit.counts
    g, mu, U, V = (d[k][draw_idx] for k in ("gamma", "mu", "U", "V"))
    eta = g[:, c.k] * (mu[:, c.i] - mu[:, c.j])
    if fit.rank:
        eta = eta + np.einsum("src,src->sr", U[:, c.k], V[:, c.i] - V[:, c.j])
    return eta


def ppc_by_judge(fit, seed: int = 0, max_draws: int = 1000) -> pd.DataFrame:
    """Posterior predictive check per judge (module docstring) for a NUTS :class:`HJAFit`.

    Replicates come from the PyMC model's observed variable (``pm.sample_posterior_predictive``) on
    at most ``max_draws`` evenly thinned draws; the same draws give the fitted probabilities.
    """
    import pymc as pm

    if fit.draws is None or fit.model is None:
        raise TypeError("ppc_by_judge needs a NUTS fit (HJA(...).fit('nuts'))")
    post = fit.idata["posterior"]
    n_chain, n_draw = int(post.sizes["chain"]), int(post.sizes["draw"])
    total = n_chain * n_draw
    take = np.unique(np.linspace(0, total - 1, min(max_draws, total)).round().astype(int))
    import warnings

    with fit.model, warnings.catch_warnings():
        # the Potentials act on the non-identified Gram–Schmidt factors only (models/hja.md): they do not
        # change the distribution of the replicated wins given the identified parameters
        warnings.filterwarnings("ignore", message="The effect of Potentials")
        pp = pm.sample_posterior_predictive(fit.idata, var_names=["wins"], random_seed=seed, progressbar=False)
    rep = np.asarray(pp["posterior_predictive"]["wins"]).reshape(total, -1)[take]
    c = fit.counts
    p = 1.0 / (1.0 + np.exp(-_posterior_eta(fit, take)))
    var = np.maximum(c.n * p * (1 - p), 1e-300)
    live = c.n > 0
    x2_obs_cells = np.where(live, (c.y - c.n * p) ** 2 / var, 0.0)
    x2_rep_cells = np.where(live, (rep - np.round(c.n) * p) ** 2 / var, 0.0)
    rows = []
    for k, judge in enumerate(c.judges):
        sel = c.k == k
        obs = x2_obs_cells[:, sel].sum(1)
        rp = x2_rep_cells[:, sel].sum(1)
        rows.append({"judge": str(judge), "n_cells": int((sel & live).sum()), "x2_observed": float(obs.mean()),
                     "x2_replicated_mean": float(rp.mean()), "p_value": float((rp >= obs).mean())})
    return pd.DataFrame(rows)


def loo(fit) -> dict:
    """PSIS-LOO over (judge, pair) cells of a NUTS :class:`HJAFit` (ArviZ). ArviZ's warning about Pareto
    k is replaced by the reported ``pareto_k_max`` and ``n_pareto_k_above_0_7``."""
    import warnings

    import arviz as az

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Estimated shape parameter of Pareto")
        res = az.loo(fit.idata, var_name="wins", pointwise=True)
    k = np.asarray(res.pareto_k).ravel()
    return {"elpd_loo": float(res.elpd), "se": float(res.se), "p_loo": float(res.p),
            "pareto_k_max": float(np.nanmax(k)), "n_pareto_k_above_0_7": int((k > 0.7).sum()),
            "elpd_i": np.asarray(res.elpd_i).ravel()}


def attach_model_check(fit, seed: int = 0) -> dict:
    """Compute the PPC per judge and PSIS-LOO and store them in ``fit.model_check`` (shown in the
    summary, JSON and CLI)."""
    ppc = ppc_by_judge(fit, seed=seed)
    lo = loo(fit)
    lo.pop("elpd_i")
    fit.model_check = {"ppc": ppc.to_dict(orient="records"), "loo": lo}
    return fit.model_check


def loo_compare_ranks(fits: dict) -> pd.DataFrame:
    """PSIS-LOO per rank for NUTS fits ``{r: HJAFit}`` and the rank chosen by the parsimony rule (module
    docstring): start at the smallest r; a larger r replaces the current choice when the sum of the
    paired pointwise elpd differences exceeds its standard error ``√n · sd(diff)``."""
    ranks = sorted(fits)
    elpd_i, rows = {}, []
    for r in ranks:
        lo = loo(fits[r])
        elpd_i[r] = lo.pop("elpd_i")
        rows.append({"rank": r, **lo, "converged": bool(fits[r].diagnostics.converged)})
    chosen = ranks[0]
    for r in ranks[1:]:
        diff = elpd_i[r] - elpd_i[chosen]
        se = float(np.sqrt(len(diff)) * diff.std(ddof=1))
        if diff.sum() > se:
            chosen = r
    tab = pd.DataFrame(rows)
    tab["chosen"] = tab["rank"] == chosen
    return tab


def loo_select_rank(counts, max_rank: int = 2, draws: int = 500, tune: int = 500, chains: int = 2, seed: int = 0,
                    sampler: str | None = None, min_per_judge: float = 20.0, **prior) -> pd.DataFrame:
    """Rank selection by PSIS-LOO: NUTS at r = 0..max_rank, then :func:`loo_compare_ranks`."""
    from bayesrank.hja.model import HJA

    max_rank = int(min(max_rank, counts.n_judges - 1, counts.n_items - 2))
    fits = {r: HJA(counts, rank=r, seed=seed, min_per_judge=min_per_judge).fit(
        "nuts", draws=draws, tune=tune, chains=chains, seed=seed, sampler=sampler, **prior)
        for r in range(max_rank + 1)}
    return loo_compare_ranks(fits)
