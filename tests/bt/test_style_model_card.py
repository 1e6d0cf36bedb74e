"""models/style.md: the runnable snippet executes and its assertions hold."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_style_model_card_snippet_runs():
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "models" / "style.md").read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "models/style.md", "exec"), {})
