"""Readers of evaluation harnesses' per-item logs (shared by the configuration-grid and the items kinds).

- lm-evaluation-harness ``samples_<task>_<date>.jsonl`` (``doc_id``, ``doc_hash``, ``prompt_hash``,
  ``filter``, ``metrics`` + one field per metric) -> :func:`read_lm_eval_samples`;
- Inspect AI eval logs, both the default binary ``.eval`` format (a zip archive holding
  ``header.json``, ``summaries.json`` and ``samples/<id>_epoch_<n>.json``; read with the standard
  library's ``zipfile`` — members that current Inspect versions compress with Zstandard, which
  Python's ``zipfile`` reads only from 3.14 on, are decompressed with ``zstandard``) and the JSON
  format (``version``, ``eval``, ``plan``, ``results.scores[].metrics``, ``samples[].scores``)
  -> :func:`read_inspect_log` (per item with ``items=True``);
- HELM ``per_instance_stats.json`` + ``run_spec.json`` of one run directory -> :func:`read_helm_run`.

Per-item rows carry ``item`` and ``correct`` (the item's score in [0, 1]); Inspect rows also carry
``sample_id`` and ``epoch`` (an item answered in several epochs is one sample with repeated measures).
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from bayesrank.errors import InputError


def _text(path: Path) -> str:
    """A file's text (UTF-8 with or without BOM, UTF-16 with BOM; other bytes as Windows-1252:
    :func:`bayesrank.data.tables.decode`); an empty file is an error."""
    from bayesrank.data.tables import decode

    data = Path(path).read_bytes()
    if not data.strip():
        raise InputError(f"{path}: empty file ({len(data)} bytes)")
    return decode(data, path)[0].lstrip("\ufeff")


def _load_json(path: Path):
    try:
        return json.loads(_text(path))
    except json.JSONDecodeError as err:
        raise InputError(f"{path} line {err.lineno} column {err.colno}: not valid JSON ({err.msg}; truncated?)") from None


def sha256_text(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(str(text).encode()).hexdigest()


def read_lm_eval_samples(path: str | Path, metric: str | None = None, model: str | None = None,
                         task: str | None = None) -> pd.DataFrame:
    """lm-eval ``samples_<task>_<date>.jsonl`` -> per-item rows ``item, correct, metric, filter, ...``.

    ``metric`` defaults to the first name in each line's ``metrics`` list; the item id is ``doc_id``
    (``doc_hash`` and ``prompt_hash`` are kept: the prompt hash is the template-text fingerprint).
    """
    path = Path(path)
    if task is None:
        m = re.match(r"samples_(.+?)_\d{4}-\d{2}-\d{2}T", path.name)
        task = m.group(1) if m else path.stem.removeprefix("samples_")
    rows = []
    for lineno, line in enumerate(_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(f"{path}:{lineno}: not valid JSON ({err})") from None
        names = rec.get("metrics") or [k for k in ("acc", "exact_match", "acc_norm") if k in rec]
        mname = metric or (names[0] if names else None)
        if mname is None or mname not in rec:
            raise InputError(f"{path}:{lineno}: no per-item metric {metric or '(metrics list empty)'}; "
                             f"fields: {sorted(rec)}")
        rows.append({"model": model, "benchmark": task, "item": str(rec.get("doc_id")),
                     "correct": float(rec[mname]), "metric": mname, "filter": rec.get("filter", "none"),
                     "doc_hash": rec.get("doc_hash"), "prompt_hash": rec.get("prompt_hash")})
    if not rows:
        raise InputError(f"{path}: no samples")
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- Inspect .eval archives
_ZSTD = 93  # ZIP compression method number of Zstandard (APPNOTE 4.4.5)


def _zip_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> bytes:
    """One member's bytes: the standard library for stored/deflate members; Zstandard members are
    read raw from the archive (local header at ``header_offset``: 30 bytes + name + extra) and
    decompressed with ``compression.zstd`` (Python ≥ 3.14) or the ``zstandard`` package."""
    if info.compress_type != _ZSTD:
        return archive.read(info)
    fp = archive.fp
    fp.seek(info.header_offset)
    local = fp.read(30)
    if local[:4] != b"PK\x03\x04":
        raise InputError(f"{path}: {info.filename}: damaged zip local header")
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    fp.seek(info.header_offset + 30 + name_len + extra_len)
    raw = fp.read(info.compress_size)
    try:
        from compression import zstd  # Python ≥ 3.14

        return zstd.decompress(raw)
    except ImportError:
        import zstandard

        with zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True) as reader:
            return reader.read()


def read_eval_archive(path: str | Path) -> dict:
    """An Inspect ``.eval`` zip as the JSON log's dict: ``header.json``'s fields (``eval``, ``plan``,
    ``results``, ``status``, …) and ``samples`` from ``summaries.json`` (id, epoch, scores per sample;
    falling back to the ``samples/*.json`` members when a log has no summaries)."""
    path = Path(path)
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise InputError(f"{path}: not an Inspect .eval log (not a zip archive)") from None
    with archive:
        members = {i.filename: i for i in archive.infolist()}

        def load(name):
            try:
                return json.loads(_zip_member(archive, members[name], path))
            except json.JSONDecodeError as err:
                raise InputError(f"{path}: {name}: not valid JSON ({err})") from None

        if "header.json" not in members:
            start = "_journal/start.json"
            if start not in members:
                raise InputError(f"{path}: not an Inspect .eval log (no header.json)")
            raw = {**load(start), "status": "started"}
        else:
            raw = load("header.json")
        if "summaries.json" in members:
            raw["samples"] = load("summaries.json")
        else:
            raw["samples"] = [load(n) for n in sorted(members) if n.startswith("samples/") and n.endswith(".json")]
    return raw


# ----------------------------------------------------------------------------- Inspect AI
_INSPECT_VALUE = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


def read_inspect_log(path: str | Path, items: bool = False, scorer: str | None = None) -> pd.DataFrame:
    """Inspect AI eval log (``.eval`` archive or JSON) -> tidy rows (aggregate metrics) or per-item rows
    (``items=True``: ``item`` = ``<sample id>#<epoch>``, with ``sample_id`` and ``epoch`` beside it).

    Score values ``C``/``I``/``P``/``N`` map to 1/0/0.5/0 (Inspect's ``value_to_float``); numbers pass.
    """
    path = Path(path)
    raw = read_eval_archive(path) if path.suffix == ".eval" else _load_json(path)
    if not isinstance(raw, dict) or "eval" not in raw:
        raise InputError(f"{path}: not an Inspect AI JSON log (no 'eval' key)")
    if raw.get("status") not in (None, "success"):
        raise InputError(f"{path}: eval status is {raw.get('status')!r}, not 'success'")
    ev = raw["eval"]
    plan_cfg = (raw.get("plan") or {}).get("config") or {}
    gen_cfg = {**(ev.get("model_generate_config") or {}), **plan_cfg}
    rev = ev.get("revision") or {}
    common = {
        "model": ev.get("model"), "benchmark": ev.get("task"), "harness": "inspect_ai",
        "harness_version": (ev.get("packages") or {}).get("inspect_ai"), "harness_commit": rev.get("commit"),
        "temperature": gen_cfg.get("temperature"), "top_p": gen_cfg.get("top_p"),
        "num_fewshot": (ev.get("task_args") or {}).get("fewshot", 0),
        "fewshot_seed": (ev.get("task_args") or {}).get("fewshot_seed"),
        "dataset": (ev.get("dataset") or {}).get("name"), "source_file": str(path),
        # the solver plan (prompt templates are solver parameters) is the template fingerprint
        "template_hash": sha256_text(json.dumps((raw.get("plan") or {}).get("steps"), sort_keys=True))
        if (raw.get("plan") or {}).get("steps") else None,
    }
    if items:
        rows = []
        for s in raw.get("samples") or []:
            for name, sc in (s.get("scores") or {}).items():
                if scorer and name != scorer:
                    continue
                v = sc.get("value")
                v = _INSPECT_VALUE.get(v, v) if isinstance(v, str) else v
                if not isinstance(v, (int, float)):
                    raise InputError(f"{path}: sample {s.get('id')} scorer {name}: non-scalar value {v!r}")
                rows.append({**common, "item": f"{s.get('id')}#{s.get('epoch', 1)}", "correct": float(v),
                             "metric": name, "sample_id": str(s.get("id")), "epoch": int(s.get("epoch", 1))})
        if not rows:
            raise InputError(f"{path}: log has no scored samples (was it written with --no-log-samples?)")
        return pd.DataFrame(rows)
    res = raw.get("results") or {}
    rows = []
    for sc in res.get("scores") or []:
        if scorer and sc.get("name") != scorer:
            continue
        mets = sc.get("metrics") or {}
        se = (mets.get("stderr") or {}).get("value")
        for mname, m in mets.items():
            if mname == "stderr":
                continue
            rows.append({**common, "metric": f"{sc.get('name')}/{mname}", "score": float(m["value"]),
                         "stderr": se, "n_items": res.get("completed_samples", res.get("total_samples"))})
    if not rows:
        raise InputError(f"{path}: no results.scores")
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- HELM
def parse_helm_run_name(name: str) -> tuple[str, dict[str, str]]:
    """``mmlu:subject=anatomy,method=multiple_choice_joint,model=x`` -> ("mmlu", {...})."""
    scen, _, args = name.partition(":")
    kv = {}
    for part in args.split(","):
        k, _, v = part.partition("=")
        if k:
            kv[k.strip()] = v.strip()
    return scen, kv


def read_helm_run(run_dir: str | Path, metric: str = "exact_match", split: str | None = "test",
                  items: bool = False) -> pd.DataFrame:
    """One HELM run directory (``run_spec.json`` + ``per_instance_stats.json``) -> tidy or per-item rows.

    Only unperturbed instances (no ``perturbation``) and the given ``split`` are used.
    """
    run_dir = Path(run_dir)
    spec = _load_json(run_dir / "run_spec.json")
    stats = _load_json(run_dir / "per_instance_stats.json")
    adapter = spec.get("adapter_spec") or {}
    scen, args = parse_helm_run_name(spec.get("name", run_dir.name))
    model = adapter.get("model") or args.get("model")
    common = {
        "model": model, "benchmark": scen + (f":{args['subject']}" if "subject" in args else ""),
        "harness": "helm", "method": adapter.get("method", args.get("method")),
        "num_fewshot": adapter.get("max_train_instances"), "temperature": adapter.get("temperature"),
        "max_tokens": adapter.get("max_tokens"),
        "template_hash": sha256_text("\x1f".join(str(adapter.get(k, "")) for k in
                                                 ("instructions", "input_prefix", "input_suffix",
                                                  "output_prefix", "output_suffix"))),
        "model_deployment": adapter.get("model_deployment"), "source_file": str(run_dir),
    }
    rows = []
    for inst in stats:
        if inst.get("perturbation"):
            continue
        for st in inst.get("stats") or []:
            nm = st.get("name") or {}
            if nm.get("name") != metric or nm.get("perturbation"):
                continue
            if split and nm.get("split") not in (None, split):
                continue
            count = st.get("count") or 0
            value = st["sum"] / count if count else np.nan
            rows.append({"item": f"{inst['instance_id']}#{inst.get('train_trial_index', 0)}", "correct": value,
                         "trial": inst.get("train_trial_index", 0)})
    if not rows:
        raise InputError(f"{run_dir}: no per-instance stat {metric!r} on split {split!r}")
    per = pd.DataFrame(rows)
    if items:
        return per.assign(metric=metric, **common)
    return pd.DataFrame([{**common, "metric": metric, "score": float(per["correct"].mean()),
                          "n_items": int(per["item"].nunique()),
                          "stderr": float(per["correct"].std(ddof=1) / np.sqrt(len(per))) if len(per) > 1 else np.nan,
                          "item_subset_hash": sha256_text("\n".join(sorted(per["item"])))}])
