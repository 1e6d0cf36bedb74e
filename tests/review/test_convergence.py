"""Converged or not a verdict: an unconverged NUTS run is re-run with more tuning and a higher target
acceptance; if it still fails its checks, the claims it answers get the verdict "not converged"."""

from types import SimpleNamespace

import pytest

from bayesrank.review.fits import RETRY_TARGET_ACCEPT, RETRY_TUNE_FACTOR, nuts_fit


class _Model:
    """A model whose NUTS runs converge from the ``converge_on``-th call on; records the calls."""

    def __init__(self, converge_on):
        self.calls, self.converge_on = [], converge_on

    def fit(self, method, **kw):
        self.calls.append((method, kw))
        ok = len(self.calls) >= self.converge_on
        diag = SimpleNamespace(converged=ok, line=lambda ok=ok: "converged" if ok else "max R-hat 1.05 > 1.01")
        return SimpleNamespace(diagnostics=diag, settings={})


def test_a_failed_run_is_rerun_with_more_tuning_once():
    m = _Model(converge_on=2)
    fit = nuts_fit(m, draws=500, chains=4, seed=3)
    assert [c[0] for c in m.calls] == ["nuts", "nuts"]
    assert m.calls[0][1] == {"draws": 500, "tune": 500, "chains": 4, "seed": 3}
    assert m.calls[1][1] == {"draws": 500, "tune": RETRY_TUNE_FACTOR * 500, "chains": 4, "seed": 3,
                             "target_accept": RETRY_TARGET_ACCEPT}
    assert fit.settings["rerun"] == {"first_run": "max R-hat 1.05 > 1.01", "tune": 2000, "target_accept": 0.95,
                                     "converged": True}
    m = _Model(converge_on=1)
    assert nuts_fit(m, draws=100, chains=2, seed=0).settings == {} and len(m.calls) == 1
    m = _Model(converge_on=9)
    assert nuts_fit(m, draws=100, chains=2, seed=0).settings["rerun"]["converged"] is False and len(m.calls) == 2


@pytest.mark.slow
def test_claims_on_an_unconverged_posterior_get_no_verdict():
    """NBA with 2 chains × 20 draws: the ESS check (100 per chain) cannot pass, before or after the
    re-run, so the significant claim is "not converged" and the insignificant one stays "unsupported"."""
    from bayesrank.datasets import path
    from bayesrank.review.pairwise_report import review_pairwise

    rep = review_pairwise(path("nba"), kind="pairwise", claims=["Boston Celtics>Washington Wizards", "top1"],
                          level=0.95, fragile_below=0.01, fast=False, seed=0, budget=5, format="auto",
                          exclude_invalid=False, draws=20, chains=2)
    nuts = rep.results["fits"]["nuts"]
    assert not nuts.diagnostics.converged and nuts.settings["rerun"]["tune"] == 80
    far, top1 = rep.claims
    assert far.frequentist["supported"] and far.verdict == "not converged"
    assert any("did not converge" in n for n in far.notes) and "did not converge" in far.reason
    assert not top1.frequentist["supported"] and top1.verdict == "unsupported"
    assert rep.verdict_counts()["not converged"] == 1
    assert not rep.diagnostics.converged
