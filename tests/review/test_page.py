"""The HTML page as a person sees it (headless Chromium), untrusted names escaped, the Markdown twin,
the JSON schema, the CLI flags and exit codes."""

import json
import re
import subprocess

import numpy as np
import pandas as pd
import pytest

from bayesrank.cli import main
from bayesrank.protocol import validate
from bayesrank.review import review
from tests.review.chromium import chromium, layout

HOSTILE = ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "a|b*_[x](y)", 'Bob & "Al"']


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A small round robin whose player names are HTML/Markdown."""
    rng = np.random.default_rng(5)
    theta = np.array([1.0, 0.4, 0.0, -0.5])
    rows = []
    for a in range(4):
        for b in range(a + 1, 4):
            for _ in range(60):
                p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
                rows.append((HOSTILE[a], HOSTILE[b], "a" if rng.random() < p else "b"))
    path = tmp_path_factory.mktemp("hostile") / "votes.csv"
    pd.DataFrame(rows, columns=["model_a", "model_b", "outcome"]).to_csv(path, index=False)
    return path, review(path, fast=True, claims=["top1", f"{HOSTILE[1]}>{HOSTILE[2]}"])


def test_html_escapes_every_name_and_loads_nothing(hostile):
    _, rep = hostile
    page = rep.to_html()
    assert "<script" not in page.lower()
    assert "onerror=" not in page.replace("onerror=alert(2)&gt;", "")  # only inside escaped text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)  # no network requests
    assert "<link" not in page and "@import" not in page
    assert "Content-Security-Policy" in page


def _markdown_cells(md: str) -> list[list[str]]:
    """The claims table's cells as a CommonMark + GFM-table parser (markdown-it-py) reads them: text
    after unescaping, with any markup the parser made kept as tags."""
    from html.parser import HTMLParser

    from markdown_it import MarkdownIt

    page = MarkdownIt("commonmark").enable("table").render(md)

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tables, self.cell = [], None

        def handle_starttag(self, tag, attrs):
            if tag == "table":
                self.tables.append([])
            elif tag == "tr":
                self.tables[-1].append([])
            elif tag in ("td", "th"):
                self.cell = ""
            elif self.cell is not None:
                self.cell += f"<{tag}>"  # markup inside a cell: the escaping failed

        def handle_endtag(self, tag):
            if tag in ("td", "th"):
                self.tables[-1][-1].append(self.cell)
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell += data

    parser = Cells()
    parser.feed(page)
    return parser.tables[0]


def test_markdown_escapes_markup_and_nothing_else(hostile):
    """Pasted as Markdown, every name reads back exactly (no tag, no emphasis, no broken row); pasted
    as plain text, ordinary names and the '>' of a claim carry no escapes."""
    from bayesrank.review.render import claim_label

    _, rep = hostile
    md = rep.to_markdown()
    assert not re.search(r"(?<!\\)<script", md) and "&gt;" not in md and "&lt;" not in md
    assert r"a\|b\*\_[x\](y)" in md  # a pipe would break the table, * _ ]( would format
    rows = _markdown_cells(md)
    assert len(rows) == 1 + len(rep.claims) and len({len(r) for r in rows}) == 1
    assert [r[0] for r in rows[1:]] == [claim_label(c) for c in rep.claims]  # read back exactly, as text
    # escapes only where Markdown needs them
    from bayesrank.review.render import md_esc

    for plain in ("gpt-4o-mini-2024-07-18>claude-3-5-sonnet-20240620", "gpt_4o_mini", "P(claim) > 0.9995",
                  "Bob & Al", "p < 1e-16", "0.096 [0.063, 0.130]", "#1 model"):
        assert _markdown_cells(f"| x |\n|---|\n| {md_esc(plain)} |\n")[1][0] == plain
        if plain != "#1 model":
            assert md_esc(plain) == plain, plain
    for hostile_text in HOSTILE + ["&amp; is an entity", "*bold* _it_ `code` [l](u) ![i](s) [r]: u <http://x>"]:
        assert _markdown_cells(f"| x |\n|---|\n| {md_esc(hostile_text)} |\n")[1][0] == hostile_text


def test_chromium_renders_the_page(hostile, tmp_path):
    """--dump-dom has the claims table with its text; the screenshot is not blank."""
    _, rep = hostile
    page = tmp_path / "review.html"
    page.write_text(rep.to_html(), encoding="utf-8")
    base = chromium(tmp_path / "profile")
    dom = subprocess.run(base + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert '<table id="claims">' in dom
    assert "top1" in dom and "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert "<script>alert(1)</script>" not in dom  # the DOM holds text, not an element
    for v in rep.table()["verdict"]:
        assert f'class="verdict {v}"' in dom
    shot = tmp_path / "shot.png"
    subprocess.run(base + [f"--screenshot={shot}", "--window-size=1200,1600", page.as_uri()],
                   capture_output=True, timeout=120)
    import matplotlib.image as mpimg

    img = mpimg.imread(shot)[..., :3]
    assert img.shape[0] == 1600 and img.shape[1] == 1200
    non_white = (img < 0.95).any(axis=2).mean()
    assert non_white > 0.02  # text, tables and badges, not a blank page
    assert len(np.unique((img * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 50  # colours of badges and figures


@pytest.fixture(scope="module")
def long_names(tmp_path_factory):
    """Player names a page must wrap: 70 characters without a space, and long names with spaces."""
    rng = np.random.default_rng(7)
    names = ["x" * 70, "model-" + "y" * 64, "A very long model name with many words in it, v2 (2024-08-01)", "short"]
    theta = np.array([1.5, 0.7, 0.2, -0.6])
    rows = []
    for a in range(4):
        for b in range(a + 1, 4):
            for _ in range(80):
                p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
                rows.append((names[a], names[b], "a" if rng.random() < p else "b"))
    path = tmp_path_factory.mktemp("long") / "votes.csv"
    pd.DataFrame(rows, columns=["model_a", "model_b", "outcome"]).to_csv(path, index=False)
    return review(path, fast=True, claims=["top1", f"{names[1]}>{names[2]}", "topk:2"])


@pytest.mark.parametrize("width", [1280, 720])
def test_page_has_no_horizontal_overflow(long_names, tmp_path, width):
    """At 1280 px (a laptop) and 720 px (about a printed page's width) the document does not scroll
    sideways and no cell, table or figure runs over its box: long names wrap."""
    scroll, client, over = layout(long_names.to_html(), width, tmp_path)
    assert scroll <= client and client > width - 40, (scroll, client)
    assert over == []


def test_json_follows_the_schema_and_the_issue_fields(hostile, tmp_path):
    path, rep = hostile
    out = tmp_path / "r.json"
    rep.to_json(out)
    d = json.loads(out.read_text())
    validate(d, "review")
    assert d["kind"] == "pairwise" and d["reproducibility"]["n_rows"] == 360
    c = d["claims"][0]
    assert set(c["frequentist"]) >= {"estimate", "lower", "upper", "p_value"}
    assert set(c["bayesian"]) >= {"probability", "method"}
    assert set(c["perturbation"]) == {"drop", "flip", "add"}
    for p in c["perturbation"].values():
        assert set(p) >= {"budget", "fraction", "verified", "actions"}
    assert set(d["leaderboard"][0]) >= {"player", "score", "lower", "upper", "rank", "rank_lower", "rank_upper"}
    import hashlib

    assert d["reproducibility"]["data_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_cli_writes_three_files_and_fail_on_sets_exit_code_1(hostile, tmp_path):
    path, rep = hostile
    args = ["review", str(path), "--fast", "--claim", "top1", "--html", str(tmp_path / "r.html"),
            "--md", str(tmp_path / "r.md"), "--json", str(tmp_path / "r.json")]
    verdict = rep.claims[0].verdict
    assert main(args) == 0
    assert all((tmp_path / f).stat().st_size > 1000 for f in ("r.html", "r.md", "r.json"))
    expected = 1 if verdict in ("fragile", "unsupported") else 0
    assert main(args + ["--fail-on", "fragile"]) == expected
    assert main(args + ["--fail-on", "unsupported"]) == (1 if verdict == "unsupported" else 0)


@pytest.mark.parametrize("extra, message", [
    (["--claim", "Nobody>Somebody"], "claim"),
    (["--level", "1.5"], "--level"),
    (["--kind", "grid", "--fragile-below", "2"], "--fragile-below"),
])
def test_bad_input_exits_2_with_one_line(hostile, capsys, extra, message):
    path, _ = hostile
    assert main(["review", str(path), "--fast", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
