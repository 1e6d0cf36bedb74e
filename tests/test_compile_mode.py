"""The optimizers' compile mode (bayesrank.compile_mode): PyTensor's Python VM below 20,000 observed
values, PyTensor's default above; the compiled MAP objective equals PyMC's own log density (compiled
in PyTensor's default mode) at random points, so the mode changes the cost, not the numbers."""

import numpy as np
import pytest

from bayesrank import compile_mode
from bayesrank.bt import BradleyTerry
from bayesrank.datasets import path


@pytest.fixture(scope="module")
def nba_model():
    return BradleyTerry(path("sports/nba_games_2023_24_tidy.csv"), ties="half").model_for("half")


def test_the_mode_follows_the_observed_size(nba_model, monkeypatch):
    assert compile_mode.observed_size(nba_model) == 435  # 435 pairs of the 30 teams, one count each
    assert compile_mode.optimizer_mode(nba_model) == "FAST_COMPILE"
    monkeypatch.setattr(compile_mode, "COMPILE_BELOW_ROWS", 435)
    assert compile_mode.optimizer_mode(nba_model) is None


def test_the_fast_compile_objective_equals_pymcs_log_density(nba_model):
    from bayesrank.bt.pymc_model import compile_flat_logp

    fn, names, sizes, x0 = compile_flat_logp(nba_model)
    linker = fn.maker.linker  # the Python VM: no C thunks, no C loop (numba's linker is another class)
    assert type(linker).__name__ == "VMLinker" and not linker.c_thunks and not linker.use_cloop
    ref = nba_model.compile_logp()  # PyMC's compiled log density (Jacobians included), default mode
    rng = np.random.default_rng(0)
    point = nba_model.initial_point()
    for _ in range(5):
        x = x0 + rng.normal(0, 0.5, x0.size)
        parts, o = {}, 0
        for n, s in zip(names, sizes):
            parts[n] = x[o:o + s].reshape(np.shape(point[n]))
            o += s
        assert fn(x)[0] == pytest.approx(float(ref(parts)), rel=1e-12, abs=1e-9)
