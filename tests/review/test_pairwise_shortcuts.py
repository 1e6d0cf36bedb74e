"""Shortcuts of the pairwise review's claim arithmetic on large boards, against the plain formulas:
the Bayesian margin of a set-against-set claim and the sd of a few contrasts."""

import numpy as np

from bayesrank.review.pairwise import margins
from bayesrank.stats.ranksets import contrast_sd, contrast_sd_at


def test_set_against_set_margin_equals_every_difference():
    rng = np.random.default_rng(0)
    draws = rng.normal(size=(500, 40))
    top, rest = [3, 17, 5], [i for i in range(40) if i not in (3, 17, 5)]
    product = [(a, b) for a in top for b in rest]
    plain = np.array([[d[a] - d[b] for a, b in product] for d in draws]).min(axis=1)
    np.testing.assert_array_equal(margins(draws, product), plain)
    chain = [(0, 1), (1, 2), (2, 3)]  # not a product: the differences themselves
    np.testing.assert_array_equal(margins(draws, chain), np.min([draws[:, a] - draws[:, b] for a, b in chain], axis=0))
    repeated = [(0, 1), (0, 1), (0, 2), (0, 3)]  # 4 pairs, 1 × 3 sets: not a product either
    np.testing.assert_array_equal(margins(draws, repeated),
                                  np.min([draws[:, a] - draws[:, b] for a, b in repeated], axis=0))


def test_contrast_sd_at_equals_the_matrix():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(60, 30))
    cov = np.cov(x.T)
    cov[0, 1] += 1e-15  # symmetric only up to rounding
    a, b = rng.integers(0, 30, 50), rng.integers(0, 30, 50)
    np.testing.assert_array_equal(contrast_sd_at(cov, a, b), contrast_sd(cov)[a, b])
