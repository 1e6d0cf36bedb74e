"""Small real datasets bundled with the package (sources and licences in README.md here)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent


def path(name: str) -> Path:
    """Absolute path of a bundled file, e.g. ``path("llmfao/crowd-comparisons.csv")``."""
    p = ROOT / name
    if not p.exists():
        available = sorted(str(q.relative_to(ROOT)) for q in ROOT.rglob("*") if q.is_file() and q.suffix != ".py")
        raise FileNotFoundError(f"no bundled dataset {name!r}; available: {', '.join(available[:40])} ...")
    return p
