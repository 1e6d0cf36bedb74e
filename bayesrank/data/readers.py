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
#: the named formats that are a column mapping (``--columns`` may change any of their keys)
PRESETS = {
    "canonical": {"a": "model_a", "b": "model_b", "outcome": "outcome"},
    "battles": {"a": "model_a", "b": "model_b", "outcome": "winner"},
    "llmfao": {"a": "left", "b": "right", "outcome": "winner"},
    "scores": {"a": "home_team", "b": "away_team", "score_a": "home_pts", "score_b": "away_pts"},
}
#: columns read as text (names) by each named format
_TEXT = {"canonical": ("model_a", "model_b", "outcome", "judge"), "battles": ("model_a", "model_b", "winner", "judge"),
         "onehot": ("model_a", "model_b", "judge"), "llmfao": ("left", "right", "winner", "worker", "judge"),
         "alpaca_eval": ("generator_1", "generator_2", "annotator", "judge"), "tennis": ("winner_name", "loser_name"),
         "scores": ("home_team", "away_team")}
#: the outcome column of each named format that has one
_OUTCOME_COLUMN = {"canonical": "outcome", "battles": "winner", "llmfao": "winner"}
MAPPING_KEYS = ("judge", "weight", "cluster")  # what --columns may set for the formats with their own reader


def detect_format(data) -> str:
    """Name of the format whose required columns (or JSON keys) ``data`` has; ``"mapped"`` when no
    named format matches but the column names show the players and the outcome
    (:func:`bayesrank.data.columns.detect_pairwise`)."""
    from bayesrank.data.columns import detect_pairwise

    if isinstance(data, dict):
        if {"models", "X", "Y"} <= set(data):
            return "arena_counts"
        raise InputError(f"cannot detect the format of a JSON object with keys {sorted(data)[:10]}; expected a "
                         "list of records, or models/X/Y pair counts")
    cols = [str(c) for c in data.columns]
    name = _signature(cols)
    if name:
        return name
    if detect_pairwise(cols) is not None:
        return "mapped"
    raise InputError(_undetected(cols, "the data"))


def _signature(cols) -> str | None:
    have = set(map(str, cols))
    for name, req in _SIGNATURES:
        if req <= have:
            return name
    return None


def _undetected(cols, source) -> str:
    shown = ", ".join(map(repr, list(cols)[:25])) + (" ..." if len(cols) > 25 else "")
    return (f"cannot tell which columns of {source} hold the two players and who won (columns: {shown}); say it with "
            "--columns a=COL,b=COL,outcome=COL (or score_a=COL,score_b=COL for points; "
            "--judge-cols for one outcome column per judge)")


def read_comparisons(
    data,
    format: str = "auto",
    judge: str | None = None,
    on_invalid: str = "raise",
    *,
    columns=None,
    outcome_map=None,
    judge_cols=None,
    encoding: str | None = None,
    path_pattern: str | None = None,
    join=None,
    on: str | None = None,
    **kwargs,
) -> Comparisons:
    """Read comparisons from a path (a file, a folder, a bundled dataset name), a DataFrame, a
    pair-count dict or :class:`Comparisons` (returned as they are).

    ``columns`` (``{"a": "home_team", ...}`` or ``"a=home_team,b=away_team,..."``), ``outcome_map``
    (``{"model_1": "a", "unparsed": "invalid", ...}`` or ``"model_1=a,..."``) and ``judge_cols``
    (wide per-judge outcome columns) use the vocabulary of :mod:`bayesrank.data.columns`; without
    them the format is detected from the columns (named formats first, then the common near
    misses, stated in ``Comparisons.notes``). ``judge`` names a judge column (defaults: ``worker``
    for llmfao, ``annotator`` for alpaca_eval, ``judge`` if present). ``on_invalid="exclude"`` drops
    and counts every invalid row by reason instead of raising (self-comparisons, missing names or
    points, unknown or invalid-mapped outcomes, unreadable JSON lines). ``encoding`` overrides the
    detected text encoding; ``path_pattern`` reads a folder's files and takes columns from their
    paths (``"{a}-vs-{b}-gpt-4-reviewer-threeclass.jsonl"``); ``join`` (files) with ``on`` (a key
    column) adds the columns of other files keyed by the same id (per-judge verdicts kept apart).
    """
    from bayesrank.data.columns import (
        Layout,
        _check_columns,
        parse_columns,
        parse_judge_cols,
        parse_outcome_map,
        read_mapped,
    )
    from bayesrank.data.origin import Origin
    from bayesrank.data.tables import Table, read_source

    columns = parse_columns(columns)
    outcome_map = parse_outcome_map(outcome_map)
    judge_cols = parse_judge_cols(judge_cols)
    if judge is not None:
        columns.setdefault("judge", judge)
    if isinstance(data, Comparisons):
        if columns or outcome_map or judge_cols:
            raise InputError("columns=/outcome_map=/judge_cols= apply when reading a file or a DataFrame; "
                             "these are already validated Comparisons")
        return data
    if isinstance(data, (str, Path)):
        from bayesrank.datasets import resolve

        table = read_source(resolve(data), encoding=encoding, path_pattern=path_pattern,
                            bad_lines="exclude" if on_invalid == "exclude" else "raise", join=join, on=on)
    elif isinstance(data, dict):
        table = Table(frame=None, source="<dict>", origin=Origin(source="<dict>", unit="record"), obj=data)
    elif isinstance(data, pd.DataFrame):
        table = Table(frame=data, source=kwargs.pop("source", "<frame>"),
                      origin=kwargs.pop("origin", None) or Origin(source=kwargs.get("source", "<frame>")))
    else:
        raise InputError(f"cannot read comparisons from a {type(data).__name__}; expected a path, a bundled dataset "
                         "name, a pandas DataFrame or Comparisons")
    source, origin = table.source, table.origin
    if table.obj is not None:
        if format not in ("auto", "arena_counts"):
            raise InputError(f"{source} is a pair-count JSON object (models/X/Y); it has no format {format!r}")
        if columns or judge_cols:
            raise InputError(f"{source} is a pair-count JSON object (models/X/Y): it has no columns to map")
        comps = _read_arena_counts(table.obj, on_invalid=on_invalid, source=source, **kwargs)
        comps.notes = list(table.notes) + comps.notes
        return comps
    names = table.columns
    fmt = format
    if fmt != "auto" and fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    if fmt == "arena_counts":
        raise InputError(f"--format arena_counts reads a JSON object with models/X/Y; {source} is a table")
    if fmt == "auto" and not table.path_columns:
        fmt = _signature(names) or "auto"
    excluded = table.skipped.copy()
    if fmt != "auto" and not judge_cols and set(columns) <= set(MAPPING_KEYS):  # the format's own reader
        used = {f"{fmt}:{c}": c for c in dict(_SIGNATURES).get(fmt, ()) if c in names}
        _check_columns(Layout({**dict(columns), **used}), names, table.duplicated)
        if "weight" in columns:
            kwargs["weight"] = columns["weight"]
        df = table.with_text([c for c in _TEXT.get(fmt, ()) if c in names] + [columns.get("judge")])
        notes = list(table.notes)
        outcome_col = _OUTCOME_COLUMN.get(fmt)
        if outcome_col and not outcome_map:  # the one numeric code read without a map: 1/0.5/0 (as mapped files)
            from bayesrank.data.columns import infer_outcome_map

            inferred, said = infer_outcome_map(df[outcome_col], None, None, column=repr(outcome_col))
            if said:
                notes.append(said)
                outcome_map = inferred
        comps = _READERS[fmt](df, judge=columns.get("judge"), on_invalid=on_invalid, source=source, origin=origin,
                              outcome_map=outcome_map or None, notes=notes, **kwargs)
        comps.excluded = excluded.merge(comps.excluded)
        comps.mapping.update(columns)
        return comps
    lay = mapped_layout(names, fmt, columns, judge_cols, table.path_columns)
    if lay is None:
        raise InputError(_undetected(names, source))
    _check_columns(Layout(dict(columns), list(judge_cols)), names, table.duplicated)
    _check_columns(lay, names, table.duplicated)
    notes = list(table.notes)
    if lay.assumed:
        notes.append(f"columns read as: {lay.assumed} (= {lay.flag()})")
    return read_mapped(table.frame, lay, origin=origin, source=source, on_invalid=on_invalid,
                       outcome_map=outcome_map, excluded=excluded, notes=notes, text=table.with_text)


def mapped_layout(names, fmt: str, columns: dict, judge_cols: list, path_columns: dict):
    """The column mapping: a named format's preset or the detected layout, with the user's keys on
    top (a user's outcome replaces detected points and judge columns, and so on); None when the
    players or the outcome stay unknown. ``assumed`` is set when anything came from detection."""
    from bayesrank.data.columns import Layout, detect_pairwise

    if fmt in PRESETS:
        lay = Layout(columns=dict(PRESETS[fmt]))
    else:
        lay = detect_pairwise(names, path_columns) or Layout()
    cols = lay.columns
    if "a" in columns or "b" in columns:
        cols.pop("pair", None)
    if "pair" in columns:
        cols.pop("a", None)
        cols.pop("b", None)
    if "outcome" in columns or judge_cols or "score_a" in columns or "score_b" in columns:
        for k in ("outcome", "score_a", "score_b"):
            cols.pop(k, None)
        lay.judge_cols, lay.winner_first, lay.outcome_map, lay.invalid_reasons = [], False, {}, {}
    if judge_cols:
        lay.judge_cols = list(judge_cols)
        cols.pop("judge", None)
    for k, col in path_columns.items():
        cols.setdefault(k, col)
    cols.update(columns)
    has_players = ("a" in cols and "b" in cols) or "pair" in cols
    has_outcome = bool({"outcome", "score_a"} & set(cols)) or bool(lay.judge_cols) or lay.winner_first
    if not (has_players and has_outcome):
        return None
    detected = [k for k in cols if k not in columns and not str(cols[k]).startswith("<path:")]
    if fmt in PRESETS and not detected:
        lay.assumed = ""
    elif not detected and not lay.outcome_map and not lay.winner_first:
        lay.assumed = ""
    elif not lay.assumed:
        lay.assumed = f"format {fmt} with the columns given"
    return lay


def read_pairwise(data, format: str = "auto", judge: str | None = None, on_invalid: str = "raise", **kwargs):
    """The one entry point for pairwise data of a Bradley–Terry fit or audit: :class:`PairRows` (pair
    counts included) are returned as they are; a folder or glob of Parquet/CSV files (without
    ``path_pattern``/``encoding``/``join``) is streamed out of core to pair counts
    (:func:`bayesrank.data.streaming.aggregate_files`); anything else — a file, a bundled dataset
    name, a DataFrame, a pair-count dict, :class:`Comparisons` — is read by :func:`read_comparisons`
    with the same options."""
    from bayesrank.data.rows import PairRows

    if isinstance(data, PairRows):
        if any(v for k, v in kwargs.items() if k in ("columns", "outcome_map", "judge_cols")):
            raise InputError("columns=/outcome_map=/judge_cols= apply when reading a file or a DataFrame; "
                             "these are already pair rows")
        return data
    if isinstance(data, (str, Path)):
        from bayesrank.data.streaming import aggregate_files, is_collection

        if is_collection(data) and not any(kwargs.get(k) for k in ("path_pattern", "encoding", "join")):
            return aggregate_files(data, format=format, judge=judge, on_invalid=on_invalid,
                                   **{k: v for k, v in kwargs.items() if v is not None})
    return read_comparisons(data, format=format, judge=judge, on_invalid=on_invalid, **kwargs)


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
    kw.pop("origin", None)
    kw.pop("outcome_map", None)
    models = np.asarray(obj["models"], dtype=object)
    try:
        xf = np.asarray(obj["X"], dtype=float)
        y = np.asarray(obj["Y"], dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{source}: X must hold pairs of model indices and Y rows of counts (numbers)") from None
    if xf.size and (~np.isfinite(xf) | (xf != np.round(xf))).any():
        bad = np.flatnonzero((~np.isfinite(xf) | (xf != np.round(xf))).reshape(len(xf), -1).any(axis=1))[:5]
        raise InputError(f"{source}: X records {(bad + 1).tolist()} hold non-integer model indices "
                         f"(e.g. {xf.reshape(len(xf), -1)[bad[0]].tolist()}); expected integer positions in models")
    x = xf.astype(np.int64)
    if x.ndim != 2 or x.shape[1] != 2 or y.ndim != 2 or y.shape[0] != x.shape[0] or y.shape[1] not in (2, 3, 4):
        raise InputError(f"arena counts: X must be (R, 2) and Y (R, 2..4); got X{x.shape}, Y{y.shape}")
    if (x < 0).any() or (x >= len(models)).any():
        bad = np.flatnonzero(((x < 0) | (x >= len(models))).any(axis=1))[:5]
        raise InputError(f"arena counts: X records {(bad + 1).tolist()} index outside models (0..{len(models) - 1})")
    if not np.isfinite(y).all() or (y < 0).any():
        bad = np.flatnonzero((~np.isfinite(y) | (y < 0)).any(axis=1))[:5]
        raise InputError(f"arena counts: Y records {(bad + 1).tolist()} have negative or non-finite counts")
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
    out = df.copy()
    out["outcome"] = np.array(["a", "b", "tie"], dtype=object)[hot.argmax(axis=1)]
    invalid = None
    if not ok.all():
        invalid = pd.Series(np.where(ok, None, f"not exactly one of {', '.join(cols)} equal to 1"), index=df.index)
    return Comparisons.from_frame(out, judge=_judge_col(df, judge, None), on_invalid=on_invalid, source=source,
                                  invalid=invalid, **kw)


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
    origin = kw.get("origin")
    where = origin.describe if origin is not None else (lambda labels: f"rows {list(labels)[:5]}")
    p = pd.to_numeric(df["preference"], errors="coerce")
    missing = p.isna().to_numpy()
    log.add("missing preference", int(missing.sum()),
            origin.places(df.index[missing]) if origin is not None else list(df.index[missing][:5]))
    out_of_range = (~missing) & ((p < 1) | (p > 2)).to_numpy()
    if out_of_range.any():
        raise InputError(f"{where(df.index[out_of_range])}: column 'preference' outside [1, 2] "
                         "(1 = generator_1 wins, 2 = generator_2 wins, 1.5 = tie)")
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
    out = df.assign(outcome=np.where(hp > ap, "a", np.where(hp < ap, "b", "tie")))
    invalid = pd.Series(np.where(bad, "missing points", None), index=df.index) if bad.any() else None
    return Comparisons.from_frame(
        out, model_a="home_team", model_b="away_team", outcome="outcome", on_invalid=on_invalid, source=source,
        invalid=invalid, outcome_label="'home_pts'/'away_pts'", **kw
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
