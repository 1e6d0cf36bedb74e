"""Small real datasets bundled with the package (sources and licences in README.md here)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent


def path(name: str) -> Path:
    """Absolute path of a bundled file, e.g. ``path("llmfao/crowd-comparisons.csv")``."""
    p = ROOT / name
    if not p.exists():
        raise FileNotFoundError(f"no such file and no bundled dataset {name!r}; bundled: {', '.join(available())}")
    return p


def resolve(data) -> Path:
    """A file path as given if it exists, else the bundled dataset of that name (e.g.
    ``"arena/chatbotarena_20240814.json"``); the error lists the bundled names."""
    p = Path(data)
    return p if p.exists() else path(str(data))


def available() -> list[str]:
    """Bundled data files (a folder named ``raw`` is listed once, not file by file)."""
    names = set()
    for q in ROOT.rglob("*"):
        if q.is_file() and q.suffix not in (".py", ".md") and "__pycache__" not in q.parts:
            parts = q.relative_to(ROOT).parts
            cut = parts.index("raw") + 1 if "raw" in parts else len(parts)
            names.add("/".join(parts[:cut]) + ("/" if cut < len(parts) else ""))
    return sorted(names)
