"""Lazy package exports (bayesrank._lazy): same public names as eager imports, nothing loaded early."""

from __future__ import annotations

import subprocess
import sys

import pytest

PACKAGES = ["bayesrank.bt", "bayesrank.data", "bayesrank.hja", "bayesrank.calibration", "bayesrank.configflip",
            "bayesrank.influence"]


def _fresh(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_resolves_to_the_defining_modules_object(package):
    out = _fresh(f"""
import importlib, sys
pkg = importlib.import_module({package!r})
loaded = sorted(m for m in sys.modules if m.startswith({package!r} + "."))
objs = {{n: getattr(pkg, n) for n in pkg.__all__}}
bad = [n for n, o in objs.items() if hasattr(o, "__module__") and isinstance(o, type(len)) is False
       and callable(o) and getattr(sys.modules[o.__module__], n, None) is not o]
print(loaded, bad, sorted(set(pkg.__all__) - set(dir(pkg))))
""")
    assert out == "[] [] []"  # importing the package loaded no submodule; every name is the real object


def test_exported_function_wins_over_a_same_named_submodule():
    """``bayesrank.data.aggregate`` is the function (as with the old eager imports), even after the
    submodule ``bayesrank.data.aggregate`` was imported by someone else first."""
    out = _fresh("""
import bayesrank.data.aggregate as first
import bayesrank.data
from bayesrank.data import aggregate
print(callable(aggregate) and aggregate.__name__ == "aggregate", type(bayesrank.data.aggregate).__name__)
""")
    assert out == "True function"
