"""One vocabulary for saying which column is which, in every command and in the Python API.

``--columns KEY=COL[,KEY=COL...]`` (``columns={"a": "home_team", ...}`` in Python). Keys:

=====================  ==========================================================================
comparisons            ``a``, ``b`` (the two players), ``outcome`` (who won), ``score_a``,
                       ``score_b`` (points: the higher wins, equal is a tie), ``judge``,
                       ``cluster``, ``weight``; ``pair`` (one column naming both players,
                       e.g. PandaLM's ``cmp_key`` = ``opt-7b_pythia-6.9b``: split at ``_``,
                       `` vs `` or ``-vs-``)
grids, per-item        ``model``, ``item``, ``score``, ``benchmark``
confidence records     ``correct``, ``verbal``, ``token``, ``group`` (repeat ``group=`` for
                       several grouping columns)
=====================  ==========================================================================

``--outcome-map VALUE=a|b|tie|invalid[,...]`` maps raw outcome values (``model_1=a,model_2=b,
0=tie,unparsed=invalid``); ``--judge-cols COL[,COL...]`` reads wide per-judge outcome columns
(PandaLM's ``annotator1..3``): each row becomes one comparison per judge column, with ``judge`` =
the column's name.

Without ``--columns`` the layout is detected from the column names (:func:`detect_pairwise`):
the package's named formats first, then the common near misses — two player columns named as a
pair (``model_1/model_2``, ``system_a/system_b``, ``team1/team2``, ``home_team/away_team``,
``Winner/tie`` + ``Loser/tie``, ``Visitor/Neutral`` + ``Home/Neutral``, ``winner/loser``), a
points column beside each (``home_score/away_score``, ``score1/score2``, ``PtsW/PtsL``, a
``PTS``/``Pts`` right after each team), an outcome column (``winner``, ``outcome``, ``result``,
``preference``, ``label``, ``choice``, ``verdict``, ``score``), wide judge columns
(``annotator1``, ``annotator2``, ...), FastChat/QLoRA review records (``answer1_id``,
``answer2_id``, ``score`` with players from the file path). What was assumed is stated in one
line, written as the ``--columns`` flag that would say it explicitly.

Outcome values are read without a map when they are words (``a``/``b``/``tie``, ``model_a``,
``left``/``right``, ``win``/``loss``/``draw``, ...), the names of the two player columns
(``model_1``/``model_2``), or the players themselves (a ``winner`` column holding the winner's
name). Numbers are not guessed — 0/1, 1/2 and 0/1/2 mean different things in different files — except
the score of player a (1 win, 0.5 tie, 0 loss: 0.5 present). Any other column of numbers is an
error that shows the values found and the flag to use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.data.comparisons import TARGETS, WORDS, Comparisons, _key
from bayesrank.data.origin import Origin
from bayesrank.errors import ExclusionLog, InputError

PAIR_KEYS = ("a", "b", "outcome", "score_a", "score_b", "judge", "cluster", "weight", "pair")
GRID_KEYS = ("model", "item", "score", "benchmark")
CONFIDENCE_KEYS = ("correct", "verbal", "token", "group")
REPEATABLE = ("group",)
TIE_WORDS = {"tie", "draw", "tied", "equal", "same", "both", "neither", "tie (bothbad)", "both_bad", "bothbad",
             "both bad", "both good", "a=b"}
OUTCOME_NAMES = ("outcome", "winner", "result", "preference", "label", "choice", "verdict", "judgment",
                 "judgement", "decision", "vote", "better", "score")
PLAYER_WORDS = ("model", "system", "player", "team", "competitor", "contestant", "agent", "llm", "bot",
                "candidate", "engine", "method", "generator", "assistant", "name", "entity", "club", "side")
SIDE_PAIRS = (("a", "b"), ("1", "2"), ("left", "right"), ("first", "second"))
POINT_WORDS = ("score", "pts", "points", "goals", "runs")
JUDGE_NAMES = ("judge", "annotator", "worker", "rater", "reviewer", "annotator_id", "judge_id", "user")
WIDE_JUDGE = re.compile(r"^(annotator|judge|rater|label|human|reviewer|labeler|worker)[ _-]?\d+$", re.I)


def _norm(name: str) -> str:
    return re.sub(r"[\s/\-]+", "_", str(name).strip().lower())


# ----------------------------------------------------------------------------- parsing the flags
def parse_columns(text, keys=PAIR_KEYS, flag: str = "--columns") -> dict:
    """``"a=home_team,b=away_team"`` (or a dict) -> ``{"a": "home_team", "b": "away_team"}``;
    repeatable keys (``group``) give lists."""
    if text is None or text == "":
        return {}
    items = text.items() if isinstance(text, dict) else [p.partition("=")[::2] for p in _split(text)]
    out: dict = {}
    for key, col in items:
        key = str(key).strip().lower()
        if isinstance(col, (list, tuple)):
            cols = [str(c) for c in col]
        else:
            cols = [str(col).strip()]
        if key not in keys:
            raise InputError(f"{flag}: unknown key {key!r}; the keys are {', '.join(keys)} (KEY=COLUMN,...)")
        if not all(cols) or any(c == "" for c in cols):
            raise InputError(f"{flag}: {key}= needs a column name (KEY=COLUMN,...)")
        if key in REPEATABLE:
            out.setdefault(key, []).extend(cols)
        elif key in out:
            raise InputError(f"{flag}: {key} given twice ({out[key]!r} and {cols[0]!r})")
        else:
            if len(cols) != 1:
                raise InputError(f"{flag}: {key} takes one column, got {cols}")
            out[key] = cols[0]
    return out


def _split(text: str) -> list[str]:
    parts = [p.strip() for p in str(text).split(",")]
    for p in parts:
        if p and "=" not in p:
            raise InputError(f"expected KEY=VALUE pairs separated by commas, got {p!r} in {text!r}")
    return [p for p in parts if p]


def parse_outcome_map(text) -> dict:
    """``"model_1=a,model_2=b,0=tie,unparsed=invalid"`` (or a dict) -> ``{raw value: target}``; the
    target follows the last ``=`` (a raw value may itself contain ``=``)."""
    if text is None or text == "":
        return {}
    items = text.items() if isinstance(text, dict) else [p.rpartition("=")[::2] for p in _split(text)]
    out = {}
    for raw, target in items:
        target = str(target).strip().lower()
        if target not in TARGETS:
            raise InputError(f"--outcome-map: {raw}={target}: the target must be one of {'|'.join(TARGETS)} "
                             "(VALUE=a|b|tie|invalid,...)")
        out[str(raw).strip()] = target
    return out


def parse_judge_cols(text) -> list[str]:
    if text is None or text == "":
        return []
    cols = [c.strip() for c in (text.split(",") if isinstance(text, str) else text)]
    if not all(cols) or len(set(cols)) != len(cols):
        raise InputError(f"--judge-cols: expected distinct column names separated by commas, got {text!r}")
    return cols


# ----------------------------------------------------------------------------- detection
@dataclass
class Layout:
    """A column mapping and how it was found (``assumed`` is printed when it was detected)."""

    columns: dict = field(default_factory=dict)
    judge_cols: list = field(default_factory=list)
    outcome_map: dict = field(default_factory=dict)
    winner_first: bool = False  # a = the winner of every row (winner/loser layouts without points)
    invalid_reasons: dict = field(default_factory=dict)  # raw outcome value -> the reason it is counted under
    positional: set = field(default_factory=set)  # columns chosen by position (a duplicated name's copies)
    assumed: str = ""

    def flag(self) -> str:
        parts = [f"{k}={v}" for k, v in self.columns.items() if not str(v).startswith("<path:")]
        text = "--columns " + ",".join(parts) if parts else ""
        if self.judge_cols:
            text += (" " if text else "") + "--judge-cols " + ",".join(self.judge_cols)
        if self.outcome_map:
            text += (" " if text else "") + "--outcome-map " + ",".join(f"{k}={v}" for k, v in self.outcome_map.items())
        return text


def _find(names: list[str], wanted) -> str | None:
    """The first name whose normalised form is in ``wanted`` (in ``wanted``'s order)."""
    norm = {}
    for n in names:
        norm.setdefault(_norm(n), n)
    for w in wanted:
        if w in norm:
            return norm[w]
    return None


def _player_pairs(names: list[str]) -> list[tuple[str, str, str]]:
    """(a column, b column, how they pair) candidates, most specific first."""
    norm = {}
    for n in names:
        norm.setdefault(_norm(n), n)
    out = []
    fixed = [("home_team", "away_team"), ("hometeam", "awayteam"), ("home", "away"),
             ("visitor_neutral", "home_neutral"), ("visitor", "home"), ("winner_tie", "loser_tie"),
             ("winner_name", "loser_name"), ("winner", "loser"), ("left", "right"),
             ("generator_1", "generator_2"), ("answer_a_type", "answer_b_type")]
    for a, b in fixed:
        if a in norm and b in norm:
            out.append((norm[a], norm[b], f"{a}/{b}"))
    for word in PLAYER_WORDS:
        for s1, s2 in SIDE_PAIRS:
            for fmt in ("{w}_{s}", "{w}{s}", "{s}_{w}", "{w}_{s}_name", "{w}{s}_name"):
                a, b = fmt.format(w=word, s=s1), fmt.format(w=word, s=s2)
                if a in norm and b in norm and (norm[a], norm[b]) not in [(x, y) for x, y, _ in out]:
                    out.append((norm[a], norm[b], f"{a}/{b}"))
    return out


def _side_tokens(a: str, b: str) -> list[tuple[str, str]]:
    na, nb = _norm(a), _norm(b)
    toks = []
    for s1, s2 in (("home", "away"), ("visitor", "home"), ("winner", "loser"), ("a", "b"), ("1", "2"),
                   ("left", "right"), ("first", "second")):
        if (s1 in re.split(r"_", na) or na.endswith(s1)) and (s2 in re.split(r"_", nb) or nb.endswith(s2)):
            toks.append((s1, s2))
    if na.startswith("winner") and nb.startswith("loser"):
        toks.append(("w", "l"))
    return toks


def _point_pair(names: list[str], a: str, b: str) -> tuple[str, str] | None:
    """Points columns of players ``a`` and ``b``: named by the same side words, else the column right
    after each player column when it is a points column (sports-reference: ``Winner, Pts, , Loser, Pts``)."""
    norm = {}
    for n in names:
        norm.setdefault(_norm(n), n)
    for s1, s2 in _side_tokens(a, b):
        for word in POINT_WORDS:
            for fmt in ("{s}_{w}", "{w}_{s}", "{w}{s}", "{s}{w}", "{s}_team_{w}"):
                x, y = fmt.format(s=s1, w=word), fmt.format(s=s2, w=word)
                if x in norm and y in norm:
                    return norm[x], norm[y]
    pos = {n: i for i, n in enumerate(names)}
    after = []
    for col in (a, b):
        i = pos[col] + 1
        if i < len(names) and re.sub(r"\.\d+$", "", _norm(names[i])) in POINT_WORDS:
            after.append(names[i])
    if len(after) == 2 and after[0] != after[1]:
        return after[0], after[1], "positional"
    return None


def detect_pairwise(names: list[str], path_fields=()) -> Layout | None:
    """The layout of a pairwise table from its column names (see module docstring), or None."""
    names = [str(n) for n in names]
    path_fields = dict(path_fields or {})
    lay = Layout()
    if "a" in path_fields and "b" in path_fields:
        lay.columns.update(a=path_fields["a"], b=path_fields["b"])
        how = "players from the file path"
    else:
        pairs = _player_pairs(names)
        if pairs:
            a, b, how = pairs[0]
            lay.columns.update(a=a, b=b)
            how = f"players {a!r} vs {b!r}"
        else:
            pair = _find(names, ("cmp_key", "pair", "matchup", "pairing", "comparison", "models"))
            if pair is None:
                return None
            lay.columns["pair"] = pair
            how = f"both players in {pair!r}"
    if "judge" in path_fields:
        lay.columns["judge"] = path_fields["judge"]
    a, b = lay.columns.get("a"), lay.columns.get("b")
    points = _point_pair(names, a, b) if a and not a.startswith("<path:") else None
    fastchat = {"answer1_id", "answer2_id", "score"} <= {_norm(n) for n in names}
    wide = [n for n in names if WIDE_JUDGE.match(n)]
    if points:
        lay.columns.update(score_a=points[0], score_b=points[1])
        what = f"points {points[0]!r} vs {points[1]!r} (the higher wins, equal is a tie)"
        if len(points) == 3:
            lay.positional = {points[0], points[1]}
            what += "; the points columns are the ones right after each team"
    elif fastchat:
        lay.columns["outcome"] = _find(names, ("score",))
        lay.outcome_map = {"1": "a", "2": "b", "3": "tie", "-1": "invalid"}
        lay.invalid_reasons = {"-1": "unparsed review (score -1)"}
        what = "FastChat/QLoRA review records: score 1 = first wins, 2 = second wins, 3 = tie, -1 = unparsed (invalid)"
    else:
        outcome = _find(names, [o for o in OUTCOME_NAMES if o not in {_norm(x) for x in (a or "", b or "")}])
        if outcome is not None and _norm(outcome) != "score":
            lay.columns["outcome"] = outcome
            what = f"outcome {outcome!r}"
        elif len(wide) >= 2:
            lay.judge_cols = wide
            what = f"one comparison per judge column {', '.join(wide)}"
        elif outcome is not None:
            lay.columns["outcome"] = outcome
            what = f"outcome {outcome!r}"
        elif _norm(a or "").startswith("winner") and _norm(b or "").startswith("loser"):
            lay.winner_first = True
            what = f"{a!r} won every row"
        else:
            return None
    if "judge" not in lay.columns and not lay.judge_cols:
        judge = _find(names, JUDGE_NAMES)
        if judge is not None:
            lay.columns["judge"] = judge
    lay.assumed = f"{how}; {what}"
    return lay


# ----------------------------------------------------------------------------- outcome values
def infer_outcome_map(values: pd.Series, a_col: str | None, b_col: str | None,
                      numbers: bool = True, column: str | None = None) -> tuple[dict, str]:
    """A map for raw outcome values that need none (see module docstring), and what it assumed.
    With ``numbers``, a column of numbers other than the 1/0.5/0 score of player a raises
    (``column``: its name, for the message)."""
    raw = values.dropna()
    distinct = pd.unique(raw.astype(str).str.strip())
    keys = {_key(v) for v in distinct}
    mapping, said = {}, ""
    sides = {}
    if a_col and b_col and not str(a_col).startswith("<path:"):
        sides = {_key(a_col): "a", _key(b_col): "b"}
    numeric = pd.to_numeric(pd.Series(distinct), errors="coerce")
    if numbers and len(distinct) and numeric.notna().all():
        nums = sorted(set(numeric.astype(float)))
        if set(nums) <= {0.0, 0.5, 1.0} and 0.5 in nums:
            return {v: ("a" if float(v) == 1 else "b" if float(v) == 0 else "tie") for v in distinct}, \
                "outcome = the score of player a (1 win, 0.5 tie, 0 loss)"
        shown = ", ".join(f"{v:g}" for v in nums[:8])
        example = {frozenset({0.0, 1.0, 2.0}): "1=a,2=b,0=tie", frozenset({1.0, 2.0}): "1=a,2=b",
                   frozenset({1.0, 2.0, 3.0}): "1=a,2=b,3=tie", frozenset({0.0, 1.0}): "1=a,0=b"}.get(frozenset(nums), "1=a,2=b,0=tie")
        name = f"the outcome column {column}" if column else "the outcome column"
        raise InputError(f"{name} holds the numbers {shown}, which files use in different ways "
                         f"(is 0 a tie or a loss? is 1 the first player?); say what they mean with "
                         f"--outcome-map (e.g. --outcome-map {example})")
    for k in keys:
        if k in sides:
            mapping[k] = sides[k]
        elif k in WORDS or k in TIE_WORDS:
            mapping[k] = WORDS.get(k, "tie")
    if sides and any(k in sides for k in keys):
        said = f"outcome values {a_col!r}/{b_col!r} name the winning column"
    return mapping, said


def outcome_from_names(values: pd.Series, a: pd.Series, b: pd.Series) -> pd.Series:
    """Per row: ``a``/``b`` when the outcome value is one of the two players' names (a ``winner``
    column holding the winner), else the value itself."""
    v = values.astype(object).map(lambda x: x.strip() if isinstance(x, str) else x)
    out = v.copy()
    out[(v == a.astype(object)).to_numpy()] = "a"
    out[(v == b.astype(object)).to_numpy()] = "b"
    return out


# ----------------------------------------------------------------------------- the generic reader
def _check_columns(lay: Layout, names, duplicated: dict) -> None:
    cols = [c for k, c in lay.columns.items() if not str(c).startswith("<path:")] + list(lay.judge_cols)
    for c in cols:
        if c in duplicated and c not in lay.positional:
            copies = duplicated[c]
            raise InputError(f"column {c!r} appears {len(copies)} times in the header; say which one with its "
                             f"position's name: {', '.join(copies)} (pandas' names for the copies, in order)")
        if c not in names:
            close = [n for n in names if _norm(n) == _norm(c) or _norm(c) in _norm(n)][:5]
            raise InputError(f"column {c!r} is not in the data" + (f" (did you mean {close}?)" if close else "")
                             + f"; the columns are {', '.join(map(repr, names[:30]))}")


def _split_pair(values: pd.Series, column: str) -> tuple[pd.Series, pd.Series]:
    text = values.astype(object)
    for sep in (" vs ", " vs. ", "-vs-", "_vs_", " v ", "|", "_", " - ", ";"):
        parts = text.dropna().astype(str).str.split(re.escape(sep) if sep != "_" else "_", regex=True, n=-1)
        if len(parts) and (parts.str.len() == 2).all():
            both = text.astype(str).str.split(sep, n=1, regex=False)
            a = both.str[0].where(text.notna())
            b = both.str[1].where(text.notna())
            return a, b
    raise InputError(f"column {column!r}: cannot split its values into two player names at ' vs ', '-vs-', '_' or '|' "
                     f"(e.g. {str(text.dropna().iloc[0])!r}); give the players with --columns a=COL,b=COL")


def _shown(column: str) -> str:
    """A column as messages name it (a field of a path pattern as ``{a} of the file path``)."""
    m = re.fullmatch(r"<path:(\w+)>", str(column))
    return f"{{{m.group(1)}}} of the file path" if m else repr(column)


def read_mapped(frame: pd.DataFrame, lay: Layout, *, origin: Origin, source: str, on_invalid: str = "raise",
                outcome_map: dict | None = None, excluded: ExclusionLog | None = None, notes=(),
                text=None) -> Comparisons:
    """Comparisons from any table through a :class:`Layout` (players, outcome or points, judges).
    ``text(columns)`` returns the frame with those columns as the text in the file
    (:meth:`bayesrank.data.tables.Table.with_text`)."""
    cols = lay.columns
    notes = list(notes)
    text_cols = [cols.get(k) for k in ("a", "b", "pair", "judge", "cluster", "outcome")] + list(lay.judge_cols)
    if text is not None:
        frame = text(text_cols)
    df = pd.DataFrame(index=frame.index)
    if "pair" in cols:
        df["model_a"], df["model_b"] = _split_pair(frame[cols["pair"]], cols["pair"])
    else:
        for key, name in (("a", "model_a"), ("b", "model_b")):
            if key not in cols:
                raise InputError(f"--columns needs both players: a=COLUMN and b=COLUMN (got {', '.join(cols) or 'none'})")
            df[name] = frame[cols[key]]
    keep_cols = {c for c in text_cols if c} | {cols.get("score_a"), cols.get("score_b"), cols.get("weight")}
    invalid = pd.Series(None, index=frame.index, dtype=object)
    mapping = dict(outcome_map or {})
    mapping.update({k: v for k, v in lay.outcome_map.items() if k not in mapping})
    label = None
    if "score_a" in cols or "score_b" in cols:
        if not ("score_a" in cols and "score_b" in cols):
            raise InputError("--columns: points need both score_a=COLUMN and score_b=COLUMN")
        pa = pd.to_numeric(frame[cols["score_a"]], errors="coerce")
        pb = pd.to_numeric(frame[cols["score_b"]], errors="coerce")
        missing = (pa.isna() | pb.isna()).to_numpy()
        invalid[missing] = "missing points"
        df["outcome"] = np.where(pa > pb, "a", np.where(pa < pb, "b", "tie"))
        df.loc[missing, "outcome"] = "tie"  # excluded or reported below; never fitted
        nonnum = missing & (frame[cols["score_a"]].notna() & frame[cols["score_b"]].notna()).to_numpy()
        if nonnum.any():
            invalid[nonnum] = "non-numeric points"
        label = f"{cols['score_a']!r}/{cols['score_b']!r}"
    elif lay.judge_cols:
        long = []
        for jc in lay.judge_cols:
            part = df.assign(outcome=frame[jc].to_numpy(), judge=jc)
            long.append(part)
        df = pd.concat(long)
        # an empty cell is one judge's missing verdict: named by its column (and counted per column)
        empty = np.concatenate([frame[jc].isna().to_numpy() for jc in lay.judge_cols])
        reasons = np.repeat(np.array([f"empty cell in judge column {jc!r}" for jc in lay.judge_cols], dtype=object),
                            len(frame))
        invalid = pd.Series(np.where(empty, reasons, None), index=df.index, dtype=object)
        label = "/".join(lay.judge_cols)
        frame = pd.concat([frame] * len(lay.judge_cols))
    elif "outcome" in cols:
        df["outcome"] = frame[cols["outcome"]]
        label = repr(cols["outcome"])
    elif lay.winner_first:
        df["outcome"] = "a"
    else:
        raise InputError("--columns: say who won with outcome=COLUMN, or give points with score_a=COLUMN,score_b=COLUMN")
    if "outcome" in df and ("score_a" not in cols) and not lay.winner_first:
        df["outcome"] = outcome_from_names(df["outcome"], df["model_a"], df["model_b"])
        inferred, said = infer_outcome_map(df["outcome"], cols.get("a"), cols.get("b"), numbers=not mapping,
                                           column=label)
        mapping = {**inferred, **mapping}
        if said:
            notes.append(said)
    for raw, reason in lay.invalid_reasons.items():
        hit = (df["outcome"].map(_key) == _key(raw)).to_numpy() & invalid.isna().to_numpy()
        invalid[hit] = reason
    if "judge" in cols:
        df["judge"] = frame[cols["judge"]].to_numpy()
    weight = None
    if "weight" in cols:
        df["weight"] = frame[cols["weight"]].to_numpy()
        weight = "weight"
    for c in frame.columns:  # everything else travels along (features, metadata)
        if c not in keep_cols and c not in df.columns and not str(c).startswith("<path:"):
            df[c] = frame[c].to_numpy()
    display = {"model_a": repr(cols["pair"]) if "pair" in cols else _shown(cols["a"]),
               "model_b": repr(cols["pair"]) if "pair" in cols else _shown(cols["b"])}
    if "judge" in cols:
        display["judge"] = _shown(cols["judge"])
    return Comparisons.from_frame(df, judge="judge" if "judge" in df else None, weight=weight, outcome_map=mapping,
                                  display=display,
                                  on_invalid=on_invalid, source=source, excluded=excluded, origin=origin,
                                  invalid=invalid if invalid.notna().any() else None, outcome_label=label,
                                  notes=notes, mapping={k: v for k, v in cols.items()} | (
                                      {"judge_cols": list(lay.judge_cols)} if lay.judge_cols else {}))
