"""Model checking of the Bayesian HJA fit against known truth: the posterior predictive check per judge
flags the judges a rank-0 model misfits; PSIS-LOO and the held-out log-likelihood rule select the same
(true) rank."""

import numpy as np
import pytest

from bayesrank.hja.checks import attach_model_check, loo_compare_ranks, ppc_by_judge
from bayesrank.hja.model import select_rank
from bayesrank.protocol import validate

pytestmark = pytest.mark.slow


def test_ppc_per_judge_flags_misfit_of_rank0_not_rank1(het_panel, nuts_fits):
    truth_resid = np.linalg.norm(het_panel.truth.U, axis=1)
    p0 = ppc_by_judge(nuts_fits[0], seed=1).set_index("judge")
    p1 = ppc_by_judge(nuts_fits[1], seed=1).set_index("judge")
    # rank 0 ignores a residual of singular value 2.5: the judge with the largest true ‖U_k‖ misfits
    worst = het_panel.counts.judges[int(np.argmax(truth_resid))]
    assert p0.loc[worst, "p_value"] < 0.001, p0
    assert p0.loc[worst, "x2_observed"] > 2 * p0.loc[worst, "x2_replicated_mean"]
    # the correctly specified rank-1 model: X²_obs ≈ X²_rep (≈ number of cells) for every judge
    assert (p1.p_value > 0.001).all(), p1
    np.testing.assert_allclose(p1.x2_replicated_mean, p1.n_cells, rtol=0.15)


def test_loo_rank_selection_agrees_with_heldout_selection(het_panel, nuts_fits):
    tab = loo_compare_ranks(nuts_fits)
    assert tab.converged.all(), tab  # the comparison is between converged posteriors
    assert tab.loc[tab.chosen, "rank"].tolist() == [1], tab
    elpd = tab.set_index("rank").elpd_loo
    assert elpd[1] > elpd[0]
    held = select_rank(het_panel.counts, max_rank=2, seed=0)
    assert held.loc[held.chosen, "rank"].tolist() == [1], held


def test_model_check_in_json(nuts_fits):
    fit = nuts_fits[1]
    mc = attach_model_check(fit, seed=0)
    d = fit.to_dict()
    validate(d, "hja")
    assert d["interval"] == "equal-tailed credible" and d["diagnostics"]["kind"] == "sampler"
    assert [r["judge"] for r in d["model_check"]["ppc"]] == list(fit.judges)
    assert d["model_check"]["loo"]["elpd_loo"] == pytest.approx(mc["loo"]["elpd_loo"])
    assert "posterior predictive check per judge" in fit.summary()


def test_cli_nuts_prints_model_check_and_writes_valid_json(tmp_path, capsys, monkeypatch, het_panel, nuts_fits):
    """`bayesrank hja ... --method nuts`: diagnostics line, PPC table and PSIS-LOO printed; JSON with the
    model check validates. The session's NUTS fit stands in for the sampler (no second compilation)."""
    import json

    from bayesrank.cli import main
    from bayesrank.hja.model import HJA
    from bayesrank.hja.simulate import to_comparisons_frame

    path = tmp_path / "panel.csv"
    to_comparisons_frame(het_panel.counts).to_csv(path, index=False)
    calls = []

    def fake_fit(self, method="mle", **kw):
        calls.append((method, kw))
        return nuts_fits[1]

    monkeypatch.setattr(HJA, "fit", fake_fit)
    import rich.progress

    shown, add_task = [], rich.progress.Progress.add_task  # the long fit shows a rich progress line
    monkeypatch.setattr(rich.progress.Progress, "add_task",
                        lambda self, description, *a, **k: shown.append(description) or add_task(self, description, *a, **k))
    out = tmp_path / "nuts.json"
    assert main(["hja", str(path), "--rank", "1", "--method", "nuts", "--draws", "300", "--json", str(out)]) == 0
    assert calls == [("nuts", {"draws": 300, "tune": 300, "chains": 2, "sampler": None})]
    assert shown == ["HJA NUTS: compiling the model, then 2 chains × 300 draws after 300 tuning steps"]
    printed = capsys.readouterr().out
    assert "HJA NUTS (nutpie" in printed and "posterior predictive check per judge" in printed
    assert "PSIS-LOO over (judge, pair) cells" in printed
    d = json.loads(out.read_text())
    validate(d, "hja")
    assert d["method"] == "nuts" and set(d["model_check"]) == {"ppc", "loo"}
