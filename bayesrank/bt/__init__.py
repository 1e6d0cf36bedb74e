"""Bradley-Terry leaderboards: one core (Newton MLE on pair rows with Fisher, sandwich and
cluster-robust covariances, bootstrap), one estimator for every model (plain, position effect,
style features, clusters, weights; half, drop and Davidson ties) and its PyMC twin (MAP, Laplace, NUTS).

Names are imported lazily (PEP 562): ``from bayesrank.bt import BradleyTerry`` loads the MLE code
only; PyMC is loaded when a PyMC fit runs or ``build_bt_model`` / ``map_laplace`` is used."""

from bayesrank._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "BradleyTerry": "api", "METHODS": "api",
    "TIE_MODELS": "likelihood", "tie_model": "likelihood",
    "LeaderboardFit": "result", "Contrast": "result", "compare": "result", "rank_ci": "result",
    "rank_ub": "result", "significantly_ahead": "result", "to_elo": "result",
    "fit_newton": "mle", "newton": "mle", "constrained_covariance": "mle", "sandwich_covariance": "mle",
    "covariance": "mle", "default_interval": "mle", "bootstrap_fits": "mle",
    "build_bt_model": "pymc_model", "map_laplace": "pymc_model", "DEFAULT_PRIOR_SIGMA": "pymc_model",
    "simulate_style_battles": "simulate", "simulate_tournament": "simulate",
})
