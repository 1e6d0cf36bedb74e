"""Kendall τ-b (bayesrank.stats.kendall) against scipy.stats.kendalltau: the same value to the last
bit, with and without ties, and NaN where scipy gives NaN."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from bayesrank.stats.kendall import kendall_tau_b


def test_equals_scipy_bit_for_bit_with_and_without_ties():
    rng = np.random.default_rng(20261202)
    for rep in range(400):
        n = int(rng.integers(2, 150))
        x = rng.normal(size=n)
        y = x + rng.normal(size=n) * rng.uniform(0.0, 3.0)
        if rep % 3 == 0:
            x = np.round(x, 1)  # ties in x
        if rep % 4 == 0:
            y = np.round(y)  # ties in y
        assert kendall_tau_b(x, y) == kendalltau(x, y).statistic


@pytest.mark.parametrize("x,y", [([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]), ([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]),
                                 ([1.0, np.nan, 3.0], [1.0, 2.0, 3.0])])
def test_nan_where_scipy_gives_nan(x, y):
    assert np.isnan(kendalltau(x, y).statistic)
    assert np.isnan(kendall_tau_b(x, y))


def test_same_order_is_one_and_reversed_minus_one():
    x = np.arange(10.0)  # 45 / sqrt(45) / sqrt(45): 1 up to the last bit, as scipy
    assert kendall_tau_b(x, x) == kendalltau(x, x).statistic == pytest.approx(1.0, abs=1e-15)
    assert kendall_tau_b(x, -x) == kendalltau(x, -x).statistic == pytest.approx(-1.0, abs=1e-15)
