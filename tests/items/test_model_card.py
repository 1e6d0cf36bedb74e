"""models/items.md's runnable snippet executes (and its assertions hold)."""

from tests.bt.test_model_card import snippets


def test_items_model_card_snippet_runs():
    blocks = snippets("items.md")
    assert blocks
    for block in blocks:
        exec(compile(block, "models/items.md", "exec"), {})
