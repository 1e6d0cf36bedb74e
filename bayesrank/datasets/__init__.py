"""Small real datasets bundled with the package, and the ONE resolver every subcommand uses for
``DATA`` arguments (sources and licences in README.md here).

Only permissively licensed data ship in the wheel (:data:`SHIPPED`). Test fixtures under other
licences live in the source tree's ``tests/datasets/`` (:data:`TEST_ONLY`); :func:`path` finds them
in a source checkout (or in folders listed in ``$BAYESRANK_DATA_PATH``) and otherwise says where
they come from. ``python -m bayesrank.datasets`` lists every name.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent
#: ``tests/datasets`` of a source checkout (absent in an installed wheel)
SOURCE_TEST_DATA = ROOT.parents[1] / "tests" / "datasets"

#: bundled folder -> licence (SPDX); every one permissive, so they ship inside the MIT wheel
SHIPPED = {
    "arena": "BSD-3-Clause AND Apache-2.0",
    "eval_grid": "MIT",
    "evalica": "Apache-2.0",
    "items": "Apache-2.0",
    "llmfao": "CC-BY-4.0",
    "sports": "MIT",
}
#: test-fixture folder -> licence; kept out of the wheel (tests/datasets/ in the source tree)
TEST_ONLY = {
    "alpaca_eval": "CC-BY-NC-4.0",
    "calibration": "none stated",
    "tennis": "CC-BY-NC-SA-4.0",
}
PERMISSIVE_LICENCES = {"MIT", "BSD-3-Clause", "Apache-2.0", "CC-BY-4.0"}

#: short name -> bundled path; the same names work for every subcommand's DATA argument
ALIASES = {
    "arena": "arena/chatbotarena_20240814.json",
    "arena-hard": "arena/arena_hard_auto_battles_gpt4judge.jsonl",
    "llmfao": "llmfao/crowd-comparisons.csv",
    "llmfao-gpt3": "llmfao/gpt3-crowd-comparisons.csv",
    "llmfao-gpt4": "llmfao/gpt4-crowd-comparisons.csv",
    "llmfao-panel": "llmfao/panel-crowd-gpt3-gpt4.csv",
    "nba": "sports/nba_games_2023_24_tidy.csv",
    "evalica-food": "evalica/food.csv",
    "evalica-simple": "evalica/simple.csv",
    "lm-eval-2023": "eval_grid/lm_eval_harness_2023/lm_eval_harness_results_long.csv",
    "lm-eval-2023-raw": "eval_grid/lm_eval_harness_2023/raw",
    "lm-eval-2023-table": "eval_grid/lm_eval_harness_2023/published_table_arc_gsm8k.csv",
    "arena-bench-items": "items/arena_bench_v1_gpt4_single_scores_01.csv",
    # test fixtures (source checkout only; see TEST_ONLY)
    "atp-2023": "tennis/atp_matches_2023.csv",
    "atp-2024": "tennis/atp_matches_2024.csv",
    "wta-2024": "tennis/wta_matches_2024.csv",
    "alpaca-eval": "alpaca_eval/alpaca_eval_gpt4turbo_3annotators.csv",
    "boolq": "calibration",
    "boolq-llama3": "calibration",
}


def roots() -> list[Path]:
    """Folders searched for bundled names, in order: the package, ``$BAYESRANK_DATA_PATH``, and the
    source checkout's ``tests/datasets``."""
    extra = [Path(p) for p in os.environ.get("BAYESRANK_DATA_PATH", "").split(os.pathsep) if p]
    return [ROOT, *extra, *([SOURCE_TEST_DATA] if SOURCE_TEST_DATA.is_dir() else [])]


def canonical(name: str) -> str:
    """The relative bundled path of an alias (``ATP_2024`` = ``atp-2024``) or of a relative path."""
    key = str(name).strip().lower().replace("_", "-")
    return ALIASES.get(key, str(name))


def path(name: str) -> Path:
    """Absolute path of a bundled file or folder, by alias (``"llmfao"``) or relative path
    (``"llmfao/crowd-comparisons.csv"``)."""
    rel = canonical(name)
    for root in roots():
        p = root / rel
        if p.exists():
            return p
    folder = rel.split("/")[0]
    if folder in TEST_ONLY:
        raise FileNotFoundError(
            f"{name!r} is a test fixture ({TEST_ONLY[folder]}) that is not shipped in the bayesrank wheel: "
            f"use a source checkout (tests/datasets/{rel}) or point $BAYESRANK_DATA_PATH at a folder holding {rel}")
    raise FileNotFoundError(f"no such file and no bundled dataset {name!r}; short names: {', '.join(ALIASES)} "
                            "(`python -m bayesrank.datasets` lists every bundled file)")


def resolve(data) -> Path:
    """A ``DATA`` argument: the file or folder as given if it exists, else the bundled dataset of that
    alias or relative name; the error lists the short names."""
    p = Path(data)
    return p if p.exists() else path(str(data))


def available() -> list[str]:
    """Bundled data files findable from here (a folder named ``raw`` is listed once, not file by file)."""
    names = set()
    for root in roots():
        for q in root.rglob("*"):
            if q.is_file() and q.suffix not in (".py", ".md", ".pyc") and "__pycache__" not in q.parts:
                parts = q.relative_to(root).parts
                cut = parts.index("raw") + 1 if "raw" in parts else len(parts)
                names.add("/".join(parts[:cut]) + ("/" if cut < len(parts) else ""))
    return sorted(names)


def licence_problems(files) -> list[str]:
    """Files (paths relative to the package data root, e.g. taken from a wheel) that must not ship:
    anything outside a :data:`SHIPPED` folder other than this module and its README, and any
    shipped folder whose licence is not permissive."""
    problems = []
    for f in files:
        parts = Path(f).parts
        if len(parts) == 1 and parts[0] in ("__init__.py", "__main__.py", "README.md"):
            continue
        if "__pycache__" in parts:
            continue
        licence = SHIPPED.get(parts[0])
        if licence is None or len(parts) == 1:
            problems.append(f"{f}: not in a permissively licensed bundled folder ({', '.join(SHIPPED)})")
        elif not set(licence.split(" AND ")) <= PERMISSIVE_LICENCES:
            problems.append(f"{f}: folder licence {licence} is not permissive")
    return problems
