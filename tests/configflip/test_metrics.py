"""rho_flip, Property 1, tau_R and reachable orderings on hand-built grids with known answers."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayesrank.configflip.grid import EvalGrid
from bayesrank.configflip.metrics import (
    cross_harness_differences,
    ordering_label,
    pairwise_flips,
    reachable_orderings,
    scoring_path_sensitivity,
    tau_matrix,
    tau_r,
)
from bayesrank.configflip.ranges import apply_range, parse_range
from bayesrank.errors import InputError


def hand_grid():
    # 4 configurations (template x decoding); A vs B: A wins in 2, B wins in 1, tie in 1.
    scores = {
        ("t1", "greedy"): {"A": 0.70, "B": 0.60, "C": 0.50},
        ("t1", "sample"): {"A": 0.65, "B": 0.65, "C": 0.50},   # A = B tie
        ("t2", "greedy"): {"A": 0.55, "B": 0.60, "C": 0.70},   # B > A, C first
        ("t2", "sample"): {"A": 0.66, "B": 0.61, "C": 0.40},
    }
    rows = [{"model": m, "benchmark": "bench", "template": t, "decoding": d, "score": s}
            for (t, d), ms in scores.items() for m, s in ms.items()]
    return EvalGrid.from_scores(pd.DataFrame(rows), axes=["template", "decoding"])


def test_rho_flip_counts_ties_separately_and_names_witnesses():
    p = pairwise_flips(hand_grid(), "bench").set_index(["player_a", "player_b"])
    ab = p.loc[("A", "B")]
    assert (ab.n_plus, ab.n_minus, ab.n_ties, ab.n_configs) == (2, 1, 1, 4)
    assert ab.rho_flip == pytest.approx(1 / 4)          # min(2, 1) / |C_b| with |C_b| = 4
    assert not ab.strict_order_free
    assert ab.witness_a_wins == "template=t1|decoding=greedy"   # largest A - B margin (0.10)
    assert ab.witness_b_wins == "template=t2|decoding=greedy"
    ac = p.loc[("A", "C")]
    assert (ac.n_plus, ac.n_minus, ac.rho_flip) == (3, 1, 0.25)
    bc = p.loc[("B", "C")]
    assert (bc.n_plus, bc.n_minus) == (3, 1)


def test_property1_holds_without_strict_reversal_even_with_ties():
    rows = [{"model": m, "benchmark": "b", "t": t, "score": s}
            for t, (a, b) in zip("xyz", [(0.5, 0.4), (0.5, 0.5), (0.6, 0.3)]) for m, s in (("A", a), ("B", b))]
    p = pairwise_flips(EvalGrid.from_scores(pd.DataFrame(rows), axes=["t"]), "b").iloc[0]
    assert (p.n_plus, p.n_minus, p.n_ties) == (2, 0, 1)
    assert p.rho_flip == 0 and p.strict_order_free and p.witness_a_wins is None


def test_tol_turns_small_differences_into_ties():
    p = pairwise_flips(hand_grid(), "bench", tol=0.051).set_index(["player_a", "player_b"]).loc[("A", "B")]
    assert (p.n_plus, p.n_minus, p.n_ties) == (1, 0, 3)


def test_tau_r_equals_mean_pairwise_scipy_kendall_tau_b(spec_grid):
    sub = spec_grid[spec_grid.decoding != "t0.7"]           # 48 configurations -> 1128 pairs
    g = EvalGrid.from_scores(sub, axes=["template", "decoding", "fewshot", "scoring"])
    wide = g.wide("truthfulqa")
    ref = [stats.kendalltau(wide.iloc[i], wide.iloc[j]).statistic
           for i, j in itertools.combinations(range(len(wide)), 2)]
    assert tau_r(g, "truthfulqa")["tau_R"] == pytest.approx(np.nanmean(ref), abs=1e-12)
    # with ties (tau-b) on the hand grid
    hw = hand_grid().wide("bench")
    t = tau_matrix(hw.to_numpy())
    for i, j in itertools.combinations(range(4), 2):
        assert t[i, j] == pytest.approx(stats.kendalltau(hw.iloc[i], hw.iloc[j]).statistic)


def test_tau_r_closed_form_two_configs_reversed():
    rows = [{"model": m, "benchmark": "b", "c": c, "score": s}
            for c, order in (("x", [0.9, 0.5, 0.1]), ("y", [0.1, 0.5, 0.9])) for m, s in zip("ABC", order)]
    assert tau_r(EvalGrid.from_scores(pd.DataFrame(rows), axes=["c"]), "b")["tau_R"] == pytest.approx(-1.0)


def test_reachable_orderings_counts():
    table, info = reachable_orderings(hand_grid(), "bench")
    counts = dict(zip(table["ordering"], table["count"]))
    assert counts == {"A > B > C": 2, "A = B > C": 1, "C > B > A": 1}
    assert info["n_possible_strict"] == math.factorial(3) and info["n_reachable_strict"] == 2
    assert ordering_label(np.array([0.1, 0.3, 0.2]), ["x", "y", "z"]) == "y > z > x"


def test_ranges_filter_core_range(spec_grid):
    g = EvalGrid.from_scores(spec_grid, axes=["template", "decoding", "fewshot", "scoring"])
    assert parse_range("template!=cot,decoding=greedy") == [("template", "!=", ["cot"]), ("decoding", "=", ["greedy"])]
    core = apply_range(g, "core")                            # named range = spec 03's core range
    assert core.data.equals(apply_range(g, "template!=cot,decoding=greedy").data)
    assert apply_range(g, "strict", named={"strict": "template=minimal"}).data["template"].eq("minimal").all()
    assert len(core.configurations("truthfulqa")) == 3 * 1 * 3 * 2
    assert set(core.data["template"]) == {"minimal", "role", "detailed"}
    two = apply_range(g, "fewshot=0|5")
    assert set(two.data["fewshot"]) == {"0", "5"}
    # rho_flip on the range equals a direct count on the filtered rows
    sub = spec_grid[(spec_grid.template != "cot") & (spec_grid.decoding == "greedy") & (spec_grid.benchmark == "truthfulqa")]
    w = sub.pivot_table(index=["template", "fewshot", "scoring"], columns="model", values="score")
    d = w["qwen"] - w["mistral"]
    expect = min((d > 0).sum(), (d < 0).sum()) / len(d)
    got = pairwise_flips(core, "truthfulqa").set_index(["player_a", "player_b"]).loc[("qwen", "mistral"), "rho_flip"]
    assert got == pytest.approx(expect)


@pytest.mark.parametrize("spec, msg", [("nope=1", "no axis 'nope'"), ("template=zzz", "no level"),
                                       ("template", "cannot parse"), ("template=cot,template!=cot", "admits no cell")])
def test_bad_ranges(spec_grid, spec, msg):
    g = EvalGrid.from_scores(spec_grid, axes=["template", "decoding", "fewshot", "scoring"])
    with pytest.raises(InputError, match=msg):
        apply_range(g, spec)


def test_scoring_path_and_cross_harness():
    rows = []
    for m, base in (("A", 0.6), ("B", 0.5)):
        for h, off in (("lm-eval", 0.0), ("helm", 0.1), ("inspect", -0.05)):
            for s, soff in (("regex", 0.0), ("logprob", 0.2)):
                rows.append({"model": m, "benchmark": "bbq", "harness": h, "scoring": s, "score": base + off + soff})
    g = EvalGrid.from_scores(pd.DataFrame(rows), axes=["harness", "scoring"])
    sp = scoring_path_sensitivity(g, "scoring", "logprob", "regex")
    assert len(sp) == 6 and np.allclose(sp["difference"], 0.2)
    ch = cross_harness_differences(g, "harness", nominal={"scoring": "regex"})
    assert len(ch) == 2 and np.allclose(ch["max_minus_min"], 0.15)
    assert set(ch["highest"]) == {"helm"} and set(ch["lowest"]) == {"inspect"}
