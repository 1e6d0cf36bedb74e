"""How the report writes numbers, in one place (the page, the Markdown twin, the terminal and the
claims' one-line reasons use these, so the same number reads the same everywhere).

* counts are integers with thousands separators (``1,670,250``), never ``1.67e+06``;
* an estimate and its interval share one number of decimals, chosen so that the largest of the
  three shows 3 significant digits (``0.096 [0.063, 0.130]``);
* p-values have 2 significant digits (``0.0094``, ``2.0e-08``) and a floor: below ``1e-16``
  (beneath double precision's resolution of ``1 − p``) they read ``< 1e-16``;
* a posterior share computed from S draws is shown to the resolution S allows: ``> 1 − 1/S``
  when every draw agrees, ``< 1/S`` when none does, else 3 decimals;
* fractions of the comparisons as percentages with 2 significant digits (``0.012%``).
"""

from __future__ import annotations

import math

P_FLOOR = 1e-16
MINUS = "−"


def _finite(v) -> bool:
    try:
        return v is not None and not isinstance(v, bool) and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def count(v) -> str:
    """An integer count with thousands separators; a fractional count (weights, an effective number)
    keeps one decimal below 100 and is rounded above."""
    if not _finite(v):
        return "–"
    x = float(v)
    if abs(x - round(x)) < 1e-9 or abs(x) >= 100:  # an effective count of 25,101.96 reads 25,102
        return f"{round(x):,}"
    return f"{x:,.1f}"


def plural(n, one: str, many: str | None = None) -> str:
    """``'1 comparison'``, ``'164 comparisons'``."""
    word = one if _finite(n) and float(n) == 1 else (many or one + "s")
    return f"{count(n)} {word}"


def signed(x: float, decimals: int) -> str:
    s = f"{x:,.{decimals}f}"
    return MINUS + s[1:] if s.startswith("-") else s


def decimals_for(*values, digits: int = 3) -> int:
    """Decimals that give the largest |value| ``digits`` significant digits (at least 0, at most 8)."""
    big = max((abs(float(v)) for v in values if _finite(v)), default=0.0)
    if big == 0:
        return digits - 1
    return int(min(8, max(0, digits - 1 - math.floor(math.log10(big)))))


def estimate_interval(est, lower, upper, digits: int = 3) -> str:
    """``0.096 [0.063, 0.130]`` (one number of decimals for the three); a one-sided interval shows its
    open end as ∞: ``0.096 [0.063, ∞)``."""
    d = decimals_for(est, lower, upper, digits=digits)

    def one(v):
        return signed(float(v), d) if _finite(v) else "–"

    if not _finite(lower) and not _finite(upper):
        return one(est)
    left = f"[{one(lower)}" if _finite(lower) else f"({MINUS}∞"
    right = f"{one(upper)}]" if _finite(upper) else "∞)"
    return f"{one(est)} {left}, {right}"


def p_value(p) -> str:
    """2 significant digits; ``< 1e-16`` below the floor; ``1`` exactly at 1."""
    if not _finite(p):
        return "–"
    p = float(p)
    if p < P_FLOOR:
        return f"< {P_FLOOR:.0e}"
    if p >= 1:
        return "1"
    if p < 1e-3:
        return f"{p:.1e}"
    return f"{p:#.2g}"


def p_equals(p) -> str:
    """``p = 0.0094`` or ``p < 1e-16``."""
    s = p_value(p)
    return f"p {s}" if s.startswith("<") else f"p = {s}"


def probability(p, n_draws=None) -> str:
    """A posterior share to the resolution of its ``n_draws`` (see the module docstring)."""
    if not _finite(p):
        return "–"
    p = float(p)
    if n_draws and p >= 1.0:
        return f"> {1 - 1 / n_draws:.4g}"
    if n_draws and p <= 0.0:
        return f"< {1 / n_draws:.2g}"
    return f"{p:.3f}"


def percent(fraction) -> str:
    """A fraction as a percentage with 2 significant digits (``0.012%``)."""
    if not _finite(fraction):
        return "–"
    v = 100 * float(fraction)
    if v == 0:
        return "0%"
    return f"{v:.2g}%" if v < 10 else f"{v:.0f}%"


def number(v, digits: int = 4) -> str:
    """A table value: integers and integral floats as counts, other floats with ``digits`` significant
    digits and no exponent between 1e-4 and 1e6; booleans as yes/no; None/NaN as an en dash."""
    if v is None:
        return "–"
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return "yes" if v else "no"
    if isinstance(v, int) or type(v).__name__.startswith(("int", "uint")):
        return f"{int(v):,}"
    if isinstance(v, float) or type(v).__name__.startswith("float"):
        x = float(v)
        if not math.isfinite(x):
            return "–"
        if x != 0 and abs(x) >= 1 and x == round(x) and abs(x) < 1e15:
            return f"{round(x):,}"
        if abs(x) >= 1e4:
            return signed(x, 0)
        if x != 0 and abs(x) < 1e-4:
            s = f"{x:.{max(digits - 2, 1)}e}"
            return MINUS + s[1:] if s.startswith("-") else s
        s = f"{x:.{digits}g}"
        return MINUS + s[1:] if s.startswith("-") else s
    return str(v)
