"""Readers for the real pairwise formats; each returns validated :class:`Comparisons`.

``read_comparisons(path_or_frame, format="auto")`` detects the format from the columns (or the
JSON keys); pass ``format=`` to override. Formats:

- ``battles``       LMArena/FastChat: ``model_a, model_b, winner`` in {model_a, model_b, tie, tie (bothbad)}
- ``arena_counts``  pair-count JSON (leaderbot ``chatbotarena_*.json``): ``models``, ``X`` (pairs), ``Y`` (wins_i, wins_j, ties, ties_bothbad)
- ``onehot``        ``model_a, model_b, winner_model_a, winner_model_b, winner_tie``
- ``llmfao``        ``left, right, winner`` in {left, right, tie}; ``worker`` is the judge
- ``alpaca_eval``   ``generator_1, generator_2, preference`` in [1, 2]; ``annotator`` is the judge
- ``tennis``        ``winner_name, loser_name``
- ``scores``        ``home_team, away_team, home_pts, away_pts`` (equal points = tie)
- ``canonical``     ``model_a, model_b, outcome`` (a/b/tie) [+ ``judge``, ``weight``]
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from bayesrank.data.comparisons import Comparisons
from bayesrank.data.formats import (
    FORMATS,  # one list, shared with the command-line parsers
)
from bayesrank.errors import ExclusionLog, InputError

_SIGNATURES = [  # (format, required columns) checked in order
    ("onehot", {"model_a", "model_b", "winner_model_a", "winner_model_b", "winner_tie"}),
    ("canonical", {"model_a", "model_b", "outcome"}),
    ("battles", {"model_a", "model_b", "winner"}),
    ("llmfao", {"left", "right", "winner"}),
    ("alpaca_eval", {"generator_1", "generator_2", "preference"}),
    ("tennis", {"winner_name", "loser_name"}),
    ("scores", {"home_team", "away_team", "home_pts", "away_pts"}),
]


def _load_table(path: Path) -> pd.DataFrame | dict:
    suffix = "".join(path.suffixes[-2:]).lower() if path.suffix == ".gz" else path.suffix.lower()
    if suffix in (".csv", ".csv.gz"):
        return pd.read_csv(path)
    if suffix in (".tsv", ".tsv.gz", ".tab"):
        return pd.read_csv(path, sep="\t")
    if suffix in (".jsonl", ".ndjson"):
        return pd.read_json(path, lines=True)
    if suffix == ".json":
        obj = json.loads(path.read_text())
        if isinstance(obj, dict) and {"models", "X", "Y"} <= set(obj):
            return obj
        if isinstance(obj, list):
            return pd.DataFrame(obj)
        if isinstance(obj, dict):
            return pd.DataFrame(obj)
        raise InputError(f"{path}: JSON must be a list of records or a pair-count object with models/X/Y")
    if suffix in (".parquet", ".pq"):
        return pd.read_parquet(path)
    raise InputError(f"{path}: unknown file type {suffix!r}; expected .csv .tsv .json .jsonl .parquet")


def detect_format(data) -> str:
    """Name of the format whose required columns (or JSON keys) ``data`` has."""
    if isinstance(data, dict):
        if {"models", "X", "Y"} <= set(data):
            return "arena_counts"
        raise InputError(f"cannot detect format of a JSON object with keys {sorted(data)[:10]}")
    cols = set(map(str, data.columns))
    for name, req in _SIGNATURES:
        if req <= cols:
            return name
    raise InputError(
        f"cannot detect the comparison format from columns {sorted(cols)[:20]}; "
        f"pass format= one of {FORMATS} (or rename columns to model_a, model_b, outcome)"
    )


def read_comparisons(
    data,
    format: str = "auto",
    judge: str | None = None,
    on_invalid: str = "raise",
    **kwargs,
) -> Comparisons:
    """Read comparisons from a path or DataFrame (format auto-detected unless given).

    ``judge`` names a judge column (defaults: ``worker`` for llmfao, ``annotator`` for
    alpaca_eval, ``judge`` if present). ``on_invalid="exclude"`` counts and drops self-comparisons,
    missing names and unusable outcomes instead of raising.
    """
    source = "<frame>"
    if isinstance(data, (str, Path)):
        path = Path(data)
        if not path.exists():
            raise FileNotFoundError(f"no such file: {path}")
        source = str(path)
        data = _load_table(path)
    fmt = detect_format(data) if format == "auto" else format
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    reader = _READERS[fmt]
    return reader(data, judge=judge, on_invalid=on_invalid, source=source, **kwargs)


def _require(df: pd.DataFrame, cols, fmt: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise InputError(f"format {fmt!r} needs column(s) {missing}; the data have {list(df.columns)}")


def _judge_col(df, judge, default):
    if judge is not None:
        return judge
    if default is not None and default in df.columns:
        return default
    return "judge" if "judge" in df.columns else None


def _read_canonical(df, judge=None, on_invalid="raise", source="<frame>", **kw):
    _require(df, ["model_a", "model_b", "outcome"], "canonical")
    weight = kw.pop("weight", "weight" if "weight" in df.columns else None)
    return Comparisons.from_frame(
        df, judge=_judge_col(df, judge, None), weight=weight, on_invalid=on_invalid, source=source, **kw
    )


def _read_battles(df, judge=None, on_invalid="raise", source="<frame>", **kw):
    _require(df, ["model_a", "model_b", "winner"], "battles")
    weight = kw.pop("weight", "weight" if "weight" in df.columns else None)
    return Comparisons.from_frame(
        df, outcome="winner", judge=_judge_col(df, judge, None), weight=weight,
        on_invalid=on_invalid, source=source, **kw,
    )


def _read_arena_counts(obj, judge=None, on_invalid="raise", source="<frame>", **kw):
    """Pair-count JSON: ``Y[r] = [wins_i, wins_j, ties, ties_bothbad]`` for pair ``X[r] = [i, j]``.

    Returned as weighted rows (weight = count), one per pair and non-empty outcome; both tie kinds
    become ``tie`` (the kind is kept in the ``tie_kind`` column).
    """
    models = np.asarray(obj["models"], dtype=object)
    x = np.asarray(obj["X"], dtype=np.int64)
    y = np.asarray(obj["Y"], dtype=float)
    if x.ndim != 2 or x.shape[1] != 2 or y.ndim != 2 or y.shape[0] != x.shape[0] or y.shape[1] not in (2, 3, 4):
        raise InputError(f"arena counts: X must be (R, 2) and Y (R, 2..4); got X{x.shape}, Y{y.shape}")
    if (x < 0).any() or (x >= len(models)).any():
        bad = np.flatnonzero(((x < 0) | (x >= len(models))).any(axis=1))[:5]
        raise InputError(f"arena counts: X rows {bad.tolist()} index outside models (0..{len(models) - 1})")
    if not np.isfinite(y).all() or (y < 0).any():
        bad = np.flatnonzero((~np.isfinite(y) | (y < 0)).any(axis=1))[:5]
        raise InputError(f"arena counts: Y rows {bad.tolist()} have negative or non-finite counts")
    kinds = ["a", "b", "tie", "tie"][: y.shape[1]]
    labels = ["a", "b", "tie", "tie (bothbad)"][: y.shape[1]]
    parts = []
    for col, (out, lab) in enumerate(zip(kinds, labels)):
        nz = y[:, col] > 0
        parts.append(
            pd.DataFrame(
                {
                    "model_a": models[x[nz, 0]],
                    "model_b": models[x[nz, 1]],
                    "outcome": out,
                    "tie_kind": lab if out == "tie" else None,
                    "weight": y[nz, col],
                }
            )
        )
    df = pd.concat(parts, ignore_index=True)
    return Comparisons.from_frame(df, weight="weight", on_invalid=on_invalid, source=source, **kw)


def _read_onehot(df, judge=None, on_invalid="raise", source="<frame>", **kw):
    cols = ["winner_model_a", "winner_model_b", "winner_tie"]
    _require(df, ["model_a", "model_b", *cols], "onehot")
    hot = df[cols].apply(pd.to_numeric, errors="coerce").fillna(-1).to_numpy()
    ok = np.isin(hot, (0, 1)).all(axis=1) & (hot.sum(axis=1) == 1)
    if not ok.all():
        bad = np.flatnonzero(~ok)[:5]
        raise InputError(
            f"onehot: rows {df.index[bad].tolist()} do not have exactly one of {cols} equal to 1"
        )
    out = df.copy()
    out["outcome"] = np.array(["a", "b", "tie"], dtype=object)[hot.argmax(axis=1)]
    return Comparisons.from_frame(out, judge=_judge_col(df, judge, None), on_invalid=on_invalid, source=source, **kw)


def _read_llmfao(df, judge=None, on_invalid="raise", source="<frame>", **kw):
    _require(df, ["left", "right", "winner"], "llmfao")
    return Comparisons.from_frame(
        df, model_a="left", model_b="right", outcome="winner", judge=_judge_col(df, judge, "worker"),
        on_invalid=on_invalid, source=source, **kw,
    )


def _read_alpaca_eval(df, judge=None, on_invalid="raise", source="<frame>", **kw):
    """AlpacaEval annotations: ``preference`` 1 = generator_1 wins, 2 = generator_2 wins, 1.5 = tie.

    Fractional preferences ``p`` (the weighted annotator) become a soft outcome: weight ``2 - p`` on
    "generator_1 wins" and ``p - 1`` on "generator_2 wins". Missing preferences are excluded and counted.
    """
    _require(df, ["generator_1", "generator_2", "preference"], "alpaca_eval")
    log = ExclusionLog()
    p = pd.to_numeric(df["preference"], errors="coerce")
    missing = p.isna().to_numpy()
    log.add("missing preference", int(missing.sum()), list(df.index[missing][:5]))
    out_of_range = (~missing) & ((p < 1) | (p > 2)).to_numpy()
    if out_of_range.any():
        raise InputError(
            f"column 'preference': rows {df.index[out_of_range][:5].tolist()} outside [1, 2]"
        )
    d = df[~missing].copy()
    p = p[~missing].to_numpy()
    jcol = _judge_col(d, judge, "annotator")
    exact_tie = np.isclose(p, 1.5)
    hard_a = np.isclose(p, 1.0)
    hard_b = np.isclose(p, 2.0)
    soft = ~(exact_tie | hard_a | hard_b)
    rows = []
    base = d.assign(weight=1.0)
    rows.append(base[hard_a].assign(outcome="a"))
    rows.append(base[hard_b].assign(outcome="b"))
    rows.append(base[exact_tie].assign(outcome="tie"))
    rows.append(base[soft].assign(outcome="a", weight=2.0 - p[soft]))
    rows.append(base[soft].assign(outcome="b", weight=p[soft] - 1.0))
    frame = pd.concat(rows).sort_index(kind="stable")
    return Comparisons.from_frame(
        frame, model_a="generator_1", model_b="generator_2", outcome="outcome", judge=jcol, weight="weight",
        on_invalid=on_invalid, source=source, excluded=log, **kw,
    )


def _read_tennis(df, judge=None, on_invalid="raise", source="<frame>", walkovers="exclude", retirements="keep", **kw):
    """Sackmann-style match rows (``winner_name``, ``loser_name``; optional ``score``).

    A walkover (score ``W/O``) is not a match: excluded and counted by default
    (``walkovers="keep"`` counts it as a win). Retirements and defaults (``RET``, ``DEF``) are
    matches that were played in part: kept as wins by default (``retirements="exclude"`` drops and
    counts them).
    """
    _require(df, ["winner_name", "loser_name"], "tennis")
    for name, val in (("walkovers", walkovers), ("retirements", retirements)):
        if val not in ("keep", "exclude"):
            raise InputError(f"tennis: {name} must be 'keep' or 'exclude', got {val!r}")
    log = ExclusionLog()
    keep = np.ones(len(df), dtype=bool)
    if "score" in df.columns:
        score = df["score"].astype("string").str.upper().fillna("")
        rules = [("walkover (W/O: no match played)", walkovers, score.str.contains("W/O", regex=False)),
                 ("retirement or default (RET/DEF)", retirements, score.str.contains(r"\b(?:RET|DEF)\b", regex=True))]
        for label, action, hit in rules:
            hit = hit.to_numpy(dtype=bool) & keep
            if action == "exclude" and hit.any():
                log.add(label, int(hit.sum()), list(df.index[hit][:5]))
                keep &= ~hit
    out = df[keep].assign(outcome="a") if not keep.all() else df.assign(outcome="a")
    return Comparisons.from_frame(
        out, model_a="winner_name", model_b="loser_name", outcome="outcome", on_invalid=on_invalid, source=source,
        excluded=log, **kw
    )


def _read_scores(df, judge=None, on_invalid="raise", source="<frame>", **kw):
    cols = ["home_team", "away_team", "home_pts", "away_pts"]
    _require(df, cols, "scores")
    hp = pd.to_numeric(df["home_pts"], errors="coerce")
    ap = pd.to_numeric(df["away_pts"], errors="coerce")
    bad = (hp.isna() | ap.isna()).to_numpy()
    if bad.any():
        raise InputError(f"scores: rows {df.index[bad][:5].tolist()} have missing or non-numeric points")
    out = df.assign(outcome=np.where(hp > ap, "a", np.where(hp < ap, "b", "tie")))
    return Comparisons.from_frame(
        out, model_a="home_team", model_b="away_team", outcome="outcome", on_invalid=on_invalid, source=source, **kw
    )


_READERS = {
    "canonical": _read_canonical,
    "battles": _read_battles,
    "arena_counts": _read_arena_counts,
    "onehot": _read_onehot,
    "llmfao": _read_llmfao,
    "alpaca_eval": _read_alpaca_eval,
    "tennis": _read_tennis,
    "scores": _read_scores,
}
