import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def spec_grid() -> pd.DataFrame:
    """A spec-03-shaped fully crossed grid: 3 models x (4 templates x 3 decodings x 3 few-shot x 2 scorings)
    = 216 cells per benchmark, two benchmarks (432 cells), with model x template interactions."""
    rng = np.random.default_rng(3)
    rows = []
    for b, scale in (("truthfulqa", 1.0), ("xstest", 0.3)):
        for m, base in zip(("qwen", "mistral", "yi"), (0.62, 0.60, 0.55)):
            for t, d, f, s in itertools.product(("minimal", "role", "detailed", "cot"), ("greedy", "t0.3", "t0.7"),
                                                ("0", "3", "5"), ("regex", "logprob")):
                inter = {("mistral", "cot"): 0.05, ("yi", "detailed"): 0.06}.get((m, t), 0.0)
                score = base * scale + 0.3 * (1 - scale) + inter + (0.02 if s == "logprob" else 0) \
                    - (0.03 if d == "t0.7" else 0) + rng.normal(0, 0.015)
                rows.append({"model": m, "benchmark": b, "template": t, "decoding": d, "fewshot": f,
                             "scoring": s, "score": float(np.clip(score, 0, 1))})
    return pd.DataFrame(rows)
