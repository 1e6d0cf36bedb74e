"""HTML and Markdown renderings of a :class:`~bayesrank.review.report.ReviewReport`.

The HTML page is self-contained: inline CSS, figures as inline base64 SVG images, no scripts and no
network requests; it reads on a laptop screen and prints. Every string that comes from the data
(player, judge, benchmark names, claims) is untrusted: it is escaped for HTML, and for Markdown the
characters that would make markup (``<>&|*_`[]#\\``) are escaped.
"""

from __future__ import annotations

import base64
import html as _html
import io
import math

import numpy as np
import pandas as pd

CSS = """
:root { --ok:#1a7f37; --warn:#9a6700; --bad:#cf222e; --ink:#1f2328; --mute:#59636e; --line:#d1d9e0; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       max-width: 1180px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 1.6em; margin: 0 0 4px; } h2 { margin-top: 2em; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { margin-bottom: 6px; }
.sub { color: var(--mute); margin: 0 0 16px; }
table { border-collapse: collapse; margin: 8px 0 18px; font-size: 13px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; vertical-align: top; }
th { background: #f6f8fa; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.verdict { font-weight: 700; padding: 1px 8px; border-radius: 10px; color: #fff; white-space: nowrap; }
.supported { background: var(--ok); } .fragile { background: var(--warn); } .unsupported { background: var(--bad); }
.not-searched, .not-converged { background: var(--mute); }
.rule { background: #f6f8fa; border-left: 4px solid var(--mute); padding: 8px 12px; margin: 10px 0 18px; }
.counts span { margin-right: 14px; }
figure { margin: 10px 0 22px; } figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--mute); font-size: 13px; }
.warn { color: var(--warn); } .mute { color: var(--mute); } td.why { font-size: 12px; min-width: 200px; max-width: 300px; }
td.freq { text-align: right; font-variant-numeric: tabular-nums; min-width: 170px; }
.wrap { overflow-x: auto; }
@media print { body { max-width: none; padding: 0; font-size: 11px; } h2 { page-break-after: avoid; }
  table, figure { page-break-inside: avoid; } .verdict { border: 1px solid #000; color: #000; background: none; } }
"""

ACTION_ORDER = ("drop", "flip", "add", "configuration", "estimator")


def claim_actions(report) -> list[str]:
    """Perturbation kinds present in the claims, in a fixed order."""
    present = {a for c in report.claims for a in (c.perturbation or {})}
    return [a for a in ACTION_ORDER if a in present] + sorted(present - set(ACTION_ORDER))


# ---------------------------------------------------------------------------------- formatting
def fmt(v, digits: int = 4) -> str:
    """Numbers with ``digits`` significant digits; None/NaN as an en dash; everything else as text."""
    if v is None:
        return "–"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(float(v)):
            return "–"
        return f"{float(v):.{digits}g}"
    return str(v)


def pct(v) -> str:
    return "–" if v is None else f"{100 * float(v):.3g}%"


def esc(v) -> str:
    return _html.escape(fmt(v), quote=True)


_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]#|"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;"})


def md_esc(v) -> str:
    return fmt(v).translate(_MD_SPECIAL).replace("\n", " ")


def perturbation_cell(p: dict) -> str:
    """'12 (0.0007%) ✓' for a verified break (✓: confirmed by an exact refit); 'none found within 500'
    when the budget ran out."""
    if p.get("broken") is None:
        return p.get("reason", "–")
    if p.get("broken") and p.get("verified"):
        return f"{fmt(p['budget'])} ({pct(p['fraction'])}) ✓"
    if p.get("broken"):
        return f"{fmt(p['budget'])} ({pct(p['fraction'])}) unverified"
    return f"none found within {fmt(p.get('budget_limit'))}"


OVERTURN_HEAD = "to overturn it: smallest perturbation found (✓ verified)"
SIGNIFICANCE_HEAD = "to lose significance: smallest perturbation found (✓ verified)"


def _has_significance(report) -> bool:
    return any(getattr(c, "significance_perturbation", None) is not None for c in report.claims)


def perturbation_lines(entries: dict | None, order=None) -> list[str]:
    """One line per action ('flip: 6 (0.0004%) ✓', in ``order`` when given), or the one reason why
    the claim was not audited (false at the point estimate, not significant, the order claim)."""
    if not entries:
        return ["–"]
    if all(p.get("broken") is None for p in entries.values()):
        return [next(iter(entries.values())).get("reason", "–")]
    keys = [a for a in (order or entries) if a in entries]
    return [f"{a}: {perturbation_cell(entries[a])}" for a in keys]




def verdict_class(v: str) -> str:
    """The CSS class of a verdict ("not searched" → "not-searched")."""
    return _html.escape(str(v).replace(" ", "-"), quote=True)


def frequentist_cell(f: dict) -> str:
    if not f:
        return "–"
    lo, hi = f.get("lower"), f.get("upper")
    if hi is None and lo is not None:  # one-sided: [lower, ∞)
        s = f"{fmt(f.get('estimate'))} [{fmt(lo)}, ∞)"
    elif lo is None and hi is not None:  # one-sided: (−∞, upper]
        s = f"{fmt(f.get('estimate'))} (−∞, {fmt(hi)}]"
    else:
        s = f"{fmt(f.get('estimate'))} [{fmt(lo)}, {fmt(hi)}]"
    if f.get("p_value") is not None:
        s += f", p = {fmt(f['p_value'], 3)}"
    return s


def bayesian_cell(b: dict | None) -> str:
    if not b or b.get("probability") is None:
        return "–"
    p = float(b["probability"])
    n = b.get("n_draws")
    shown = (f"> {1 - 1 / n:.4g}" if n and p == 1.0 else f"< {1 / n:.2g}" if n and p == 0.0 else f"{p:.3f}")
    return f"{shown} ({b.get('method', '')})"


def svg_of(draw, size) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    return buf.getvalue()


# ---------------------------------------------------------------------------------- HTML
def _html_table(df: pd.DataFrame, max_rows: int = 60) -> str:
    head = "".join(f"<th>{_html.escape(str(c))}</th>" for c in df.columns)
    rows = []
    for rec in df.head(max_rows).itertuples(index=False):
        cells = []
        for v in rec:
            num = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
            cells.append(f"<td class=\"num\">{esc(v)}</td>" if num else f"<td>{esc(v)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = f"<p class=\"mute\">{len(df) - max_rows} more rows in the JSON.</p>" if len(df) > max_rows else ""
    return f"<div class=\"wrap\"><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>{more}"


def _claims_html(report) -> str:
    actions = claim_actions(report)
    sig = _has_significance(report)
    head = ("<tr><th>claim</th><th>verdict</th><th>why</th><th>frequentist: estimate [interval], p</th>"
            f"<th>Bayesian: P(claim)</th><th>{_html.escape(OVERTURN_HEAD)}</th>"
            + (f"<th>{_html.escape(SIGNIFICANCE_HEAD)}</th>" if sig else "") + "</tr>")
    rows = []
    for c in report.claims:
        cells = [f"<td>{esc(c.claim.text)}</td>",
                 f"<td><span class=\"verdict {verdict_class(c.verdict)}\">{esc(c.verdict)}</span></td>",
                 f"<td class=\"why\">{esc(c.reason)}</td>",
                 f"<td class=\"freq\">{_html.escape(frequentist_cell(c.frequentist))}</td>",
                 f"<td class=\"num\">{_html.escape(bayesian_cell(c.bayesian))}</td>"]
        groups = [c.perturbation] + ([getattr(c, "significance_perturbation", None)] if sig else [])
        for entries in groups:
            lines = perturbation_lines(entries, actions)
            cells.append("<td class=\"why\">" + "<br>".join(_html.escape(x) for x in lines) + "</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<div class=\"wrap\"><table id=\"claims\"><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table></div>"


def _claim_details_html(c) -> str:
    parts = [f"<h3>{esc(c.claim.text)} — <span class=\"verdict {verdict_class(c.verdict)}\">{esc(c.verdict)}</span></h3>"]
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
            "<p class=\"counts\">" + "".join(f"<span><span class=\"verdict {verdict_class(v)}\">{v}</span> {n}</span>"
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
    for rec in df.head(max_rows).itertuples(index=False):
        lines.append("| " + " | ".join(md_esc(v) for v in rec) + " |")
    if len(df) > max_rows:
        lines.append(f"\n{len(df) - max_rows} more rows in the JSON.")
    return "\n".join(lines)


def markdown(report) -> str:
    counts = report.verdict_counts()
    out = [f"# {md_esc(report.title)}", "",
           f"bayesrank review · kind: {md_esc(report.kind)} · level {md_esc(report.level)} · "
           + ", ".join(f"**{n} {v}**" for v, n in counts.items()), "", "## Verdicts", ""]
    actions = claim_actions(report)
    rows = []
    for c in report.claims:
        row = {"claim": c.claim.text, "verdict": c.verdict, "why": c.reason,
               "frequentist: estimate [interval], p": frequentist_cell(c.frequentist),
               "Bayesian: P(claim)": bayesian_cell(c.bayesian)}
        row[OVERTURN_HEAD] = "; ".join(perturbation_lines(c.perturbation, actions))
        if _has_significance(report):
            row[SIGNIFICANCE_HEAD] = "; ".join(perturbation_lines(getattr(c, "significance_perturbation", None), actions))
        rows.append(row)
    out += [_md_table(pd.DataFrame(rows)), "", f"> **Rule.** {md_esc(report.rule)}", ""]
    if getattr(report, "joint", None):
        out += [f"> **Jointly.** {md_esc(report.joint['text'])}", ""]
    out += [f"> {md_esc(n)}" for n in report.notes]
    out += [f"Diagnostics: {md_esc(report.diagnostics.line())}", ""]
    for s in report.sections:
        out += [f"## {md_esc(s.title)}", ""]
        out += [md_esc(t) + "\n" for t in s.text]
        for caption, df in s.tables:
            out += [f"**{md_esc(caption)}**", "", _md_table(df), ""]
        out += [f"*Figure (in the HTML report): {md_esc(caption)}*\n" for caption, _, _ in s.figures]
    out += ["## Appendix: reproducibility", ""]
    rep = report.reproducibility
    out.append(_md_table(pd.DataFrame([{"field": k, "value": v if not isinstance(v, dict) else
                                        ", ".join(f"{a}={b}" for a, b in v.items())} for k, v in rep.items()])))
    return "\n".join(out) + "\n"
