import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory):
    """(folder of real Inspect .eval logs written by Inspect's mockllm, expected 0/1 per model/sample/epoch)."""
    out = tmp_path_factory.mktemp("inspect_logs")
    run = subprocess.run([sys.executable, "-m", "tests.items.inspect_logs", str(out)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return out, json.loads(run.stdout.strip().splitlines()[-1])


def rasch_matrix(m=8, n=1000, seed=1, spread=1.0, mu=-1.0, sigma=1.5):
    """0/1 scores of m models on n items from a Rasch model (θ evenly spaced over ±spread)."""
    rng = np.random.default_rng(seed)
    th = np.linspace(spread, -spread, m)
    b = rng.normal(mu, sigma, n)
    return (rng.random((m, n)) < expit(th[:, None] - b[None, :])).astype(float)


def long_frame(y, clusters=None):
    m, n = y.shape
    d = {"model": np.repeat([f"llm{i}" for i in range(m)], n), "item": np.tile([f"q{j}" for j in range(n)], m),
         "score": y.ravel()}
    if clusters is not None:
        d["family"] = np.tile(clusters, m)
    return pd.DataFrame(d)
