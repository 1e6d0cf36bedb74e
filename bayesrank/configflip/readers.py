"""Readers for evaluation-harness outputs -> tidy rows (one per model x task x metric x configuration).

Every reader returns a DataFrame with at least: ``model, benchmark, metric, score, harness`` plus the
configuration/provenance columns the format records (``num_fewshot``, ``model_args``,
``harness_version``, ``harness_commit``, ``n_items``, ``stderr``, decoding parameters, ...). Use
:func:`to_grid` to choose the axes. Formats:

- lm-evaluation-harness results JSON, both the 2023 (v0.3: ``results/versions/config``) and the
  v0.4 layout (``"acc,none"`` keys, ``configs``, ``n-shot``, ``n-samples``, ``git_hash``,
  ``lm_eval_version``) -> :func:`read_lm_eval_results`;
  its ``samples_<task>_*.jsonl`` per-item logs (``doc_id``, ``doc_hash``, ``prompt_hash``,
  ``filter``, ``metrics`` + one field per metric) -> :func:`read_lm_eval_samples`;
- Inspect AI JSON eval logs (``version``, ``eval``, ``plan``, ``results.scores[].metrics``,
  ``samples[].scores``) -> :func:`read_inspect_log` (per item with ``items=True``);
- HELM ``per_instance_stats.json`` + ``run_spec.json`` of one run directory -> :func:`read_helm_run`;
- plain CSV -> :func:`read_csv`.
"""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np
import pandas as pd

from bayesrank.data.harness import (  # noqa: F401  (per-item harness readers, shared with the items kind)
    _load_json,
    parse_helm_run_name,
    read_helm_run,
    read_inspect_log,
    read_lm_eval_samples,
    sha256_text,
)
from bayesrank.errors import InputError

from .grid import EvalGrid


def model_name_from_args(model_args: str | None) -> str | None:
    """``pretrained=bigscience/bloom-1b1,use_accelerate=True`` -> ``bigscience/bloom-1b1``."""
    if not model_args:
        return None
    for part in str(model_args).split(","):
        k, _, v = part.partition("=")
        if k.strip() in ("pretrained", "model", "model_name", "engine", "path"):
            return v.strip()
    return None


def n_from_stderr(p: float, se: float) -> int | None:
    """Sample size implied by a binary accuracy and lm-eval's stderr ``se = sqrt(p(1-p)/(n-1))``."""
    if se is None or not np.isfinite(se) or se <= 0 or not 0 < p < 1:
        return None
    return int(round(p * (1 - p) / se**2 + 1))


def items_from_stderr(rows: pd.DataFrame, benchmark: str = "benchmark", score: str = "score",
                      stderr: str = "stderr") -> pd.Series:
    """Item count per row from (accuracy, stderr); a task's count is shared by all its rows, so rows
    where it is not derivable (accuracy 0 or 1, stderr missing) take the median of their task's other
    rows. Raises InputError naming the benchmarks where no row allows it."""
    n = pd.Series([n_from_stderr(p, s) for p, s in zip(rows[score], rows[stderr])], index=rows.index, dtype=float)
    fill = n.groupby(rows[benchmark]).transform("median")
    n = n.fillna(fill)
    if n.isna().any():
        bad = sorted(rows.loc[n.isna(), benchmark].astype(str).unique())
        raise InputError(f"cannot derive item counts from stderr for benchmark(s) {bad}; give an n_items column")
    return n.round().astype(int)


# ----------------------------------------------------------------------------- lm-evaluation-harness
def read_lm_eval_results(path: str | Path, model: str | None = None) -> pd.DataFrame:
    """One lm-evaluation-harness results JSON -> tidy rows (task = benchmark, one row per metric/filter)."""
    path = Path(path)
    raw = _load_json(path)
    if not isinstance(raw, dict) or "results" not in raw:
        raise InputError(f"{path}: not an lm-evaluation-harness results file (no 'results' key)")
    cfg = raw.get("config") or {}
    model_args = cfg.get("model_args")
    if isinstance(model_args, dict):
        model_args = ",".join(f"{k}={v}" for k, v in model_args.items())
    name = model or raw.get("model_name") or model_name_from_args(model_args) or cfg.get("model") or path.stem
    nshot = raw.get("n-shot") or {}
    nsamples = raw.get("n-samples") or {}
    configs = raw.get("configs") or {}
    rows = []
    for task, res in raw["results"].items():
        tcfg = configs.get(task, {})
        fewshot = nshot.get(task, tcfg.get("num_fewshot", cfg.get("num_fewshot")))
        gen = tcfg.get("generation_kwargs") or {}
        n_eff = (nsamples.get(task) or {}).get("effective")
        for key, value in res.items():
            if key == "alias" or "_stderr" in key or not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            metric, _, filt = key.partition(",")
            se_key = f"{metric}_stderr" + (f",{filt}" if filt else "")
            se = res.get(se_key)
            se = float(se) if isinstance(se, (int, float)) else np.nan
            rows.append({
                "model": name, "benchmark": task, "metric": metric, "filter": filt or "none",
                "score": float(value), "stderr": se,
                "n_items": n_eff if n_eff is not None else n_from_stderr(float(value), se),
                "num_fewshot": fewshot, "harness": "lm-evaluation-harness",
                "harness_version": raw.get("lm_eval_version"), "harness_commit": raw.get("git_hash"),
                "model_backend": cfg.get("model"), "model_args": model_args,
                "model_revision": raw.get("model_revision") or _arg(model_args, "revision"),
                "quantisation": _quant(model_args), "task_version": (raw.get("versions") or {}).get(task),
                "template_hash": sha256_text(tcfg.get("doc_to_text")) if tcfg.get("doc_to_text") else None,
                "chat_template_hash": raw.get("chat_template_sha"),
                "fewshot_seed": cfg.get("fewshot_seed", cfg.get("random_seed")),
                "temperature": gen.get("temperature", 0.0 if gen.get("do_sample") is False else None),
                "do_sample": gen.get("do_sample"), "limit": cfg.get("limit"),
                "source_file": str(path),
            })
    if not rows:
        raise InputError(f"{path}: results hold no numeric metric")
    return pd.DataFrame(rows)


def _arg(model_args: str | None, key: str) -> str | None:
    for part in str(model_args or "").split(","):
        k, _, v = part.partition("=")
        if k.strip() == key:
            return v.strip()
    return None


def _quant(model_args: str | None) -> str | None:
    """Quantisation recorded in model_args (load_in_4bit/8bit, bnb_4bit_quant_type, dtype), else None."""
    a = str(model_args or "")
    if "bnb_4bit_quant_type" in a:
        return _arg(a, "bnb_4bit_quant_type")
    if "load_in_4bit=True" in a:
        return "4bit"
    if "load_in_8bit=True" in a:
        return "8bit"
    return _arg(a, "dtype")


def read_lm_eval_dir(root: str | Path, pattern: str = "**/*.json") -> pd.DataFrame:
    """Every results JSON under ``root`` (e.g. the bundled 2023 grid's ``raw/``), concatenated."""
    files = sorted(glob.glob(str(Path(root) / pattern), recursive=True))
    if not files:
        raise InputError(f"no results JSON under {root} matching {pattern}")
    return pd.concat([read_lm_eval_results(f) for f in files], ignore_index=True)


def summarise_items(items: pd.DataFrame, keys: list[str] | None = None) -> pd.DataFrame:
    """Per-item reader rows -> one row per cell: score (mean correctness), n_items, item_subset_hash
    (sha256 of the sorted item ids) and, where prompt hashes exist, a template hash over them."""
    keys = keys or [k for k in ("model", "benchmark", "metric", "filter", "harness", "num_fewshot")
                    if k in items.columns and items[k].notna().all()]
    rows = []
    for key, g in items.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row = {k: v for k, v in zip(keys, key)}
        for c in g.columns:  # constant provenance columns travel along
            if c not in row and c not in ("item", "correct", "doc_hash", "prompt_hash") and g[c].nunique(dropna=False) == 1:
                row[c] = g[c].iloc[0]
        row.update(score=float(g["correct"].mean()), n_items=int(g["item"].nunique()),
                   item_subset_hash=sha256_text("\n".join(sorted(g["item"].astype(str)))))
        if "prompt_hash" in g and g["prompt_hash"].notna().all():
            row["template_hash"] = sha256_text("\n".join(g["prompt_hash"].astype(str)))
        rows.append(row)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- CSV and grid
def read_csv(path: str | Path, encoding: str | None = None) -> pd.DataFrame:
    """A tidy table (CSV/TSV/Parquet/JSON records) read as it comes (:func:`bayesrank.data.tables.read_table`:
    encodings, delimiters, parse errors with their line); the model column keeps its text."""
    from bayesrank.data.tables import read_table

    table = read_table(path, encoding=encoding)
    if table.frame is None:
        raise InputError(f"{path}: a JSON object, not a table of scores")
    return table.with_text([c for c in ("model", "benchmark", "task", "item") if c in table.columns])


def map_grid_columns(rows: pd.DataFrame, columns=None) -> pd.DataFrame:
    """``--columns model=COL,benchmark=COL,score=COL,item=COL``: the file's columns renamed to the
    grid's (per-item data: ``item`` with ``score`` = the item's correctness, read as ``correct``)."""
    from bayesrank.data.columns import GRID_KEYS, parse_columns

    cols = parse_columns(columns, keys=GRID_KEYS)
    if not cols:
        return rows
    for key, col in cols.items():
        if col not in rows.columns:
            raise InputError(f"--columns {key}={col}: no column {col!r}; the columns are "
                             f"{', '.join(map(str, rows.columns[:30]))}")
    target = {"model": "model", "benchmark": "benchmark", "item": "item",
              "score": "correct" if "item" in cols or ("item" in rows.columns and "score" not in rows.columns) else "score"}
    rename = {col: target[key] for key, col in cols.items() if col != target[key]}
    clash = [t for c, t in rename.items() if t in rows.columns and t not in rename]
    if clash:
        rows = rows.drop(columns=clash)  # the named column replaces the file's own column of that name
    out = rows.rename(columns=rename)
    if "model" in out.columns:
        out["model"] = out["model"].astype(str).where(out["model"].notna())
    return out


def read_any(path: str | Path, encoding: str | None = None) -> pd.DataFrame:
    """Dispatch on the file: a table (CSV/TSV/Parquet), a HELM run directory, a samples JSONL, an
    Inspect log or lm-eval JSON (a directory of lm-eval JSONs is read recursively)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file or directory: {path}")
    if path.is_dir():
        if (path / "run_spec.json").exists():
            return read_helm_run(path)
        return read_lm_eval_dir(path)
    if path.suffix.lower() in (".csv", ".tsv", ".tab", ".parquet", ".pq", ".gz", ".txt"):
        return read_csv(path, encoding)
    if path.suffix == ".jsonl":
        return read_lm_eval_samples(path)
    if path.suffix == ".eval":
        return read_inspect_log(path)
    raw = _load_json(path)
    if isinstance(raw, dict) and "eval" in raw and "results" in raw and isinstance(raw.get("results"), dict) \
            and "scores" in raw["results"]:
        return read_inspect_log(path)
    return read_lm_eval_results(path)


FORMATS = ("csv", "lm-eval", "lm-eval-samples", "inspect", "inspect-items", "helm")


def read_format(path: str | Path, fmt: str = "auto", encoding: str | None = None) -> pd.DataFrame:
    """Read ``path`` as ``fmt`` (one of :data:`FORMATS`), or detect it (``"auto"``, :func:`read_any`)."""
    path = Path(path)
    if fmt == "auto":
        return read_any(path, encoding=encoding)
    if not path.exists():
        raise FileNotFoundError(f"no such file or directory: {path}")
    readers = {"csv": lambda p: read_csv(p, encoding), "lm-eval": lambda p: read_lm_eval_dir(p) if p.is_dir() else read_lm_eval_results(p),
               "lm-eval-samples": read_lm_eval_samples, "inspect": read_inspect_log,
               "inspect-items": lambda p: read_inspect_log(p, items=True), "helm": read_helm_run}
    if fmt not in readers:
        raise InputError(f"unknown format {fmt!r}; formats: auto, {', '.join(FORMATS)}")
    return readers[fmt](path)


def select(rows: pd.DataFrame, *, metric: str | None = None, models: list[str] | None = None,
           benchmarks: list[str] | None = None, model: str = "model", benchmark: str = "benchmark") -> pd.DataFrame:
    """Keep rows of the given metric(s) (``"acc|acc_norm"``), models and benchmarks; an empty result is an
    InputError naming what is present."""
    d = rows
    for col, wanted, label in (("metric", metric.split("|") if metric else None, "metric"),
                               (model, models, "model"), (benchmark, benchmarks, "benchmark")):
        if not wanted:
            continue
        if col not in d.columns:
            raise InputError(f"{label} selection given but the rows have no {col!r} column")
        keep = d[col].astype(str).isin(wanted)
        if not keep.any():
            raise InputError(f"no rows with {label} in {wanted}; present: {sorted(d[col].astype(str).unique())[:25]}")
        d = d[keep]
    return d.reset_index(drop=True)


def to_grid(rows: pd.DataFrame, axes: list[str], *, benchmark: str = "benchmark", model: str = "model",
            score: str = "score", metric: str | None = None, n_items: str | None = None) -> EvalGrid:
    """Tidy reader output -> :class:`EvalGrid`. ``metric`` keeps one metric unless it is an axis
    (e.g. ``acc`` vs ``acc_norm`` as the scoring-rule axis)."""
    d = select(rows, metric=metric)
    if n_items is None and "n_items" in d.columns and d["n_items"].notna().all():
        n_items = "n_items"
    return EvalGrid.from_scores(d, model=model, benchmark=benchmark, axes=axes, score=score, n_items=n_items)
