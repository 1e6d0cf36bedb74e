"""The items section of the review page as headless Chromium renders it (bundled arena-bench
questions): the leaderboard table in the DOM carries every model in mean-score order with the mean
and its interval equal to an independent pandas/scipy computation (t interval on 270 df), both
figures are drawn, nothing runs over the page at a laptop's or a printed page's width, and the
screenshot is not blank."""

import re
import subprocess

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayesrank.datasets import path
from bayesrank.review.api import review

from ..review.chromium import chromium, layout


@pytest.fixture(scope="module")
def page():
    return review("arena-bench-items", fast=True).to_html()


def _leaderboard_rows(dom: str) -> list[list[str]]:
    sec = dom[dom.index("<h2>Items leaderboard</h2>"):]
    body = sec[sec.index("<tbody>"):sec.index("</tbody>")]
    return [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
            for tr in re.findall(r"<tr>(.*?)</tr>", body)]


def test_items_section_in_headless_chromium(page, tmp_path):
    html = tmp_path / "review.html"
    html.write_text(page, encoding="utf-8")
    base = chromium(tmp_path / "profile")
    dom = subprocess.run(base + ["--dump-dom", html.as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert "<h2>Items leaderboard</h2>" in dom and "<h2>Item-response model</h2>" in dom
    rows = _leaderboard_rows(dom)
    raw = pd.read_csv(path("arena-bench-items"))
    wide = raw.pivot(index="item", columns="model", values="score").dropna()
    means = wide.mean().sort_values(ascending=False, kind="stable")
    assert [r[0] for r in rows] == list(means.index)
    n = len(wide)
    half = stats.t.ppf(0.975, n - 1) * wide.std(ddof=1) / np.sqrt(n)
    for r in rows:
        m = r[0]
        assert float(r[1]) == pytest.approx(means[m], abs=5e-5)
        assert float(r[2]) == pytest.approx(means[m] - half[m], abs=5e-5)
        assert float(r[3]) == pytest.approx(means[m] + half[m], abs=5e-5)
        assert int(r[5]) <= int(r[4]) <= int(r[6])  # the rank lies in its simultaneous rank set
    sec = dom[dom.index("<h2>Items leaderboard</h2>"):dom.index("<h2>Item-response model</h2>")]
    assert sec.count("<figure>") == 2 and sec.count('src="data:image/') == 2
    assert "rank spread" in sec and "pairwise P(θ_row &gt; θ_column)" in sec
    shot = tmp_path / "shot.png"
    subprocess.run(base + [f"--screenshot={shot}", "--window-size=1280,1600", html.as_uri()],
                   capture_output=True, timeout=120)
    import matplotlib.image as mpimg

    img = mpimg.imread(shot)[..., :3]
    assert img.shape[:2] == (1600, 1280) and (img < 0.95).any(axis=2).mean() > 0.02


@pytest.mark.parametrize("width", [1280, 720])
def test_items_page_has_no_horizontal_overflow(page, tmp_path, width):
    scroll, client, over = layout(page, width, tmp_path)
    assert scroll <= client and client > width - 40, (scroll, client)
    assert over == []
