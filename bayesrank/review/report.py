"""The reviewer's report as a result object: verdicts first, then the evidence, then the appendix.

``ReviewReport`` speaks the package's result protocol (``bayesrank.protocol.Result``): ``table()``
is the claims table, ``to_dict()`` the JSON (schema ``review``), ``summary()`` the text,
``to_html()`` / ``to_markdown()`` the two renderings, ``plot()`` the leaderboard figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from bayesrank.protocol import Diagnostics, Result
from bayesrank.review.verdict import VERDICTS, rule_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass
class Section:
    """One block of evidence: paragraphs, captioned tables, figures and its JSON data.

    A figure is ``(caption, draw, size)``: ``draw(ax)`` draws it into a matplotlib Axes of ``size``
    inches, so the HTML, a notebook and ``plot(ax)`` draw the same picture; with ``size=None``,
    ``draw()`` returns a whole Figure of its own (several panels)."""

    key: str
    title: str
    text: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    figures: list[tuple] = field(default_factory=list)
    data: dict = field(default_factory=dict)


@dataclass(repr=False)  # the short repr of bayesrank.protocol.Result
class ReviewReport(Result):
    """Claims with their verdicts, the evidence sections and the reproducibility appendix."""

    schema = "review"

    kind: str
    title: str
    level: float
    fragile_below: float
    claims: list  # ClaimAnswer-like: .to_dict(), .claim.text, .verdict, .frequentist, .bayesian, .perturbation
    sections: list[Section]
    reproducibility: dict
    parts: dict[str, Diagnostics] = field(default_factory=dict)
    leaderboard: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)
    custom_rule: str | None = None  # a kind whose verdict rule differs (grids) states its own
    joint: dict | None = None  # the statement across claims (bayesrank.review.joint)
    results: dict = field(default_factory=dict, repr=False)  # the modules' own result objects behind the report

    @property
    def diagnostics(self) -> Diagnostics:
        return Diagnostics.combine("review", self.parts)

    @property
    def rule(self) -> str:
        return self.custom_rule or rule_text(self.level, self.fragile_below)

    def verdict_counts(self) -> dict:
        counts = {v: 0 for v in VERDICTS}
        for c in self.claims:
            counts[c.verdict] += 1
        return counts

    # ------------------------------------------------------------------ protocol
    def table(self) -> pd.DataFrame:
        """One row per claim: verdict, frequentist estimate/interval/p, Bayesian probability, the
        smallest verified overturning fraction per action (``<action>_fraction``) and, for
        significant claims, the smallest verified fraction that removes the significance
        (``<action>_significance_fraction``)."""
        rows = []
        for c in self.claims:
            f = c.frequentist or {}
            b = c.bayesian or {}
            row = {"claim": c.claim.text, "verdict": c.verdict, "reason": c.reason, "estimate": f.get("estimate"),
                   "lower": f.get("lower"), "upper": f.get("upper"), "p_value": f.get("p_value"),
                   "probability": b.get("probability")}
            for action, p in (c.perturbation or {}).items():
                row[f"{action}_fraction"] = p.get("fraction") if p.get("broken") and p.get("verified") else None
            for action, p in (c.significance_perturbation or {}).items():
                row[f"{action}_significance_fraction"] = (p.get("fraction") if p.get("broken") and p.get("verified")
                                                          else None)
            rows.append(row)
        return pd.DataFrame(rows)

    def summary(self) -> str:
        counts = self.verdict_counts()
        lines = [f"{self.title}", f"kind: {self.kind}; " + ", ".join(f"{n} {v}" for v, n in counts.items()),
                 "rule: " + self.rule]
        if self.joint is not None:
            lines.append("jointly: " + self.joint["text"])
        lines.append("")
        with pd.option_context("display.width", 160, "display.max_columns", 20):
            lines.append(self.table().to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        lines += ["", self.diagnostics.line()]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        out = {**self._envelope(), "kind": self.kind, "title": self.title, "level": self.level,
               "fragile_below": self.fragile_below, "rule": self.rule, "verdicts": self.verdict_counts(),
               "claims": [c.to_dict() for c in self.claims]}
        if self.joint is not None:
            out["joint"] = self.joint
        if self.leaderboard is not None:
            out["leaderboard"] = self.leaderboard.to_dict(orient="records")
        out["sections"] = {s.key: {"title": s.title, **s.data} for s in self.sections}
        out["notes"] = list(self.notes)
        out["reproducibility"] = self.reproducibility
        return out

    def plot(self, ax: Any = None, **kwargs: Any) -> Figure:
        """The first figure of the report (the leaderboard's rank spread when there is one)."""
        import matplotlib.pyplot as plt

        for s in self.sections:
            if s.figures:
                _, draw, size = s.figures[0]
                if size is None:
                    return draw()
                if ax is None:
                    _, ax = plt.subplots(figsize=size)
                draw(ax)
                return ax.figure
        raise ValueError("this report has no figure")

    # ------------------------------------------------------------------ renderings
    def to_html(self) -> str:
        from bayesrank.review.render import html

        return html(self)

    def to_markdown(self) -> str:
        from bayesrank.review.render import markdown

        return markdown(self)

    # ------------------------------------------------------------------ files
    def _writers(self) -> dict[str, Any]:
        return {".html": self.to_html, ".md": self.to_markdown, **super()._writers()}

    def save(self, path: str | Path, *, twins: bool = True) -> list[Path]:
        """Write the report where ``path``'s suffix says, creating missing folders: ``.html`` writes the
        page and, beside it (``twins``), the Markdown and the JSON under the same name
        (``out/review.html``, ``out/review.md``, ``out/review.json``); ``.md``, ``.json``, ``.csv``
        (the claims table) or ``.txt`` (the summary) write that one file. Returns the paths written."""
        from bayesrank.outputs import write_text

        p = Path(path)
        if p.suffix.lower() == ".html" and twins:
            return [write_text(p, self.to_html()), write_text(p.with_suffix(".md"), self.to_markdown()),
                    write_text(p.with_suffix(".json"), self.to_json())]
        return super().save(p)

    # ------------------------------------------------------------------ quick looks
    def _headline(self) -> str:
        return self.title

    def _quick_table(self) -> pd.DataFrame:
        from bayesrank.review.render import quick_claims

        return quick_claims(self)

    def __repr__(self) -> str:
        from bayesrank.review.render import quick_text

        return quick_text(self)

    def _repr_html_(self) -> str:
        from bayesrank.review.render import quick_html

        return quick_html(self)
