"""The malformed-input corpus: every case run through every command. Each run is a clean success or
ONE line on stderr with exit code 2 (3 only for a documented numerical failure) — never a traceback,
never a second line — and where the case names the expected message, the line matches it.

A case is a file (or folder, or flag) built in a temporary folder; ``expect`` maps a command (or
``"*"`` for every command) to ``(exit code, regex of the one line)``. Grow this table with every bug
found: a new case is one entry."""

from __future__ import annotations

import gzip
import json
import re

import numpy as np
import pandas as pd
import pytest

from bayesrank.cli import main

PLAYERS = ["alpha", "beta", "gamma", "delta", "eps"]


def _votes(n_rounds: int = 3, seed: int = 0) -> pd.DataFrame:
    """Every pair met ``n_rounds`` times; outcomes random but each player wins and loses (finite MLE)."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(n_rounds):
        for i, a in enumerate(PLAYERS):
            for b in PLAYERS[i + 1:]:
                rows.append((a, b, ["a", "b", "tie"][(r + i) % 3] if rng.random() < 0.5 else rng.choice(["a", "b"])))
    return pd.DataFrame(rows, columns=["model_a", "model_b", "outcome"])


def _write(tmp, name, text=None, data=None):
    f = tmp / name
    if data is not None:
        f.write_bytes(data)
    else:
        f.write_text(text)
    return str(f)


def _csv(df, **kw):
    return df.to_csv(index=False, **kw)


# ------------------------------------------------------------------------------------------ the cases
FILE_ERRORS = {  # the same one line whatever the command
    "empty file": (lambda t: _write(t, "empty.csv", ""), r"empty\.csv: empty file \(0 bytes\)"),
    "blank lines only": (lambda t: _write(t, "blank.csv", "\n\n  \n"), r"blank\.csv: empty file"),
    "header only": (lambda t: _write(t, "head.csv", "model_a,model_b,outcome\n"), r"head\.csv: a header but no data rows"),
    "binary garbage": (lambda t: _write(t, "bin.csv", data=bytes(range(256)) * 8), r"bin\.csv: not a text table"),
    "truncated JSON": (lambda t: _write(t, "cut.json", json.dumps(_votes().to_dict("records"), indent=1)[:700]),
                       r"cut\.json line \d+ column \d+: not valid JSON"),
    "JSONL with one bad line": (lambda t: _write(t, "bad.jsonl", "\n".join(
        [json.dumps(r) for r in _votes().to_dict("records")][:4] + ['{"model_a": "x", "model_b"'] +
        [json.dumps(r) for r in _votes().to_dict("records")][4:]) + "\n"), r"bad\.jsonl line 5: not valid JSON"),
    "ragged CSV row": (lambda t: _write(t, "ragged.csv", _csv(_votes()) + "alpha,beta,a,extra\n"),
                       r"ragged\.csv line 32: 4 fields where the header has 3"),
    "truncated Parquet": (lambda t: _parquet_cut(t), r"cut\.parquet: not a readable Parquet file"),
    "spreadsheet": (lambda t: _write(t, "book.xlsx", data=b"PK\x03\x04xx"), r"book\.xlsx: a spreadsheet file"),
    "missing file": (lambda t: str(t / "nope.csv"), r"no such file|no bundled dataset"),
    "gzip that is not": (lambda t: _write(t, "v.csv.gz", "model_a,model_b\n"), r"v\.csv\.gz: not a readable gzip file"),
}


def _parquet_cut(t):
    _votes().to_parquet(t / "whole.parquet")
    data = (t / "whole.parquet").read_bytes()
    return _write(t, "cut.parquet", data=data[: len(data) // 2])


PAIRWISE = ("fit", "ranks", "audit", "review")
TABLES = PAIRWISE + ("hja", "calibration")  # read tables with bayesrank.data.tables; configflip/card read
# harness formats by suffix (a .jsonl is lm-eval samples there), so they must answer in one line but
# may name another problem first
CASES = {name: (build, [], {c: (2, pattern) for c in TABLES}) for name, (build, pattern) in FILE_ERRORS.items()}
CASES.update({
    # pairwise content: pairwise commands answer with the row's line; the others say what they expected
    "self-comparison": (lambda t: _write(t, "self.csv", _csv(_votes()) + "gamma,gamma,a\n"), [],
                        {c: (2, r"line 32 of .*self\.csv: columns 'model_a'/'model_b' name the same player twice.*"
                                r"--exclude-invalid") for c in PAIRWISE}),
    "unknown outcome": (lambda t: _write(t, "unk.csv", _csv(_votes()).replace(",tie\n", ",unparsed\n", 1)), [],
                        {c: (2, r"column 'outcome' has outcome value\(s\) 'unparsed'.*--outcome-map unparsed=a\|b\|tie"
                                r"\|invalid") for c in PAIRWISE}),
    "ambiguous 0/1/2 outcomes": (lambda t: _write(t, "num.csv", _csv(_votes().assign(
        result=lambda d: d["outcome"].map({"a": 1, "b": 2, "tie": 0})).drop(columns="outcome"))), [],
        {c: (2, r"numbers 0, 1, 2.*--outcome-map 1=a,2=b,0=tie") for c in PAIRWISE}),
    "all weights zero": (lambda t: _write(t, "w0.csv", _csv(_votes().assign(weight=0.0))), [],
                         {c: (2, r"every weight is 0") for c in PAIRWISE}),
    "non-integer arena index": (lambda t: _write(t, "arena.json", json.dumps(
        {"models": PLAYERS, "X": [[0, 1], [1.5, 2], [2, 0]], "Y": [[1, 1, 0, 0]] * 3})), [],
        {c: (2, r"non-integer model indices") for c in PAIRWISE}),
    "duplicated column used": (lambda t: _write(t, "dup.csv", "model_a,model_b,winner,winner\n" + "".join(
        f"{a},{b},model_a,model_b\n" for a, b in [("alpha", "beta"), ("beta", "gamma"), ("gamma", "alpha")])), [],
        {c: (2, r"column 'winner' appears 2 times") for c in PAIRWISE}),
    "no recognisable columns": (lambda t: _write(t, "x.csv", "foo,bar\n1,2\n3,4\n"), [],
                                {c: (2, r"cannot tell which columns.*--columns a=COL,b=COL") for c in PAIRWISE}),
    "judges kind without a judge": (lambda t: _write(t, "v.csv", _csv(_votes())), ["--kind", "judges"],
                                    {"review": (2, r"--kind judges needs a judge column")}),
    "hja without a judge": (lambda t: _write(t, "v.csv", _csv(_votes())), [],
                            {"hja": (2, r"no judge column: pass --judge-col")}),
    "negative style features": (lambda t: _write(t, "s.csv", _csv(_votes().assign(
        len_a=lambda d: np.where(np.arange(len(d)) == 4, -3, 100), len_b=50))), ["--style", "len_a:len_b"],
        {c: (2, r"line 6 of .*s\.csv: column 'len_a' has negative style values") for c in ("fit", "audit")}),
    "calibration row without a group": (lambda t: _write(t, "cal.csv", _csv(pd.DataFrame({
        "model": ["m1", "m1", None, "m2", "m2", "m2"] * 5, "correct": [1, 0, 1, 1, 0, 1] * 5,
        "verbal": [0.9, 0.4, 0.8, 0.7, 0.3, 0.6] * 5, "token": [0.8, 0.3, 0.9, 0.6, 0.2, 0.7] * 5}))), [],
        {"calibration": (2, r"lines 4, 10, 16, 22, 28 of .*cal\.csv: column 'model' has no group value \(5 rows\); "
                            r"--exclude-invalid")}),
    # flags checked before any work
    "--top -1": (lambda t: _write(t, "v.csv", _csv(_votes())), ["--top", "-1"],
                 {c: (2, r"argument --top: expected an integer >= 1, got -1") for c in ("fit", "ranks")}),
    "--draws 0": (lambda t: _write(t, "v.csv", _csv(_votes())), ["--draws", "0"],
                  {c: (2, r"argument --draws: expected an integer >= 1, got 0") for c in ("fit", "ranks", "hja")}),
    "--seed -1": (lambda t: _write(t, "v.csv", _csv(_votes())), ["--seed", "-1"],
                  {c: (2, r"argument --seed: expected an integer >= 0, got -1") for c in PAIRWISE + ("hja",)}),
    "--columns unknown key": (lambda t: _write(t, "v.csv", _csv(_votes())), ["--columns", "player=model_a"],
                              {c: (2, r"--columns: unknown key 'player'") for c in ("fit", "ranks", "audit")}),
    # output paths: checked before the data are read
    "--json onto a folder": (lambda t: _write(t, "v.csv", _csv(_votes())), ["--json", "{tmp}"],
                             {"*": (2, r"--json .*: is a folder; expected a file path")}),
    "--json under a file": (lambda t: _write(t, "v.csv", _csv(_votes())), ["--json", "{tmp}/v.csv/out.json"],
                            {"*": (2, r"--json .*v\.csv is a file, not a folder")}),
    "--json in an unwritable place": (lambda t: _write(t, "v.csv", _csv(_votes())), ["--json", "/proc/bayesrank/out.json"],
                                      {"*": (2, r"--json /proc/bayesrank/out\.json: cannot write in /proc")}),
    "--plots onto a file": (lambda t: _write(t, "v.csv", _csv(_votes())), ["--plots", "{tmp}/v.csv"],
                            {c: (2, r"--plots .*v\.csv: is a file; expected a folder") for c in
                             ("fit", "ranks", "audit", "hja", "calibration", "configflip")}),
    "--html and --md the same file": (lambda t: _write(t, "v.csv", _csv(_votes())),
                                      ["--html", "{tmp}/r.html", "--md", "{tmp}/r.html"],
                                      {"review": (2, r"--html and --md both name")}),
    "--md onto a folder": (lambda t: _write(t, "v.csv", _csv(_votes())), ["--md", "{tmp}"],
                           {"review": (2, r"--md .*: is a folder")}),
    "full disk": (lambda t: _write(t, "v.csv", _csv(_votes())), ["--json", "/dev/full"],
                  {c: (2, r"cannot write /dev/full: No space left on device") for c in ("fit", "ranks", "audit")}),
    # data that must be read as they come (a clean success in the pairwise commands)
    "Latin-1 file": (lambda t: _write(t, "l1.csv", data=_csv(_votes().replace("eps", "Zoë")).encode("latin-1")), [],
                     {c: (0, None) for c in ("fit", "audit")}),
    "UTF-16 file with BOM": (lambda t: _write(t, "u16.csv", data=_csv(_votes()).encode("utf-16")), [],
                             {c: (0, None) for c in ("fit", "audit")}),
    "semicolon delimiter": (lambda t: _write(t, "semi.csv", _csv(_votes(), sep=";")), [],
                            {c: (0, None) for c in ("fit", "audit")}),
    "names that look like numbers": (lambda t: _write(t, "num.csv", _csv(_votes().replace(
        {"alpha": "3.10", "beta": "3.1", "gamma": "007", "delta": "7"}))), [], {"fit": (0, None)}),
    # separation: exit 3 in one line whose advice names only flags the command has
    "a player who never lost": (lambda t: _write(t, "sep.csv", _csv(_votes()) + "".join(
        f"zeta,{p},a\n" for p in PLAYERS)), [],
        {"fit": (3, r"never lost.*pass --ridge 0\.01 \(a penalty\) or --method map / nuts"),
         "ranks": (3, r"never lost.*pass --method laplace or nuts"),
         "audit": (3, r"never lost.*pass --ridge 0\.01 for finite scores, or --min-matches N"),
         "review": (0, None)}),  # review answers with Firth's fit (tests/review/test_separation.py)
    "two groups never compared": (lambda t: _write(t, "groups.csv", _csv(_votes()) + "omega,psi,a\npsi,omega,b\n"), [],
                                  {"fit": (3, r"2 disconnected components"),
                                   "review": (0, None)}),  # the largest group, the other counted (test_separation)
    "--rank on pairwise data": (lambda t: _write(t, "v.csv", _csv(_votes())), ["--rank", "2"],
                                {"review": (2, r"--rank applies to judges data \(this is pairwise data\)")}),
    "empty file in a streamed folder": (lambda t: _folder_with_empty(t), [],
                                        {c: (2, r"part-1\.csv: empty file") for c in ("fit", "review")}),
    # published results tables (review --kind table, detected from the columns)
    "results table with correct above n": (lambda t: _write(t, "tab.csv", "model,correct,n\nA,12,10\nB,5,10\n"), [],
                                           {"review": (2, r"correct > n on line 2 of .*tab\.csv")}),
    "results table with one model": (lambda t: _write(t, "one.csv", "model,accuracy,n\nA,0.5,10\n"), [],
                                     {"review": (2, r"one model per benchmark")}),
    "results table as printed (71.2%, 1,319)": (lambda t: _write(
        t, "printed.csv", 'model,accuracy,n\nours,71.2%,"1,319"\nbaseline,70.5%,"1,319"\n'), [], {"review": (0, None)}),
    # issue 27's causes: each now read, or one line naming the row and the column
    "folder of gzipped CSVs": (lambda t: _gz_folder(t), [], {c: (0, None) for c in PAIRWISE}),
    "Parquet outcome of floats 1.0/0.0/0.5": (lambda t: _parquet(t, "f.parquet", _votes().assign(
        outcome=lambda d: d["outcome"].map({"a": 1.0, "b": 0.0, "tie": 0.5}))), [], {c: (0, None) for c in PAIRWISE}),
    "Parquet outcome of floats 1.0/0.0": (lambda t: _parquet(t, "f01.parquet", _votes().assign(
        outcome=lambda d: d["outcome"].map({"a": 1.0, "b": 0.0, "tie": 1.0}))), [],
        {c: (2, r"the outcome column 'outcome' holds the numbers 0, 1.*--outcome-map 1=a,0=b") for c in PAIRWISE}),
    "empty cell in a wide judge column": (lambda t: _write(t, "wide.csv", _wide_judges().to_csv(index=False)), [],
                                          {c: (2, r"line 6 of .*wide\.csv: empty cell in judge column 'annotator2'")
                                           for c in ("review", "hja")}),
    "blank judge name": (lambda t: _write(t, "j.csv", _csv(_votes().assign(
        judge=lambda d: np.where(np.arange(len(d)) == 5, " ", np.where(np.arange(len(d)) % 2, "j1", "j2"))))), [],
        {c: (2, r"line 7 of .*j\.csv: column 'judge' has no judge \(an empty cell\)") for c in ("review", "hja")}),
    "style feature without variation": (lambda t: _write(t, "s.csv", _csv(_votes().assign(len_a=100, len_b=100))),
                                        ["--style", "len_a:len_b"],
                                        {c: (2, r"--style len_a:len_b: the feature has no variation")
                                         for c in ("fit", "audit", "review")}),
    "style feature copying another": (lambda t: _write(t, "s2.csv", _csv(_votes().assign(
        len_a=lambda d: 10 + np.arange(len(d)) % 7, len_b=20, n_a=lambda d: 10 + np.arange(len(d)) % 7, n_b=20))),
        ["--style", "len_a:len_b,n_a:n_b"],
        {c: (2, r"--style n_a:n_b: the feature is a linear combination of len_a:len_b") for c in ("fit", "audit", "review")}),
})


def _parquet(t, name, df):
    df.to_parquet(t / name, index=False)
    return str(t / name)


def _gz_folder(t):
    folder = t / "gz"
    folder.mkdir()
    votes = _votes(n_rounds=4)
    for n, part in enumerate((votes.iloc[:20], votes.iloc[20:])):
        (folder / f"part-{n}.csv.gz").write_bytes(gzip.compress(_csv(part).encode()))
    return str(folder)


def _wide_judges() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    wide = _votes(n_rounds=4)[["model_a", "model_b"]].copy()
    for k in (1, 2, 3):
        wide[f"annotator{k}"] = rng.choice(["a", "b", "tie"], len(wide))
    wide.loc[4, "annotator2"] = None
    return wide


def _folder_with_empty(t):
    folder = t / "votes"
    folder.mkdir()
    (folder / "part-0.csv").write_text(_csv(_votes()))
    (folder / "part-1.csv").write_text("")
    return str(folder)


COMMANDS = {
    "fit": ["fit", "{data}"],
    "ranks": ["ranks", "{data}", "--n-boot", "20", "--n-sim", "200"],
    "audit": ["audit", "{data}", "--actions", "flip", "--budget", "3"],
    "hja": ["hja", "{data}"],
    "calibration": ["calibration", "{data}", "--no-posterior", "--n-boot", "10"],
    "configflip": ["configflip", "{data}"],
    "card": ["card", "{data}", "--axes", "t", "--out", "{tmp}/card/c.json"],
    "review": ["review", "{data}", "--fast", "--budget", "3"],
    "items": ["items", "{data}"],
}
#: flags only some commands have: passing them elsewhere is argparse's one-line error, which is fine
#: but says nothing about the case, so those combinations are skipped from the pattern check
FLAG_OWNERS = {"--top": ("fit", "ranks"), "--draws": ("fit", "ranks", "hja", "calibration", "configflip"),
               "--kind": ("review",), "--style": ("fit", "audit", "review"), "--html": ("review",),
               "--rank": ("review", "hja"),
               "--md": ("review",), "--plots": ("fit", "ranks", "audit", "hja", "calibration", "configflip"),
               "--seed": ("fit", "ranks", "audit", "hja", "calibration", "configflip", "review"),
               "--columns": tuple(COMMANDS), "--json": tuple(COMMANDS)}


def _run(argv, capsys):
    capsys.readouterr()
    try:
        code = main(argv)
    except BaseException as err:  # noqa: BLE001 (anything escaping main is a traceback for the user)
        pytest.fail(f"{argv}: {type(err).__name__} escaped main(): {err}")
    out = capsys.readouterr()
    return code, out.err


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_command_answers_in_one_line(case, tmp_path, capsys):
    build, extra, expect = CASES[case]
    data = build(tmp_path)
    for command, template in COMMANDS.items():
        flags = [x for x in extra if x.startswith("--")]
        if any(command not in FLAG_OWNERS.get(f, tuple(COMMANDS)) for f in flags):
            continue
        argv = [a.format(data=data, tmp=tmp_path) for a in template + extra]
        code, err = _run(argv, capsys)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert "Traceback" not in err, (case, command, err)
        assert not re.search(r"ridge>0|method='map'|failed='ridge'|finite_core first", err), (case, command, err)
        if code == 0:
            assert not any(ln.startswith(("error:", "numerical failure:")) for ln in lines), (case, command, err)
        else:
            assert code in (2, 3), (case, command, code, err)
            assert len(lines) == 1, (case, command, err)
            assert lines[0].startswith("error:" if code == 2 else "numerical failure:"), (case, command, err)
        want = expect.get(command, expect.get("*"))
        if want is not None:
            want_code, pattern = want
            assert code == want_code, (case, command, code, err)
            if pattern:
                assert re.search(pattern, lines[0]), (case, command, lines[0])


def test_excluded_rows_are_reported_in_every_pairwise_command(tmp_path, capsys):
    """--exclude-invalid: the terminal says what was excluded, and the JSON counts it by reason."""
    df = _votes()
    text = _csv(df) + "gamma,gamma,a\nalpha,,b\n"
    f = _write(tmp_path, "v.csv", text)
    for command in ("fit", "ranks", "audit", "review"):
        js = tmp_path / f"{command}.json"
        argv = [a.format(data=f, tmp=tmp_path) for a in COMMANDS[command]] + ["--exclude-invalid", "--json", str(js)]
        code, _ = _run(argv, capsys) if False else (main(argv), None)
        out = capsys.readouterr().out
        assert code == 0, command
        assert "2 rows excluded" in out.replace("\n", " ") or "2 excluded" in out, (command, out[-400:])
        doc = json.loads(js.read_text())
        counts = doc["excluded_by_reason"] if "excluded_by_reason" in doc else doc["reproducibility"]["excluded_by_reason"]
        assert counts == {"self-comparison": 1, "missing name in 'model_b'": 1}, command


def test_interrupted_writer_leaves_nothing_at_the_requested_path(tmp_path, monkeypatch):
    from bayesrank import outputs

    monkeypatch.setattr(outputs, "_INTERRUPTED", True)
    with pytest.raises(KeyboardInterrupt):
        outputs.write_text(tmp_path / "r.json", "{}")
    assert list(tmp_path.iterdir()) == []  # neither the file nor a temporary part


def test_an_interrupt_wrapped_by_compiled_code_exits_130_and_a_bug_keeps_its_traceback(capsys, monkeypatch):
    """SIGINT inside a numba-compiled PyTensor graph comes back as a SystemError (seen in CI during
    PyMC's NUTS): after an interrupt that is exit 130 in one line; without one the error propagates."""
    import argparse

    from bayesrank import cli, outputs

    def compiled(args):
        if args.interrupt:
            monkeypatch.setattr(outputs, "_INTERRUPTED", True)  # what the SIGINT handler records
        raise SystemError("CPUDispatcher(<function numba_funcified_fgraph>) returned a result with an exception set")

    monkeypatch.setattr(outputs, "_WRITTEN", [])  # files other tests wrote in this process are not this command's
    assert cli._run(argparse.Namespace(func=compiled, interrupt=True), outputs) == 130
    assert capsys.readouterr().err.strip().splitlines()[-1] == "interrupted (Ctrl-C); nothing was written"
    monkeypatch.setattr(outputs, "_INTERRUPTED", False)
    with pytest.raises(SystemError):
        cli._run(argparse.Namespace(func=compiled, interrupt=False), outputs)


def _assert_interrupted(proc, err: str, out, tmp_path) -> None:
    import signal

    assert proc.poll() is None, "the command ended before it was interrupted: " + err[-2000:]
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=120)
    err += rest
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == "interrupted (Ctrl-C); nothing was written"
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["v.csv"]


def _nuts_command(tmp_path, sampler: str, draws: int):
    """The NUTS fit to interrupt; PyMC's sampler runs its log density in PyTensor's Python VM (what
    is tested is the interruption, not the numbers: no numba compilation to wait for)."""
    import os
    import subprocess
    import sys

    f = _write(tmp_path, "v.csv", _csv(_votes(n_rounds=6)))
    out = tmp_path / "fit.json"
    env = dict(os.environ)
    if sampler == "pymc":
        env["PYTENSOR_FLAGS"] = ",".join(x for x in (env.get("PYTENSOR_FLAGS", ""), "mode=FAST_COMPILE") if x)
    proc = subprocess.Popen([sys.executable, "-m", "bayesrank.cli", "fit", f, "--method", "nuts", "--sampler", sampler,
                             "--draws", str(draws), "--tune", "500", "--chains", "1", "--json", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    return proc, out


@pytest.mark.slow
def test_ctrl_c_during_pymc_nuts_exits_130_in_one_line_and_writes_nothing(tmp_path):
    """PyMC catches the first Ctrl-C and returns the draws it has: the command must still stop with 130."""
    import selectors
    import time

    proc, out = _nuts_command(tmp_path, "pymc", 20000)
    err, deadline = "", time.time() + 120
    sel = selectors.DefaultSelector()
    sel.register(proc.stderr, selectors.EVENT_READ)
    while time.time() < deadline and "Sequential sampling" not in err and "NUTS:" not in err:
        for key, _ in sel.select(timeout=1):
            err += key.fileobj.readline()
    time.sleep(3)  # inside the sampling loop
    _assert_interrupted(proc, err, out, tmp_path)


@pytest.mark.slow
def test_ctrl_c_during_density_nuts_exits_130_in_one_line_and_writes_nothing(tmp_path):
    """The default sampler (nutpie on the hand-written density) prints no progress into a pipe: the
    signal is sent once the process has used 12 s of CPU (start-up takes ~4 s; 3,000,000 draws take
    minutes), so it lands inside the sampling loop."""
    import os
    import time

    proc, out = _nuts_command(tmp_path, "density", 3_000_000)
    tick = os.sysconf("SC_CLK_TCK")
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        with open(f"/proc/{proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        if (int(fields[11]) + int(fields[12])) / tick > 12:  # utime + stime
            break
        time.sleep(0.5)
    _assert_interrupted(proc, "", out, tmp_path)


def test_review_with_ridge_answers_separated_data(tmp_path, capsys):
    """An undefeated player: with --ridge every claim is answered by the penalised fits and the report
    says so (without it, by Firth's fit: tests/review/test_separation.py)."""
    f = _write(tmp_path, "sep.csv", _csv(_votes()) + "".join(f"zeta,{p},a\n" for p in PLAYERS))
    js = tmp_path / "r.json"
    assert main(["review", f, "--fast", "--ridge", "0.05", "--budget", "3", "--json", str(js)]) == 0
    doc = json.loads(js.read_text())
    assert doc["claims"] and all(c["verdict"] for c in doc["claims"])
    assert any("ridge-penalised (--ridge 0.05" in n for n in doc["notes"])


def test_gzip_json_and_paths_read_in_every_pairwise_command(tmp_path, capsys):
    f = tmp_path / "v.json.gz"
    f.write_bytes(gzip.compress(json.dumps(_votes().to_dict("records")).encode()))
    assert main(["fit", str(f)]) == 0
