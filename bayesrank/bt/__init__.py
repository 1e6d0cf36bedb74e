"""Bradley-Terry leaderboards: Newton MLE on pair counts, the PyMC twin (MAP, Laplace, NUTS), bootstrap."""

from bayesrank.bt.api import METHODS, BradleyTerry
from bayesrank.bt.likelihood import TIE_MODELS, tie_model
from bayesrank.bt.mle import constrained_covariance, fit_newton, newton, sandwich_covariance
from bayesrank.bt.pymc_model import DEFAULT_PRIOR_SIGMA, build_bt_model, map_laplace
from bayesrank.bt.result import LeaderboardFit, ci_aware_rank, compare, to_elo

__all__ = [
    "BradleyTerry", "METHODS", "TIE_MODELS", "LeaderboardFit", "compare", "ci_aware_rank", "to_elo",
    "tie_model", "fit_newton", "newton", "constrained_covariance", "sandwich_covariance",
    "build_bt_model", "map_laplace", "DEFAULT_PRIOR_SIGMA",
]
