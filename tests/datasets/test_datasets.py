"""Bundled data: one resolver with short names for every subcommand, and only permissively
licensed files inside the wheel."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import bayesrank.datasets as ds
from tests import datasets as fixtures

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("alias", sorted(ds.ALIASES))
def test_every_short_name_resolves_in_a_source_checkout(alias):
    p = ds.resolve(alias)
    assert p.exists() and p == ds.path(ds.ALIASES[alias])
    assert ds.resolve(alias.upper().replace("-", "_")) == p  # case and _/- do not matter


def test_user_files_win_and_unknown_names_list_the_short_names(tmp_path):
    f = tmp_path / "arena"
    f.write_text("player_a,player_b,outcome\n")
    assert ds.resolve(f) == f
    with pytest.raises(FileNotFoundError, match="short names: arena, arena-hard"):
        ds.resolve("no-such-dataset")


def test_test_fixtures_are_not_found_outside_a_source_checkout(monkeypatch, tmp_path):
    monkeypatch.setattr(ds, "SOURCE_TEST_DATA", tmp_path / "absent")
    monkeypatch.delenv("BAYESRANK_DATA_PATH", raising=False)
    with pytest.raises(FileNotFoundError, match=r"CC-BY-NC-SA-4\.0\) that is not shipped"):
        ds.path("atp-2024")
    assert ds.path("arena").exists()  # shipped data still found
    (tmp_path / "tennis").mkdir()
    (tmp_path / "tennis" / "atp_matches_2024.csv").write_text("winner_name,loser_name\na,b\n")
    monkeypatch.setenv("BAYESRANK_DATA_PATH", str(tmp_path))
    assert ds.path("atp-2024") == tmp_path / "tennis" / "atp_matches_2024.csv"


def test_fixture_folders_and_package_folders_match_the_licence_tables():
    package = {p.name for p in ds.ROOT.iterdir() if p.is_dir() and p.name != "__pycache__"}
    tests = {p.name for p in fixtures.ROOT.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert package == set(ds.SHIPPED) and tests == set(ds.TEST_ONLY)
    assert all(set(lic.split(" AND ")) <= ds.PERMISSIVE_LICENCES for lic in ds.SHIPPED.values())
    assert not any(lic in ds.PERMISSIVE_LICENCES for lic in ds.TEST_ONLY.values())
    shipped_readme = (ds.ROOT / "README.md").read_text()
    fixture_readme = (fixtures.ROOT / "README.md").read_text()
    assert all(f"`{folder}/" in shipped_readme for folder in ds.SHIPPED)
    assert all(f"`{folder}/" in fixture_readme for folder in ds.TEST_ONLY)
    assert fixtures.path("tennis/atp_matches_2024.csv") == ds.path("atp-2024")


def test_licence_check_flags_non_permissive_files():
    assert ds.licence_problems(["__init__.py", "README.md", "llmfao/crowd-comparisons.csv"]) == []
    bad = ds.licence_problems(["tennis/atp_matches_2024.csv", "calibration/L3_data1.csv", "stray.csv"])
    assert len(bad) == 3 and all("not in a permissively licensed" in b for b in bad)


def test_listing_names_runs():
    out = subprocess.run([sys.executable, "-m", "bayesrank.datasets"], capture_output=True, text=True, check=True).stdout
    assert "atp-2024" in out and "test fixture, CC-BY-NC-SA-4.0" in out and "llmfao/models.jsonl" in out


@pytest.mark.slow
def test_built_wheel_ships_only_permissive_data(tmp_path):
    """Build the wheel from a copy of this checkout (no stale build/ folder) and inspect every file in it."""
    src = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(REPO / "bayesrank", src / "bayesrank", ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy(REPO / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(src)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("bayesrank-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    data = [n.removeprefix("bayesrank/datasets/") for n in names if n.startswith("bayesrank/datasets/")]
    assert "arena/chatbotarena_20240814.json" in data and "llmfao/crowd-comparisons.csv" in data
    assert ds.licence_problems(data) == []
    assert not [n for n in names if n.startswith("tests/") or "/tennis/" in n or "L3_data" in n]
