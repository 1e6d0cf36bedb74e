"""``bayesrank hja`` end to end: JSON validated against bayesrank/schemas/hja.json and equal to the Python API."""

import json

import jsonschema
import numpy as np
import pytest

from bayesrank.cli import main
from bayesrank.data import read_comparisons
from bayesrank.hja.model import HJA
from bayesrank.hja.simulate import simulate_panel, to_comparisons_frame
from bayesrank.protocol import validate


@pytest.fixture(scope="module")
def panel_csv(tmp_path_factory):
    sim = simulate_panel(400, seed=2, n_judges=4, n_items=6, rank=1, heterogeneity=1.5)
    path = tmp_path_factory.mktemp("hja") / "panel.csv"
    to_comparisons_frame(sim.counts).rename(columns={"judge": "annotator"}).to_csv(path, index=False)
    return sim, path


def test_cli_json_is_schema_valid_and_matches_python_api(tmp_path, capsys, panel_csv):
    sim, path = panel_csv
    out = tmp_path / "hja.json"
    plots = tmp_path / "plots"
    assert main(["hja", str(path), "--judge-col", "annotator", "--rank", "1", "--level", "0.9", "--json", str(out),
                 "--plots", str(plots)]) == 0
    printed = capsys.readouterr().out
    assert "consensus" in printed and "HJA constrained MLE: converged" in printed
    d = json.loads(out.read_text())
    validate(d, "hja")  # the file the CLI wrote, validated independently of to_json
    assert d["schema"] == "hja" and d["rank"] == 1 and d["method"] == "mle" and d["level"] == 0.9
    assert d["diagnostics"]["kind"] == "optimizer" and d["diagnostics"]["converged"] is True
    assert d["diagnostics"]["gradient_norm"] <= 1e-6
    assert d["interval"] == "Wald (expected information)"
    api = HJA(read_comparisons(path, judge="annotator"), rank=1, level=0.9).fit()
    cons = api.table()
    assert [c["player"] for c in d["consensus"]] == cons.player.tolist()
    np.testing.assert_allclose([c["score"] for c in d["consensus"]], cons.score, atol=1e-12)
    np.testing.assert_allclose([c["upper"] for c in d["consensus"]], cons.upper, atol=1e-12)
    assert [c["rank_ci"] for c in d["consensus"]] == cons.rank_ci.tolist()
    np.testing.assert_allclose([j["gamma"] for j in d["judges"]], api.params.gamma, atol=1e-12)
    # the interval is at level 0.9: half-width = 1.645 se
    c0 = d["consensus"][0]
    assert (c0["upper"] - c0["lower"]) / 2 == pytest.approx(1.6448536 * c0["se"], rel=1e-6)
    # scores are on the truth's scale: consensus recovered within 0.35 with 400 comparisons per judge
    truth = dict(zip(sim.counts.items, sim.truth.mu))
    assert max(abs(c["score"] - truth[c["player"]]) for c in d["consensus"]) < 0.35
    assert (plots / "hja_judges.png").stat().st_size > 1000


def test_schema_rejects_wrong_shapes(panel_csv):
    """The schema is precise: a renamed column, a bad enum or a missing field is rejected."""
    _, path = panel_csv
    d = json.loads(HJA(read_comparisons(path, judge="annotator"), rank=1).fit().to_json())
    bad = json.loads(json.dumps(d))
    bad["consensus"][0]["item"] = bad["consensus"][0].pop("player")
    with pytest.raises(jsonschema.ValidationError):
        validate(bad, "hja")
    bad = json.loads(json.dumps(d))
    bad["method"] = "bootstrap"
    with pytest.raises(jsonschema.ValidationError):
        validate(bad, "hja")
    bad = json.loads(json.dumps(d))
    del bad["judges"]
    with pytest.raises(jsonschema.ValidationError):
        validate(bad, "hja")
    bad = json.loads(json.dumps(d))
    bad["judges"][0]["flagged"] = "yes"
    with pytest.raises(jsonschema.ValidationError):
        validate(bad, "hja")


def test_cli_warns_when_not_converged(tmp_path, capsys, panel_csv, monkeypatch):
    """A fit whose optimizer does not converge is reported as a warning and in the JSON."""
    from bayesrank.hja import mle

    _, path = panel_csv
    real = mle.fit_constrained_mle

    def one_sweep(*args, **kw):
        return real(*args, **{**kw, "max_iter": 1, "polish": False, "warn": False})

    monkeypatch.setattr("bayesrank.hja.model.fit_constrained_mle", one_sweep)
    out = tmp_path / "nc.json"
    assert main(["hja", str(path), "--judge-col", "annotator", "--rank", "1", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "warning:" in printed and "NOT converged" in printed
    d = json.loads(out.read_text())
    assert d["diagnostics"]["converged"] is False and d["diagnostics"]["gradient_norm"] > 1e-6


def test_cli_rank_auto_on_bundled_llmfao(tmp_path):
    out = tmp_path / "auto.json"
    assert main(["hja", "llmfao", "--rank", "auto", "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    validate(d, "hja")
    # the fitted rank is the one the printed selection table chose, and on LLMFAO (log-loss decreasing in r)
    # that is the rank with the smallest held-out log-loss
    sel = d["rank_selection"]
    assert [r["rank"] for r in sel if r["chosen"]] == [d["rank"]]
    assert d["rank"] == min(sel, key=lambda r: r["heldout_logloss"])["rank"]
    assert len(d["consensus"]) == 59 and [j["judge"] for j in d["judges"]] == ["crowd", "gpt3", "gpt4"]
