"""Hostile names never reach an output unescaped.

Names that are HTML (``<img src=x onerror=…>``, ``<script>``), Markdown (``a|b`` in a table,
``**x**``, ``[x](javascript:…)``, backticks), rich markup (``[red]x[/red]``, an unmatched
``[/bold]``), a newline or a terminal escape (ESC) are used as players, judges, models, items,
benchmarks and configuration values of every review kind (pairwise, judges, items, grid,
confidence, table), and every output of ``bayesrank review`` is read back as its reader reads it:

* Markdown by markdown-it-py (CommonMark + GFM tables): no HTML token, no link or image, no code
  span, every table row with the header's number of cells, and each name in a table reads back as
  itself (its control characters shown as escapes);
* HTML by the standard library's parser: only the page's own elements, no event attribute, images
  only the inline figures, each name as text;
* the terminal (the command's stdout): no escape sequence, no markup read from a name (the top
  name, which is rich markup, printed literally), one readable line per name;
* JSON: every name round-trips exactly (newline and ESC included).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from bayesrank.cli import main
from bayesrank.escape import markdown_escape, rich_escape, terminal_text, visible

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"
PIPE = "a|b"
BOLD = "**x**"
LINK = "[x](javascript:alert(1))"
NEWLINE = "line\nbreak"
RICH = "[red]x[/red]"
TICKS = "`tick`"
ESC = "\x1b[31mesc"
CLOSE = "[/bold]close"
HOSTILE = [IMG, SCRIPT, PIPE, BOLD, LINK, NEWLINE, RICH, TICKS, ESC, CLOSE]
#: raw text that must not stand in the Markdown source (each is markup there)
MARKUP = [IMG, SCRIPT, PIPE, BOLD, LINK, NEWLINE, TICKS, ESC]


# ------------------------------------------------------------------------------------------ the data
def _bt_rows(players, n, rng):
    """Every pair ``n`` times, Bradley–Terry outcomes with the first player strongest."""
    theta = np.linspace(1.5, -1.5, len(players))
    rows = []
    for a in range(len(players)):
        for b in range(a + 1, len(players)):
            for _ in range(n):
                p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
                rows.append((players[a], players[b], "a" if rng.random() < p else "b"))
    return pd.DataFrame(rows, columns=["model_a", "model_b", "outcome"])


def _pairwise(rng):
    return _bt_rows([RICH, IMG, PIPE, BOLD, LINK, NEWLINE], 30, rng), [RICH, IMG, PIPE, BOLD, LINK, NEWLINE]


def _judges(rng):
    df = _bt_rows([RICH, IMG, PIPE, BOLD, LINK], 40, rng)
    judges = [TICKS, ESC, CLOSE, SCRIPT]
    return df.assign(judge=[judges[i % 4] for i in range(len(df))]), [RICH, IMG, PIPE, BOLD, LINK] + judges


def _items(rng):
    models = [RICH, IMG, PIPE, BOLD, NEWLINE]
    items = [LINK, TICKS, ESC, CLOSE, SCRIPT] + [f"item{k}" for k in range(55)]
    ability, difficulty = np.linspace(1.5, -1.5, 5), rng.normal(0, 1, len(items))
    rows = [(models[m], items[i], int(rng.random() < 1 / (1 + np.exp(-(ability[m] - difficulty[i])))))
            for m in range(5) for i in range(len(items))]
    return pd.DataFrame(rows, columns=["model", "item", "score"]), models


def _grid(rng):
    """RICH is best and LINK second on average, but LINK is ahead in the configurations with template
    IMG or ESC: the claim's witnesses name those configuration values."""
    rows = []
    for template in (IMG, PIPE, ESC, "plain"):  # configuration values
        for k, fewshot in enumerate((BOLD, NEWLINE)):
            base = 0.55 + 0.02 * k
            lead = -0.02 if template in (IMG, ESC) else 0.08
            rows += [(RICH, template, fewshot, base + lead), (LINK, template, fewshot, base),
                     (TICKS, template, fewshot, base - 0.05)]
    df = pd.DataFrame(rows, columns=["model", "template", "fewshot", "score"]).assign(benchmark=SCRIPT, n_items=500)
    return df, [RICH, LINK, TICKS, IMG, ESC, BOLD, NEWLINE, SCRIPT]


def _confidence(rng):
    n = 600
    verbal = rng.uniform(0.3, 0.95, n)
    correct = (rng.random(n) < verbal).astype(int)
    token = np.clip(verbal + 0.6 * (1 - verbal), 0, 0.999)
    df = pd.DataFrame({"correct": correct, "verbal": verbal.round(3), "token": token.round(4),
                       "model": [RICH if i % 2 else IMG for i in range(n)], "dataset": PIPE})
    return df, [RICH, IMG, PIPE]


def _table(rng):
    rows = [(m, b, acc, 1000) for b in (NEWLINE, CLOSE) for m, acc in zip((RICH, IMG, BOLD, LINK), (0.71, 0.65, 0.6, 0.52))]
    return pd.DataFrame(rows, columns=["model", "benchmark", "accuracy", "n"]), [RICH, IMG, BOLD, LINK, NEWLINE, CLOSE]


#: what the review needs to read each kind's configuration values (the grid's axes)
EXTRA = {"grid": ["--axes", "template,fewshot"]}
#: names the Markdown twin does not show (it has no per-claim evidence: the grid's witnesses are on the page)
NOT_IN_MARKDOWN = {"grid": {IMG, ESC, BOLD, NEWLINE}}
KINDS = {"pairwise": _pairwise, "judges": _judges, "items": _items, "grid": _grid, "confidence": _confidence,
         "table": _table}


@pytest.fixture(scope="module", params=sorted(KINDS))
def outputs(request, tmp_path_factory):
    """``bayesrank review`` of one kind's hostile data: (kind, names used, stdout, html, md, json)."""
    kind = request.param
    df, names = KINDS[kind](np.random.default_rng(7))
    folder = tmp_path_factory.mktemp(kind)
    data = folder / "data.csv"
    df.to_csv(data, index=False)
    import contextlib
    import io
    import os

    out, err = io.StringIO(), io.StringIO()
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "400"  # wide enough that no cell of the terminal table folds a name
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["review", str(data), "--kind", kind, *EXTRA.get(kind, []), "--fast", "--budget", "3", "--html",
                         str(folder / "r.html"), "--md", str(folder / "r.md"), "--json", str(folder / "r.json")])
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    assert code == 0, err.getvalue()[-3000:]
    assert "Traceback" not in err.getvalue() and "Glyph" not in err.getvalue(), err.getvalue()[-3000:]
    return (kind, names, out.getvalue(), (folder / "r.html").read_text(encoding="utf-8"),
            (folder / "r.md").read_text(encoding="utf-8"), json.loads((folder / "r.json").read_text(encoding="utf-8")))


# ------------------------------------------------------------------------------------------ Markdown
def _md_tokens(md: str):
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    tokens = parser.parse(md)
    flat = []
    for t in tokens:
        flat.append(t)
        flat.extend(t.children or [])
    return tokens, flat


def _md_tables(tokens) -> list[list[list[str]]]:
    """Each table's rows of cell texts (inline content after unescaping)."""
    tables, row, cell = [], None, None
    for t in tokens:
        if t.type == "table_open":
            tables.append([])
        elif t.type == "tr_open":
            row = []
        elif t.type in ("th_open", "td_open"):
            cell = ""
        elif t.type == "inline" and cell is not None:
            cell += "".join(c.content for c in t.children if c.type in ("text", "softbreak"))
        elif t.type in ("th_close", "td_close"):
            row.append(cell)
            cell = None
        elif t.type == "tr_close":
            tables[-1].append(row)
    return tables


def _unescaped(raw: str, md: str) -> bool:
    """``raw`` stands in the Markdown source without the backslash that makes its first character text."""
    return re.search(r"(?<!\\)" + re.escape(raw), md) is not None


def test_markdown_twin_has_no_markup_from_a_name(outputs):
    kind, names, _, _, md, _ = outputs
    tokens, flat = _md_tokens(md)
    kinds = {t.type for t in flat}
    assert not kinds & {"html_inline", "html_block", "link_open", "image", "code_inline", "code_block", "fence",
                        "s_open"}, (kind, kinds)
    for raw in MARKUP:
        assert not _unescaped(raw, md), (kind, raw)
    tables = _md_tables(tokens)
    assert tables, kind
    for table in tables:
        width = len(table[0])
        assert all(len(r) == width for r in table), (kind, [len(r) for r in table])
    cells = {c for table in tables for r in table for c in r}
    text = " ".join(cells)
    for name in set(names) - NOT_IN_MARKDOWN.get(kind, set()):  # each reads back as itself (controls shown)
        assert visible(name) in text, (kind, name)


# ------------------------------------------------------------------------------------------ HTML
class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text = set(), [], []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs += [(tag, k, v) for k, v in attrs]

    def handle_data(self, data):
        self.text.append(data)


PAGE_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "span", "b", "br", "div", "table",
             "colgroup", "col", "thead", "tbody", "tr", "th", "td", "figure", "img", "figcaption"}


def test_html_page_holds_names_as_text_only(outputs):
    kind, names, _, html, _, _ = outputs
    page = _Page()
    page.feed(html)
    assert page.tags <= PAGE_TAGS, (kind, page.tags - PAGE_TAGS)
    assert not [a for a in page.attrs if a[1].lower().startswith("on")], kind
    assert all(v.startswith("data:image/svg+xml;base64,") for t, k, v in page.attrs if t == "img" and k == "src")
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", html), kind
    text = "".join(page.text)
    for name in names:
        assert visible(name) in text, (kind, name)


# ------------------------------------------------------------------------------------------ terminal
def test_terminal_shows_names_and_executes_nothing(outputs):
    """Every claim's label (which names players, models, benchmarks) is printed as typed, controls
    shown; no escape sequence reaches the terminal and no markup is read from a name."""
    kind, names, stdout, _, _, doc = outputs
    assert "\x1b" not in stdout and "\r" not in stdout and "\x07" not in stdout, kind
    labels = [c["claim"] + (f": {c['statement']}" if c.get("statement") else "") for c in doc["claims"]]
    assert any(name in label for label in labels for name in names), (kind, labels)  # names are shown
    for label in labels:
        assert visible(label) in stdout, (kind, label)
    for name in names:
        assert "\n" not in name or name not in stdout, (kind, name)  # a newline inside a name is shown as \n


# ------------------------------------------------------------------------------------------ JSON
def _strings(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)
    elif isinstance(obj, str):
        yield obj


def test_json_round_trips_every_name_exactly(outputs):
    kind, names, _, _, _, doc = outputs
    strings = list(_strings(doc))
    exact = set(strings)
    for name in names:
        assert name in exact or any(name in s for s in strings), (kind, name)


# ------------------------------------------------------------------------------------------ the escapers
TEXTS = HOSTILE + ["&amp; is an entity", "&#60;img&#62;", "*bold* _it_ ~~gone~~ $x$ [l](u) ![i](s) [r]: u <http://x>",
                   "# heading", "> quote", "- item", "+ item", "a\tb", "back\\slash", "bidi \u202eevil",
                   "nul\x00byte", "del\x7f", "cr\rreturn", "<!-- c -->", "<?php ?>", "</td></tr>", "x_y_ and _z_",
                   "[link][ref]", "www.example.com", "http://example.com/<x>"]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_markdown_escape_reads_back_exactly_in_a_paragraph_and_a_table_cell(text):
    want = visible(text)
    md = markdown_escape(text)
    assert "\n" not in md
    tokens, flat = _md_tokens(f"{md}\n")
    assert {t.type for t in flat} <= {"paragraph_open", "paragraph_close", "inline", "text"}, [t.type for t in flat]
    assert "".join(t.content for t in flat if t.type == "text") == want
    tokens, flat = _md_tokens(f"| h | k |\n|---|---|\n| {md} | z |\n")
    rows = _md_tables(tokens)[0]
    assert rows[1] == [want.strip(), "z"], rows


def test_markdown_escape_leaves_ordinary_text_alone():
    for plain in ("gpt-4o-mini-2024-07-18>claude-3-5-sonnet-20240620", "gpt_4o_mini", "P(claim) > 0.9995",
                  "Bob & Al", "p < 1e-16", "0.096 [0.063, 0.130]", "-0.25", "Zoë 3.10", "top-1 (of 5)"):
        assert markdown_escape(plain) == plain, plain


def test_visible_shows_controls_and_keeps_letters():
    assert visible("a\nb\tc\x1b[31m\u202ed") == "a\\nb\\tc\\x1b[31m\\u202ed"
    assert visible("Zoë 👩‍🔬 データ") == "Zoë 👩‍🔬 データ"  # letters, emoji with a zero-width joiner


@pytest.mark.parametrize("text", HOSTILE + ["[link=javascript:alert(1)]x[/link]", "[bold red on white]"])
def test_terminal_text_and_rich_escape_print_the_name_as_typed(text):
    import io

    from rich.console import Console

    for render in (lambda c: c.print(terminal_text(text)), lambda c: c.print(f"[bold]{rich_escape(text)}[/]")):
        con = Console(file=io.StringIO(), width=400, force_terminal=True, color_system="truecolor")
        render(con)
        printed = con.file.getvalue()
        plain = re.sub(r"\x1b\[[0-9;]*m", "", printed)  # the console's own styles
        assert plain == visible(text) + "\n", (plain, text)
        assert "\x1b]8;" not in printed  # no hyperlink


def test_error_line_shows_a_name_with_a_newline_on_one_line(tmp_path, capsys):
    """A name in an error message cannot break the one-line error or send a terminal escape."""
    f = tmp_path / "v.csv"
    pd.DataFrame({"model_a": ["x\ny", "p"], "model_b": ["x\ny", "q\x1b[2J"], "outcome": ["a", "b"]}).to_csv(f, index=False)
    assert main(["fit", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err and err.startswith("error: ")


def test_grid_card_markdown_escapes_models_and_configurations():
    """`bayesrank card`'s Markdown twin: model names and configuration values as table text."""
    from bayesrank import datasets
    from bayesrank.configflip.card import build_card, render_markdown
    from bayesrank.configflip.readers import read_lm_eval_dir

    rows = read_lm_eval_dir(datasets.path("eval_grid/lm_eval_harness_2023/raw/llama"), pattern="*/*gsm8k*.json")
    rows = rows[(rows.benchmark == "gsm8k") & (rows.metric == "acc")].reset_index(drop=True)
    models = rows.source_file.str.extract(r"/llama/(llama-\d+B)/")[0]
    rename = dict(zip(sorted(models.unique()), [IMG, PIPE, NEWLINE]))
    rows["model"] = models.map(rename)
    card = build_card(rows, ["num_fewshot"], title=LINK)
    md = render_markdown(card)
    tokens, flat = _md_tokens(md)
    assert not {t.type for t in flat} & {"html_inline", "html_block", "link_open", "image", "code_inline"}
    for raw in (IMG, PIPE, NEWLINE, LINK):
        assert not _unescaped(raw, md), raw
    for table in _md_tables(tokens):
        assert len({len(r) for r in table}) == 1
    cells = " ".join(c for table in _md_tables(tokens) for r in table for c in r)
    for name in (IMG, PIPE, NEWLINE):
        assert visible(name) in cells


def test_notebook_and_prompt_views_escape_names():
    """``repr(report)`` (the prompt) shows controls; ``_repr_html_()`` (Jupyter) holds names as text."""
    from bayesrank.review import review

    df, names = _pairwise(np.random.default_rng(7))
    report = review(df.assign(model_a=df["model_a"].replace(RICH, ESC)), fast=True, budget=3)
    text = repr(report)
    assert "\x1b" not in text and NEWLINE not in text and visible(ESC) in text
    page = _Page()
    page.feed(report._repr_html_())
    assert page.tags <= PAGE_TAGS | {"code"} and not [a for a in page.attrs if a[1].lower().startswith("on")]
    assert visible(ESC) in "".join(page.text) or visible(IMG) in "".join(page.text)
