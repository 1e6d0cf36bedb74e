"""`bayesrank fit` and `bayesrank demo` end to end: JSON contents equal the API's numbers; bad input exits 2."""

import json

import numpy as np
import pytest

from bayesrank.bt import BradleyTerry
from bayesrank.cli import main
from bayesrank.datasets import path


def test_fit_json_matches_api(tmp_path, capsys):
    out = tmp_path / "fit.json"
    rc = main(["fit", "sports/nba_games_2023_24_tidy.csv", "--ci", "sandwich", "--json", str(out)])
    assert rc == 0
    doc = json.loads(out.read_text())
    assert {"method", "ties", "n_comparisons", "n_excluded", "players"} <= set(doc)
    assert doc["method"] == "mle" and doc["ties"] == "half" and doc["n_comparisons"] == 1231
    api = BradleyTerry(path("sports/nba_games_2023_24_tidy.csv")).fit("mle", ci="sandwich").table()
    got = {p["name"]: p for p in doc["players"]}
    for row in api.itertuples():
        assert got[row.player]["score"] == pytest.approx(row.score, abs=1e-12)
        assert got[row.player]["lower"] == pytest.approx(row.lower, abs=1e-12)
        assert got[row.player]["rank"] == row.rank
    assert "Boston Celtics" in capsys.readouterr().out


def test_fit_drop_ties_counts_exclusions(tmp_path):
    out = tmp_path / "fit.json"
    assert main(["fit", "llmfao/crowd-comparisons.csv", "--ties", "drop", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    import pandas as pd

    raw = pd.read_csv(path("llmfao/crowd-comparisons.csv"))
    n_ties = int((raw["winner"] == "tie").sum())
    assert doc["n_excluded"] == n_ties > 0
    assert doc["exclusions"]["by_reason"]["tie (ties='drop')"] == n_ties


def test_fit_bad_input_exits_2_with_message(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("model_a,model_b,winner\nx,y,model_a\nx,x,model_b\n")
    assert main(["fit", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "self-comparison" in err and "rows [1]" in err
    # with --exclude-invalid the row is dropped and counted... leaving x vs y only (no finite MLE)
    assert main(["fit", str(bad), "--exclude-invalid", "--ridge", "0.1", "--json", str(tmp_path / "o.json")]) == 0
    doc = json.loads((tmp_path / "o.json").read_text())
    assert doc["n_excluded"] == 1
    assert main(["fit", str(tmp_path / "missing.csv")]) == 2


def test_fit_no_finite_mle_is_explained(capsys):
    assert main(["fit", "tennis/atp_matches_2024.csv"]) == 3  # numerical failure: no finite MLE
    err = capsys.readouterr().err
    assert "never lost" in err and "ridge" in err


def test_demo_runs_without_nuts(tmp_path):
    out = tmp_path / "demo.json"
    assert main(["demo", "--dataset", "nba", "--no-nuts", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    methods = [f["method"] for f in doc["fits"]]
    assert methods == ["mle", "sandwich", "bootstrap", "map", "laplace"]
    # MAP with the default prior is close to, but not equal to, the MLE; Kendall tau near 1
    assert doc["agreement"]["map"]["max_abs_score_diff"] < 0.05
    assert doc["agreement"]["bootstrap"]["kendall_tau"] == 1.0
    assert np.isfinite(doc["agreement"]["laplace"]["max_abs_width_diff"])


def test_fit_elo_scale_with_anchor(capsys):
    assert main(["fit", "sports/nba_games_2023_24_tidy.csv", "--scale", "elo", "--anchor", "Boston Celtics=1500", "--top", "2"]) == 0
    text = capsys.readouterr().out
    assert "1500.000" in text
    fit = BradleyTerry(path("sports/nba_games_2023_24_tidy.csv")).fit("mle")
    t = fit.table(scale="elo", anchor=("Boston Celtics", 1500.0)).set_index("player")
    logit = fit.table().set_index("player")
    # Elo = 400/ln10 * theta + const, anchored player at 1500
    assert t.loc["Boston Celtics", "score"] == pytest.approx(1500.0)
    diff = t.loc["Denver Nuggets", "score"] - t.loc["Boston Celtics", "score"]
    assert diff == pytest.approx(400 / np.log(10) * (logit.loc["Denver Nuggets", "score"] - logit.loc["Boston Celtics", "score"]))
    assert main(["fit", "sports/nba_games_2023_24_tidy.csv", "--scale", "elo", "--anchor", "Nobody=1"]) == 2
