"""`bayesrank fit` and `bayesrank demo` end to end: JSON validates against the shipped schema and
its contents equal the API's numbers; bad input exits 2, no finite MLE exits 3; failed
convergence checks are warned about."""

import json

import numpy as np
import pytest
from jsonschema import Draft202012Validator, ValidationError

from bayesrank.bt import BradleyTerry
from bayesrank.cli import main
from bayesrank.datasets import path
from bayesrank.protocol import _registry, schema


def _validate(doc):
    Draft202012Validator(schema("fit"), registry=_registry()).validate(doc)


def test_fit_json_matches_api(tmp_path, capsys):
    out = tmp_path / "fit.json"
    rc = main(["fit", "sports/nba_games_2023_24_tidy.csv", "--ci", "sandwich", "--json", str(out)])
    assert rc == 0
    doc = json.loads(out.read_text())
    _validate(doc)
    assert doc["schema"] == "fit" and doc["method"] == "mle" and doc["ties"] == "half"
    assert doc["n_comparisons"] == 1231 and doc["interval"] == "sandwich"
    assert doc["diagnostics"]["kind"] == "optimizer" and doc["diagnostics"]["converged"] is True
    assert doc["diagnostics"]["gradient_norm"] < 1e-8
    api = BradleyTerry(path("sports/nba_games_2023_24_tidy.csv")).fit("mle", ci="sandwich").table()
    got = {p["player"]: p for p in doc["players"]}
    assert len(got) == len(api) == 30
    for row in api.itertuples():
        for col in ("score", "lower", "upper"):
            assert got[row.player][col] == pytest.approx(getattr(row, col), abs=1e-12)
        for col in ("rank", "rank_ci", "rank_ub"):
            assert got[row.player][col] == getattr(row, col)
    assert "Boston Celtics" in capsys.readouterr().out


def test_fit_schema_rejects_malformed_records(tmp_path):
    """The schema is not permissive: the old `name` key, a missing rank_ci or an unknown method fail."""
    out = tmp_path / "fit.json"
    assert main(["fit", "sports/nba_games_2023_24_tidy.csv", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    _validate(doc)
    bad = json.loads(out.read_text())
    bad["players"][0]["name"] = bad["players"][0].pop("player")
    missing = json.loads(out.read_text())
    del missing["players"][3]["rank_ci"]
    method = dict(doc, method="sandwich")
    no_diag = {k: v for k, v in doc.items() if k != "diagnostics"}
    for broken in (bad, missing, method, no_diag):
        with pytest.raises(ValidationError):
            _validate(broken)


def test_cli_format_choices_match_the_readers():
    from bayesrank.bt.cli import FORMATS
    from bayesrank.data.readers import FORMATS as READER_FORMATS

    assert FORMATS == READER_FORMATS


def test_bootstrap_json_reports_failed_replicates_and_cli_warns(tmp_path, capsys):
    """Three players, few games: some resamples have a player who never won or never lost (no
    finite MLE). They are counted, the policy is shown in JSON, and the CLI prints a warning."""
    data = tmp_path / "few.csv"
    rows = ["a,b,a", "b,a,a", "b,c,a", "c,b,a", "a,c,a", "c,a,a", "a,b,a", "b,c,a"]  # first-named wins
    data.write_text("model_a,model_b,outcome\n" + "\n".join(rows) + "\n")
    for policy in ("exclude", "ridge"):
        out = tmp_path / f"boot-{policy}.json"
        assert main(["fit", str(data), "--method", "bootstrap", "--n-boot", "100", "--bootstrap-failed", policy,
                     "--json", str(out)]) == 0
        doc = json.loads(out.read_text())
        _validate(doc)
        d = doc["diagnostics"]
        assert d["kind"] == "resampling" and d["failed_policy"] == policy and d["n_replicates"] == 100
        assert 0 < d["n_failed"] < 100 and d["converged"] is False
        assert d["extra"]["replicates_used"] == (100 - d["n_failed"] if policy == "exclude" else 100)
        text = capsys.readouterr().out
        assert "warning" in text and f"{d['n_failed']} of 100 replicates failed ({policy})" in text


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
    assert f"line 3 of {bad}: columns 'model_a'/'model_b' name the same player twice" in err
    assert "--exclude-invalid" in err and len(err.strip().splitlines()) == 1
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
    """The demo is the reviewer's report: every fit method, the agreement table, out/review.html."""
    from bayesrank.protocol import validate

    assert main(["demo", "--dataset", "nba", "--no-nuts", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "review.json").read_text())
    validate(doc, "review")
    assert (tmp_path / "review.html").read_text().startswith("<!DOCTYPE html>")
    agreement = {r["method"]: r for r in doc["sections"]["methods"]["agreement"]}
    assert [r["interval"] for r in agreement.values()] == [
        "fisher", "fisher", "sandwich", "bootstrap percentile", "Wald (MAP Hessian)",
        "Laplace (NumPy twin: ridge MLE + inverse Hessian)"]
    # MAP with the default prior is close to, but not equal to, the MLE; Kendall tau near 1
    assert 0 < agreement["map"]["max_abs_score_diff"] < 0.05
    assert agreement["bootstrap"]["kendall_tau"] == 1.0
    # MAP and Laplace share the posterior mode and its Hessian: identical scores and interval widths
    assert agreement["laplace"]["max_abs_score_diff"] == pytest.approx(agreement["map"]["max_abs_score_diff"], abs=1e-12)
    assert agreement["laplace"]["max_abs_width_diff"] == pytest.approx(agreement["map"]["max_abs_width_diff"], abs=1e-12)
    assert [c["claim"] for c in doc["claims"]][:2] == ["top1", "topk:5"]


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


def test_fit_plots_dir_writes_the_leaderboard_figure(tmp_path, capsys):
    assert main(["fit", "sports/nba_games_2023_24_tidy.csv", "--plots", str(tmp_path / "figs"), "--top", "8"]) == 0
    png = tmp_path / "figs" / "leaderboard.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5_000
    assert f"wrote {png}" in capsys.readouterr().out.replace("\n", "")
