"""Test fixtures that are not shipped in the wheel (licences in README.md here)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent


def path(name: str) -> Path:
    """Absolute path of a fixture here, e.g. ``path("tennis/atp_matches_2024.csv")``."""
    p = ROOT / name
    if not p.exists():
        raise FileNotFoundError(f"no test fixture {name!r} in tests/datasets")
    return p
