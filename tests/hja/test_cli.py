"""``bayesrank hja`` end to end: JSON matches the Python API."""

import json

import numpy as np

from bayesrank.cli import main
from bayesrank.data import read_comparisons
from bayesrank.hja.model import HJA
from bayesrank.hja.simulate import simulate_panel, to_comparisons_frame


def test_cli_json_matches_python_api(tmp_path, capsys):
    sim = simulate_panel(400, seed=2, n_judges=4, n_items=6, rank=1, heterogeneity=1.5)
    path = tmp_path / "panel.csv"
    to_comparisons_frame(sim.counts).rename(columns={"judge": "annotator"}).to_csv(path, index=False)
    out = tmp_path / "hja.json"
    plot = tmp_path / "judges.png"
    assert main(["hja", str(path), "--judge-col", "annotator", "--rank", "1", "--json", str(out),
                 "--plot", str(plot)]) == 0
    assert "consensus" in capsys.readouterr().out
    d = json.loads(out.read_text())
    assert d["rank"] == 1 and d["converged"] is True and d["method"] == "mle"
    assert set(d["consensus"][0]) == {"item", "score", "lower", "upper", "rank"}
    assert set(d["judges"][0]) == {"judge", "gamma", "lower", "upper", "residual_norm", "flagged"}
    api = HJA(read_comparisons(path, judge="annotator"), rank=1).fit()
    cons = api.consensus()
    np.testing.assert_allclose([c["score"] for c in d["consensus"]], cons.score, atol=1e-12)
    np.testing.assert_allclose([c["upper"] for c in d["consensus"]], cons.upper, atol=1e-12)
    np.testing.assert_allclose([j["gamma"] for j in d["judges"]], api.params.gamma, atol=1e-12)
    # scores are on the truth's scale: consensus recovered within 0.35 with 400 comparisons per judge
    truth = dict(zip(sim.counts.items, sim.truth.mu))
    assert max(abs(c["score"] - truth[c["item"]]) for c in d["consensus"]) < 0.35
    assert plot.stat().st_size > 1000


def test_cli_rank_auto_on_bundled_llmfao(tmp_path):
    out = tmp_path / "auto.json"
    assert main(["hja", "llmfao", "--rank", "auto", "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["rank"] in (0, 1, 2)
    sel = d["info"]["rank_selection"]
    chosen = [r["rank"] for r in sel if r["chosen"]]
    assert chosen == [d["rank"]]
    assert len(d["consensus"]) == 59 and [j["judge"] for j in d["judges"]] == ["crowd", "gpt3", "gpt4"]
