"""AuditReport speaks the package's result protocol: table, summary, diagnostics, plot, JSON."""

import json

import numpy as np
import pytest
from scipy.special import expit

from bayesrank.influence import AuditReport, audit
from bayesrank.protocol import Result


@pytest.fixture(scope="module")
def report(nba):
    return audit(nba, "top1", ("drop", "flip"))


def test_table_and_access(report, nba):
    assert isinstance(report, Result) and isinstance(report, AuditReport) and report.schema == "audit"
    t = report.table()
    assert t["action"].tolist() == ["drop", "flip"]
    for row in t.itertuples():
        res = report[row.action]
        assert (row.broken, row.verified, row.budget, row.n_actions) == (res.broken, res.verified, res.budget,
                                                                      len(res.actions))
        assert row.fraction == pytest.approx(res.actions["count"].sum() / nba.counts.counts.sum())
    assert report.leader == str(nba.players[np.argmax(nba.theta)])


def test_diagnostics_report_the_base_newton_fit(report, nba):
    """Gradient norm of the half-win BT log-likelihood at θ̂, written out independently
    (per pair: n σ(d) − wins_a − ties/2, scattered to both players), and the refit count."""
    c = nba.counts
    d = nba.theta[c.i] - nba.theta[c.j]
    g_pair = c.counts.sum(axis=1) * expit(d) - c.counts[:, 0] - 0.5 * c.counts[:, 2]
    g = np.zeros(nba.n_players)
    np.add.at(g, c.i, g_pair)
    np.add.at(g, c.j, -g_pair)
    diag = report.diagnostics
    assert diag.kind == "optimizer" and diag.converged and diag.optimizer_status.startswith("Newton step below")
    assert diag.gradient_norm == pytest.approx(np.linalg.norm(g - g.mean()), abs=1e-12)
    assert diag.gradient_norm < 1e-8
    assert diag.extra["exact_refits"] == sum(r.n_refits for r in report.audits.values())
    assert diag.extra["verification_refits"] == 2 and diag.extra["unverified_breaks"] == 0


def test_summary_plot_and_json(report, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    text = report.summary()
    assert report.leader in text and "R_top1" in text and str(report["flip"].budget) in text
    fig = report.plot()
    ax_budget, ax_infl = fig.axes
    labels = [line.get_label() for line in ax_budget.get_lines()]
    assert {"drop (refit)", "flip (refit)", "drop (1sN predicted)", "flip (1sN predicted)"} <= set(labels)
    refit_line = ax_budget.get_lines()[labels.index("flip (refit)")]
    np.testing.assert_array_equal(refit_line.get_xdata(), report["flip"].curve["budget"])
    assert sum(p.get_height() for p in ax_infl.patches) == pytest.approx(report.n_comparisons)  # every match
    d = json.loads(report.to_json(tmp_path / "r.json"))
    assert d["audits"]["flip"]["budget"] == report["flip"].budget
