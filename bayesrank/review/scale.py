"""Display scale of the Bradley–Terry quantities a review shows (``review --scale logit|elo``).

``logit``: θ as fitted (sum-to-zero; a contrast θ_a − θ_b is a logit difference). ``elo``: every
score, contrast, interval bound and score difference multiplied by ``400/ln 10``
(:data:`bayesrank.bt.result.ELO_PER_LOGIT`, the factor of ``bayesrank fit --scale elo``), no
anchor: differences do not depend on one, and the leaderboard stays centred at 0. The tests,
posterior probabilities, verdicts and perturbation budgets are computed on the logit scale and do
not depend on the display scale.
"""

from __future__ import annotations

from bayesrank.errors import InputError

SCALES = ("logit", "elo")
#: the unit of a Bradley–Terry contrast (``frequentist.unit``) on each scale
UNITS = {"logit": "logit difference", "elo": "Elo points"}
#: how the section texts name the scale of the scores
SCORE_SCALE = {"logit": "the sum-to-zero logit scale", "elo": "Elo points (400/ln 10 × the sum-to-zero logit scale)"}
#: columns of score-scale numbers in the review's tables (leaderboard, method agreement, style, judges)
SCORE_COLUMNS = ("score", "lower", "upper", "plain_score", "coef", "coef_lower", "coef_upper",
                 "max_abs_score_diff", "max_abs_width_diff", "consensus_score", "consensus_lower",
                 "consensus_upper", "pooled_bt_score", "pooled_bt_lower", "pooled_bt_upper")


def check(scale: str, kind: str) -> str:
    """``scale`` if it is one of :data:`SCALES` and the data are Bradley–Terry (pairwise, judges)."""
    if scale not in SCALES:
        raise InputError(f"--scale must be one of {', '.join(SCALES)}, got {scale!r}")
    if scale != "logit" and kind not in ("pairwise", "judges"):
        raise InputError(f"--scale {scale} applies to pairwise and judge data (Bradley–Terry scores); this is {kind} data")
    return scale


def factor(scale: str) -> float:
    """Display units per logit: 1, or ``400/ln 10`` for Elo points."""
    if scale == "logit":
        return 1.0
    from bayesrank.bt.result import ELO_PER_LOGIT

    return float(ELO_PER_LOGIT)


def frame(df, scale: str, columns=SCORE_COLUMNS):
    """A copy of ``df`` with its score-scale ``columns`` (those present) on ``scale``."""
    if scale == "logit":
        return df
    out = df.copy()
    for c in columns:
        if c in out:
            out[c] = out[c] * factor(scale)
    return out


def answer(freq: dict, scale: str) -> dict:
    """A claim's frequentist answer on ``scale``: estimate, interval bounds and every interval beside
    it, when its unit is a logit difference (Kendall τ and other units are left as they are)."""
    if scale == "logit" or freq.get("unit") != UNITS["logit"]:
        return freq
    a = factor(scale)

    def times(v):
        return None if v is None else a * v

    out = {**freq, "unit": UNITS[scale]}
    for key in ("estimate", "lower", "upper"):
        if key in out:
            out[key] = times(out[key])
    if "intervals" in out:
        out["intervals"] = {k: [times(v) for v in iv] for k, iv in out["intervals"].items()}
    return out


def section(sec, scale: str, what: str, tables=(), data=()):
    """``sec`` (a :class:`~bayesrank.review.report.Section`) with the score-scale columns of the named
    ``tables`` (captions) and ``data`` entries (lists of records) on ``scale``, and a sentence naming
    the scale of ``what`` (the quantities rescaled)."""
    if scale == "logit":
        return sec
    import pandas as pd

    sec.tables = [(caption, frame(df, scale) if caption in tables else df) for caption, df in sec.tables]
    for key in data:
        if sec.data.get(key):
            sec.data[key] = frame(pd.DataFrame(sec.data[key]), scale).to_dict(orient="records")
    sec.text.append(f"{what} in {SCORE_SCALE[scale]}.")
    sec.data["scale"] = scale
    return sec
