"""The model cards' runnable snippets execute (and their assertions hold)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def snippets(card: str) -> list[str]:
    text = (ROOT / "models" / card).read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("card", ["bt.md"])
def test_model_card_snippet_runs(card):
    blocks = snippets(card)
    assert blocks, f"models/{card} has no python snippet"
    for block in blocks:
        exec(compile(block, f"models/{card}", "exec"), {})
