"""Type-II ANOVA equals statsmodels' anova_lm(typ=2) to 1e-8 (balanced, unbalanced, blocks)."""

import itertools

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

from bayesrank.configflip.anova import anova_type2, attribution_summary
from bayesrank.errors import InputError

FACTORS = ["model", "template", "decoding", "fewshot", "scoring"]


def reference(df, factors, order, blocks=()):
    terms = [":".join(f"C({x})" for x in c) for k in range(1, order + 1)
             for c in itertools.combinations(factors, k)] + [f"C({b})" for b in blocks]
    ref = anova_lm(smf.ols("score ~ " + " + ".join(terms), data=df).fit(), typ=2)
    ref.index = [i.replace("C(", "").replace(")", "") for i in ref.index]
    return ref


def assert_matches(mine, ref):
    m = mine.set_index("term")
    assert set(m.index) == set(ref.index)
    for term in ref.index:
        for a, b in (("sum_sq", "sum_sq"), ("df", "df"), ("F", "F"), ("p", "PR(>F)")):
            x, y = m.loc[term, a], ref.loc[term, b]
            if np.isnan(y):
                assert np.isnan(x)
            else:
                assert x == pytest.approx(y, rel=1e-8, abs=1e-8), (term, a)


@pytest.mark.parametrize("order", [2, 3, 4])
def test_balanced_spec_grid_matches_statsmodels(spec_grid, order):
    d = spec_grid[spec_grid.benchmark == "truthfulqa"]
    mine = anova_type2(d, "score", FACTORS, max_order=order)
    assert_matches(mine, reference(d, FACTORS, order))
    # shares are SS / SS_total and partial eta^2 = SS / (SS + RSS)
    sst = ((d.score - d.score.mean()) ** 2).sum()
    rss = mine.set_index("term").loc["Residual", "sum_sq"]
    row = mine.set_index("term").loc["model"]
    assert row.share == pytest.approx(row.sum_sq / sst)
    assert row.partial_eta_sq == pytest.approx(row.sum_sq / (row.sum_sq + rss))


def test_unbalanced_grid_matches_statsmodels(spec_grid):
    d = spec_grid[spec_grid.benchmark == "xstest"].sample(frac=0.8, random_state=5).reset_index(drop=True)
    for order in (2, 3):
        assert_matches(anova_type2(d, "score", FACTORS, max_order=order), reference(d, FACTORS, order))


def test_blocks_enter_additively(spec_grid):
    d = spec_grid  # two benchmarks as a block factor
    mine = anova_type2(d, "score", ["model", "template", "scoring"], max_order=2, blocks=["benchmark"])
    assert_matches(mine, reference(d, ["model", "template", "scoring"], 2, ["benchmark"]))


def test_saturated_default_and_explicit(spec_grid):
    d = spec_grid[spec_grid.benchmark == "truthfulqa"]
    auto = anova_type2(d, "score", FACTORS)          # one obs per cell: drops the 5-way term
    assert auto.attrs["max_order"] == 4
    with pytest.warns(UserWarning, match="saturated"):
        sat = anova_type2(d, "score", FACTORS, max_order=5)
    assert sat.set_index("term").loc["Residual", "df"] == 0 and sat["F"].isna().all()
    # saturated: the Type-II SS of the top term is its full contribution, and SS decompose exactly
    assert sat["sum_sq"].sum() == pytest.approx(((d.score - d.score.mean()) ** 2).sum(), rel=1e-8)


def test_attribution_groups_shares(spec_grid):
    d = spec_grid[spec_grid.benchmark == "truthfulqa"]
    t = anova_type2(d, "score", FACTORS, max_order=2)
    s = attribution_summary(t, model_factor="model")
    tt = t.set_index("term")["share"]
    assert s["player"] == pytest.approx(tt["model"])
    assert s["execution_main"] == pytest.approx(tt[["template", "decoding", "fewshot", "scoring"]].sum())
    assert s["interactions"] == pytest.approx(tt[[i for i in tt.index if ":" in i]].sum())


def test_rank_deficient_design_uses_estimable_df(spec_grid):
    # an empty (model, template) combination: model:template has one estimable df fewer
    d = spec_grid[(spec_grid.benchmark == "truthfulqa") & ~((spec_grid.model == "qwen") & (spec_grid.template == "cot"))]
    t = anova_type2(d, "score", ["model", "template"], max_order=2).set_index("term")
    assert t.loc["model:template", "df"] == 5
    # equals an explicit nested-model comparison with numpy lstsq
    def rss(cols):
        x = np.column_stack([np.ones(len(d))] + cols)
        beta, *_ = np.linalg.lstsq(x, d.score.to_numpy(), rcond=None)
        r = d.score.to_numpy() - x @ beta
        return r @ r
    dm = pd.get_dummies(d.model, drop_first=True).to_numpy(float)
    dt = pd.get_dummies(d.template, drop_first=True).to_numpy(float)
    inter = [a * b for a in dm.T for b in dt.T]
    assert t.loc["model:template", "sum_sq"] == pytest.approx(rss([*dm.T, *dt.T]) - rss([*dm.T, *dt.T, *inter]), rel=1e-8)


def test_bad_anova_input(spec_grid):
    d = spec_grid[spec_grid.benchmark == "truthfulqa"]
    with pytest.raises(InputError, match="single level"):
        anova_type2(d.assign(const="x"), "score", ["model", "const"])
    with pytest.raises(InputError, match="not in the data"):
        anova_type2(d, "score", ["model", "nope"])
