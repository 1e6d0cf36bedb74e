"""How a result shows itself at a prompt and in a notebook: its headline, the first rows of its main
table and its convergence line, as text (``repr(result)``) and as escaped HTML
(``result._repr_html_()``, what Jupyter displays).

Both views are short on purpose: ``MAX_ROWS`` rows and ``MAX_COLUMNS`` columns at most (the
result's ``_quick_columns`` first); ``table()`` has every row and ``save(...)`` writes the whole
result. Every string from the data (player, judge, benchmark names) is escaped for HTML
(:func:`bayesrank.escape.html_escape`: control characters shown).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from bayesrank.escape import html_escape, visible

if TYPE_CHECKING:
    import pandas as pd

    from bayesrank.protocol import Result

MAX_ROWS = 10
MAX_COLUMNS = 8
MUTE = "#59636e"
BAD = "#cf222e"


def cell(v: Any) -> str:
    """One value as text: integers as integers (also when stored as floats), other numbers to 4
    significant digits, missing values as '–'."""
    import numpy as np

    if v is None:
        return "–"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}" if abs(int(v)) >= 10_000 else str(int(v))
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if math.isnan(x):
            return "–"
        if math.isinf(x):
            return "∞" if x > 0 else "−∞"
        return f"{x:.4g}"
    try:
        import pandas as pd

        if v is pd.NA or v is pd.NaT:
            return "–"
    except ImportError:  # pragma: no cover (pandas is a dependency)
        pass
    return str(v)


def shown(result: Result) -> tuple[pd.DataFrame, int, int]:
    """(the rows and columns shown, rows left out, columns left out)."""
    table = result._quick_table()
    wanted = [c for c in (result._quick_columns or ()) if c in table.columns]
    cols = (wanted or list(table.columns))[:MAX_COLUMNS]
    return table.loc[:, cols].head(MAX_ROWS), max(len(table) - MAX_ROWS, 0), len(table.columns) - len(cols)


def _more(rows_left: int, cols_left: int) -> str:
    parts = []
    if rows_left:
        parts.append(f"{rows_left:,} more row{'s' if rows_left != 1 else ''}")
    if cols_left:
        parts.append(f"{cols_left} more column{'s' if cols_left != 1 else ''}")
    return " and ".join(parts) + " in .table()" if parts else ""


def text(result: Result) -> str:
    """``ClassName: headline``, the first rows of the main table, the diagnostics line."""
    frame, rows_left, cols_left = shown(result)
    lines = [f"{type(result).__name__}: {visible(result._headline())}"]
    if len(frame.columns):
        body = [[visible(cell(v)) for v in rec] for rec in frame.itertuples(index=False)]  # a name: one line
        heads = [visible(c) for c in frame.columns]
        widths = [max([len(c)] + [len(r[j]) for r in body]) for j, c in enumerate(heads)]
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(heads, widths)).rstrip())
        lines += ["  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in body]
    more = _more(rows_left, cols_left)
    if more:
        lines.append(f"  … {more}")
    lines.append(result.diagnostics.line())
    return "\n".join(lines)


def table_html(frame: pd.DataFrame) -> str:
    """An HTML table of ``frame`` (no index), every header and cell escaped; numbers right-aligned."""
    import numbers

    import numpy as np

    head = "".join(f"<th style=\"text-align:left\">{html_escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for rec in frame.itertuples(index=False):
        cells = []
        for v in rec:
            num = isinstance(v, numbers.Number) and not isinstance(v, (bool, np.bool_))
            style = " style=\"text-align:right\"" if num else ""
            cells.append(f"<td{style}>{html_escape(cell(v))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def diagnostics_html(result: Result) -> str:
    d = result.diagnostics
    colour = MUTE if d.converged else BAD
    return f"<p style=\"color:{colour};margin:4px 0\">{html_escape(d.line())}</p>"


def html(result: Result) -> str:
    """The notebook view: headline, the table's first rows, what was left out, the diagnostics."""
    frame, rows_left, cols_left = shown(result)
    more = _more(rows_left, cols_left)
    return ("<div class=\"bayesrank-result\">"
            f"<p style=\"margin:4px 0\"><b>{html_escape(type(result).__name__)}</b> · "
            f"{html_escape(result._headline())}</p>"
            + table_html(frame)
            + (f"<p style=\"color:{MUTE};margin:4px 0\">… {html_escape(more)}</p>" if more else "")
            + diagnostics_html(result) + "</div>")
