"""bt.likelihood's numpy expit / log_expit / logsumexp (no scipy.special import on the MLE path)
equal scipy.special's to rounding, including far tails."""

from __future__ import annotations

import numpy as np
import scipy.special as sc

from bayesrank.bt.likelihood import expit, log_expit, logsumexp


def test_expit_and_log_expit_equal_scipy_over_the_whole_range():
    x = np.concatenate([np.linspace(-745, 745, 20001), [0.0, -0.0, 1e-300, -1e-300, 36.7, -36.7]])
    np.testing.assert_allclose(expit(x), sc.expit(x), rtol=4e-16 * 8, atol=1e-300)  # below: underflow
    np.testing.assert_allclose(log_expit(x), sc.log_expit(x), rtol=4e-16 * 8, atol=1e-300)


def test_logsumexp_equals_scipy_on_batched_logits():
    rng = np.random.default_rng(3)
    a = rng.normal(scale=30.0, size=(7, 50, 3))
    a[0, 0] = [-np.inf, 0.0, 1.0]
    np.testing.assert_allclose(logsumexp(a, axis=-1), sc.logsumexp(a, axis=-1), rtol=1e-14, atol=0)
