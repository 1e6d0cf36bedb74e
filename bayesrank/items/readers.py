"""Per-item benchmark results as they come -> :class:`~bayesrank.items.data.ItemScores`.

==================  ===========================================================================
format              what is read
==================  ===========================================================================
``long``            CSV/TSV/JSON/JSONL/Parquet rows ``model, item, score`` (``correct`` is taken
                    for ``score`` when there is no ``score`` column); optional cluster column
``wide``            an items × models matrix: an item-id column, one score column per model
``inspect``         a folder of Inspect AI logs (``.eval`` archives or JSON), one model per log;
                    samples matched across logs by id, epochs averaged within the sample
``lm-eval``         a folder of lm-evaluation-harness ``samples_<task>_<date>.jsonl`` files, one
                    sub-folder per model (the harness's ``--output_path`` layout); items = ``doc_id``
``helm``            a folder of HELM run folders (``run_spec.json`` + ``per_instance_stats.json``),
                    one model per run; items = instance ids
``eee``             Every Eval Ever instance-level JSONL (``model_id``, ``evaluation_name``,
                    ``sample_id``, ``evaluation.score``), a file or a folder of them
``swe-bench``       per-system lists of resolved instance ids: a folder of ``<system>.json`` (a list,
                    or ``{"resolved": [...]}``) or ``<system>.txt`` (one id per line) files, or one
                    JSON object ``{system: [ids]}``; score 1 = resolved. The items are those of an
                    ``instances.txt``/``instances.json`` list beside them when present, else every id
                    some system resolved (an instance no system resolved is then invisible: said in
                    the notes)
==================  ===========================================================================

``auto`` detects the format from the file's columns or the folder's contents. Harness logs name
their benchmark (task); a folder holding several tasks needs ``benchmark=`` to choose one.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from bayesrank.errors import InputError
from bayesrank.items.data import ItemScores

FORMATS = ("long", "wide", "inspect", "lm-eval", "helm", "eee", "swe-bench")
TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".json", ".jsonl", ".ndjson", ".parquet", ".pq", ".gz")


def read_table(path, text=("model", "item")) -> pd.DataFrame:
    """A table file (or a DataFrame) as a DataFrame (CSV/TSV/JSON/JSONL/Parquet) read as it comes
    (:func:`bayesrank.data.tables.read_table`: encodings, delimiters, parse errors with their line);
    the ``text`` columns keep the characters of the file (model ``007`` is not ``7``)."""
    from bayesrank.data.tables import read_table as read_file

    table = read_file(path)
    if table.frame is None:
        raise InputError(f"{path}: a JSON object, not a table of per-item results")
    return table.with_text([c for c in text if c in table.columns])


# ---------------------------------------------------------------------------------- detection
def _is_eee_record(obj) -> bool:
    return isinstance(obj, dict) and {"model_id", "sample_id", "evaluation"} <= set(obj)


def _first_json_line(path: Path):
    with open(path) as f:
        for line in f:
            if line.strip():
                try:
                    return json.loads(line)
                except json.JSONDecodeError:
                    return None
    return None


def detect_format(path: Path) -> str | None:
    """The format of ``path`` (see the module table), or None when it is not per-item results."""
    if path.is_dir():
        files = [p for p in path.rglob("*") if p.is_file()]
        names = {p.name for p in files}
        if any(p.suffix == ".eval" for p in files):
            return "inspect"
        if any(p.name == "per_instance_stats.json" for p in files) and not (path / "run_spec.json").exists():
            return "helm"
        if any(p.name.startswith("samples_") and p.suffix == ".jsonl" for p in files):
            return "lm-eval"
        jsonl = [p for p in files if p.suffix == ".jsonl"]
        if jsonl and _is_eee_record(_first_json_line(jsonl[0])):
            return "eee"
        jsons = [p for p in files if p.suffix == ".json"]
        for p in jsons[:3]:
            try:
                obj = json.loads(p.read_text())
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if isinstance(obj, dict) and "eval" in obj and "samples" in obj:
                return "inspect"
        if "instances.txt" in names or "instances.json" in names or any(p.suffix == ".txt" for p in files):
            return "swe-bench"
        if jsons and all(_resolved_list(p) is not None for p in jsons):
            return "swe-bench"
        return None
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return "inspect"
    if suffix in (".jsonl", ".ndjson") and _is_eee_record(_first_json_line(path)):
        return "eee"
    if suffix == ".json":
        try:
            obj = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        if isinstance(obj, dict) and "eval" in obj and "samples" in obj:
            return "inspect"
        if isinstance(obj, dict) and obj and all(isinstance(v, list) and all(isinstance(x, str) for x in v)
                                                 for v in obj.values()):
            return "swe-bench"
    if is_long(_columns(path)):
        return "long"
    return None


def is_long(columns, model: str = "model", item: str = "item", score: str | None = None) -> bool:
    """Columns of long per-item rows: ``model``, ``item`` and ``score`` or ``correct`` (or the columns
    named for those roles)."""
    cols = set(columns)
    return {model, item} <= cols and (score in cols if score is not None else bool({"score", "correct"} & cols))


def _columns(path: Path) -> list[str]:
    """Column names of a table file without reading it all (``[]`` when unreadable: reading it then
    gives the one-line error); :func:`bayesrank.data.tables.read_header`."""
    from bayesrank.data.tables import read_header

    if path.suffix.lower() == ".json":  # a JSON object's keys are not columns here
        try:
            obj = json.loads(path.read_text())
        except (OSError, ValueError):
            return []
        return list(obj[0]) if isinstance(obj, list) and obj and isinstance(obj[0], dict) else []
    return read_header(path) if path.is_file() else []


# ---------------------------------------------------------------------------------- entry point
def read_items(data, *, format: str = "auto", model: str = "model", item: str = "item", score: str | None = None,
               cluster: str | None = None, benchmark: str | None = None, metric: str | None = None,
               on_invalid: str = "raise") -> tuple[ItemScores, list[str]]:
    """(ItemScores, notes) from a path (file or folder) or a DataFrame of long rows; ``notes`` are
    the reader's remarks for the report (epochs averaged, the item universe of a SWE-bench list, …)."""
    from bayesrank.data.frames import FRAME_SOURCE, is_frame

    in_memory = is_frame(data)
    path = data if in_memory else Path(data)
    if not in_memory and not path.exists():
        raise FileNotFoundError(f"no such file or directory: {path}")
    if in_memory:  # a table in memory: long rows or an items × models matrix, as a table file would be read
        fmt = format if format != "auto" else ("long" if is_long(map(str, data.columns), model, item, score)
                                               else "wide")
        if fmt not in ("long", "wide"):
            raise InputError(f"items format {fmt!r} reads files; a DataFrame holds long rows (model, item, score) "
                             "or an items × models matrix")
    else:
        fmt = detect_format(path) if format == "auto" else format
        if format == "auto" and fmt is None and path.is_file() and is_long(_columns(path), model, item, score):
            fmt = "long"  # long rows under other column names (--columns model=,item=,score=)
    source = FRAME_SOURCE if in_memory else str(path)
    if fmt is None:
        if path.is_file() and path.suffix.lower() in TABLE_SUFFIXES:
            fmt = "wide"
        else:
            raise InputError(f"{path}: not per-item results; expected columns model, item, score, an items × models "
                             f"matrix, or a folder of harness logs (formats: {', '.join(FORMATS)})")
    if fmt not in FORMATS:
        raise InputError(f"unknown items format {fmt!r}; formats: auto, {', '.join(FORMATS)}")
    notes: list[str] = []
    if fmt == "long":
        data_ = _long(read_table(path, (model, item)), model, item, score, cluster, on_invalid, source, benchmark,
                      row_offset=None if in_memory else 2)
    elif fmt == "wide":
        data_ = ItemScores.from_wide(read_table(path), cluster=cluster, on_invalid=on_invalid, source=source,
                                     benchmark=benchmark, row_offset=None if in_memory else 2)
    else:
        if fmt in ("inspect", "lm-eval"):  # streamed: each log reduced to its cells as it is read
            acc, bench, notes = (_inspect if fmt == "inspect" else _lm_eval)(path, benchmark=benchmark, metric=metric,
                                                                             on_invalid=on_invalid)
            data_ = acc.scores(source=str(path), benchmark=bench)
        else:
            rows, bench, notes = {"helm": _helm, "eee": _eee, "swe-bench": _swe_bench}[fmt](
                path, benchmark=benchmark, metric=metric)
            data_ = ItemScores.from_long(rows, on_invalid=on_invalid, source=str(path), benchmark=bench,
                                         cluster=cluster if cluster in rows.columns else None, row_offset=1)
    if data_.repeated:
        r = data_.trials
        notes.append(f"repeated measures: {int((r > 1).sum()):,} model × item cells hold several scores "
                     f"({int(r.min())}–{int(r.max())} each, e.g. Inspect epochs); each cell's scores are averaged "
                     "and the item counts once")
    return data_, notes


def _long(df, model, item, score, cluster, on_invalid, source, benchmark, row_offset: int | None = 2) -> ItemScores:
    if score is None:
        score = "score" if "score" in df.columns or "correct" not in df.columns else "correct"
    return ItemScores.from_long(df, model=model, item=item, score=score, cluster=cluster, on_invalid=on_invalid,
                                source=source, benchmark=benchmark, row_offset=row_offset)


def _one_benchmark(rows: pd.DataFrame, benchmark: str | None, path: Path, column: str = "benchmark"):
    """(rows, benchmark): the rows of the benchmark chosen by :func:`_benchmark_keys` among ``column``'s."""
    found = [None if pd.isna(v) else str(v) for v in rows[column].unique()]
    _, bench = _benchmark_keys(found, benchmark, path)
    return (rows[rows[column] == benchmark] if benchmark is not None else rows), bench


def _benchmark_keys(keys, benchmark: str | None, path: Path) -> tuple[list, str | None]:
    """(keys, benchmark) of the chosen benchmark among the ``keys`` found (None: rows naming none):
    the one asked for, or the only one found together with the rows that name none."""
    found = sorted(str(k) for k in keys if k is not None)
    if benchmark is not None:
        if benchmark not in found:
            raise InputError(f"{path}: no results for benchmark {benchmark!r}; benchmarks: {found}")
        return [benchmark], benchmark
    if len(found) > 1:
        raise InputError(f"{path}: results of several benchmarks {found[:10]}; choose one with --benchmarks NAME")
    return sorted(keys, key=lambda k: (k is None, str(k))), (found[0] if found else None)


def _groups(rows: pd.DataFrame, by: list[str]):
    """``rows.groupby(by)`` in order of appearance (missing keys kept), the whole frame at once when
    every key is constant (the usual log: one task, one filter)."""
    if all(rows[c].nunique(dropna=False) <= 1 for c in by):
        yield tuple(rows[c].iloc[0] if len(rows) else None for c in by), rows
        return
    yield from rows.groupby(by, dropna=False, sort=False)


def _merged(accs):
    from bayesrank.items.accumulate import CellAccumulator

    out = CellAccumulator()
    for acc in accs:
        out.merge(acc)
    return out


def _inspect(path: Path, benchmark=None, metric=None, on_invalid: str = "raise"):
    """A folder (or one file) of Inspect logs: one model per log; epochs are repeats of a sample. Each
    log is reduced to its (model, sample) cells as it is read (bayesrank.items.accumulate), so a
    folder of thousands of logs never holds every sample."""
    from bayesrank.data.harness import read_inspect_log
    from bayesrank.items.accumulate import CellAccumulator

    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.suffix in (".eval", ".json"))
    accs: dict = {}
    logs_of: dict = {}
    scorers: set = set()
    n_logs = 0
    for f in files:
        if f.suffix == ".json":
            try:
                head = json.loads(f.read_text())
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if not (isinstance(head, dict) and "eval" in head):
                continue
        rows = read_inspect_log(f, items=True, scorer=metric)
        rows.index = np.arange(1, len(rows) + 1)  # errors name the sample's place in its log
        n_logs += 1
        scorers.update(rows["metric"].unique())
        for (bench,), part in _groups(rows, ["benchmark"]):
            key = None if pd.isna(bench) else str(bench)
            accs.setdefault(key, CellAccumulator()).add(part, item="sample_id", score="correct", source=str(f),
                                                        row_offset=None, on_invalid=on_invalid)
            for m in part["model"].dropna().unique():
                logs_of.setdefault((key, m), set()).add(str(f))
    if not n_logs:
        raise InputError(f"{path}: no Inspect logs (.eval or JSON) found")
    if len(scorers) > 1:
        raise InputError(f"{path}: the logs hold several scorers {sorted(scorers)}; choose one with --metric NAME")
    keys, bench = _benchmark_keys(list(accs), benchmark, path)
    acc = _merged(accs[k] for k in keys)
    several = sorted({m for (k, m), fs in logs_of.items() if k in keys and len(fs) > 1})
    notes = [f"Inspect logs: {n_logs} log(s), {len(acc.models)} model(s), task {bench!r}, scorer "
             f"{sorted(scorers)[0]!r}; samples matched across logs by id"]
    if several:
        notes.append(f"several logs for model(s) {several[:5]}: their samples are "
                     "pooled (repeats of a sample are averaged)")
    return acc, bench, notes


def _lm_eval(path: Path, benchmark=None, metric=None, on_invalid: str = "raise"):
    """lm-eval's --output_path layout: <path>/<model>/samples_<task>_<date>.jsonl (or samples files
    directly in <path>, the model then named by the file's results_*.json or the folder). Each file is
    reduced to its (model, item) cells as it is read, one accumulator per (task, filter)."""
    from bayesrank.data.harness import read_lm_eval_samples
    from bayesrank.items.accumulate import CellAccumulator

    files = sorted(path.rglob("samples_*.jsonl"))
    if not files:
        raise InputError(f"{path}: no lm-eval samples_*.jsonl files found")
    accs: dict = {}
    metric_of: dict = {}
    for f in files:
        rows = read_lm_eval_samples(f, metric=metric, model=_lm_eval_model(f))
        rows.index = np.arange(1, len(rows) + 1)  # errors name the sample's place in its file
        for (bench, flt), part in _groups(rows, ["benchmark", "filter"]):
            key = None if pd.isna(bench) else str(bench)
            accs.setdefault(key, {}).setdefault(str(flt), CellAccumulator()).add(part, score="correct",
                                                                                 source=str(f), row_offset=None,
                                                                                 on_invalid=on_invalid)
            metric_of.setdefault((key, str(flt)), str(part["metric"].iloc[0]))
    keys, bench = _benchmark_keys(list(accs), benchmark, path)
    filters = sorted({flt for k in keys for flt in accs[k]})
    acc = _merged(accs[k][filters[0]] for k in keys if filters[0] in accs[k])
    met = next(metric_of[(k, filters[0])] for k in keys if (k, filters[0]) in metric_of)
    notes = [f"lm-eval samples: {len(files)} file(s), {len(acc.models)} model(s), task {bench!r}, metric "
             f"{met!r}" + (f", filter {filters[0]!r} of {filters}" if len(filters) > 1 else "")]
    return acc, bench, notes


def _lm_eval_model(f: Path) -> str:
    for res in sorted(f.parent.glob("results_*.json")):
        try:
            raw = json.loads(res.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        name = raw.get("model_name") or (raw.get("config") or {}).get("model_name")
        if name:
            return str(name)
    return f.parent.name


def _helm(path: Path, benchmark=None, metric=None):
    """A folder of HELM run folders, one model per run (instances with perturbations are skipped)."""
    from bayesrank.data.harness import read_helm_run

    runs = sorted({p.parent for p in path.rglob("per_instance_stats.json") if (p.parent / "run_spec.json").exists()})
    if not runs:
        raise InputError(f"{path}: no HELM run folders (run_spec.json + per_instance_stats.json)")
    frames = [read_helm_run(r, metric=metric or "exact_match", items=True) for r in runs]
    rows = pd.concat(frames, ignore_index=True)
    rows, bench = _one_benchmark(rows, benchmark, path)
    notes = [f"HELM: {len(runs)} run(s), {rows['model'].nunique()} model(s), scenario {bench!r}, metric "
             f"{rows['metric'].iloc[0]!r}"]
    return rows[["model", "item", "correct"]].rename(columns={"correct": "score"}), bench, notes


def _eee(path: Path, benchmark=None, metric=None):
    """Every Eval Ever instance-level records: model_id, evaluation_name, sample_id, evaluation.score."""
    files = [path] if path.is_file() else sorted(path.rglob("*.jsonl"))
    recs = []
    for f in files:
        for lineno, line in enumerate(f.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as err:
                raise InputError(f"{f}:{lineno}: not valid JSON ({err})") from None
            if not _is_eee_record(r):
                raise InputError(f"{f}:{lineno}: not an Every Eval Ever instance record (needs model_id, sample_id, "
                                 f"evaluation); fields: {sorted(r)[:10]}")
            ev = r.get("evaluation") or {}
            value = ev.get("score", ev.get("is_correct"))
            recs.append({"model": r["model_id"], "item": str(r["sample_id"]), "score": value,
                         "benchmark": r.get("evaluation_name")})
    if not recs:
        raise InputError(f"{path}: no Every Eval Ever instance records")
    rows, bench = _one_benchmark(pd.DataFrame(recs), benchmark, path)
    notes = [f"Every Eval Ever: {len(files)} file(s), {rows['model'].nunique()} model(s), evaluation {bench!r}"]
    return rows[["model", "item", "score"]], bench, notes


def _resolved_list(p: Path):
    """A SWE-bench-style list of resolved ids from one file, or None when the file is not one."""
    if p.suffix == ".txt":
        return [x.strip() for x in p.read_text().splitlines() if x.strip()]
    try:
        obj = json.loads(p.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if isinstance(obj, dict) and isinstance(obj.get("resolved"), list):
        obj = obj["resolved"]
    if isinstance(obj, list) and all(isinstance(x, str) for x in obj):
        return obj
    return None


def _swe_bench(path: Path, benchmark=None, metric=None):
    lists: dict[str, list[str]] = {}
    universe = None
    if path.is_file():
        obj = json.loads(path.read_text())
        lists = {str(k): list(v) for k, v in obj.items()}
    else:
        for p in sorted(path.iterdir()):
            if not p.is_file() or p.suffix not in (".json", ".txt"):
                continue
            ids = _resolved_list(p)
            if ids is None:
                raise InputError(f"{p}: expected a list of resolved instance ids (a JSON list, {{\"resolved\": [...]}} "
                                 "or one id per line)")
            if p.stem == "instances":
                universe = ids
            else:
                lists[p.stem] = ids
    if len(lists) < 2:
        raise InputError(f"{path}: resolved-instance lists of at least two systems are needed (got {len(lists)})")
    notes = []
    if universe is None:
        universe = sorted(set().union(*lists.values()))
        notes.append(f"SWE-bench lists: no instances list given, so the items are the {len(universe):,} instances some "
                     "system resolved (instances no system resolved are invisible; add instances.txt to count them)")
    else:
        unknown = sorted(set().union(*lists.values()) - set(universe))
        if unknown:
            raise InputError(f"{path}: {len(unknown)} resolved id(s) are not in instances list, e.g. {unknown[:3]}")
        notes.append(f"SWE-bench lists: {len(lists)} systems over the {len(universe):,} listed instances")
    u = np.asarray(universe, dtype=object)
    frames = [pd.DataFrame({"model": name, "item": u, "score": np.isin(u, list(set(ids))).astype(float)})
              for name, ids in lists.items()]
    return pd.concat(frames, ignore_index=True), benchmark, notes


__all__ = ["FORMATS", "detect_format", "read_items", "read_table"]
