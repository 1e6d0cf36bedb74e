"""The claims' half-win posterior by Laplace + PSIS (bayesrank.review.fits.half_win_posterior):
on the bundled LMArena votes it equals NUTS on the same half-win density (means within 0.1 NUTS
SDs, SDs within 10%) with a reliable k̂; a failed PSIS check falls back to NUTS and says why."""

from __future__ import annotations

import numpy as np
import pytest

from bayesrank.bt import BradleyTerry
from bayesrank.datasets import path
from bayesrank.review.fits import half_win_posterior, nuts_fit


@pytest.fixture(scope="module")
def half():
    return BradleyTerry(path("arena/chatbotarena_20240814.json"), ties="half")


def test_half_win_psis_equals_nuts_on_the_arena(half):
    fit = half_win_posterior(half, draws=1000, chains=4, seed=0)
    assert fit.method == "laplace + PSIS" and fit.diagnostics.converged
    psis = fit.diagnostics.extra["psis"]
    assert psis["reliable"] and psis["pareto_k"] <= 0.7 and psis["ess"] > 1000
    ref = nuts_fit(half, draws=1000, chains=4, seed=1, ppc=False, loo=False)
    assert ref.diagnostics.converged
    sd = ref.draws.std(axis=0)
    assert np.max(np.abs(fit.draws.mean(axis=0) - ref.draws.mean(axis=0)) / sd) < 0.1
    assert np.max(np.abs(fit.draws.std(axis=0) / sd - 1)) < 0.10
    assert list(fit.players) == list(ref.players)


def test_a_failed_psis_check_falls_back_to_nuts(half, monkeypatch):
    import bayesrank.stats.laplace_psis as lp

    monkeypatch.setattr(lp, "khat_threshold", lambda n: -np.inf)  # no k̂ passes
    fit = half_win_posterior(half, draws=200, chains=2, seed=0)
    assert fit.method == "nuts"
    assert fit.settings["laplace_psis"]["reliable"] is False
    assert "PSIS check" in fit.settings["laplace_psis"]["why_nuts"]
