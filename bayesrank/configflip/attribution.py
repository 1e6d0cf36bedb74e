"""Variance attribution as spec 03 defines it, and what each ANOVA can and cannot tell apart.

Spec 03's attribution is a four-way Type-II ANOVA of the score on **player** (model identity) and the
**execution axes** template, decoding and few-shot, with interactions. Other axes of a grid (the
scoring path, the harness, anything else) are *not* execution axes of that design:

- the main ("execution") ANOVA is run separately within each level combination of those other axes
  (e.g. once for ``scoring=regex`` and once for ``scoring=logprob``), so each has the spec's factors
  and one score per cell;
- each other axis X gets its own ("separate") analysis: factors player and X with their interaction,
  and the configuration of the remaining axes as an additive block; its residual is everything that
  varies across those configurations (player × rest, X × rest, player × X × rest).

Axis roles are recognised from column names (:data:`ROLE_NAMES`) or given explicitly. When no axis of
the grid is a spec execution axis, every varying axis is treated as one (and the output says so).

With one score per cell the highest-order interaction of the crossed factors has no replicate to be
tested against: the default ``max_order`` drops it, so the **residual is that interaction**, e.g.
"player:template:decoding:fewshot" — not separable from noise. Every analysis states in
``residual_holds`` what its residual is and in ``identifiable`` which terms get an F test.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, field

import pandas as pd

from bayesrank.errors import InputError

from .anova import anova_type2, attribution_summary
from .grid import MODEL, SCORE, config_label

PLAYER = "player"
EXECUTION_ROLES = ("template", "decoding", "fewshot")
ROLE_NAMES = {
    "template": ("template", "prompt", "prompt_template", "prompt_format"),
    "decoding": ("decoding", "temperature", "sampling", "decoder"),
    "fewshot": ("fewshot", "few_shot", "num_fewshot", "n_shot", "nshot", "shots", "k_shot"),
    "scoring": ("scoring", "scoring_rule", "scorer", "metric", "scoring_path"),
    "harness": ("harness",),
}


def axis_role(axis: str) -> str:
    """``template``/``decoding``/``fewshot``/``scoring``/``harness`` by column name, else ``other``."""
    key = axis.strip().lower().replace("-", "_").replace(" ", "_")
    for role, names in ROLE_NAMES.items():
        if key in names:
            return role
    return "other"


@dataclass
class AnovaAnalysis:
    """One Type-II ANOVA: its factors, the subset of the grid it uses, and what it can identify."""

    name: str
    role: str                      # "execution" (spec design) or "separate" (scoring/harness/other axis)
    factors: list[str]
    blocks: list[str]
    subset: dict[str, str]
    table: pd.DataFrame
    attribution: dict
    residual_holds: str
    identifiable: list[str]
    not_tested: list[str] = field(default_factory=list)

    def shares_line(self) -> str:
        """One line: the analysis, its factors and blocks, and the shares of the sum of squares."""
        att = self.attribution
        return (f"ANOVA {self.name} ({' x '.join(self.factors)}" + (f" + blocks {', '.join(self.blocks)}" if self.blocks else "")
                + f"): player {att['player']:.1%}, execution main {att['execution_main']:.1%}, "
                  f"interactions {att['interactions']:.1%}, residual {att['residual']:.1%}")

    def to_dict(self) -> dict:
        t = self.table
        return {"name": self.name, "role": self.role, "factors": self.factors, "blocks": self.blocks,
                "subset": self.subset, "n": int(t.attrs["n"]), "max_order": int(t.attrs["max_order"]),
                "df_resid": float(t.set_index("term").loc["Residual", "df"]),
                "residual_holds": self.residual_holds, "identifiable": self.identifiable,
                "not_tested": self.not_tested,
                "table": t[["term", "sum_sq", "df", "share", "partial_eta_sq", "F", "p"]],
                "attribution": self.attribution}


def _describe(data: pd.DataFrame, factors: list[str], blocks: list[str], table: pd.DataFrame) -> tuple[str, list, list]:
    """What the residual holds, which terms are tested (finite F), which are not."""
    order = int(table.attrs["max_order"])
    t = table.set_index("term")
    df_resid = float(t.loc["Residual", "df"])
    one_per_cell = data[factors].astype(str).drop_duplicates().shape[0] == len(data)
    dropped = [":".join(c) for k in range(order + 1, len(factors) + 1) for c in itertools.combinations(factors, k)]
    if df_resid == 0:
        holds = "nothing: the model is saturated (no residual degrees of freedom), so no term can be tested"
    elif one_per_cell and not blocks:
        what = " + ".join(dropped) if dropped else "nothing"
        holds = (f"the {what} interaction{'s' if len(dropped) > 1 else ''} (one score per cell): not separable "
                 f"from noise; F tests each term against it")
    elif blocks:
        parts = [f"{':'.join(c)}:{b}" for b in blocks for k in range(1, len(factors) + 1)
                 for c in itertools.combinations(factors, k)]
        holds = (f"variation across {', '.join(blocks)} not explained additively ({', '.join(parts)}"
                 + (f", {' + '.join(dropped)}" if dropped else "") + ")")
    else:
        holds = "within-cell variation (replicates)" + (f" plus the {' + '.join(dropped)} interaction(s)" if dropped else "")
    finite = [term for term in t.index if term != "Residual" and pd.notna(t.loc[term, "F"])]
    untested = [term for term in t.index if term != "Residual" and term not in finite]
    return holds, finite, untested


def run_anova(data: pd.DataFrame, factors: list[str], *, name: str, role: str, blocks: list[str] = (),
              subset: dict | None = None, max_order: int | None = None) -> AnovaAnalysis:
    """Type-II ANOVA of ``score`` on ``factors`` (the model column is named ``player``)."""
    d = data.rename(columns={MODEL: PLAYER}) if MODEL in data.columns and PLAYER not in data.columns else data
    factors = [PLAYER if f == MODEL else f for f in factors]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = anova_type2(d, SCORE, factors, max_order=max_order, blocks=list(blocks))
    holds, ok, untested = _describe(d, factors, list(blocks), table)
    return AnovaAnalysis(name, role, factors, list(blocks), dict(subset or {}), table,
                         attribution_summary(table, model_factor=PLAYER), holds, ok, untested)


def spec_design(data: pd.DataFrame, axes: list[str] | tuple[str, ...],
                execution_axes: list[str] | None = None) -> tuple[list[str], list[str], str]:
    """(execution axes, other axes, note) among the axes that vary in ``data``."""
    varying = [a for a in axes if data[a].nunique() > 1]
    if execution_axes is not None:
        unknown = [a for a in execution_axes if a not in axes]
        if unknown:
            raise InputError(f"ANOVA execution axes {unknown} are not axes of the grid ({list(axes)})")
        exe = [a for a in execution_axes if a in varying]
        return exe, [a for a in varying if a not in exe], "execution axes given explicitly"
    exe = [a for a in varying if axis_role(a) in EXECUTION_ROLES]
    if not exe:
        return varying, [], ("no axis is named like a spec-03 execution axis (template, decoding, few-shot): "
                             "every varying axis is treated as one")
    return exe, [a for a in varying if a not in exe], "spec 03 design: player x template/decoding/few-shot axes"


def attribution_analyses(data: pd.DataFrame, axes: list[str] | tuple[str, ...], *,
                         execution_axes: list[str] | None = None, max_order: int | None = None,
                         blocks: tuple[str, ...] = ()) -> tuple[list[AnovaAnalysis], dict]:
    """The spec's execution ANOVA (per level combination of the other axes) and one separate analysis
    per other axis. Returns (analyses, design); an analysis that cannot be computed is listed in
    ``design["not_computed"]`` with the reason."""
    exe, other, note = spec_design(data, axes, execution_axes)
    design = {"execution_axes": exe, "separate_axes": other, "note": note, "not_computed": []}
    out = []
    if not exe and not other:
        design["not_computed"].append({"name": "execution", "reason": "no axis varies"})
        return out, design
    strata = [((), data)] if not other else list(data.groupby(other, sort=False))
    for key, d in strata:
        key = key if isinstance(key, tuple) else (key,)
        subset = dict(zip(other, map(str, key))) if other else {}
        name = "execution" + (f"[{config_label(key, other)}]" if other else "")
        if not exe:
            continue
        try:
            out.append(run_anova(d, [MODEL, *exe], name=name, role="execution", blocks=list(blocks), subset=subset,
                                 max_order=max_order))
        except InputError as err:
            design["not_computed"].append({"name": name, "reason": str(err)})
    for x in other:
        rest = [a for a in exe + other if a != x]
        d = data
        blk = list(blocks)
        if rest:
            d = data.assign(other_config=[config_label(r, rest) for r in data[rest].itertuples(index=False)])
            if d["other_config"].nunique() > 1:
                blk = blk + ["other_config"]
        try:
            out.append(run_anova(d, [MODEL, x], name=x, role="separate", blocks=blk, max_order=None))
        except InputError as err:
            design["not_computed"].append({"name": x, "reason": str(err)})
    return out, design
