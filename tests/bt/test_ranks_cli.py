"""``bayesrank ranks``: output, schema-valid JSON, plots, exit codes, light module-level imports."""

import argparse
import json
import subprocess
import sys

import pytest

from bayesrank.bt import ranks_cli
from bayesrank.errors import InputError
from bayesrank.protocol import validate


def run_cli(argv):
    parser = argparse.ArgumentParser()
    ranks_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["ranks", *argv])
    return args.func(args)


@pytest.fixture(scope="module")
def llmfao_json(tmp_path_factory):
    out = tmp_path_factory.mktemp("ranks")
    rc = run_cli(["llmfao/crowd-comparisons.csv", "--method", "bootstrap", "--n-boot", "300", "--seed", "1",
                  "--top-k", "1,5", "--json", str(out / "r.json"), "--plots", str(out / "plots")])
    assert rc == 0
    return out


def test_json_is_schema_valid_and_plots_are_written(llmfao_json):
    data = json.loads((llmfao_json / "r.json").read_text())
    validate(data, "ranks")
    assert data["fit_method"] == "bootstrap" and data["rank_sets"]["simultaneous"]["critical"] == "bootstrap"
    assert data["top_k"] == [1, 5] and data["settings"]["seed"] == 1
    assert all(set(p["p_rank_le"]) == {"1", "5"} for p in data["players"])
    assert (llmfao_json / "plots" / "rank_spread.png").stat().st_size > 0
    assert (llmfao_json / "plots" / "pairwise_top15.png").stat().st_size > 0


def test_console_output_names_the_methods(capsys):
    assert run_cli(["llmfao/crowd-comparisons.csv", "--method", "mle", "--n-sim", "2000", "--top", "5"]) == 0
    text = capsys.readouterr().out
    assert "simultaneous 95% rank confidence set" in text and "Gaussian N(0, Σ)" in text
    assert "Holm" in text and "Benjamini-Hochberg" in text


def test_bad_flags_are_input_errors():
    with pytest.raises(InputError):
        run_cli(["llmfao/crowd-comparisons.csv", "--top-k", "three"])
    with pytest.raises(InputError):
        run_cli(["llmfao/crowd-comparisons.csv", "--top-k", "0"])


def test_formats_match_the_readers():
    from bayesrank.data.readers import FORMATS

    assert set(ranks_cli.FORMATS) == set(FORMATS)


def test_module_level_imports_are_light():
    code = ("import sys, bayesrank.bt.ranks_cli; "
            "heavy = [m for m in ('pymc', 'pytensor', 'arviz', 'scipy', 'matplotlib', 'pandas', 'numpy') if m in sys.modules]; "
            "print(','.join(heavy))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == ""
