"""`bayesrank fit DATA --style ... [--reweight] [--min-pair-count N] [--position-effect] [--cluster COL]`
end to end: the JSON validates against the fit schema and equals the API's numbers; bad input exits 2."""

import json

import numpy as np
import pytest

from bayesrank.bt import BradleyTerry
from bayesrank.bt.simulate import simulate_style_battles
from bayesrank.cli import main
from bayesrank.protocol import validate


@pytest.fixture(scope="module")
def battles(tmp_path_factory):
    frame, _, _ = simulate_style_battles(n_players=7, n_battles=3000, beta=(0.5, 0.2), tie_rate=0.1, seed=3,
                                         pair_skew=1.0)
    frame = frame.rename(columns={"s0_a": "len_a", "s0_b": "len_b", "s1_a": "bold_a", "s1_b": "bold_b"})
    p = tmp_path_factory.mktemp("style") / "battles.csv"
    frame.to_csv(p, index=False)
    return p


def test_fit_style_json_matches_api(battles, tmp_path, capsys):
    out = tmp_path / "style.json"
    assert main(["fit", str(battles), "--style", "len_a:len_b,bold_a:bold_b", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    validate(doc, "fit")
    assert doc["schema"] == "fit" and doc["interval"] == "sandwich" and doc["ties"] == "half"  # ties: sandwich
    api = BradleyTerry(battles, "len_a:len_b,bold_a:bold_b").fit("mle", ci="sandwich")
    assert [s["feature"] for s in doc["style"]] == ["len", "bold"]
    np.testing.assert_allclose([s["coef"] for s in doc["style"]], api.coef, atol=1e-12)
    got = {p["player"]: p for p in doc["players"]}
    for row in api.table().itertuples():
        assert got[row.player]["score"] == pytest.approx(row.score, abs=1e-12)
        assert got[row.player]["rank_change"] == row.rank_change
    text = capsys.readouterr().out
    assert "style coefficients" in text and "rank_change" in text


def test_fit_reweight_without_style(battles, tmp_path):
    out = tmp_path / "rw.json"
    assert main(["fit", str(battles), "--reweight", "--min-pair-count", "100", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    validate(doc, "fit")
    assert doc["style"] == [] and doc["settings"]["reweight"] is True and doc["settings"]["min_pair_count"] == 100
    assert doc["interval"] == "sandwich"
    api = BradleyTerry(battles, reweight=True, min_pair_count=100).fit("mle", ci="sandwich")
    got = {p["player"]: p["score"] for p in doc["players"]}
    np.testing.assert_allclose([got[p] for p in api.players], api.score, atol=1e-12)


@pytest.mark.parametrize("argv, message", [
    (["--style", "len_a"], "A_COL:B_COL"),
    (["--style", "len_a:nope"], "no column 'nope'"),
    (["--style-transform", "diff"], "need --style"),
    (["--style", "len_a:len_b", "--ci", "cluster"], "needs clusters"),
    (["--cluster", "nope"], "no column 'nope'"),
    (["--reweight", "--min-pair-count", "-1"], "min-pair-count"),
])
def test_bad_input_exits_2(battles, argv, message, capsys):
    assert main(["fit", str(battles), *argv]) == 2
    captured = capsys.readouterr()
    assert message in captured.out + captured.err


def test_help_lists_style_flags(capsys):
    assert main(["fit", "--help"]) == 0  # main returns argparse's exit code
    text = capsys.readouterr().out
    assert "--style" in text and "--reweight" in text and "--min-pair-count" in text
    assert "--position-effect" in text and "--cluster" in text
