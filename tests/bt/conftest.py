"""Shared fixtures for the Bradley-Terry reference tests (real data, fitted once per session)."""

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

# Multi-threaded OpenBLAS is 10-15x SLOWER on this shared 2-core machine (threads spin against each
# other and against other jobs); the reference fits are small, so one BLAS thread is fastest.
threadpool_limits(limits=1, user_api="blas")

from bayesrank.data import read_comparisons
from bayesrank.datasets import path


@pytest.fixture(scope="session")
def llmfao_raw():
    return pd.read_csv(path("llmfao/crowd-comparisons.csv"))


@pytest.fixture(scope="session")
def llmfao(llmfao_raw):
    return read_comparisons(llmfao_raw)


@pytest.fixture(scope="session")
def llmfao_counts(llmfao):
    return llmfao.aggregate()


@pytest.fixture(scope="session")
def nba_counts():
    return read_comparisons(path("sports/nba_games_2023_24_tidy.csv")).aggregate()


@pytest.fixture(scope="session")
def arena_counts():
    return read_comparisons(path("arena/chatbotarena_20240814.json")).aggregate()


def design_rows(raw_left, raw_right, players):
    """±1 design matrix (N, K): +1 for the left player, −1 for the right player."""
    idx = pd.Index(players)
    a = idx.get_indexer(raw_left)
    b = idx.get_indexer(raw_right)
    n, k = len(a), len(players)
    x = np.zeros((n, k))
    x[np.arange(n), a] = 1.0
    x[np.arange(n), b] = -1.0
    return x
