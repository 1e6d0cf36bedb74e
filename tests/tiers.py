"""The two tiers of the suite's calibration checks (SBC, coverage, size and error rates by simulation).

Each such check is one test run at two sizes:

* ``default`` — in ``./dev test``: few replications and a looser bound that still fails when the
  estimator is wrong (each test's docstring names the failure its default size catches, e.g. "an
  interval 20% too narrow" or "a posterior half as wide as it should be");
* ``validation`` — in ``./dev validate`` (and CI, after the default suite): the long run that tells
  95% from 93%, marked ``validation``; its recorded table (replications, achieved rate, Monte Carlo
  SE) is in docs/validation.md.

``@tiers(default={...}, validation={...})`` parametrises a test over both; the test receives
``tier`` (``tier.name`` and the settings as attributes). :func:`record` prints a check's table row
and, with ``BAYESRANK_VALIDATION_LOG=FILE``, appends it to FILE as one JSON line (the source of
docs/validation.md).
"""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest


def tiers(default: dict, validation: dict, scope: str | None = None):
    """Parametrise over the default suite's small run and the validation tier's long run (``scope``:
    that of the fixtures that take ``tier``, e.g. "module" for a shared simulation)."""
    return pytest.mark.parametrize("tier", [
        pytest.param(SimpleNamespace(name="default", **default), id="default"),
        pytest.param(SimpleNamespace(name="validation", **validation), id="validation", marks=pytest.mark.validation),
    ], scope=scope)


def record(check: str, tier, **row) -> None:
    """(``tier``: a :func:`tiers` parameter or its name.) One row of a calibration check's table (e.g. reps, rate, mc_se, bound), printed (pytest -s)
    and appended to ``$BAYESRANK_VALIDATION_LOG`` when set."""
    entry = {"check": check, "tier": tier if isinstance(tier, str) else tier.name, **{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}}
    print(json.dumps(entry, ensure_ascii=False))
    path = os.environ.get("BAYESRANK_VALIDATION_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
