"""Spec 03's attribution design: player x template x decoding x few-shot (Type-II), run within each
scoring path; scoring and harness get separate analyses; every analysis says what its residual holds.
Numbers equal statsmodels' anova_lm(typ=2) on the same subsets and formulas."""

import itertools

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

from bayesrank.configflip.analysis import analyze
from bayesrank.configflip.attribution import attribution_analyses, axis_role, spec_design
from bayesrank.configflip.grid import EvalGrid

AXES = ["template", "decoding", "fewshot", "scoring"]


def statsmodels_anova(df, factors, order, blocks=()):
    terms = [":".join(f"C({x})" for x in c) for k in range(1, order + 1)
             for c in itertools.combinations(factors, k)] + [f"C({b})" for b in blocks]
    ref = anova_lm(smf.ols("score ~ " + " + ".join(terms), data=df).fit(), typ=2)
    ref.index = [i.replace("C(", "").replace(")", "") for i in ref.index]
    return ref


def assert_equal_to(mine: pd.DataFrame, ref: pd.DataFrame):
    m = mine.set_index("term")
    assert set(m.index) == set(ref.index)
    for term in ref.index:
        assert m.loc[term, "sum_sq"] == pytest.approx(ref.loc[term, "sum_sq"], rel=1e-8, abs=1e-12), term
        assert m.loc[term, "df"] == ref.loc[term, "df"], term
        if np.isfinite(ref.loc[term, "F"]):
            assert m.loc[term, "F"] == pytest.approx(ref.loc[term, "F"], rel=1e-8), term
            assert m.loc[term, "p"] == pytest.approx(ref.loc[term, "PR(>F)"], rel=1e-6, abs=1e-12), term


def test_axis_roles_by_name():
    assert [axis_role(a) for a in ("template", "num_fewshot", "decoding", "metric", "harness", "seed")] == \
        ["template", "fewshot", "decoding", "scoring", "harness", "other"]


def test_default_design_is_the_spec_four_way_within_each_scoring_path(spec_grid):
    d = spec_grid[spec_grid.benchmark == "truthfulqa"]
    analyses, design = attribution_analyses(d, AXES)
    assert design["execution_axes"] == ["template", "decoding", "fewshot"] and design["separate_axes"] == ["scoring"]
    by_name = {a.name: a for a in analyses}
    assert set(by_name) == {"execution[scoring=regex]", "execution[scoring=logprob]", "scoring"}
    for level in ("regex", "logprob"):
        a = by_name[f"execution[scoring={level}]"]
        assert a.factors == ["player", "template", "decoding", "fewshot"] and a.subset == {"scoring": level}
        sub = d[d.scoring == level].rename(columns={"model": "player"})
        # one score per cell: the 4-way interaction is not fitted, it IS the residual
        assert_equal_to(a.table, statsmodels_anova(sub, a.factors, 3))
        assert a.residual_holds.startswith("the player:template:decoding:fewshot interaction (one score per cell)")
        assert "not separable from noise" in a.residual_holds
        assert "player:template:decoding" in a.identifiable and "player" in a.identifiable
        # scoring is NOT an execution main effect of this analysis
        assert not any("scoring" in t for t in a.table.term)


def test_scoring_gets_its_own_analysis_against_the_other_configurations(spec_grid):
    d = spec_grid[spec_grid.benchmark == "truthfulqa"]
    a = {x.name: x for x in attribution_analyses(d, AXES)[0]}["scoring"]
    assert a.role == "separate" and a.factors == ["player", "scoring"] and a.blocks == ["other_config"]
    ref_data = d.rename(columns={"model": "player"}).assign(
        other_config=lambda x: x.template + "|" + x.decoding + "|" + x.fewshot)
    assert_equal_to(a.table, statsmodels_anova(ref_data, ["player", "scoring"], 2, ["other_config"]))
    assert "player:scoring:other_config" in a.residual_holds
    # the simulated logprob shift (+0.02) is the scoring main effect: 216 cells, SS = n * (0.01)^2 * ...
    assert a.table.set_index("term").loc["scoring", "p"] < 1e-6


def test_harness_and_scoring_both_separate_and_explicit_override(spec_grid):
    d = spec_grid[spec_grid.benchmark == "xstest"].copy()
    d = pd.concat([d.assign(harness="lm-eval"), d.assign(harness="helm", score=d.score + 0.01)], ignore_index=True)
    analyses, design = attribution_analyses(d, AXES + ["harness"])
    names = {a.name for a in analyses}
    assert {"scoring", "harness"} <= names and design["separate_axes"] == ["scoring", "harness"]
    assert sum(a.role == "execution" for a in analyses) == 4        # 2 scoring x 2 harness strata
    analyses, design = attribution_analyses(d, AXES + ["harness"], execution_axes=["template", "scoring"])
    assert design["execution_axes"] == ["template", "scoring"] and design["note"] == "execution axes given explicitly"


def test_without_spec_axes_every_varying_axis_is_an_execution_axis_and_the_output_says_so():
    rows = [{"model": m, "benchmark": "b", "prompt_style": p, "seed": s, "score": 0.5 + 0.1 * (m == "A") + 0.01 * s}
            for m in "AB" for p in ("x", "y") for s in range(3)]
    d = pd.DataFrame(rows).astype({"seed": str})
    exe, other, note = spec_design(d, ["prompt_style", "seed"])
    assert exe == ["prompt_style", "seed"] and other == [] and "every varying axis" in note


def test_analyze_reports_the_design_in_json_and_schema(spec_grid, tmp_path):
    g = EvalGrid.from_scores(spec_grid, axes=AXES)
    res = analyze(g, "core")
    data = res.to_dict()
    b = data["benchmarks"]["truthfulqa"]
    assert b["anova_design"]["execution_axes"] == ["template", "fewshot"]   # decoding is fixed in the core range
    names = [a["name"] for a in b["anova"]]
    assert names == ["execution[scoring=regex]", "execution[scoring=logprob]", "scoring"]
    assert b["anova"][0]["residual_holds"].startswith("the player:template:fewshot interaction")
    res.to_json(tmp_path / "cf.json")                                       # schema-validated
    t = res.anova_table()
    assert list(t[(t.benchmark == "truthfulqa") & (t.analysis == "scoring")].term) == \
        ["player", "scoring", "player:scoring", "other_config", "Residual"]
