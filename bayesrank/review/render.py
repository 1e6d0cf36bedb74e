"""HTML and Markdown renderings of a :class:`~bayesrank.review.report.ReviewReport`.

The HTML page is self-contained: inline CSS, figures as inline base64 SVG images, no scripts and no
network requests. It fits a 1280-pixel screen without horizontal scrolling and prints on A4 or
Letter (the claims table is laid out to the page width, long names wrap, verdict colours print).
Every string that comes from the data (player, judge, benchmark names, claims) is untrusted: it is
escaped for HTML, and for Markdown by :func:`bayesrank.escape.markdown_escape` (a backslash before
the characters that would make markup and only those, control characters shown), so the twin also
reads as plain text.
"""

from __future__ import annotations

import base64
import io
import re

import numpy as np
import pandas as pd

from bayesrank.escape import html_escape, markdown_escape, visible
from bayesrank.review.numbers import (
    count,
    decimals_for,
    estimate_interval,
    number,
    p_equals,
    p_value,
    percent,
    plural,
    probability,
    signed,
)
from bayesrank.review.scale import UNITS

BT_UNITS = set(UNITS.values())  # a Bradley–Terry contrast: an estimate <= 0 is against the claim

CSS = """
:root { --ok:#1a7f37; --warn:#9a6700; --bad:#cf222e; --ink:#1f2328; --mute:#59636e; --line:#d1d9e0; }
* { box-sizing: border-box; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       max-width: 1180px; margin: 0 auto; padding: 24px 28px 64px; overflow-wrap: anywhere; }
h1 { font-size: 1.6em; margin: 0 0 4px; } h2 { margin-top: 2em; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { margin-bottom: 6px; }
.sub { color: var(--mute); margin: 0 0 16px; }
table { border-collapse: collapse; margin: 8px 0 18px; font-size: 13px; max-width: 100%; }
th, td { border: 1px solid var(--line); padding: 4px 6px; vertical-align: top; overflow-wrap: anywhere; }
th { background: #f6f8fa; text-align: left; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.verdict { font-weight: 700; padding: 1px 7px; border-radius: 10px; color: #fff; white-space: nowrap; }
.supported { background: var(--ok); } .fragile { background: var(--warn); } .unsupported { background: var(--bad); }
.not-searched, .not-converged { background: var(--mute); } .undetermined-by-the-table { background: #0969da; }
.rule { background: #f6f8fa; border-left: 4px solid var(--mute); padding: 8px 12px; margin: 10px 0 18px; }
.counts span { margin-right: 14px; }
figure { margin: 10px 0 22px; } figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--mute); font-size: 13px; }
.warn { color: var(--warn); } .mute { color: var(--mute); }
table#claims { width: 100%; table-layout: fixed; }
table#claims .who { display: block; color: var(--mute); font-size: 12px; }
table#claims td.why, table#claims td.pert, table#claims td.settle { font-size: 12px; }
table#claims td.freq { font-variant-numeric: tabular-nums; font-size: 12px; }
table#claims .verdict { font-size: 11px; padding: 1px 5px; }
table#claims .undetermined-by-the-table { white-space: normal; display: inline-block; }
.line, .nobr { white-space: nowrap; }
@media (max-width: 1100px) { .line { white-space: normal; } }
@page { margin: 12mm; }
@media print { body { max-width: none; padding: 0; } h2 { break-after: avoid; } tr, figure { break-inside: avoid; }
  figure img { max-height: 240mm; } }
@media print, (max-width: 820px) {
  body { font-size: 10px; padding: 8px; } table { font-size: 9px; } th, td { padding: 2px 3px; }
  table#claims td.why, table#claims td.pert, table#claims td.freq, table#claims td.settle, table#claims .who {
    font-size: 8.5px; }
  table#claims .verdict { font-size: 8px; padding: 0 3px; border-radius: 6px; }
  .line { white-space: normal; }
}
"""

ACTION_ORDER = ("drop", "flip", "add", "drop-cluster", "configuration", "estimator")
# relative widths of the claims table's columns (it is laid out to the page width: nothing is cut off)
CLAIM_COLUMNS = (("claim", 16), ("verdict", 10), ("why", 20), ("freq", 15), ("bayes", 9), ("overturn", 15),
                 ("significance", 15), ("settle", 14))
# with the "to settle it" column the text columns give it room; the numbers' columns keep theirs
SETTLE_WIDTHS = {"claim": 11, "verdict": 10, "why": 14, "bayes": 8, "settle": 12}
SHORT_LINE = 23  # a perturbation line this short stays on one line ('flip: 198 (0.012%) ✓'); longer ones wrap


def claim_actions(report) -> list[str]:
    """Perturbation kinds present in the claims, in a fixed order."""
    present = {a for c in report.claims for a in (c.perturbation or {})}
    return [a for a in ACTION_ORDER if a in present] + sorted(present - set(ACTION_ORDER))


# ---------------------------------------------------------------------------------- formatting
fmt = number


def esc(v) -> str:
    return html_escape(fmt(v))


def md_esc(v, cell: bool = True) -> str:
    """``v`` formatted (:func:`fmt`) and escaped for Markdown by the one escaper,
    :func:`bayesrank.escape.markdown_escape` (the same in a paragraph and in a table cell; ``cell``
    is kept for callers that say where the text goes)."""
    return markdown_escape(fmt(v))


def perturbation_cell(p: dict) -> str:
    """'12 (0.0007%) ✓' for a verified break (✓: confirmed by an exact refit; '3–5 (… at most) ✓'
    when only a bound of 3 and a verified witness of 5 are known, '≤ 5 (…) ✓' with no bound); 'none found within
    500' when an audit's budget ran out; the entry's reason in words otherwise (not audited, or a
    change of configuration / estimator that reverses nothing)."""
    if p.get("broken") is None:
        return p.get("reason") or "not audited"
    size = count(p["budget"]) if p.get("clusters") is None else f"{count(p['budget'])} in {plural(p['clusters'], 'cluster')}"
    if p.get("searched_unit") == "clusters":  # a whole-cluster audit: its budget counts clusters
        size = f"{count(p['budget'])} clusters" if p.get("budget") is not None else None
        if not p.get("broken") and p.get("budget_limit") is not None:
            return f"none found within {count(p['budget_limit'])} clusters"
    if p.get("broken") and p.get("verified"):
        lower = p.get("lower_bound")
        if p.get("exact") is False and lower is not None and lower < p["budget"]:  # witness and bound
            return f"{count(lower)}–{size} ({percent(p['fraction'])} at most) ✓"
        if p.get("exact") is False and lower is None:  # a verified witness, no bound
            return f"≤ {size} ({percent(p['fraction'])} at most) ✓"
        return f"{size} ({percent(p['fraction'])}) ✓"
    if p.get("broken"):
        return f"{size} ({percent(p['fraction'])}) unverified"
    if p.get("budget_limit") is not None:
        return f"none found within {count(p['budget_limit'])}"
    return p.get("reason") or "none found"


OVERTURN_HEAD = "to overturn it: smallest perturbation found (✓ verified)"
SIGNIFICANCE_HEAD = "to lose significance: smallest perturbation found (✓ verified)"
FREQUENTIST_HEAD = "frequentist: estimate [interval], p"
BAYESIAN_HEAD = "Bayesian: P(claim)"


SETTLE_HEAD = "to settle it: more data for 80% power if the estimate were true"


def _has_settle(report) -> bool:
    return any("to_settle" in (getattr(c, "extra", None) or {}) for c in report.claims)


def settle_cell(c, short: bool = False) -> str:
    from bayesrank.review.settle import settle_text

    return settle_text((getattr(c, "extra", None) or {}).get("to_settle"), short)


def _has_significance(report) -> bool:
    return any(getattr(c, "significance_perturbation", None) is not None for c in report.claims)


def perturbation_lines(entries: dict | None, order=None) -> list[str]:
    """One line per action ('flip: 6 (0.0004%) ✓', in ``order`` when given), or the one reason why
    the claim was not audited (false at the point estimate, not significant, the order claim)."""
    if not entries:
        return ["–"]
    if all(p.get("broken") is None for p in entries.values()):
        return [next(iter(entries.values())).get("reason") or "not audited"]
    keys = [a for a in (order or entries) if a in entries]
    return [f"{a}: {perturbation_cell(entries[a])}" for a in keys]


def claim_label(c) -> str:
    """The claim as typed, and what it says about whom: 'top1: chatgpt-4o-latest is #1'."""
    who = getattr(c, "statement", None)
    return f"{c.claim.text}: {who}" if who else c.claim.text


def _frequentist_pieces(f: dict) -> tuple[str, str, str]:
    """(estimate [interval], unit, p-value text) of a frequentist answer."""
    if not f:
        return "–", "", ""
    head = estimate_interval(f.get("estimate"), f.get("lower"), f.get("upper"))
    p = ""
    if f.get("p_value") is not None:
        p = p_equals(f["p_value"])
        est = f.get("estimate")
        if est is not None and est <= 0 and f.get("unit") in BT_UNITS:
            p += " (the estimate is against the claim)"
    return head, f.get("unit") or "", p


def frequentist_parts(f: dict) -> tuple[str, str]:
    """('0.096 [0.063, 0.130]', 'logit difference, p = 2.0e-08'): the estimate with its interval,
    then its unit and p-value. A claim false at the estimate says so beside its p-value."""
    head, unit, p = _frequentist_pieces(f)
    return head, ", ".join(x for x in (unit, p) if x)


def verdict_class(v: str) -> str:
    """The CSS class of a verdict ("not searched" → "not-searched")."""
    return html_escape(str(v).replace(" ", "-"))


def frequentist_cell(f: dict) -> str:
    head, tail = frequentist_parts(f)
    return f"{head} {tail}".strip()


def bayesian_cell(b: dict | None) -> str:
    if not b or b.get("probability") is None:
        return "–"
    return f"{probability(b['probability'], b.get('n_draws'))} ({b.get('method', '')})"


def svg_of(draw, size) -> str:
    """The figure as SVG text. Matplotlib's notice that very long tick labels (player names) leave
    tight_layout no room is not a finding about the data: it is silenced here, not printed."""
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Tight layout not applied")
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")  # a control character in a name
        if size is None:  # the drawing makes its own figure (several panels)
            fig = draw()
        else:
            fig, ax = plt.subplots(figsize=size)
        try:
            if size is not None:
                draw(ax)
            fig.tight_layout()
            buf = io.StringIO()
            fig.savefig(buf, format="svg")
        finally:
            plt.close(fig)
    return visible_in_svg(buf.getvalue())


def visible_in_svg(svg: str) -> str:
    """Matplotlib writes each label's text in an XML comment: a control character there (not allowed
    in XML) is shown as its escape (:func:`bayesrank.escape.visible`); line breaks stay."""
    return re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", lambda m: visible(m.group(0)), svg)


# ---------------------------------------------------------------------------------- tables
def _is_p_column(name) -> bool:
    n = str(name).lower()
    return n in ("p", "p_value", "pvalue") or n.endswith(("_p_value", "_pvalue")) or "p_holm" in n


def cell_texts(df: pd.DataFrame, max_rows: int = 60) -> list[list[tuple[str, bool]]]:
    """Each cell's text and whether it is a number, column by column: a float column whose values are
    all whole numbers (counts stored as floats) is written as integers, a p-value column as p-values."""
    head = df.head(max_rows)
    writers = []
    for col in head.columns:
        values = head[col]
        writer = fmt
        if pd.api.types.is_float_dtype(values):
            finite = values[np.isfinite(values.to_numpy(dtype=float))]
            nonzero = finite[finite != 0].abs()
            if len(finite) and (finite == finite.round()).all():
                writer = count
            elif _is_p_column(col):
                writer = p_value
            elif len(nonzero) and nonzero.max() < 1e6 and nonzero.max() / nonzero.min() < 1e3:
                writer = _fixed(decimals_for(nonzero.max(), digits=4))  # one number of decimals per column
        writers.append(writer)
    rows = []
    for rec in head.itertuples(index=False):
        rows.append([(w(v), isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)))
                     for w, v in zip(writers, rec)])
    return rows


def _fixed(decimals: int):
    return lambda v: signed(float(v), decimals) if isinstance(v, (float, np.floating)) and np.isfinite(v) else fmt(v)


# ---------------------------------------------------------------------------------- HTML
def _html_table(df: pd.DataFrame, max_rows: int = 60) -> str:
    head = "".join(f"<th>{html_escape(str(c))}</th>" for c in df.columns)
    rows = []
    for rec in cell_texts(df, max_rows):
        cells = [f"<td class=\"num\">{html_escape(t)}</td>" if num else f"<td>{html_escape(t)}</td>"
                 for t, num in rec]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = f"<p class=\"mute\">{len(df) - max_rows} more rows in the JSON.</p>" if len(df) > max_rows else ""
    return f"<div class=\"wrap\"><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>{more}"


def _lines_html(lines) -> str:
    return "<br>".join(f"<span class=\"line\">{html_escape(x)}</span>" if len(x) <= SHORT_LINE else html_escape(x)
                       for x in lines)


def _head_html(text: str) -> str:
    """'to overturn it: smallest …' → the answer's name in bold, the explanation below."""
    name, _, rest = text.partition(": ")
    return f"<b>{html_escape(name)}</b>" + (f"<br><span class=\"mute\">{html_escape(rest)}</span>" if rest else "")


def _claims_html(report) -> str:
    actions = claim_actions(report)
    sig = _has_significance(report)
    settle = _has_settle(report)
    cols = [(k, SETTLE_WIDTHS.get(k, w) if settle else w) for k, w in CLAIM_COLUMNS
            if (sig or k != "significance") and (settle or k != "settle")]
    total = sum(w for _, w in cols)
    colgroup = "".join(f"<col class=\"c-{k}\" style=\"width:{100 * w / total:.1f}%\">" for k, w in cols)
    head = ("<tr><th>claim</th><th>verdict</th><th>why</th>"
            f"<th>{_head_html(FREQUENTIST_HEAD)}</th><th>{_head_html(BAYESIAN_HEAD)}</th>"
            f"<th>{_head_html(OVERTURN_HEAD)}</th>"
            + (f"<th>{_head_html(SIGNIFICANCE_HEAD)}</th>" if sig else "")
            + (f"<th>{_head_html(SETTLE_HEAD)}</th>" if settle else "") + "</tr>")
    rows = []
    for c in report.claims:
        who = getattr(c, "statement", None)
        est, unit, p = _frequentist_pieces(c.frequentist)
        p_num, _, p_note = p.partition(" (")  # the number stays on one line, a note may wrap
        p_html = (f"<span class=\"nobr\">{html_escape(p_num)}</span>" + (f" ({html_escape(p_note)}" if p_note else "")
                  if p else "")
        tail = ", ".join(x for x in (html_escape(unit), p_html) if x)
        cells = [f"<td>{html_escape(c.claim.text)}"
                 + (f"<span class=\"who\">{html_escape(who)}</span>" if who else "") + "</td>",
                 f"<td><span class=\"verdict {verdict_class(c.verdict)}\">{esc(c.verdict)}</span></td>",
                 f"<td class=\"why\">{esc(c.reason)}</td>",
                 f"<td class=\"freq\">{_lines_html([est])}"
                 + (f"<br>{tail}" if tail else "") + "</td>",
                 f"<td class=\"num\">{html_escape(bayesian_cell(c.bayesian))}</td>"]
        groups = [c.perturbation] + ([getattr(c, "significance_perturbation", None)] if sig else [])
        for entries in groups:
            cells.append(f"<td class=\"pert\">{_lines_html(perturbation_lines(entries, actions))}</td>")
        if settle:
            cells.append(f"<td class=\"settle\">{esc(settle_cell(c))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f"<div class=\"wrap\"><table id=\"claims\"><colgroup>{colgroup}</colgroup><thead>{head}</thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def _claim_details_html(c) -> str:
    parts = [f"<h3>{esc(claim_label(c))} — <span class=\"verdict {verdict_class(c.verdict)}\">{esc(c.verdict)}</span></h3>"]
    f = c.frequentist or {}
    if f.get("intervals"):
        rows = [{"interval": k, "lower": v[0], "upper": v[1], "supports the claim": f["supported_by"].get(k)}
                for k, v in f["intervals"].items()]
        parts.append(f"<p>Binding contrast: {esc(f.get('contrast'))} (of {esc(f.get('n_contrasts'))}); "
                     f"default interval: {esc(f.get('interval'))}.</p>")
        parts.append(_html_table(pd.DataFrame(rows)))
    rel = getattr(c, "relative_to", None)
    if rel:
        parts.append(f"<p>Test: {esc(f.get('sided', ''))}. Fractions are of the claim's evidence: {esc(rel['what'])}, "
                     f"n = {esc(rel['n'])}.</p>")
    for n in c.notes:
        parts.append(f"<p class=\"warn\">Note: {esc(n)}</p>")
    for label, pert in (("overturns it", c.perturbation), ("removes its significance",
                                                            getattr(c, "significance_perturbation", None))):
        for action, p in (pert or {}).items():
            acts = p.get("actions") or []
            if p.get("broken") and acts:
                parts.append(f"<p>{esc(action)} that {label}: {esc(perturbation_cell(p))} — the actions "
                             "(first 8 steps):</p>")
                parts.append(_html_table(pd.DataFrame(acts).head(8)))
    return "".join(parts)


def html(report) -> str:
    counts = report.verdict_counts()
    body = [f"<h1>{esc(report.title)}</h1>",
            f"<p class=\"sub\">bayesrank review · kind: {esc(report.kind)} · level {esc(report.level)} · "
            f"data SHA-256 {esc(report.reproducibility.get('data_sha256', '')[:16])}…</p>",
            "<h2>Verdicts</h2>",
            "<p class=\"counts\">" + "".join(f"<span><span class=\"verdict {verdict_class(v)}\">{esc(v)}</span> {esc(n)}</span>"
                                           for v, n in counts.items()) + "</p>",
            _claims_html(report),
            f"<div class=\"rule\"><b>Rule.</b> {esc(report.rule)}</div>"]
    if getattr(report, "joint", None):
        body.append(f"<p><b>Jointly.</b> {esc(report.joint['text'])}</p>")
    for n in report.notes:
        body.append(f"<p class=\"warn\">{esc(n)}</p>")
    diag = report.diagnostics
    body.append(f"<p class=\"{'mute' if diag.converged else 'warn'}\">Diagnostics: {esc(diag.line())}</p>")
    for m in diag.messages:
        body.append(f"<p class=\"warn\">{esc(m)}</p>")
    body.append("<h2>Evidence per claim</h2>")
    body += [_claim_details_html(c) for c in report.claims]
    for s in report.sections:
        body.append(f"<h2>{esc(s.title)}</h2>")
        body += [f"<p>{esc(t)}</p>" for t in s.text]
        for caption, df in s.tables:
            body.append(f"<h3>{esc(caption)}</h3>{_html_table(df)}")
        for caption, draw, size in s.figures:
            data = base64.b64encode(svg_of(draw, size).encode()).decode()
            body.append(f"<figure><img alt=\"{esc(caption)}\" src=\"data:image/svg+xml;base64,{data}\">"
                        f"<figcaption>{esc(caption)}</figcaption></figure>")
    body.append("<h2>Appendix: reproducibility</h2>")
    rep = report.reproducibility
    rows = [{"field": k, "value": v if not isinstance(v, dict) else ", ".join(f"{a}={b}" for a, b in v.items())}
            for k, v in rep.items()]
    body.append(_html_table(pd.DataFrame(rows)))
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">"
            f"<title>{esc(report.title)}</title><style>{CSS}</style></head><body>" + "\n".join(body) + "</body></html>")


# ---------------------------------------------------------------------------------- Markdown
def _md_table(df: pd.DataFrame, max_rows: int = 60) -> str:
    cols = [md_esc(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for rec in cell_texts(df, max_rows):
        lines.append("| " + " | ".join(md_esc(t) for t, _ in rec) + " |")
    if len(df) > max_rows:
        lines.append(f"\n{len(df) - max_rows} more rows in the JSON.")
    return "\n".join(lines)


def markdown(report) -> str:
    counts = report.verdict_counts()
    out = [f"# {md_esc(report.title, False)}", "",
           f"bayesrank review · kind: {md_esc(report.kind)} · level {md_esc(report.level)} · "
           + ", ".join(f"**{n} {v}**" for v, n in counts.items()), "", "## Verdicts", ""]
    actions = claim_actions(report)
    rows = []
    for c in report.claims:
        row = {"claim": claim_label(c), "verdict": c.verdict, "why": c.reason,
               FREQUENTIST_HEAD: frequentist_cell(c.frequentist), BAYESIAN_HEAD: bayesian_cell(c.bayesian)}
        row[OVERTURN_HEAD] = "; ".join(perturbation_lines(c.perturbation, actions))
        if _has_significance(report):
            row[SIGNIFICANCE_HEAD] = "; ".join(perturbation_lines(getattr(c, "significance_perturbation", None), actions))
        if _has_settle(report):
            row[SETTLE_HEAD] = settle_cell(c)
        rows.append(row)
    out += [_md_table(pd.DataFrame(rows)), "", f"> **Rule.** {md_esc(report.rule, False)}", ""]
    if getattr(report, "joint", None):
        out += [f"> **Jointly.** {md_esc(report.joint['text'], False)}", ""]
    out += [f"> {md_esc(n, False)}" for n in report.notes]
    out += [f"Diagnostics: {md_esc(report.diagnostics.line(), False)}", ""]
    for s in report.sections:
        out += [f"## {md_esc(s.title, False)}", ""]
        out += [md_esc(t, False) + "\n" for t in s.text]
        for caption, df in s.tables:
            out += [f"**{md_esc(caption, False)}**", "", _md_table(df), ""]
        out += [f"*Figure (in the HTML report): {md_esc(caption, False)}*\n" for caption, _, _ in s.figures]
    out += ["## Appendix: reproducibility", ""]
    rep = report.reproducibility
    out.append(_md_table(pd.DataFrame([{"field": k, "value": v if not isinstance(v, dict) else
                                        ", ".join(f"{a}={b}" for a, b in v.items())} for k, v in rep.items()])))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------- quick looks
# (repr and the notebook view: the claims table and the verdict counts; the page has the evidence)
VERDICT_COLOURS = {"supported": "#1a7f37", "fragile": "#9a6700", "unsupported": "#cf222e", "not searched": "#59636e",
                   "not converged": "#59636e", "undetermined by the table": "#0969da"}
QUICK_HEADS = ("claim", "verdict", "frequentist", "Bayesian P(claim)", "to overturn it")


def quick_claims(report) -> pd.DataFrame:
    """One row per claim as the quick looks show it: the claim with whom it is about, the verdict,
    the frequentist and Bayesian cells and the smallest overturning perturbation per action."""
    actions = claim_actions(report)
    rows = [dict(zip(QUICK_HEADS, (claim_label(c), c.verdict, frequentist_cell(c.frequentist),
                                   bayesian_cell(c.bayesian), "; ".join(perturbation_lines(c.perturbation, actions)))))
            for c in report.claims]
    return pd.DataFrame(rows, columns=list(QUICK_HEADS))


def _counts_text(report) -> str:
    return ", ".join(f"{n} {v}" for v, n in report.verdict_counts().items() if n) or "no claims"


def quick_text(report) -> str:
    """``repr(report)``: the title, the verdict counts, one line per claim, the diagnostics line."""
    from bayesrank.quicklook import MAX_ROWS

    lines = [f"ReviewReport: {report.title}", f"  kind {report.kind}, level {fmt(report.level)}: {_counts_text(report)}"]
    for c in report.claims[:MAX_ROWS]:
        lines.append(f"  {claim_label(c)} — {c.verdict}")
        lines.append(f"      frequentist {frequentist_cell(c.frequentist)}; Bayesian {bayesian_cell(c.bayesian)}")
    if len(report.claims) > MAX_ROWS:
        lines.append(f"  … {len(report.claims) - MAX_ROWS} more claims in .table()")
    if getattr(report, "joint", None):
        lines.append(f"  jointly: {report.joint['text']}")
    if report.notes:
        lines.append(f"  {plural(len(report.notes), 'note')} in .notes")
    lines.append(report.diagnostics.line())
    return "\n".join(visible(line) for line in lines)  # a name with a newline or an escape: shown


def quick_html(report) -> str:
    """The notebook view: title, verdict counts, the claims table with coloured verdicts, the joint
    statement, the diagnostics line and how to write the whole page. Every name is escaped."""
    from bayesrank.quicklook import MAX_ROWS, MUTE, diagnostics_html

    frame = quick_claims(report).head(MAX_ROWS)
    head = "".join(f"<th style=\"text-align:left\">{html_escape(h)}</th>" for h in frame.columns)
    rows = []
    for rec in frame.itertuples(index=False):
        claim, verdict, *rest = rec
        badge = (f"<span style=\"background:{VERDICT_COLOURS.get(verdict, MUTE)};color:#fff;font-weight:700;"
                 f"padding:1px 6px;border-radius:9px\">{html_escape(verdict)}</span>")
        cells = [f"<td style=\"text-align:left\">{html_escape(claim)}</td>", f"<td>{badge}</td>"]
        cells += [f"<td style=\"text-align:left\">{html_escape(v)}</td>" for v in rest]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = (f"<p style=\"color:{MUTE};margin:4px 0\">… {len(report.claims) - MAX_ROWS} more claims in "
            "<code>.table()</code></p>" if len(report.claims) > MAX_ROWS else "")
    joint = (f"<p style=\"margin:4px 0\"><b>Jointly.</b> {html_escape(report.joint['text'])}</p>"
             if getattr(report, "joint", None) else "")
    notes = (f"<p style=\"color:{MUTE};margin:4px 0\">{html_escape(plural(len(report.notes), 'note'))} in "
             "<code>.notes</code></p>" if report.notes else "")
    return ("<div class=\"bayesrank-review\">"
            f"<p style=\"margin:4px 0\"><b>{html_escape(report.title)}</b></p>"
            f"<p style=\"margin:4px 0\">kind {html_escape(report.kind)} · level {esc(report.level)} · "
            f"{html_escape(_counts_text(report))}</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>{more}{joint}{notes}"
            + diagnostics_html(report)
            + f"<p style=\"color:{MUTE};margin:4px 0\">The whole page with the evidence: "
              "<code>report.save(\"review.html\")</code> (the Markdown and JSON beside it).</p></div>")
