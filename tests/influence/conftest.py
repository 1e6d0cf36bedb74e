import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from bayesrank.data import finite_core, read_comparisons
from bayesrank.datasets import path
from bayesrank.influence.state import BTState


@pytest.fixture(scope="session", autouse=True)
def _single_blas_thread():
    # small dense algebra (K ≤ 220): threaded BLAS on a shared 2-core machine is 50× slower
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="session")
def nba():
    return BTState.fit(read_comparisons(path("sports/nba_games_2023_24_tidy.csv")).aggregate())


@pytest.fixture(scope="session")
def llmfao():
    return BTState.fit(read_comparisons(path("llmfao/crowd-comparisons.csv")).aggregate())


@pytest.fixture(scope="session")
def atp():
    comps = finite_core(read_comparisons(path("tennis/atp_matches_2024.csv")), min_matches=1)
    return BTState.fit(comps.aggregate())


def _sample(cand, n, seed=0):
    rng = np.random.default_rng(seed)
    return cand.take(np.sort(rng.choice(len(cand), min(n, len(cand)), replace=False)))


@pytest.fixture(scope="session")
def sample():
    """``sample(candidates, n, seed)``: n candidates drawn without replacement."""
    return _sample
