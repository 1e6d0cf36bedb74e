"""The README's examples run as printed and pass the package's own convergence checks."""

import re
import shlex
from pathlib import Path

import pytest

from bayesrank.protocol import Result

ROOT = Path(__file__).resolve().parents[1]


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


@pytest.mark.slow
def test_python_api_example_runs_and_converges(tmp_path, monkeypatch):
    """Every result the example makes (the review, MLE, NUTS, the rank analysis, the audit) is
    converged by its own diagnostics (R-hat, ESS and divergences for NUTS)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    code = blocks("python")
    assert code, "README.md has no python example"
    names: dict = {}
    for block in code:
        exec(compile(block, "README.md", "exec"), names)
    results = {k: v for k, v in names.items() if isinstance(v, Result)}
    assert {"report", "mle", "post"} <= set(results)
    for name, res in results.items():
        assert res.diagnostics.converged, f"{name}: {res.diagnostics.line()}"
    assert (tmp_path / "out" / "review.html").stat().st_size > 10_000


def _fast_commands() -> list[list[str]]:
    """The README's `bayesrank review ... --fast` command lines (the quick ones; the NUTS review is the
    demo's, tested there)."""
    out = []
    for block in blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("#")[0].strip()
            if line.startswith("bayesrank review") and "--fast" in line and "DATA" not in line:
                out.append(shlex.split(line)[1:])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("args", _fast_commands(), ids=lambda a: " ".join(a[:2]))
def test_fast_review_commands_run_and_converge(args, tmp_path):
    import json

    from bayesrank.cli import main

    out = tmp_path / "r.json"
    assert main([*args, "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["diagnostics"]["converged"], doc["diagnostics"]["messages"]
