"""One estimator API for Bradley-Terry: ``BradleyTerry(data).fit(method=...)``.

=============  ==============================================================================
method         point estimate and interval
=============  ==============================================================================
``mle``        Newton MLE; sandwich (ties present, half-win scoring) or Fisher intervals
``map``        posterior mode of the PyMC model; Wald intervals from the PyTensor Hessian
``laplace``    Gaussian approximation N(mode, (−∇² log p)⁻¹) of the PyMC posterior, with draws
``nuts``       NUTS posterior (PyMC or nutpie); equal-tailed credible intervals; R-hat, ESS,
               divergences, posterior predictive check and PSIS-LOO in ``diagnostics``
``bootstrap``  MLE with percentile intervals from seeded, vectorised resampling of comparisons
=============  ==============================================================================

Defaults with ties (``ties="auto"``, ``ci="auto"``). Scoring a tie as half a win (LMArena's
estimator) keeps the point estimate, but a tie is a *sure* half point: the score's variance is
``p(1 − p) − p_tie/4``, not the binomial ``p(1 − p)`` behind the Fisher interval and the half-win
likelihood. So when the data contain ties:

* ``mle`` / ``bootstrap`` use the half-win estimator with the **sandwich** interval (robust to the
  misspecified variance) or the bootstrap; Fisher is used only without ties (where it is exact);
* ``map`` / ``laplace`` / ``nuts`` use the **Davidson** tie model (a likelihood for ties), so the
  posterior is properly specified. Without ties every tie model is the binary Bradley-Terry model.

Module-level imports are NumPy/pandas only; PyMC is imported when a Bayesian method runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesrank.bt.likelihood import TIE_MODELS
from bayesrank.bt.mle import (
    FAILED_POLICIES,
    bootstrap_fits,
    constrained_covariance,
    default_interval,
    fit_newton,
    sandwich_covariance,
)
from bayesrank.bt.pymc_model import DEFAULT_PRIOR_SIGMA, DEFAULT_TIE_PRIOR_SIGMA
from bayesrank.bt.result import LeaderboardFit, two_sided_z
from bayesrank.data.aggregate import PairCounts
from bayesrank.data.comparisons import Comparisons
from bayesrank.data.readers import read_comparisons
from bayesrank.errors import ExclusionLog, InputError, NumericalError
from bayesrank.protocol import Diagnostics

METHODS = ("mle", "map", "laplace", "nuts", "bootstrap")
TIE_CHOICES = ("auto", *TIE_MODELS)
CI_CHOICES = ("auto", "fisher", "sandwich")
BAYESIAN = ("map", "laplace", "nuts")


class BradleyTerry:
    """Bradley-Terry leaderboard estimator on aggregated counts.

    ``data``: :class:`Comparisons`, :class:`PairCounts`, a DataFrame or a path (read with
    :func:`read_comparisons`). ``ties``: ``"auto"`` (default: half-wins for ``mle``/``bootstrap``,
    Davidson for ``map``/``laplace``/``nuts`` when the data contain ties; see the module doc),
    ``"half"`` (LMArena), ``"drop"`` or ``"davidson"``. ``ridge`` penalises ``ridge/2 ‖θ‖²`` in the
    MLE; ``prior_sigma`` is the ZeroSumNormal prior scale of the PyMC model (MAP = ridge MLE with
    ``ridge = 1/prior_sigma²``).
    """

    def __init__(
        self,
        data,
        ties: str = "auto",
        ridge: float = 0.0,
        prior_sigma: float = DEFAULT_PRIOR_SIGMA,
        tie_prior_sigma: float = DEFAULT_TIE_PRIOR_SIGMA,
        level: float = 0.95,
        *,
        columns=None,
        outcome_map=None,
        judge_cols=None,
    ):
        if ties not in TIE_CHOICES:
            raise InputError(f"ties must be one of {TIE_CHOICES}, got {ties!r}")
        if not 0 < level < 1:
            raise InputError(f"level must be in (0, 1), got {level}")
        if ridge < 0 or not np.isfinite(ridge):
            raise InputError(f"ridge must be a finite number >= 0, got {ridge}")
        if not (prior_sigma > 0 and np.isfinite(prior_sigma)):
            raise InputError(f"prior_sigma must be a finite number > 0, got {prior_sigma}")
        if isinstance(data, (str, Path, pd.DataFrame)):  # a file, a bundled name, a DataFrame
            data = read_comparisons(data, columns=columns, outcome_map=outcome_map, judge_cols=judge_cols)
        elif columns or outcome_map or judge_cols:
            raise InputError("columns=/outcome_map=/judge_cols= apply when reading a file or a DataFrame")
        if isinstance(data, Comparisons):
            self.comparisons = data
            self.counts = data.aggregate()
            self.exclusions = ExclusionLog(dict(data.excluded.counts))
        elif isinstance(data, PairCounts):
            self.comparisons = None
            self.counts = data
            self.exclusions = ExclusionLog(dict(getattr(data, "excluded", ExclusionLog()).counts))  # streamed counts
        else:
            raise InputError(f"data must be Comparisons, PairCounts, a DataFrame or a path; got {type(data).__name__}")
        self.has_ties = bool(self.counts.ties.sum() > 0)
        if ties == "drop" and self.has_ties:
            self.exclusions.add("tie (ties='drop')", int(round(float(self.counts.ties.sum()))))
        self.ties = ties
        self.ridge = float(ridge)
        self.prior_sigma = float(prior_sigma)
        self.tie_prior_sigma = float(tie_prior_sigma)
        self.level = level
        self._models: dict = {}
        self._mles: dict = {}

    # ---------------------------------------------------------------- pieces
    @property
    def players(self) -> np.ndarray:
        return self.counts.players

    def tie_model_for(self, method: str) -> str:
        """The tie model a method uses: the requested one, or under ``"auto"`` half-wins for
        mle/bootstrap and Davidson for the Bayesian methods when the data contain ties."""
        if self.ties != "auto":
            return self.ties
        return "davidson" if (method in BAYESIAN and self.has_ties) else "half"

    def interval_for(self, ci: str, ties: str) -> str:
        """``ci="auto"``: sandwich when ties are scored as half-wins, Fisher otherwise."""
        if ci not in CI_CHOICES:
            raise InputError(f"ci must be one of {CI_CHOICES}, got {ci!r}")
        if ci == "auto":
            return default_interval(ties, self.has_ties)
        return ci

    def model_for(self, ties: str):
        """The PyMC model for a tie model (built once, then reused: PyTensor compiles it once per process)."""
        if ties not in self._models:
            from bayesrank.bt.pymc_model import build_bt_model

            self._models[ties] = build_bt_model(self.counts, ties, self.prior_sigma, self.tie_prior_sigma)
        return self._models[ties]

    @property
    def model(self):
        """The PyMC model the Bayesian methods use (see :meth:`tie_model_for`)."""
        return self.model_for(self.tie_model_for("nuts"))

    def newton_fit(self, ties: str | None = None):
        """(params, Hessian, tie model, NewtonResult) at the (ridge) MLE (cached per tie model)."""
        ties = ties or self.tie_model_for("mle")
        if ties not in self._mles:
            self._mles[ties] = fit_newton(self.counts, ties, ridge=self.ridge)
        return self._mles[ties]

    def mle(self, ties: str | None = None):
        """(params, Hessian, tie model) at the MLE."""
        return self.newton_fit(ties)[:3]

    def mle_diagnostics(self, ties: str | None = None) -> Diagnostics:
        """Newton's convergence flag and the gradient norm of the minimised loss at the returned point."""
        res = self.newton_fit(ties)[3]
        ok = bool(res.converged[0])
        return Diagnostics.optimizer(
            "newton", ok, float(res.gradient_norm[0]), iterations=int(res.iterations),
            status=f"Newton step < 1e-10 after {res.iterations} iterations" if ok else "Newton step did not fall below 1e-10",
        )

    def _result(self, method, ties, score, cov, lower, upper, interval, diagnostics, **kw) -> LeaderboardFit:
        return LeaderboardFit(
            method=method, ties=ties, players=self.players, score=np.asarray(score, dtype=float),
            lower=np.asarray(lower, dtype=float), upper=np.asarray(upper, dtype=float), counts=self.counts,
            cov=np.asarray(cov, dtype=float), diagnostics=diagnostics, level=self.level, interval=interval,
            n_comparisons=float(self.counts.total.sum()), n_excluded=self.exclusions.total,
            exclusions=self.exclusions.to_dict(),
            settings={"ties_requested": self.ties, "ridge": self.ridge, "prior_sigma": self.prior_sigma,
                      **kw.pop("settings", {})},
            **kw,
        )

    # ---------------------------------------------------------------- fit
    def fit(
        self,
        method: str = "mle",
        *,
        ci: str = "auto",
        n_boot: int = 200,
        failed: str = "exclude",
        seed: int = 0,
        draws: int = 1000,
        tune: int = 1000,
        chains: int = 4,
        sampler: str = "pymc",
        ppc: bool = True,
        loo: bool = True,
        progress: bool = False,
        target_accept: float | None = None,
    ) -> LeaderboardFit:
        """Fit with ``method`` in ``{"mle", "map", "laplace", "nuts", "bootstrap"}`` (see module doc).

        ``ci`` (mle): ``auto`` | ``fisher`` | ``sandwich``. ``failed`` (bootstrap): what to do with
        replicates that have no finite MLE — ``exclude`` them (default) or refit with ``ridge`` 1e-6;
        either way they are counted in ``diagnostics``. ``target_accept`` (nuts): NUTS's target
        acceptance rate (PyMC's default 0.8 when None; higher = smaller steps, fewer divergences).
        """
        if method not in METHODS:
            raise InputError(f"method must be one of {METHODS}, got {method!r}")
        ties = self.tie_model_for(method)
        if method == "mle":
            return self._fit_mle(ties, ci)
        if method == "bootstrap":
            return self._fit_bootstrap(ties, n_boot, seed, failed, progress)
        if method in ("map", "laplace"):
            return self._fit_laplace(method, ties, draws, seed)
        return self._fit_nuts(ties, draws, tune, chains, seed, sampler, ppc, loo, progress, target_accept)

    def _extra_names(self, ties):
        return ["log_nu"] if ties == "davidson" else []

    def _fit_mle(self, ties, ci):
        params, hess, tm, _ = self.newton_fit(ties)
        kind = self.interval_for(ci, ties)
        k = len(self.players)
        cov = constrained_covariance(hess, k, tm.n_extra) if kind == "fisher" else sandwich_covariance(tm, self.counts, params, hess)
        sd = np.sqrt(np.diag(cov)[:k])
        z = two_sided_z(self.level)
        theta = params[:k]
        reason = ("ties scored as half-wins: sandwich" if kind == "sandwich" and ci == "auto" else
                  "no ties to misspecify: Fisher" if ci == "auto" else "requested")
        return self._result("mle", ties, theta, cov, theta - z * sd, theta + z * sd, kind, self.mle_diagnostics(ties),
                            extra=dict(zip(self._extra_names(ties), params[k:])),
                            settings={"ci": ci, "ci_used": kind, "ci_reason": reason})

    def _fit_bootstrap(self, ties, n_boot, seed, failed, progress):
        if failed not in FAILED_POLICIES:
            raise InputError(f"failed must be one of {FAILED_POLICIES}, got {failed!r}")
        if n_boot < 2:
            raise InputError(f"n_boot must be at least 2, got {n_boot}")
        params, _, _, _ = self.newton_fit(ties)
        k = len(self.players)
        bf = self._bootstrap(ties, n_boot, seed, params, failed, progress)
        used = bf.used
        if len(used) < 2:
            raise NumericalError(f"{bf.n_failed} of {n_boot} bootstrap replicates have no finite MLE: "
                                 "use failed='ridge' (--bootstrap-failed ridge) or a ridge > 0")
        a = (1 - self.level) / 2
        lo, hi = np.quantile(used[:, :k], [a, 1 - a], axis=0)
        diag = Diagnostics.resampling(
            "bootstrap", self.mle_diagnostics(ties), n_boot, bf.n_failed, failed,
            no_finite_mle=int(bf.no_finite_mle.sum()), not_converged=int((bf.failed & ~bf.no_finite_mle).sum()),
            replicates_used=int(len(used)),
        )
        return self._result(
            "bootstrap", ties, params[:k], np.cov(used.T), lo, hi, "bootstrap percentile", diag,
            extra=dict(zip(self._extra_names(ties), params[k:])), draws=used,
            settings={"n_boot": n_boot, "seed": seed, "failed": failed},
        )

    def _bootstrap(self, ties, n_boot, seed, start, failed, progress):
        kw = dict(n_boot=n_boot, seed=seed, ridge=self.ridge, start=start, failed=failed)
        if not progress:
            return bootstrap_fits(self.counts, ties, **kw)
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("bootstrap refits", total=n_boot)
            return bootstrap_fits(self.counts, ties, progress=lambda n: bar.advance(task, n), **kw)

    def _fit_laplace(self, method, ties, draws, seed):
        from bayesrank.bt.pymc_model import map_laplace

        lf = map_laplace(self.model_for(ties))
        k = len(self.players)
        z = two_sided_z(self.level)
        sd = np.sqrt(np.diag(lf.cov)[:k])
        diag = Diagnostics.optimizer(f"newton on the PyMC log-density ({method.upper()})", lf.converged,
                                     lf.gradient_norm, iterations=lf.iterations, status=lf.status)
        kw = {}
        if method == "laplace":
            mean = np.concatenate([lf.theta, [lf.extra[n] for n in self._extra_names(ties)]])
            kw["draws"] = np.random.default_rng(seed).multivariate_normal(mean, lf.cov, size=draws, method="eigh")
            kw["settings"] = {"draws": draws, "seed": seed}
        interval = "Wald (MAP Hessian)" if method == "map" else "Laplace"
        return self._result(method, ties, lf.theta, lf.cov, lf.theta - z * sd, lf.theta + z * sd, interval, diag,
                            extra=dict(lf.extra), **kw)

    def _fit_nuts(self, ties, draws, tune, chains, seed, sampler, ppc, loo, progress, target_accept=None):
        from bayesrank.bt.pymc_model import posterior_predictive_check, sample_nuts

        model = self.model_for(ties)
        dt = sample_nuts(model, draws=draws, tune=tune, chains=chains, seed=seed, sampler=sampler, progressbar=progress,
                         target_accept=target_accept)
        k = len(self.players)
        th = dt.posterior["theta"].transpose("chain", "draw", "player").values.reshape(-1, k)
        a = (1 - self.level) / 2
        lo, hi = np.quantile(th, [a, 1 - a], axis=0)
        names = ["theta", *self._extra_names(ties)]
        extra_diag, ppc_arrays = {}, None
        if ppc:
            ppc_arrays = posterior_predictive_check(model, dt, self.counts, ties, seed=seed)
            extra_diag["ppc"] = {k_: v for k_, v in ppc_arrays.items() if np.ndim(v) == 0}
        if loo:
            extra_diag["loo"] = loo_summary(dt)
        diag = Diagnostics.sampler("nuts", dt, var_names=names, **extra_diag)
        full = th
        extra = {}
        if ties == "davidson":
            nu = dt.posterior["log_nu"].values.reshape(-1, 1)
            full = np.concatenate([th, nu], axis=1)
            extra["log_nu"] = float(nu.mean())
        return self._result(
            "nuts", ties, th.mean(axis=0), np.cov(full.T), lo, hi, "equal-tailed credible", diag, extra=extra,
            draws=full, idata=dt, ppc=ppc_arrays,
            settings={"draws": draws, "tune": tune, "chains": chains, "seed": seed, "sampler": sampler,
                      **({"target_accept": target_accept} if target_accept is not None else {})},
        )


def loo_summary(dt) -> dict:
    """PSIS-LOO over pairs (each aggregated pair is one LOO unit): elpd, SE, p_loo, Pareto k."""
    import arviz as az

    res = az.loo(dt, pointwise=True)
    k = np.asarray(res.pareto_k)
    return {
        "elpd": float(res.elpd),
        "se": float(res.se),
        "p_loo": float(res.p),
        "pareto_k_max": float(np.nanmax(k)),
        "n_pareto_k_gt_0.7": int(np.sum(k > 0.7)),
    }
