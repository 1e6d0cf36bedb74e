"""Headless Chromium for the page tests: the layout a person sees at a window width, and the page
printed to PDF (Debian's chromium, installed by ``.ci/system-tools``; the locked pypdf reads the
PDF's text and pypdfium2 renders its pages to pixels)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

# measured after load: the document's scroll width, its client width, and every element that sticks
# out of the viewport or whose content overflows its own box (a cell whose text is cut or runs over)
LAYOUT_JS = """window.addEventListener('load', function () {
  var d = document.documentElement;
  var over = [].slice.call(document.querySelectorAll('td, th, table, figure, img, p, h1, h2, h3, div'))
    .filter(function (e) { return e.getBoundingClientRect().right > d.clientWidth + 0.5 || e.scrollWidth > e.clientWidth + 1; })
    .map(function (e) { return e.tagName + ': ' + (e.textContent || '').slice(0, 60).replace(/"/g, "'"); });
  document.body.setAttribute('data-scroll-width', d.scrollWidth);
  document.body.setAttribute('data-client-width', d.clientWidth);
  document.body.setAttribute('data-overflow', over.join(' || '));
});"""


MISSING = ("Debian's chromium is not installed and ./dev could not install it "
           "(README, 'System tools': apt-get install -y chromium)")


def chromium(profile: Path) -> list[str]:
    """The headless command line. Without chromium the test is skipped with one line naming it (the
    README says how to install it), except under CI (CI=true), where it fails: CI must run it."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        import pytest

        if os.environ.get("CI") == "true":
            pytest.fail(MISSING, pytrace=False)
        pytest.skip(MISSING)
    return [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}"]


def layout(page_html: str, width: int, tmp: Path) -> tuple[int, int, list[str]]:
    """(document scroll width, client width, overflowing elements) of the page in a window ``width``
    pixels wide. The measuring script is added to a copy whose Content-Security-Policy is removed
    (the report itself runs no script)."""
    src = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page_html)
    src = src.replace("</body>", f"<script>{LAYOUT_JS}</script></body>")
    page = tmp / f"layout-{width}.html"
    page.write_text(src, encoding="utf-8")
    cmd = chromium(tmp / f"profile-{width}") + [f"--window-size={width},1000", "--virtual-time-budget=5000",
                                                "--dump-dom", page.as_uri()]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=180).stdout
    m = re.search(r'data-scroll-width="(\d+)" data-client-width="(\d+)" data-overflow="([^"]*)"', dom)
    assert m, f"the measuring script did not run: {dom[:300]!r}"
    over = [x for x in m.group(3).split(" || ") if x]
    return int(m.group(1)), int(m.group(2)), over


def print_pdf(page_html: str, tmp: Path) -> Path:
    """The page printed by Chromium (its default paper, Letter; no header or footer)."""
    page = tmp / "print.html"
    page.write_text(page_html, encoding="utf-8")
    pdf = tmp / "page.pdf"
    cmd = chromium(tmp / "profile-print") + ["--no-pdf-header-footer", f"--print-to-pdf={pdf}", page.as_uri()]
    subprocess.run(cmd, capture_output=True, timeout=180)
    assert pdf.exists() and pdf.stat().st_size > 1000, "Chromium wrote no PDF"
    return pdf


def pdf_text(pdf: Path, page: int | None = None) -> str:
    """The text of page ``page`` (1-based; all pages if None) as laid out on the page (pypdf's layout
    mode: one text line per printed line, columns kept apart by spaces), ligatures unfolded (NFKC:
    'ﬂip' -> 'flip')."""
    import pypdf

    reader = pypdf.PdfReader(pdf)
    pages = [reader.pages[page - 1]] if page else list(reader.pages)
    return unicodedata.normalize("NFKC", "\n".join(p.extract_text(extraction_mode="layout") for p in pages))


def pdf_page_image(pdf: Path, page: int, dpi: int = 60):
    """Page ``page`` (1-based) rendered by PDFium at ``dpi`` (RGB floats in [0, 1], rows × columns × 3)."""
    import numpy as np
    import pypdfium2

    doc = pypdfium2.PdfDocument(pdf)
    try:
        image = doc[page - 1].render(scale=dpi / 72).to_pil().convert("RGB")
    finally:
        doc.close()
    return np.asarray(image, dtype=float) / 255
