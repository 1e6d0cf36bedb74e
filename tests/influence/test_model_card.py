import re
from pathlib import Path

CARD = Path(__file__).resolve().parents[2] / "models" / "influence.md"


def test_model_card_snippet_runs():
    blocks = re.findall(r"```python\n(.*?)```", CARD.read_text(), flags=re.S)
    assert blocks
    for code in blocks:
        ns: dict = {}
        exec(compile(code, str(CARD), "exec"), ns)
        assert ns["result"].verified
