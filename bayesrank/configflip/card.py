"""GRID card: a disclosure record of the harness configuration beside every score, and the rho_flip of
every pairwise claim the scores support. JSON/YAML (validated with jsonschema against the package's
``bayesrank/schemas/grid_card.json``) plus a Markdown rendering. The card keeps the spec's field
names (``model``, ``model_a``/``model_b`` of a claim) because it is a disclosure record of the
evaluated models, not a result table.

Every provenance field is *required* but may be ``null``: an unknown field is recorded as unknown
(and listed under ``disclosure_gaps``), never silently omitted.
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

import numpy as np
import pandas as pd

from bayesrank.errors import InputError

from .grid import EvalGrid, config_label
from .metrics import pairwise_flips

SCHEMA_VERSION = "1.0"
SCHEMA_NAME = "grid_card"   # bayesrank/schemas/grid_card.json ($id urn:bayesrank:schema:grid_card)

PROVENANCE_FIELDS = ("model_revision", "quantisation", "harness", "harness_version", "harness_commit",
                     "template_hash", "num_fewshot", "fewshot_seed", "scoring_rule", "item_subset_hash")


def card_schema() -> dict:
    """The GRID card's JSON Schema (draft 2020-12), shipped as ``bayesrank/schemas/grid_card.json``."""
    from bayesrank.protocol import schema

    return schema(SCHEMA_NAME)


def _clean(v):
    if v is None:
        return None
    if isinstance(v, float) and not np.isfinite(v):
        return None
    if isinstance(v, np.generic):
        return _clean(v.item())
    if v is pd.NA or (not isinstance(v, (str, bool, int, float, dict, list)) and pd.isna(v)):
        return None
    return v


def _int_or_none(v):
    v = _clean(v)
    if v is None or v == "":
        return None
    try:
        return int(float(v))
    except (TypeError, ValueError):
        return None


def _num_or_none(v):
    v = _clean(v)
    try:
        return None if v is None else float(v)
    except (TypeError, ValueError):
        return None


def _str_or_none(v):
    v = _clean(v)
    return None if v is None or v == "" else str(v)


def build_card(rows: pd.DataFrame, axes: list[str], *, grid: EvalGrid | None = None, range_spec: str = "full",
               title: str = "GRID card", scoring_col: str = "metric", tol: float = 0.0) -> dict:
    """Card from reader rows (one per score; provenance columns as the readers name them).

    ``grid`` (default: built from ``rows`` with ``axes``) supplies the pairwise claims and their rho_flip.
    """
    if grid is None:
        grid = EvalGrid.from_scores(rows.reset_index(drop=True), axes=axes,
                                    n_items="n_items" if "n_items" in rows and rows["n_items"].notna().all() else None)
    get = lambda r, k: r.get(k) if k in r else None  # noqa: E731
    entries = []
    for r in rows.to_dict(orient="records"):
        entries.append({
            "model": str(r["model"]), "benchmark": str(r["benchmark"]),
            "configuration": {a: str(r[a]) for a in axes},
            "score": float(r["score"]), "stderr": _num_or_none(get(r, "stderr")),
            "n_items": _int_or_none(get(r, "n_items")),
            "model_revision": _str_or_none(get(r, "model_revision")),
            "quantisation": _str_or_none(get(r, "quantisation")),
            "harness": _str_or_none(get(r, "harness")), "harness_version": _str_or_none(get(r, "harness_version")),
            "harness_commit": _str_or_none(get(r, "harness_commit")),
            "template_hash": _str_or_none(get(r, "template_hash") or get(r, "prompt_hash")),
            "decoding": {"temperature": _num_or_none(get(r, "temperature")), "top_p": _num_or_none(get(r, "top_p")),
                         "do_sample": _clean(get(r, "do_sample")) if isinstance(_clean(get(r, "do_sample")), bool)
                         else None, "max_tokens": _int_or_none(get(r, "max_tokens"))},
            "num_fewshot": _int_or_none(get(r, "num_fewshot")), "fewshot_seed": _int_or_none(get(r, "fewshot_seed")),
            "scoring_rule": _str_or_none(get(r, scoring_col)),
            "item_subset_hash": _str_or_none(get(r, "item_subset_hash")),
            "source": _str_or_none(get(r, "source_file")),
        })
    claims = []
    for b in grid.benchmarks:
        wide = grid.wide(b)
        if wide.shape[0] < 2 or wide.shape[1] < 2:  # no pairwise claim, or nothing that could flip
            continue
        for p in pairwise_flips(grid, b, tol).to_dict(orient="records"):
            if p["n_configs"] == 0:
                continue
            a, bb = p["player_a"], p["player_b"]
            if p["n_plus"] >= p["n_minus"]:
                verdict = f"{a} > {bb} in {p['n_plus']} of {p['n_configs']} configurations"
            else:
                verdict = f"{bb} > {a} in {p['n_minus']} of {p['n_configs']} configurations"
            claims.append({"benchmark": b, "model_a": a, "model_b": bb, "verdict": verdict,
                           **{k: int(p[k]) for k in ("n_plus", "n_minus", "n_ties", "n_configs")},
                           "rho_flip": float(p["rho_flip"]), "strict_order_free": bool(p["strict_order_free"])})
    gaps = {f: sum(1 for e in entries if e[f] is None) for f in PROVENANCE_FIELDS}
    gaps["decoding.temperature"] = sum(1 for e in entries if e["decoding"]["temperature"] is None)
    card = {"grid_card_version": SCHEMA_VERSION, "title": title,
            "created": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "range": range_spec or "full", "axes": list(axes), "entries": entries, "claims": claims,
            "disclosure_gaps": {k: v for k, v in gaps.items()}}
    validate_card(card)
    return card


def validate_card(card: dict) -> None:
    """jsonschema validation against ``grid_card.json``; raises InputError naming the offending path."""
    import jsonschema

    v = jsonschema.Draft202012Validator(card_schema())
    errors = sorted(v.iter_errors(card), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise InputError(f"GRID card invalid at {where}: {e.message} ({len(errors)} error(s))")


def render_markdown(card: dict, max_entries: int = 200) -> str:
    """Human-readable card: provenance table per score, then the pairwise claims with rho_flip. Every
    value from the data (models, benchmarks, configuration values, harness fields) goes through
    :func:`bayesrank.escape.markdown_escape`: no HTML, link or table syntax passes through."""
    from bayesrank.escape import markdown_escape as md

    L = [f"# {md(card.get('title', 'GRID card'))}", "",
         f"GRID card v{md(card['grid_card_version'])} · created {md(card['created'])} · range {md(card['range'])} · "
         f"axes: {md(', '.join(map(str, card['axes'])))}", "", "## Scores and their configuration", "",
         "| model | benchmark | configuration | score | n | harness (version/commit) | revision | quant | "
         "template hash | decoding | few-shot (seed) | scoring | item subset |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    short = lambda h: "—" if not h else str(h)[:10]  # noqa: E731
    for e in card["entries"][:max_entries]:
        dec = e["decoding"]
        dec_s = "—" if dec["temperature"] is None and dec["do_sample"] is None else \
            f"T={dec['temperature']}, sample={dec['do_sample']}"
        cells = [e["model"], e["benchmark"], config_label(e["configuration"].values(), e["configuration"]),
                 f"{e['score']:.4f}", e["n_items"] or "—",
                 f"{e['harness'] or '—'} ({e['harness_version'] or '—'}/{short(e['harness_commit'])})",
                 e["model_revision"] or "—", e["quantisation"] or "—", short(e["template_hash"]), dec_s,
                 f"{e['num_fewshot'] if e['num_fewshot'] is not None else '—'} ({e['fewshot_seed'] or '—'})",
                 e["scoring_rule"] or "—", short(e["item_subset_hash"])]
        L.append("| " + " | ".join(md(c) for c in cells) + " |")
    if len(card["entries"]) > max_entries:
        L.append(f"\n… {len(card['entries']) - max_entries} more entries in the JSON/YAML card.")
    L += ["", "## Pairwise claims and their contradiction rate", "",
          "| benchmark | claim | N+ | N− | ties | ρ_flip | strict-reversal-free |", "|---|---|---|---|---|---|---|"]
    for c in card["claims"]:
        L.append(f"| {md(c['benchmark'])} | {md(c['verdict'])} | {c['n_plus']} | {c['n_minus']} | {c['n_ties']} | "
                 f"{c['rho_flip']:.3f} | {'yes' if c['strict_order_free'] else 'no'} |")
    L += ["", "## Disclosure gaps (entries with the field unrecorded)", ""]
    L += [f"- {md(k)}: {v} of {len(card['entries'])}" for k, v in card["disclosure_gaps"].items()]
    return "\n".join(L) + "\n"


def write_card(card: dict, path: str | Path, markdown: bool = True) -> Path:
    """Write JSON (``.json``) or YAML (``.yaml``/``.yml``), and the Markdown rendering beside it (``.md``)."""
    import yaml

    from bayesrank.outputs import write_text

    validate_card(card)
    path = Path(path)
    if path.suffix in (".yaml", ".yml"):
        write_text(path, yaml.safe_dump(card, sort_keys=False, allow_unicode=True))
    else:
        write_text(path, json.dumps(card, indent=2))
    if markdown:
        write_text(path.with_suffix(".md"), render_markdown(card))
    return path


def read_card(path: str | Path) -> dict:
    import yaml

    path = Path(path)
    text = path.read_text()
    card = yaml.safe_load(text) if path.suffix in (".yaml", ".yml") else json.loads(text)
    validate_card(card)
    return card
