"""One estimator for every Bradley–Terry model: ``BradleyTerry(data, ...).fit(method=...)``.

The model is ``logit P(i beats j) = θ_i − θ_j [+ α] [+ βᵀd]`` on pair rows
(:class:`bayesrank.data.rows.PairRows`): plain Bradley–Terry is the case without features
(pair counts, the fastest path), ``position_effect=True`` adds an intercept α for the side listed
first, ``style=`` adds feature differences (LMArena's style control), ``cluster=`` makes the
sandwich and the bootstrap cluster-robust, ``reweight=True`` applies inverse-propensity pair
weights. Every tie model (half, drop, Davidson) works with every one of them.

=============  ==============================================================================
method         point estimate and interval
=============  ==============================================================================
``mle``        Newton MLE; the default interval (:func:`bayesrank.bt.mle.default_interval`)
``map``        posterior mode of the PyMC model; Wald intervals from the PyTensor Hessian
``laplace``    Gaussian approximation N(mode, (−∇² log p)⁻¹) of the PyMC posterior, with draws
``nuts``       NUTS posterior; equal-tailed credible intervals; R-hat, ESS,
               divergences, posterior predictive check (aggregated rows) and PSIS-LOO in ``diagnostics``
``bootstrap``  MLE with percentile intervals from seeded, vectorised resampling of comparisons
               (whole clusters when clustered)
=============  ==============================================================================

Defaults (``ties="auto"``, ``ci="auto"``). Scoring a tie as half a win (LMArena's estimator) keeps
the point estimate, but a tie is a *sure* half point: the score's variance is ``p(1 − p) − p_tie/4``,
not the binomial ``p(1 − p)`` behind the Fisher interval and the half-win likelihood. So:

* ``mle`` / ``bootstrap`` use the half-win estimator with the **sandwich** interval when the data
  contain ties (also with outcomes split in shares or importance weights), the **cluster-robust**
  sandwich when clustered, and Fisher otherwise (where it is exact);
* ``map`` / ``laplace`` / ``nuts`` use the **Davidson** tie model (a likelihood for ties) when the
  data contain ties, so the posterior is properly specified (half-wins when outcomes are split in
  shares, which Davidson cannot model). Without ties every tie model is the binary model.

Module-level imports are NumPy/pandas only; PyMC is imported when a Bayesian method runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from bayesrank.bt.likelihood import TIE_MODELS, tie_model
from bayesrank.bt.mle import (
    FAILED_POLICIES,
    bootstrap_fits,
    check_finite_mle,
    covariance,
    default_interval,
    fit_newton,
)
from bayesrank.bt.pymc_model import DEFAULT_BETA_SIGMA, DEFAULT_PRIOR_SIGMA, DEFAULT_TIE_PRIOR_SIGMA
from bayesrank.bt.result import LeaderboardFit, two_sided_z
from bayesrank.data.comparisons import Comparisons
from bayesrank.data.rows import PairRows
from bayesrank.errors import ExclusionLog, InputError, NumericalError
from bayesrank.protocol import Diagnostics

if TYPE_CHECKING:
    import pymc as pm

    from bayesrank.bt.firth import FirthFit
    from bayesrank.bt.likelihood import TieModel
    from bayesrank.bt.mle import BootstrapFits, NewtonResult

METHODS = ("mle", "map", "laplace", "nuts", "bootstrap")
TIE_CHOICES = ("auto", *TIE_MODELS)
CI_CHOICES = ("auto", "fisher", "sandwich", "cluster")
BAYESIAN = ("map", "laplace", "nuts")
#: NUTS implementations of the same model: ``density`` = nutpie on the hand-written log posterior and
#: gradient (:mod:`bayesrank.bt.density`, no graph compilation, chains in threads; the default),
#: ``pymc`` = PyMC's sampler on the PyMC model, ``nutpie`` = nutpie on the PyMC model compiled by numba
SAMPLERS = ("density", "pymc", "nutpie")
INTERVAL_NAMES = {"fisher": "fisher", "sandwich": "sandwich", "cluster": "cluster-robust sandwich"}


class BradleyTerry:
    """Bradley–Terry leaderboard estimator (module docstring).

    ``data``: a file, a bundled dataset name, a DataFrame, :class:`Comparisons` or
    :class:`PairRows` (read once by :func:`bayesrank.data.readers.read_pairwise`; ``format``,
    ``exclude_invalid`` and the column vocabulary ``columns``/``outcome_map``/``judge_cols`` are
    passed to the reader). ``style``: feature column pairs
    ``"A_COL:B_COL,..."`` (``transform``/``standardize``: :mod:`bayesrank.data.features`).
    ``cluster``: a column of cluster labels (prompt, user, item). ``position_effect``: an intercept
    α for the first-listed side. ``reweight``: inverse-propensity pair weights with floor
    ``min_pair_count`` (:mod:`bayesrank.bt.reweight`). ``ties``: ``"auto"`` (module docstring),
    ``"half"`` (LMArena), ``"drop"`` or ``"davidson"``. ``ridge``/``beta_ridge`` penalise
    ``ridge/2 ‖θ‖²`` and ``beta_ridge/2 ‖(α, β)‖²`` in the MLE; ``prior_sigma``, ``beta_sigma`` and
    ``tie_prior_sigma`` are the PyMC priors' scales (MAP = penalised MLE with ridge 1/σ²,
    beta_ridge 1/σ_β²). ``penalty="firth"``: the ``mle`` and ``bootstrap`` fits are Firth's
    bias-reduced estimates (:mod:`bayesrank.bt.firth`: finite when a player never won or never lost),
    with profile penalised-likelihood intervals under ``ci="auto"`` (plain model, ties half or drop;
    the Bayesian methods use their prior as always).
    """

    def __init__(self, data: Any, style: str | Sequence[str] | Sequence[tuple[str, str]] = (), *, ties: str = "auto", cluster: str | None = None,
                 position_effect: bool = False, reweight: bool = False, min_pair_count: float = 50,
                 ridge: float = 0.0, beta_ridge: float = 0.0, prior_sigma: float = DEFAULT_PRIOR_SIGMA,
                 tie_prior_sigma: float = DEFAULT_TIE_PRIOR_SIGMA, beta_sigma: float = DEFAULT_BETA_SIGMA,
                 level: float = 0.95, transform: str = "normalized_diff", standardize: str = "center_scale",
                 format: str = "auto", exclude_invalid: bool = False, columns: Mapping[str, Any] | str | None = None,
                 outcome_map: Mapping[str, str] | str | None = None, judge_cols: str | Sequence[str] | None = None,
                 penalty: str | None = None) -> None:
        from bayesrank.data.aggregate import pair_rows
        from bayesrank.data.features import parse_style
        from bayesrank.data.readers import read_pairwise

        if ties not in TIE_CHOICES:
            raise InputError(f"ties must be one of {TIE_CHOICES}, got {ties!r}")
        if not 0 < level < 1:
            raise InputError(f"level must be in (0, 1), got {level}")
        for name, v in (("ridge", ridge), ("beta_ridge", beta_ridge)):
            if v < 0 or not np.isfinite(v):
                raise InputError(f"{name} must be a finite number >= 0, got {v}")
        for name, v in (("prior_sigma", prior_sigma), ("beta_sigma", beta_sigma), ("tie_prior_sigma", tie_prior_sigma)):
            if not (v > 0 and np.isfinite(v)):
                raise InputError(f"{name} must be a finite number > 0, got {v}")
        pairs = parse_style(style)
        data = read_pairwise(data, format=format, on_invalid="exclude" if exclude_invalid else "raise",
                             columns=columns, outcome_map=outcome_map, judge_cols=judge_cols)
        self.comparisons: Comparisons | None = None  # the comparisons read (None when given pair rows)
        if isinstance(data, Comparisons):
            self.comparisons = data
            rows = pair_rows(data, pairs, transform, standardize, cluster=cluster, ordered=bool(position_effect))
        elif isinstance(data, PairRows):
            rows = data
            missing = [what for what, need, have in (
                ("style features", bool(pairs), rows.n_features > 0), ("clusters", cluster is not None, rows.cluster is not None),
                ("the order in which players were listed", position_effect, rows.ordered)) if need and not have]
            if missing:
                raise InputError(f"{', '.join(missing)} need the individual comparisons, not pair counts (a folder or "
                                 "glob is streamed to pair counts: pass one file)")
        else:  # pragma: no cover - read_pairwise returns one of the two
            raise InputError(f"data must be Comparisons or PairRows; got {type(data).__name__}")
        if reweight:
            from bayesrank.bt.reweight import inverse_propensity_weights

            rows = rows.replace(weight=inverse_propensity_weights(rows, min_pair_count=min_pair_count))
        if ties == "davidson" and rows.fractional:
            raise InputError("ties='davidson' models whole outcomes (a win, a loss or a tie); these data split "
                             "outcomes in shares (a soft judge): use ties='half'")
        self.rows = rows
        self.exclusions = ExclusionLog(dict(rows.excluded.counts))
        self.has_ties = rows.has_ties
        if ties == "drop" and self.has_ties:
            self.exclusions.add("tie (ties='drop')", int(round(float(rows.ties.sum()))))
        self.ties = ties
        self.position = bool(position_effect)
        self.reweight = bool(reweight)
        self.min_pair_count = float(min_pair_count)
        self.ridge, self.beta_ridge = float(ridge), float(beta_ridge)
        self.penalty = _check_penalty(penalty, self)
        self._firth: dict = {}
        self.prior_sigma, self.beta_sigma = float(prior_sigma), float(beta_sigma)
        self.tie_prior_sigma = float(tie_prior_sigma)
        self.level = level
        self._models: dict = {}
        self._mles: dict = {}
        self._fisher: dict = {}  # ties -> the MLE's H⁻¹ (sum-to-zero), shared by every interval of the MLE
        self._plain: dict = {}

    # ---------------------------------------------------------------- pieces
    @property
    def counts(self) -> PairRows:
        """The rows every fit uses (pair counts in the zero-feature case)."""
        return self.rows

    @property
    def players(self) -> np.ndarray:
        return self.rows.players

    @property
    def n_covariates(self) -> int:
        """Columns of ``Z = [1 | X]``: the position effect and the features."""
        return int(self.position) + self.rows.n_features

    @property
    def controlled(self) -> bool:
        """The model differs from the plain leaderboard's (features, position effect or weights)."""
        return bool(self.n_covariates or self.rows.weighted)

    def tie_model_for(self, method: str) -> str:
        """The tie model a method uses: the requested one, or under ``"auto"`` half-wins for
        mle/bootstrap and Davidson for the Bayesian methods when the data contain ties (half-wins
        when outcomes are split in shares)."""
        if self.ties != "auto":
            return self.ties
        return "davidson" if (method in BAYESIAN and self.has_ties and not self.rows.fractional) else "half"

    def interval_for(self, ci: str, ties: str) -> str:
        """``ci="auto"``: the package's default rule (:func:`bayesrank.bt.mle.default_interval`)."""
        if ci not in CI_CHOICES:
            raise InputError(f"ci must be one of {CI_CHOICES}, got {ci!r}")
        if ci == "cluster" and self.rows.cluster is None:
            raise InputError("ci='cluster' needs clusters (cluster=COLUMN, --cluster COL)")
        if ci == "auto":
            return default_interval(ties, self.has_ties, self.rows.fractional, self.rows.cluster is not None,
                                    self.rows.weighted)
        return ci

    def model_for(self, ties: str) -> pm.Model:
        """The PyMC model for a tie model (built once, then reused: PyTensor compiles it once per process)."""
        if ties not in self._models:
            from bayesrank.bt.pymc_model import build_bt_model

            self._models[ties] = build_bt_model(self.rows, ties, self.prior_sigma, self.tie_prior_sigma,
                                                position=self.position, beta_sigma=self.beta_sigma)
        return self._models[ties]

    @property
    def model(self) -> pm.Model:
        """The PyMC model the Bayesian methods use (see :meth:`tie_model_for`)."""
        return self.model_for(self.tie_model_for("nuts"))

    def plain_scores(self, ridge: float = 0.0, ties: str | None = None, weighted: bool = False) -> np.ndarray:
        """θ of the plain Bradley–Terry MLE on the same comparisons (no features, no position effect,
        and unless ``weighted`` no importance weights): the default ``bayesrank fit`` leaderboard."""
        ties = ties or self.tie_model_for("mle")
        key = (float(ridge), ties, weighted and self.rows.weighted)
        if key not in self._plain:
            self._plain[key] = fit_newton(self.rows.pairs(weighted=key[2]), ties, ridge=ridge)[0][: len(self.players)]
        return self._plain[key]

    def newton_fit(self, ties: str | None = None) -> tuple[np.ndarray, np.ndarray, TieModel, NewtonResult]:
        """(params, Hessian, tie model, NewtonResult) at the (penalised) MLE (cached per tie model);
        with covariates Newton starts at the plain fit (θ of the weighted pair counts, α = β = 0)."""
        ties = ties or self.tie_model_for("mle")
        if ties not in self._mles and self.penalty == "firth":
            self._firth[ties], self._mles[ties] = _firth_newton(self.rows, ties)
        if ties not in self._mles:
            check_finite_mle(self.rows, ties, self.ridge)
            start = None
            if self.n_covariates:
                theta = self.plain_scores(self.ridge, ties, weighted=True)
                start = np.concatenate([theta, np.zeros(self.n_covariates + tie_model(ties).n_extra)])
            self._mles[ties] = fit_newton(self.rows, ties, ridge=self.ridge, position=self.position,
                                          beta_ridge=self.beta_ridge, start=start, checked=True)
        return self._mles[ties]

    def mle(self, ties: str | None = None) -> tuple[np.ndarray, np.ndarray, TieModel]:
        """(params, Hessian, tie model) at the MLE."""
        return self.newton_fit(ties)[:3]

    def mle_diagnostics(self, ties: str | None = None) -> Diagnostics:
        """Newton's convergence flag and the gradient norm of the minimised loss at the returned point."""
        res = self.newton_fit(ties)[3]
        ok = bool(res.converged[0])
        if self.penalty == "firth":
            return Diagnostics.optimizer(
                "firth", ok, float(res.gradient_norm[0]), iterations=int(res.iterations),
                status=(f"Firth fixed point (Newton on leverage pseudo-counts) reached after {res.iterations} rounds"
                        if ok else "Firth fixed point not reached"))
        return Diagnostics.optimizer(
            "newton", ok, float(res.gradient_norm[0]), iterations=int(res.iterations),
            status=f"Newton step < 1e-10 after {res.iterations} iterations" if ok else "Newton step did not fall below 1e-10",
        )

    def _result(self, method: str, ties: str, params: Any, cov: np.ndarray, lower: Any, upper: Any, interval: str,
                diagnostics: Diagnostics, plain_ridge: float | None = None, **kw: Any) -> LeaderboardFit:
        k, a, p = len(self.players), int(self.position), self.rows.n_features
        params, lower, upper = (np.asarray(x, dtype=float) for x in (params, lower, upper))
        position = None
        if self.position:
            position = {"coef": float(params[k]), "lower": float(lower[k]), "upper": float(upper[k])}
        extra = {"log_nu": float(params[-1])} if ties == "davidson" else {}
        plain = None
        if self.controlled:
            plain_ridge = self.ridge if plain_ridge is None else plain_ridge
            plain = self.plain_scores(plain_ridge, self.tie_model_for("mle"))
            kw["plain_method"] = "mle" if plain_ridge == 0 else f"ridge {plain_ridge:g}"
        settings = {"ties_requested": self.ties, "ridge": self.ridge, "prior_sigma": self.prior_sigma,
                    **self._model_settings(), **kw.pop("settings", {})}
        if self.penalty and method in ("mle", "bootstrap"):
            settings["penalty"] = self.penalty
        return LeaderboardFit(
            method=method, ties=ties, players=self.players, score=params[:k], lower=lower[:k], upper=upper[:k],
            counts=self.rows, cov=np.asarray(cov, dtype=float), diagnostics=diagnostics, level=self.level,
            interval=interval, n_comparisons=self.rows.n_comparisons, n_excluded=self.exclusions.total,
            exclusions=self.exclusions.to_dict(), extra=extra, settings=settings,
            features=list(self.rows.features), coef=params[k + a:k + a + p], coef_lower=lower[k + a:k + a + p],
            coef_upper=upper[k + a:k + a + p], position=position, plain_score=plain, transform=dict(self.rows.transform),
            n_rows=self.rows.n_rows, **kw,
        )

    def _model_settings(self) -> dict:
        out = {}
        if self.rows.n_features or self.beta_ridge:
            out["beta_ridge"] = self.beta_ridge
        if self.position:
            out["position_effect"] = True
        if self.rows.cluster is not None:
            out.update(cluster=self.rows.cluster_name, n_clusters=self.rows.n_clusters)
        if self.reweight:
            out.update(reweight=True, min_pair_count=self.min_pair_count)
        return out

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
        sampler: str = "density",
        ppc: bool = True,
        loo: bool = True,
        progress: bool = False,
        target_accept: float | None = None,
    ) -> LeaderboardFit:
        """Fit with ``method`` in ``{"mle", "map", "laplace", "nuts", "bootstrap"}`` (see module doc).

        ``ci`` (mle): ``auto`` | ``fisher`` | ``sandwich`` | ``cluster``. ``failed`` (bootstrap): what to
        do with replicates that have no finite MLE — ``exclude`` them (default) or refit with ``ridge``
        1e-6; either way they are counted in ``diagnostics``. ``target_accept`` (nuts): NUTS's target
        acceptance rate (PyMC's default 0.8 when None; higher = smaller steps, fewer divergences).
        ``ppc``, ``loo`` (nuts): the posterior predictive check and PSIS-LOO; with ``loo`` the draws'
        pointwise log-likelihood is the ``log_likelihood`` group of ``idata`` (the density sampler adds it
        only then; the PyMC sampler always).
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

    def _fit_mle(self, ties: str, ci: str) -> LeaderboardFit:
        params, hess, tm, res = self.newton_fit(ties)
        kind = self.interval_for(ci, ties)
        if ties not in self._fisher:
            factor = getattr(res, "factor", None)  # a large sparse board: H⁻¹ by K solves with its factor
            self._fisher[ties] = (factor.dense_inverse() if factor is not None and len(params) == len(self.players)
                                  else covariance(tm, self.rows, params, hess, "fisher", position=self.position))
        cov = covariance(tm, self.rows, params, hess, kind, position=self.position, hinv=self._fisher[ties])
        cov = cov.copy() if cov is self._fisher[ties] else cov  # each fit owns its covariance
        sd = np.sqrt(np.clip(np.diag(cov), 0, None))
        z = two_sided_z(self.level)
        reasons = {"cluster": f"clustered by {self.rows.cluster_name}: cluster-robust sandwich",
                   "sandwich": "ties scored as half-wins, outcome shares or importance weights: sandwich",
                   "fisher": "no ties to misspecify: Fisher"}
        reason = reasons[kind] if ci == "auto" else "requested"
        lower, upper, name = params - z * sd, params + z * sd, INTERVAL_NAMES[kind]
        settings = {"ci": ci, "ci_used": kind, "ci_reason": reason}
        if self.penalty == "firth":
            name = f"Wald at Firth's estimate ({name})"
            if ci == "auto":
                lower, upper = self.profile_intervals(ties)
                name = PROFILE_INTERVAL
                settings.update(ci_used="profile", ci_reason="Firth's fit (no finite MLE): profile penalised "
                                f"likelihood; the covariance is the {INTERVAL_NAMES[kind]} at the estimate")
        return self._result("mle", ties, params, cov, lower, upper, name, self.mle_diagnostics(ties),
                            settings=settings)

    def firth_fit(self, ties: str | None = None) -> FirthFit:
        """The :class:`bayesrank.bt.firth.FirthFit` behind ``penalty="firth"`` (for profile intervals
        of any contrast: :func:`bayesrank.bt.firth.profile_interval`)."""
        ties = ties or self.tie_model_for("mle")
        self.newton_fit(ties)
        return self._firth[ties]

    def profile_intervals(self, ties: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) of each player's score (on Σθ = 0) by profile penalised likelihood (Firth)."""
        from bayesrank.bt.firth import profile_interval

        ties = ties or self.tie_model_for("mle")
        k = len(self.players)
        pi = profile_interval(self.rows, self.firth_fit(ties), np.eye(k), level=self.level, ties=ties, p_value=False)
        return pi.lower, pi.upper

    def _fit_bootstrap(self, ties: str, n_boot: int, seed: int, failed: str, progress: bool) -> LeaderboardFit:
        if failed not in FAILED_POLICIES:
            raise InputError(f"failed must be one of {FAILED_POLICIES}, got {failed!r}")
        if n_boot < 2:
            raise InputError(f"n_boot must be at least 2, got {n_boot}")
        params = self.newton_fit(ties)[0]
        if self.penalty == "firth":
            bf = _firth_bootstrap(self.rows, ties, n_boot, seed, params)
        else:
            bf = self._bootstrap(ties, n_boot, seed, params, failed, progress)
        used = bf.used
        if len(used) < 2 and self.penalty == "firth":
            raise NumericalError(f"{bf.n_failed} of {n_boot} bootstrap resamples leave groups of players never compared "
                                 "with each other (no Firth estimate)")
        if len(used) < 2:
            raise NumericalError(f"{bf.n_failed} of {n_boot} bootstrap replicates have no finite MLE: "
                                 "use failed='ridge' (--bootstrap-failed ridge) or a ridge > 0")
        a = (1 - self.level) / 2
        lo, hi = np.quantile(used, [a, 1 - a], axis=0)
        diag = Diagnostics.resampling(
            "bootstrap", self.mle_diagnostics(ties), n_boot, bf.n_failed, failed,
            no_finite_mle=int(bf.no_finite_mle.sum()), not_converged=int((bf.failed & ~bf.no_finite_mle).sum()),
            replicates_used=int(len(used)),
        )
        r = self.rows
        unit = f"clusters of {r.cluster_name}" if r.cluster is not None else "comparison rows" if r.unit else "comparisons"
        return self._result("bootstrap", ties, params, np.cov(used.T), lo, hi, "bootstrap percentile", diag,
                            draws=used, settings={"n_boot": n_boot, "seed": seed, "failed": failed,
                                                  "resampled": unit})

    def _bootstrap(self, ties: str, n_boot: int, seed: int, start: np.ndarray | None, failed: str,
                   progress: bool) -> BootstrapFits:
        kw: dict[str, Any] = dict(n_boot=n_boot, seed=seed, ridge=self.ridge, start=start, failed=failed,
                                  position=self.position, beta_ridge=self.beta_ridge)
        if not progress:
            return bootstrap_fits(self.rows, ties, **kw)
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("bootstrap refits", total=n_boot)
            return bootstrap_fits(self.rows, ties, progress=lambda n: bar.advance(task, n), **kw)

    def _prior_ridge(self) -> float:
        return 1.0 / self.prior_sigma**2

    def _fit_laplace(self, method: str, ties: str, draws: int, seed: int) -> LeaderboardFit:
        from bayesrank.bt.pymc_model import map_laplace

        lf = map_laplace(self.model_for(ties))
        params = lf.params
        z = two_sided_z(self.level)
        sd = np.sqrt(np.clip(np.diag(lf.cov), 0, None))
        diag = Diagnostics.optimizer(f"newton on the PyMC log-density ({method.upper()})", lf.converged,
                                     lf.gradient_norm, iterations=lf.iterations, status=lf.status)
        kw: dict[str, Any] = {"settings": {"beta_sigma": self.beta_sigma} if self.n_covariates else {}}
        if method == "laplace":
            kw["draws"] = np.random.default_rng(seed).multivariate_normal(params, lf.cov, size=draws, method="eigh")
            kw["settings"].update(draws=draws, seed=seed)
        interval = "Wald (MAP Hessian)" if method == "map" else "Laplace"
        return self._result(method, ties, params, lf.cov, params - z * sd, params + z * sd, interval, diag,
                            plain_ridge=self._prior_ridge(), **kw)

    def _fit_nuts(self, ties: str, draws: int, tune: int, chains: int, seed: int, sampler: str, ppc: bool, loo: bool,
                  progress: bool, target_accept: float | None = None) -> LeaderboardFit:
        if sampler not in SAMPLERS:
            raise InputError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
        from bayesrank.bt.pymc_model import parameter_draws

        if sampler == "density":
            from bayesrank.bt import density

            dens = density.BTDensity(self.rows, ties, self.prior_sigma, self.tie_prior_sigma, self.beta_sigma,
                                     self.position)
            kw: dict[str, Any] = dict(draws=draws, tune=tune, chains=chains, seed=seed, target_accept=target_accept)
            if progress:
                from rich.console import Console

                with Console(stderr=True).status("NUTS") as status:
                    dt = density.sample(dens, progress=status.update, **kw)
            else:
                dt = density.sample(dens, **kw)
            full, names = parameter_draws(dt)
        else:
            from bayesrank.bt.pymc_model import sample_nuts

            model = self.model_for(ties)
            dt = sample_nuts(model, draws=draws, tune=tune, chains=chains, seed=seed, sampler=sampler,
                             progressbar=progress, target_accept=target_accept)
            full, names = parameter_draws(dt)
        a = (1 - self.level) / 2
        lo, hi = np.quantile(full, [a, 1 - a], axis=0)
        extra_diag, ppc_arrays, pending = {}, None, None
        if ppc and not self.rows.unit:
            if sampler == "density" and loo:
                # the replicates' binomial draws release the GIL: drawn in a thread while PSIS-LOO runs (its
                # own seeded generator, so the same numbers as drawn in turn)
                from concurrent.futures import ThreadPoolExecutor

                pool = ThreadPoolExecutor(max_workers=1)
                pending = pool.submit(density.predictive_check, dens, full, chains, seed)
                pool.shutdown(wait=False)
            elif sampler == "density":
                ppc_arrays = density.predictive_check(dens, full, chains, seed=seed)
            else:
                from bayesrank.bt.pymc_model import posterior_predictive_check

                ppc_arrays = posterior_predictive_check(model, dt, self.rows, ties, seed=seed)
        loo_diag = None
        if sampler == "density" and loo:  # the pointwise log-likelihood is PSIS-LOO's input: only with loo
            dt = density.with_log_likelihood(dt, dens, full, chains)
        if loo:
            loo_diag = loo_summary(density.thinned_tree(dt) if sampler == "density" else dt)
        if pending is not None:
            ppc_arrays = pending.result()
        if ppc_arrays is not None:
            extra_diag["ppc"] = {k_: v for k_, v in ppc_arrays.items() if np.ndim(v) == 0}
        if loo_diag is not None:
            extra_diag["loo"] = loo_diag
        diag = Diagnostics.sampler("nuts", dt, var_names=names, **extra_diag)
        settings = {"draws": draws, "tune": tune, "chains": chains, "seed": seed, "sampler": sampler,
                    **({"target_accept": target_accept} if target_accept is not None else {})}
        if self.n_covariates:
            settings["beta_sigma"] = self.beta_sigma
        return self._result("nuts", ties, full.mean(axis=0), np.cov(full.T), lo, hi, "equal-tailed credible", diag,
                            plain_ridge=self._prior_ridge(), draws=full, idata=dt, ppc=ppc_arrays, settings=settings)


PROFILE_INTERVAL = "profile penalised likelihood (Firth)"
PENALTIES = (None, "firth")


def _check_penalty(penalty: str | None, bt: BradleyTerry) -> str | None:
    """``penalty`` (None or "firth") for this model: Firth is the plain model's (ties half or drop)."""
    if penalty not in PENALTIES:
        raise InputError(f"penalty must be None or 'firth', got {penalty!r}")
    if penalty is None:
        return None
    why = [what for what, bad in (("a ridge", bt.ridge > 0), ("style features", bt.rows.n_features > 0),
                                   ("a position effect", bt.position), ("importance weights", bt.rows.weighted),
                                   ("Davidson ties", bt.ties == "davidson"),
                                   ("outcomes split in shares", bt.rows.fractional)) if bad]
    if why:
        raise InputError(f"Firth's bias reduction is implemented for the plain Bradley–Terry model (half-win or "
                         f"dropped ties), not with {', '.join(why)}")
    return penalty


def _firth_newton(rows: PairRows, ties: str) -> tuple[FirthFit, tuple[np.ndarray, np.ndarray, TieModel, NewtonResult]]:
    """Firth's fit and (θ, information, tie model, result) as :meth:`BradleyTerry.newton_fit`
    returns the MLE's (the result's gradient is the modified score, its loss −ℓ*)."""
    from bayesrank.bt.firth import binomial_rows, firth_fit, pieces
    from bayesrank.bt.mle import NewtonResult

    f = firth_fit(rows, ties=ties)
    counts = np.array(rows.counts, dtype=float)
    if ties == "drop":
        counts[:, 2] = 0.0
    y, n = binomial_rows(counts, ties)
    score = pieces(f.theta, rows.i, rows.j, y, n).score
    res = NewtonResult(params=f.theta, loss=-f.value, hessian=f.info, iterations=f.iterations,
                       converged=f.converged, gradient=score)
    return f, (f.theta[0], f.info[0], tie_model(ties), res)


def _firth_bootstrap(rows: PairRows, ties: str, n_boot: int, seed: int, start: np.ndarray | None) -> BootstrapFits:
    """Firth refits of the resampled counts (:func:`bayesrank.bt.mle.bootstrap_counts`), as
    :class:`bayesrank.bt.mle.BootstrapFits`; replicates whose comparison graph is disconnected fail
    (and are excluded)."""
    from bayesrank.bt.firth import firth_fit
    from bayesrank.bt.mle import BootstrapFits, bootstrap_counts

    batch = bootstrap_counts(rows, n_boot, seed)
    if ties == "drop":
        batch[..., 2] = 0.0
    thetas = np.full((n_boot, rows.n_players), np.nan)
    ok = np.zeros(n_boot, dtype=bool)
    for lo in range(0, n_boot, 25):
        f = firth_fit(rows, ties=ties, batch_counts=batch[lo: lo + 25], start=start, strict=False)
        thetas[lo: lo + 25], ok[lo: lo + 25] = f.theta, f.converged
    return BootstrapFits(thetas, ~ok, np.zeros(n_boot, dtype=bool), "exclude")


def loo_summary(dt: Any) -> dict[str, Any]:
    """PSIS-LOO over the model's rows (each aggregated pair, or each battle, is one LOO unit):
    elpd, SE, p_loo, Pareto k (:func:`bayesrank.stats.psis.psis_loo`, ArviZ 1's ``loo`` vectorised;
    r_eff from the posterior's mean ESS). Warns, as ArviZ, when a Pareto k exceeds its threshold
    (min(1 − 1/log10 S, 0.7)); a k that could not be estimated (NaN: the tail's first quartile is its
    minimum) counts as unreliable too, in the warning and in ``n_pareto_k_gt_0.7``."""
    import warnings

    from bayesrank.stats.convergence import stacked
    from bayesrank.stats.psis import psis_loo, relative_eff

    ll_group = dt["log_likelihood"]
    names = list(ll_group.data_vars)
    if len(names) != 1:
        raise ValueError(f"PSIS-LOO needs one log-likelihood variable, got {names}")
    ll = ll_group[names[0]]
    ll = np.asarray(ll.transpose("chain", "draw", ...), dtype=float)
    chains, draws = ll.shape[:2]
    post = dt["posterior"]
    res = psis_loo(ll.reshape(chains * draws, -1), relative_eff(stacked(post, list(post.data_vars))))
    k = res.pareto_k  # NaN where the tail could not be fitted: unreliable, counted and warned as such
    if np.any(~(k <= res.good_k())):
        warnings.warn(f"Estimated shape parameter of Pareto distribution is greater than {res.good_k():.2f} for one "
                      "or more rows: their PSIS-LOO estimate is unreliable", UserWarning, stacklevel=2)
    return {
        "elpd": float(res.elpd),
        "se": float(res.se),
        "p_loo": float(res.p_loo),
        "pareto_k_max": float(np.nanmax(k)),
        "n_pareto_k_gt_0.7": int(np.sum(~(k <= 0.7))),  # NaN k included
    }
