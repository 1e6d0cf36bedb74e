"""Fail when a built wheel carries bundled data outside the permissively licensed folders.

    python .ci/check_wheel.py dist/bayesrank-*.whl
"""

from __future__ import annotations

import sys
import zipfile

from bayesrank.datasets import SHIPPED, licence_problems


def main(wheel: str) -> int:
    names = zipfile.ZipFile(wheel).namelist()
    data = [n.removeprefix("bayesrank/datasets/") for n in names if n.startswith("bayesrank/datasets/")]
    problems = licence_problems(data)
    problems += [f"{n}: test fixture in the wheel" for n in names if n.startswith("tests/")]
    for p in problems:
        print(f"wheel licence check: {p}", file=sys.stderr)
    if not problems:
        print(f"wheel licence check: {len(data)} bundled data files, all in permissive folders ({', '.join(SHIPPED)})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
