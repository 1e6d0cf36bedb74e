"""Real posterior draws shared by the ArviZ comparisons: nutpie NUTS on the bundled Chatbot Arena
pair counts (Davidson ties, the hand-written density), with the pairs' log-likelihood."""

import numpy as np
import pytest


@pytest.fixture(scope="session")
def arena_draws():
    """(DataTree with posterior and log_likelihood, parameter names) of 2 chains × 500 draws."""
    from bayesrank.bt import density
    from bayesrank.bt.api import BradleyTerry
    from bayesrank.bt.pymc_model import parameter_draws
    from bayesrank.data import read_comparisons
    from bayesrank.datasets import path

    bt = BradleyTerry(read_comparisons(path("arena/chatbotarena_20240814.json")))
    dens = density.BTDensity(bt.rows, "davidson", bt.prior_sigma, bt.tie_prior_sigma, bt.beta_sigma, bt.position)
    dt = density.sample(dens, draws=500, tune=300, chains=2, seed=1)
    full, names = parameter_draws(dt)
    return density.with_log_likelihood(dt, dens, full, 2), names


def tree(x: np.ndarray, ll: np.ndarray | None = None):
    """A DataTree of draws x (P, chains, draws) as one variable ``v`` (and a log-likelihood (chains, draws, N))."""
    import xarray as xr

    groups = {"posterior": xr.Dataset({"v": (("chain", "draw", "p"), x.transpose(1, 2, 0))})}
    if ll is not None:
        groups["log_likelihood"] = xr.Dataset({"y": (("chain", "draw", "obs"), ll)})
    return xr.DataTree.from_dict(groups)
