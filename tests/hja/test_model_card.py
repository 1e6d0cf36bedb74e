"""The model card's python snippet runs (and its assertions against the simulated truth hold)."""

import re
from pathlib import Path

CARD = Path(__file__).resolve().parents[2] / "models" / "hja.md"


def test_model_card_snippets_run():
    blocks = re.findall(r"```python\n(.*?)```", CARD.read_text(), flags=re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, str(CARD), "exec"), {})
