"""Start-up cost of the CLI: a command imports only its own module, and nothing heavy on the way to
``--help`` or an MLE fit. Each check runs in a fresh interpreter and inspects ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bayesrank.cli import COMMANDS, build_parser, chosen_command

HEAVY = ("pymc", "pytensor", "arviz", "matplotlib", "jax", "numba", "scipy.stats")


def _loaded_after(code: str) -> set[str]:
    """Top-level modules (and scipy.stats) loaded by ``code`` in a fresh interpreter."""
    probe = f"""
import sys, json, contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    try:
{chr(10).join('        ' + line for line in code.strip().splitlines())}
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


def _heavy(mods: set[str]) -> list[str]:
    return sorted(h for h in HEAVY if h in mods)


def test_top_level_help_imports_no_subcommand_module():
    mods = _loaded_after("from bayesrank.cli import main\nmain(['--help'])")
    assert not {m for m, _ in COMMANDS.values()} & mods
    assert _heavy(mods) == [] and "numpy" not in mods and "pandas" not in mods


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_subcommand_help_loads_no_sampler_or_plotting_stack(command):
    mods = _loaded_after(f"from bayesrank.cli import main\nmain([{command!r}, '--help'])")
    others = {m for c, (m, _) in COMMANDS.items() if m != COMMANDS[command][0]}
    assert not others & mods, f"{command} --help imported other commands: {sorted(others & mods)}"
    assert _heavy(mods) == [], f"{command} --help imported {_heavy(mods)}"


def test_mle_fit_path_loads_no_sampler_or_plotting_stack(tmp_path):
    data = tmp_path / "votes.csv"
    data.write_text("player_a,player_b,outcome\na,b,a\nb,c,b\nc,a,c\na,b,b\nb,c,c\nc,a,a\n")
    mods = _loaded_after(f"from bayesrank.cli import main\nmain(['fit', {str(data)!r}, '--method', 'mle'])")
    assert "bayesrank.bt.mle" in mods  # the fit really ran
    assert _heavy(mods) == []
    # no SciPy at all: its import is a third of the fit's start-up (docs/scale.md); numpy does the
    # MLE path's special functions, constraint basis and graph checks
    assert "scipy" not in mods


def test_static_command_table_matches_the_registered_parsers():
    """The help-only table in cli.py lists exactly the commands the modules register (the one-line
    help shown by ``bayesrank --help`` is the table's; the module's own help shows under ``CMD --help``)."""
    full = build_parser("all")
    registered = full._subparsers._group_actions[0]
    assert {a.dest for a in registered._choices_actions} == set(COMMANDS)
    for name, (module, _) in COMMANDS.items():
        single = build_parser(name)._subparsers._group_actions[0]
        assert single.choices[name].get_default("func") is not None, f"{module} does not register {name}"
    stubs = build_parser(None)._subparsers._group_actions[0]
    assert all(stubs.choices[name].get_default("func") is None for name in COMMANDS)  # nothing imported


@pytest.mark.parametrize("argv,expected", [(["fit", "x.csv"], "fit"), (["--help"], None), (["fitt"], None),
                                           (["-h", "audit"], "audit")])
def test_chosen_command_is_the_first_positional(argv, expected):
    assert chosen_command(argv) == expected


def test_fast_review_loads_no_sampler_stack_nor_scipy_stats(tmp_path):
    """`review --fast` (Laplace twin, no NUTS) imports no PyMC, PyTensor, ArviZ, nutpie or numba, and no
    scipy.stats (its Kendall τ is bayesrank.stats.kendall); matplotlib only to draw the HTML figures."""
    argv = ["review", "nba", "--fast", "--claim", "top1", "--json", str(tmp_path / "r.json")]
    mods = _loaded_after(f"from bayesrank.cli import main\nmain({argv!r})")
    assert "bayesrank.review.pairwise" in mods and (tmp_path / "r.json").exists()  # the review really ran
    assert _heavy(mods) == [] and "nutpie" not in mods
    html = _loaded_after(f"from bayesrank.cli import main\nmain({argv + ['--html', str(tmp_path / 'r.html')]!r})")
    assert "matplotlib" in html and _heavy(html) == ["matplotlib"]
