"""One estimator API for Bradley-Terry: ``BradleyTerry(data).fit(method=...)``.

=============  ==============================================================================
method         point estimate and interval
=============  ==============================================================================
``mle``        Newton MLE; Fisher (observed information, default) or sandwich intervals
``map``        posterior mode of the PyMC model; Wald intervals from the PyTensor Hessian
``laplace``    Gaussian approximation N(mode, (−∇² log p)⁻¹) of the PyMC posterior, with draws
``nuts``       NUTS posterior (PyMC or nutpie); equal-tailed credible intervals; R-hat, ESS,
               divergences, posterior predictive check and PSIS-LOO in ``diagnostics``
``bootstrap``  MLE with percentile intervals from seeded, vectorised resampling of comparisons
=============  ==============================================================================
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from bayesrank.bt.likelihood import TIE_MODELS
from bayesrank.bt.mle import (
    bootstrap_fits,
    constrained_covariance,
    fit_newton,
    sandwich_covariance,
)
from bayesrank.bt.pymc_model import (
    DEFAULT_PRIOR_SIGMA,
    DEFAULT_TIE_PRIOR_SIGMA,
    build_bt_model,
    map_laplace,
    posterior_predictive_check,
    sample_nuts,
)
from bayesrank.bt.result import LeaderboardFit
from bayesrank.data.aggregate import PairCounts
from bayesrank.data.comparisons import Comparisons
from bayesrank.data.readers import read_comparisons
from bayesrank.errors import ExclusionLog, InputError

METHODS = ("mle", "map", "laplace", "nuts", "bootstrap")


class BradleyTerry:
    """Bradley-Terry leaderboard estimator on aggregated counts.

    ``data``: :class:`Comparisons`, :class:`PairCounts`, a DataFrame or a path (read with
    :func:`read_comparisons`). ``ties``: ``"half"`` (default, as LMArena), ``"drop"`` or
    ``"davidson"``. ``ridge`` penalises ``ridge/2 ‖θ‖²`` in the MLE; ``prior_sigma`` is the
    ZeroSumNormal prior scale of the PyMC model (MAP = ridge MLE with ``ridge = 1/prior_sigma²``).
    """

    def __init__(
        self,
        data,
        ties: str = "half",
        ridge: float = 0.0,
        prior_sigma: float = DEFAULT_PRIOR_SIGMA,
        tie_prior_sigma: float = DEFAULT_TIE_PRIOR_SIGMA,
        level: float = 0.95,
    ):
        if ties not in TIE_MODELS:
            raise InputError(f"ties must be one of {TIE_MODELS}, got {ties!r}")
        if not 0 < level < 1:
            raise InputError(f"level must be in (0, 1), got {level}")
        if ridge < 0 or not np.isfinite(ridge):
            raise InputError(f"ridge must be a finite number >= 0, got {ridge}")
        if isinstance(data, (str, Path, pd.DataFrame)):
            data = read_comparisons(data)
        if isinstance(data, Comparisons):
            self.comparisons = data
            self.counts = data.aggregate()
            self.exclusions = ExclusionLog(dict(data.excluded.counts))
        elif isinstance(data, PairCounts):
            self.comparisons = None
            self.counts = data
            self.exclusions = ExclusionLog()
        else:
            raise InputError(f"data must be Comparisons, PairCounts, a DataFrame or a path; got {type(data).__name__}")
        if ties == "drop":
            n_ties = float(self.counts.ties.sum())
            if n_ties:
                self.exclusions.add("tie (ties='drop')", int(round(n_ties)))
        self.ties = ties
        self.ridge = float(ridge)
        self.prior_sigma = float(prior_sigma)
        self.tie_prior_sigma = float(tie_prior_sigma)
        self.level = level
        self._model = None
        self._mle = None

    # ---------------------------------------------------------------- pieces
    @property
    def players(self) -> np.ndarray:
        return self.counts.players

    @property
    def model(self):
        """The PyMC model (built once, then reused: PyTensor compiles it once per process)."""
        if self._model is None:
            self._model = build_bt_model(self.counts, self.ties, self.prior_sigma, self.tie_prior_sigma)
        return self._model

    def mle(self):
        """(params, Hessian, tie model) at the MLE (cached)."""
        if self._mle is None:
            params, hess, tm, res = fit_newton(self.counts, self.ties, ridge=self.ridge)
            if not res.converged[0]:
                raise RuntimeError("Newton did not converge for the Bradley-Terry MLE")
            self._mle = (params, hess, tm)
        return self._mle

    def _z(self) -> float:
        return float(norm.ppf(0.5 + self.level / 2))

    def _result(self, method, score, cov, lower, upper, interval, **kw) -> LeaderboardFit:
        comparisons = float(self.counts.total.sum())
        return LeaderboardFit(
            method=method, ties=self.ties, players=self.players, score=score, lower=lower, upper=upper,
            counts=self.counts, cov=cov, level=self.level, interval=interval,
            n_comparisons=comparisons, n_excluded=self.exclusions.total, exclusions=self.exclusions.to_dict(),
            settings={"ridge": self.ridge, "prior_sigma": self.prior_sigma, **kw.pop("settings", {})}, **kw,
        )

    # ---------------------------------------------------------------- fit
    def fit(
        self,
        method: str = "mle",
        *,
        ci: str = "fisher",
        n_boot: int = 200,
        seed: int = 0,
        draws: int = 1000,
        tune: int = 1000,
        chains: int = 4,
        sampler: str = "pymc",
        ppc: bool = True,
        loo: bool = True,
        progress: bool = False,
    ) -> LeaderboardFit:
        """Fit with ``method`` in ``{"mle", "map", "laplace", "nuts", "bootstrap"}`` (see module doc)."""
        if method not in METHODS:
            raise InputError(f"method must be one of {METHODS}, got {method!r}")
        k = len(self.players)
        z = self._z()
        extra_names = ["log_nu"] if self.ties == "davidson" else []

        if method in ("mle", "bootstrap"):
            params, hess, tm = self.mle()
            theta = params[:k]
            extra = dict(zip(extra_names, params[k:]))
            if method == "mle":
                if ci == "fisher":
                    cov = constrained_covariance(hess, k, tm.n_extra)
                elif ci == "sandwich":
                    cov = sandwich_covariance(tm, self.counts, params, hess)
                else:
                    raise InputError(f"ci must be 'fisher' or 'sandwich', got {ci!r}")
                sd = np.sqrt(np.diag(cov)[:k])
                return self._result("mle", theta, cov, theta - z * sd, theta + z * sd, ci, extra=extra)
            boot = self._bootstrap(n_boot, seed, params, progress)
            a = (1 - self.level) / 2
            lo, hi = np.quantile(boot[:, :k], [a, 1 - a], axis=0)
            return self._result(
                "bootstrap", theta, np.cov(boot.T), lo, hi, f"percentile ({n_boot} resamples, seed {seed})",
                extra=extra, draws=boot, settings={"n_boot": n_boot, "seed": seed},
            )

        if method in ("map", "laplace"):
            lf = map_laplace(self.model)
            sd = np.sqrt(np.diag(lf.cov)[:k])
            lower, upper = lf.theta - z * sd, lf.theta + z * sd
            if method == "map":
                return self._result("map", lf.theta, lf.cov, lower, upper, "Wald (PyMC Hessian)", extra=lf.extra,
                                    diagnostics={"newton_iterations": lf.iterations, "converged": lf.converged})
            rng = np.random.default_rng(seed)
            mean = np.concatenate([lf.theta, [lf.extra[n] for n in extra_names]])
            sample = rng.multivariate_normal(mean, lf.cov, size=draws, method="eigh")
            return self._result(
                "laplace", lf.theta, lf.cov, lower, upper, "Laplace (Gaussian at the mode)", extra=lf.extra,
                draws=sample, diagnostics={"newton_iterations": lf.iterations, "converged": lf.converged},
                settings={"draws": draws, "seed": seed},
            )

        # nuts
        dt = sample_nuts(self.model, draws=draws, tune=tune, chains=chains, seed=seed, sampler=sampler, progressbar=progress)
        th = dt.posterior["theta"].transpose("chain", "draw", "player").values.reshape(-1, k)
        a = (1 - self.level) / 2
        lo, hi = np.quantile(th, [a, 1 - a], axis=0)
        diag = nuts_diagnostics(dt)
        extra = {}
        if "log_nu" in dt.posterior:
            extra["log_nu"] = float(dt.posterior["log_nu"].mean())
        if ppc:
            diag["ppc"] = posterior_predictive_check(self.model, dt, self.counts, self.ties, seed=seed)
            diag["ppc_share_outside_95"] = diag["ppc"]["share_outside_95"]
        if loo:
            diag.update(loo_summary(dt))
        return self._result(
            "nuts", th.mean(axis=0), np.cov(th.T), lo, hi, "equal-tailed credible", extra=extra, draws=th,
            idata=dt, diagnostics=diag, settings={"draws": draws, "tune": tune, "chains": chains, "seed": seed, "sampler": sampler},
        )

    def _bootstrap(self, n_boot, seed, start, progress):
        if not progress:
            return bootstrap_fits(self.counts, self.ties, n_boot=n_boot, seed=seed, ridge=self.ridge, start=start)
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("bootstrap refits", total=n_boot)
            return bootstrap_fits(
                self.counts, self.ties, n_boot=n_boot, seed=seed, ridge=self.ridge, start=start,
                progress=lambda n: bar.advance(task, n),
            )


def nuts_diagnostics(dt) -> dict:
    """Max R-hat, min bulk/tail ESS over θ, and the number of divergent transitions."""
    import arviz as az

    rhat = az.rhat(dt, var_names=["theta"])
    ess_b = az.ess(dt, var_names=["theta"], method="bulk")
    ess_t = az.ess(dt, var_names=["theta"], method="tail")

    def _val(obj):
        ds = obj.dataset if hasattr(obj, "dataset") else obj
        if hasattr(obj, "children") and "posterior" in getattr(obj, "children", {}):
            ds = obj["posterior"].dataset
        return np.asarray(ds["theta"])

    div = int(np.asarray(dt.sample_stats["diverging"]).sum()) if "sample_stats" in dt.children else -1
    return {
        "rhat_max": float(np.max(_val(rhat))),
        "ess_bulk_min": float(np.min(_val(ess_b))),
        "ess_tail_min": float(np.min(_val(ess_t))),
        "divergences": div,
    }


def loo_summary(dt) -> dict:
    """PSIS-LOO over pairs (each aggregated pair is one LOO unit): elpd, SE, p_loo, max Pareto k."""
    import arviz as az

    res = az.loo(dt, pointwise=True)
    k = np.asarray(res.pareto_k)
    return {
        "loo_elpd": float(res.elpd),
        "loo_se": float(res.se),
        "loo_p": float(res.p),
        "loo_pareto_k_max": float(np.nanmax(k)),
        "loo_n_pareto_k_gt_0.7": int(np.sum(k > 0.7)),
    }
