"""The lock files agree with pyproject.toml: every direct dependency is pinned, with hashes, to a
version its range allows, and the runtime lock pins the same versions as the test lock.
(``./dev lock`` regenerates them; see CONTRIBUTING.md.)"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def _pins(name: str) -> dict[str, str]:
    text = (REPO / "requirements" / name).read_text()
    pins = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        m = PIN.match(block)
        if m:
            assert "--hash=sha256:" in block, f"{name}: {m.group(1)} has no hash"
            pins[canonicalize_name(m.group(1))] = m.group(2)
    return pins


def _requirements(extra: str | None) -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    reqs = project["dependencies"] + (project["optional-dependencies"][extra] if extra else [])
    return [Requirement(r) for r in reqs]


@pytest.mark.parametrize("lock,extra", [("runtime.lock", None), ("test.lock", "test")])
def test_every_direct_dependency_is_pinned_within_its_range(lock, extra):
    pins = _pins(lock)
    for req in _requirements(extra):
        name = canonicalize_name(req.name)
        assert name in pins, f"{req} is in pyproject.toml but not in requirements/{lock}: run ./dev lock"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"requirements/{lock} pins {name}=={pins[name]} outside {req}: run ./dev lock")


def test_runtime_and_test_locks_pin_the_same_versions():
    runtime, test = _pins("runtime.lock"), _pins("test.lock")
    assert set(runtime) <= set(test)
    assert {n: v for n, v in runtime.items() if test[n] != v} == {}


def test_tools_lock_pins_what_tools_in_names():
    """requirements/tools.lock (the uv that ./dev installs the environment with) pins every tool of
    requirements/tools.in, with hashes, at a version its specifier allows, and nothing else."""
    wanted = [Requirement(line) for line in (REPO / "requirements" / "tools.in").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    pins = _pins("tools.lock")
    assert set(pins) == {canonicalize_name(r.name) for r in wanted}
    for req in wanted:
        assert req.specifier.contains(pins[canonicalize_name(req.name)]), (req, pins)
