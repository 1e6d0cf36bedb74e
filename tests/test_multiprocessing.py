"""Multi-process sampling never forks a process whose JAX runtime has started (JAX warns that
this may deadlock): ``bayesrank._multiprocessing.pymc_mp_ctx`` picks ``forkserver`` then."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, timeout=900)


def test_start_method_follows_the_jax_runtime_not_the_jax_import():
    code = """
import arviz, sys  # arviz_base imports jax as a side effect when it is installed
from bayesrank._multiprocessing import pymc_mp_ctx
print("jax" in sys.modules, pymc_mp_ctx())
import jax
jax.devices()  # starts JAX's backends and thread pools
print(pymc_mp_ctx())
"""
    res = _run(code)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["True", "None", "forkserver"]


@pytest.mark.slow
def test_cli_multiprocess_nuts_after_jax_started_prints_no_fork_warning():
    code = """
import sys, jax
jax.devices()
from bayesrank.cli import main
sys.exit(main(["fit", "nba", "--method", "nuts", "--sampler", "pymc", "--draws", "40", "--tune", "40", "--chains", "2"]))
"""
    res = _run(code)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Multiprocess sampling (2 chains in 2 jobs)" in res.stderr + res.stdout  # really ran in 2 processes
    assert "fork()" not in res.stderr and "JAX is multithreaded" not in res.stderr
