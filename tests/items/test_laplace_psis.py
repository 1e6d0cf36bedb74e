"""The Laplace + PSIS fit of the collapsed Rasch model (bayesrank.items.irt.fit_laplace_psis), NUTS's
stand-in above ``NUTS_MAX_MODELS``: on small benchmarks, where the Laplace approximation's θ means
are visibly off NUTS's, the PSIS-resampled draws are close to NUTS; a proposal too narrow for the
posterior is caught by k̂; a review above the limit runs it and says so."""

import json

import numpy as np

from bayesrank.items import irt
from bayesrank.items.data import ItemScores

from .conftest import long_frame, rasch_matrix


def _max_mean_error(fit, ref):
    return float(np.abs(fit.draws.mean(axis=0) - ref.draws.mean(axis=0)).max() / ref.draws.std(axis=0).min())


def test_psis_corrects_the_laplace_means_towards_nuts():
    lap_err, psis_err = [], []
    for seed in (1, 2, 3, 4):
        d = ItemScores.from_long(long_frame(rasch_matrix(5, 40, seed=seed, sigma=1.5)))
        st = irt.sufficient(d)
        lap = irt.fit_laplace(st, seed=seed)
        fit = irt.fit_laplace_psis(st, seed=seed, laplace=lap)
        assert fit.diagnostics.converged, fit.diagnostics.messages
        assert fit.method == "laplace + PSIS" and fit.draws.shape == (irt.PSIS_DRAWS, 5)
        nuts = irt.fit_nuts(d, stats=st, laplace=lap, draws=2000, chains=4, loo=False, seed=seed)
        assert nuts.diagnostics.converged
        lap_err.append(_max_mean_error(lap, nuts))
        psis_err.append(_max_mean_error(fit, nuts))
        # posterior SDs within 10% of NUTS's (MC error of an SD with ESS ≥ 2,000: ~2%)
        np.testing.assert_allclose(fit.draws.std(axis=0), nuts.draws.std(axis=0), rtol=0.1)
    # the Laplace means are 0.08–0.23 NUTS SDs off on these benchmarks; the corrected ones at most 0.15
    # (MC error of both means ≈ 0.02 SD) and on average less than half the Laplace error
    assert max(psis_err) < 0.15, psis_err
    assert np.mean(psis_err) < 0.5 * np.mean(lap_err), (psis_err, lap_err)


def test_a_proposal_too_narrow_for_the_posterior_is_not_converged():
    from dataclasses import replace

    d = ItemScores.from_long(long_frame(rasch_matrix(8, 300, seed=6)))
    st = irt.sufficient(d)
    lap = irt.fit_laplace(st)
    good = irt.fit_laplace_psis(st, laplace=lap)
    assert good.diagnostics.converged and good.extra["psis"].pareto_k < 0.5
    narrow = replace(lap, extra={**lap.extra, "cov": lap.extra["cov"] * 0.2})  # proposal SDs 0.45 × the posterior's
    bad = irt.fit_laplace_psis(st, laplace=narrow)
    # Gaussian target, proposal covariance 0.2 × its own: the weights' tail shape is 1 − 0.2 = 0.8 > 0.7
    assert bad.extra["psis"].pareto_k > 0.7
    assert not bad.diagnostics.converged
    assert any("Pareto k̂" in m for m in bad.diagnostics.messages)
    assert bad.diagnostics.to_dict()["extra"]["psis"]["reliable"] is False


def test_a_review_above_the_nuts_limit_uses_laplace_psis(tmp_path, monkeypatch):
    from bayesrank.cli import main

    monkeypatch.setattr(irt, "NUTS_MAX_MODELS", 5)
    p = tmp_path / "long.csv"
    long_frame(rasch_matrix(6, 300, seed=3)).to_csv(p, index=False)
    out = tmp_path / "r.json"
    assert main(["review", str(p), "--json", str(out), "--md", str(tmp_path / "r.md")]) == 0
    rep = json.loads(out.read_text())
    model = rep["sections"]["items_model"]
    assert model["method"] == "laplace + PSIS"
    psis = model["diagnostics"]["extra"]["psis"]
    assert psis["reliable"] and psis["pareto_k"] < 0.7 and psis["n_draws"] == irt.PSIS_DRAWS
    md = (tmp_path / "r.md").read_text()
    assert "NUTS is not run above 5 models" in md and "Pareto k̂" in md
    assert rep["diagnostics"]["converged"]
