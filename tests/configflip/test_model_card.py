"""Execute the python blocks of models/configflip.md (the snippet asserts its own result)."""

import re
from pathlib import Path

import pytest

CARD = Path(__file__).resolve().parents[2] / "models" / "configflip.md"


def blocks():
    return re.findall(r"```python\n(.*?)```", CARD.read_text(), flags=re.S)


def test_card_has_the_required_sections():
    text = CARD.read_text()
    for section in ("Generative story", "Priors", "Reparameterization", "Frequentist twin", "Runnable snippet"):
        assert section in text
    assert len(blocks()) >= 1


@pytest.mark.slow
def test_model_card_snippet_runs():
    ns = {}
    for code in blocks():
        exec(compile(code, str(CARD), "exec"), ns)
    assert not ns["summary"]["claims_reversal"].any()
    assert ns["post"].spec.use_items                      # the per-item Bernoulli path with item effects
