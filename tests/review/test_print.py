"""The arena report as a reviewer attaches it: on a 1280-pixel screen without sideways scrolling, and
printed to PDF by Chromium with every column, every verdict and its colour on the page; claims that
name their players (checked against evalica's own Bradley–Terry fit) and no claim row repeating
another."""

import re

import numpy as np
import pytest

from bayesrank.review import review
from bayesrank.review.render import (
    BAYESIAN_HEAD,
    FREQUENTIST_HEAD,
    OVERTURN_HEAD,
    SIGNIFICANCE_HEAD,
    claim_actions,
    perturbation_lines,
)
from tests.review.chromium import layout, pdf_page_image, pdf_text, print_pdf

pytestmark = pytest.mark.slow

VERDICT_RGB = {"supported": (0x1A, 0x7F, 0x37), "fragile": (0x9A, 0x67, 0x00), "unsupported": (0xCF, 0x22, 0x2E),
               "not searched": (0x59, 0x63, 0x6E), "not converged": (0x59, 0x63, 0x6E)}


@pytest.fixture(scope="module")
def arena():
    return review("arena", fast=True, seed=0)


@pytest.fixture(scope="module")
def evalica_order(arena):
    """Players best first by evalica's Bradley–Terry on the same votes (ties as draws = half wins)."""
    import evalica

    f = arena.results["comparisons"].frame
    w = f["outcome"].map({"a": evalica.Winner.X, "b": evalica.Winner.Y, "tie": evalica.Winner.Draw})
    r = evalica.bradley_terry(f["model_a"].astype(str), f["model_b"].astype(str), w, weights=f["weight"].to_numpy(dtype=float),
                              tolerance=1e-12, limit=10_000)
    return list(r.scores.sort_values(ascending=False).index)


def test_top1_and_topk_name_their_players(arena, evalica_order):
    by = {c.claim.text: c for c in arena.claims}
    assert by["top1"].statement == f"{evalica_order[0]} is #1"
    assert by["topk:5"].statement == ", ".join(evalica_order[:5]) + " are the top 5"
    page, md = arena.to_html(), arena.to_markdown()
    assert f"{evalica_order[0]} is #1" in page and f"top1: {evalica_order[0]} is #1" in md
    doc = arena.to_dict()
    assert doc["claims"][0]["statement"] == f"{evalica_order[0]} is #1"


def test_no_claim_row_duplicates_another(arena):
    """Every row's numbers differ from every other row's (the default claims used to repeat top1 as
    the first adjacent pair)."""
    def numbers(c):
        f, b = c.frequentist, c.bayesian or {}
        budgets = tuple((a, p.get("budget")) for a, p in sorted(c.perturbation.items()))
        return (round(f["estimate"], 12), round(f["lower"], 12), round(f["upper"], 12), b.get("probability"), budgets)

    rows = [numbers(c) for c in arena.claims]
    assert len(set(rows)) == len(rows)
    assert len({c.claim.text for c in arena.claims}) == len(arena.claims)


def test_screen_1280_has_no_horizontal_scrollbar(arena, tmp_path):
    scroll, client, over = layout(arena.to_html(), 1280, tmp_path)
    assert scroll <= client, (scroll, client)
    assert over == []


def test_printed_page_keeps_every_column_verdict_and_colour(arena, tmp_path):
    """Chromium's PDF: the claims table's page has every column header, every claim's verdict and
    both perturbation answers line by line (pypdf's layout text), and the verdict badges keep their colours
    (pixels of each verdict's colour on the rasterised page)."""
    pdf = print_pdf(arena.to_html(), tmp_path)
    first = pdf_text(pdf, 1)
    flat = re.sub(r"\s+", " ", first)
    for head in ("claim", "verdict", "why", FREQUENTIST_HEAD.split(":")[0], BAYESIAN_HEAD.split(":")[0],
                 OVERTURN_HEAD.split(":")[0], SIGNIFICANCE_HEAD.split(":")[0]):
        assert head in flat, head
    actions = claim_actions(arena)
    # the whole claims table is on the first page (the rule under it may move to the next)
    table = first[first.index("to lose significance"):first.index("Rule.") if "Rule." in first else len(first)]
    verdict_words = re.findall(r"\b(not searched|not converged|unsupported|supported|fragile)\b", table)
    assert verdict_words == [c.verdict for c in arena.claims]  # the layout text reads the table row by row
    for c in arena.claims:
        for line in perturbation_lines(c.perturbation, actions) + perturbation_lines(c.significance_perturbation,
                                                                                     actions):
            if "%" in line:  # an answer: 'flip: 198 (0.012%) ✓' stays on one line of its cell
                assert line in first, line
    img = pdf_page_image(pdf, 1)
    for v in {c.verdict for c in arena.claims}:
        rgb = np.array(VERDICT_RGB[v]) / 255
        near = (np.abs(img - rgb) < 0.06).all(axis=2).sum()
        assert near > 30, (v, near)  # a badge of that colour, not a white outline
