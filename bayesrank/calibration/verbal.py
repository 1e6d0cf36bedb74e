"""Parse verbalised confidences ("Yes, 60%", "0.8", "80/100", "very certain") into probabilities.

Precedence inside one text (the first match of the first kind that occurs wins):
1. a percentage ``60%`` / ``60 %`` / ``60 percent``                      -> 0.60
2. a fraction ``80/100``, ``4/5``, ``8 out of 10``                        -> a / b (requires 0 ≤ a ≤ b)
3. a decimal in [0, 1] ``0.8`` / ``.8`` / ``1.0``                        -> itself
4. a bare integer ``0``-``100`` when ``integer_scale`` is given (e.g. 100) -> k / integer_scale
5. a phrase from ``word_map`` (longest phrase first, whole words only)    -> its mapped value
Anything else is *unparsable*: ``parse_verbal`` returns NaN and ``parse_verbal_series`` counts the
row in an :class:`~bayesrank.errors.ExclusionLog` (never dropped silently).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from bayesrank.errors import ExclusionLog

_NUM = r"(\d+(?:\.\d+)?|\.\d+)"
_PERCENT = re.compile(_NUM + r"\s*(?:%|percent\b)", re.I)
_FRACTION = re.compile(_NUM + r"\s*(?:/|out of)\s*" + _NUM, re.I)
_DECIMAL = re.compile(r"(?<![\d.])(0?\.\d+|[01]\.0+|[01](?![\d.%/]))(?![\d]|\s*(?:%|/|out of))", re.I)
_INTEGER = re.compile(r"(?<![\d.])(\d{1,3})(?![\d.]|\s*(?:%|/|out of))")


def parse_verbal(text, word_map: Mapping[str, float] | None = None, integer_scale: float | None = None) -> float:
    """Probability stated in ``text`` (see module docstring for the rules), NaN if none is found."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return float("nan")
    if isinstance(text, (int, float, np.integer, np.floating)) and not isinstance(text, bool):
        v = float(text)
        return v if 0.0 <= v <= 1.0 else float("nan")
    s = str(text)
    m = _PERCENT.search(s)
    if m:
        v = float(m.group(1)) / 100.0
        return v if 0.0 <= v <= 1.0 else float("nan")
    m = _FRACTION.search(s)
    if m:
        a, b = float(m.group(1)), float(m.group(2))
        return a / b if b > 0 and 0 <= a <= b else float("nan")
    m = _DECIMAL.search(s)
    if m:
        return float(m.group(1))
    if integer_scale:
        m = _INTEGER.search(s)
        if m:
            v = float(m.group(1)) / float(integer_scale)
            if 0.0 <= v <= 1.0:
                return v
    if word_map:
        low = s.lower()
        for phrase in sorted(word_map, key=len, reverse=True):
            if re.search(r"(?<![a-z])" + re.escape(phrase.lower()) + r"(?![a-z])", low):
                return float(word_map[phrase])
    return float("nan")


def parse_verbal_series(
    texts: pd.Series,
    word_map: Mapping[str, float] | None = None,
    integer_scale: float | None = None,
    log: ExclusionLog | None = None,
    reason: str = "unparsable verbal confidence",
) -> pd.Series:
    """Parse a column of texts; unparsable rows become NaN and are counted in ``log`` under ``reason``."""
    out = pd.Series([parse_verbal(t, word_map, integer_scale) for t in texts], index=texts.index, dtype=float)
    if log is not None:
        bad = out.isna()
        log.add(reason, int(bad.sum()), list(texts.index[bad][:5]))
    return out
