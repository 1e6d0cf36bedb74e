"""Aggregation equals a naive groupby; comparison-graph checks (components, never-lost/never-won, finite core)."""

import numpy as np
import pandas as pd
import pytest

from bayesrank.data import comparison_graph, finite_core, read_comparisons, split_components
from bayesrank.datasets import path


def _naive_counts(df):
    """Loop-free but independent reference: per unordered pair (sorted names), weighted [wins_lo, wins_hi, ties]."""
    rows = {}
    for a, b, o, w in zip(df["model_a"], df["model_b"], df["outcome"], df.get("weight", [1.0] * len(df))):
        lo, hi = sorted((a, b))
        r = rows.setdefault((lo, hi), [0.0, 0.0, 0.0])
        if o == "tie":
            r[2] += w
        elif (o == "a") == (a == lo):
            r[0] += w
        else:
            r[1] += w
    return rows


def test_aggregate_equals_naive_groupby():
    rng = np.random.default_rng(7)
    n = 3000
    names = np.array([f"m{k:02d}" for k in range(25)], dtype=object)
    a = rng.integers(0, 25, n)
    b = (a + rng.integers(1, 25, n)) % 25
    df = pd.DataFrame({
        "model_a": names[a], "model_b": names[b], "outcome": rng.choice(["a", "b", "tie"], n, p=[0.45, 0.4, 0.15]),
        "weight": rng.gamma(2.0, 1.0, n),
    })
    counts = read_comparisons(df).aggregate()
    ref = _naive_counts(df)
    got = {(counts.players[i], counts.players[j]): c for i, j, c in zip(counts.i, counts.j, counts.counts)}
    assert set(got) == set(ref)
    for key, c in ref.items():
        np.testing.assert_allclose(got[key], c, rtol=1e-12)
    assert (counts.i < counts.j).all()
    # matches per player equals the naive count of appearances
    ref_matches = pd.concat([df[["model_a", "weight"]].rename(columns={"model_a": "p"}),
                             df[["model_b", "weight"]].rename(columns={"model_b": "p"})]).groupby("p")["weight"].sum()
    np.testing.assert_allclose(counts.matches_per_player(), ref_matches.loc[counts.players].to_numpy())
    assert counts.index_of("m03") == 3


def test_aggregate_llmfao_groupby_pandas():
    raw = pd.read_csv(path("llmfao/crowd-comparisons.csv"))
    counts = read_comparisons(raw).aggregate()
    lo = np.minimum(raw["left"], raw["right"])
    swapped = raw["left"] > raw["right"]
    win_lo = ((raw["winner"] == "left") & ~swapped) | ((raw["winner"] == "right") & swapped)
    win_hi = ((raw["winner"] == "right") & ~swapped) | ((raw["winner"] == "left") & swapped)
    ref = pd.DataFrame({"lo": lo, "hi": np.maximum(raw["left"], raw["right"]), "wi": win_lo, "wj": win_hi,
                        "t": raw["winner"] == "tie"}).groupby(["lo", "hi"]).sum().astype(float)
    got = counts.frame().set_index(["player_a", "player_b"])
    np.testing.assert_array_equal(got.loc[ref.index].to_numpy(), ref.to_numpy())
    assert counts.counts.sum() == 8931


def test_disconnected_graph_reported_and_split():
    df = pd.DataFrame({"model_a": ["a", "b", "c", "x", "y", "x"], "model_b": ["b", "c", "a", "y", "x", "y"],
                       "outcome": ["a", "a", "a", "a", "a", "b"]})
    c = read_comparisons(df)
    rep = comparison_graph(c.aggregate())
    assert rep.n_components == 2 and not rep.finite_mle
    assert "2 disconnected components" in rep.advice() and "fit each component" in rep.advice()
    parts = split_components(c)
    assert [len(p) for p in parts] == [3, 3]
    assert sorted(map(str, parts[0].players)) in (["a", "b", "c"], ["x", "y"])
    assert all(comparison_graph(p.aggregate()).finite_mle for p in parts)


def test_never_lost_never_won():
    # a beats everyone; d loses to everyone; b, c trade wins
    df = pd.DataFrame({"model_a": ["a", "a", "b", "c", "b", "c"], "model_b": ["b", "c", "c", "b", "d", "d"],
                       "outcome": ["a"] * 6})
    rep = comparison_graph(read_comparisons(df).aggregate())
    assert rep.n_components == 1
    assert rep.never_lost == ["a"] and rep.never_won == ["d"]
    assert not rep.finite_mle
    assert "ridge" in rep.advice()
    # a single tie between a and b gives a a "loss" edge under half ties, but not under drop
    df2 = pd.concat([df, pd.DataFrame({"model_a": ["a", "d"], "model_b": ["b", "c"], "outcome": ["tie", "tie"]})])
    c2 = read_comparisons(df2.reset_index(drop=True)).aggregate()
    assert comparison_graph(c2, ties="half").finite_mle
    assert not comparison_graph(c2, ties="drop").finite_mle


def test_not_strongly_connected_without_extremes():
    # group {a,b} beats every member of {c,d}; each group internally balanced
    df = pd.DataFrame({"model_a": ["a", "b", "c", "d", "a", "b"], "model_b": ["b", "a", "d", "c", "c", "d"],
                       "outcome": ["a"] * 6})
    rep = comparison_graph(read_comparisons(df).aggregate())
    assert rep.n_components == 1 and not rep.never_lost and not rep.never_won
    assert not rep.strongly_connected and not rep.finite_mle
    assert "not strongly connected" in rep.advice()


@pytest.mark.parametrize("file", ["tennis/atp_matches_2024.csv", "tennis/wta_matches_2024.csv"])
def test_finite_core_tennis(file):
    c = read_comparisons(path(file))
    n0, e0 = len(c), c.excluded.total  # e0: walkovers, excluded by the reader
    rep = comparison_graph(c.aggregate())
    assert not rep.finite_mle and rep.never_won
    core = finite_core(c, min_matches=5)
    assert c.excluded.total == e0 and len(c) == n0  # the caller's comparisons are not mutated
    rep2 = comparison_graph(core.aggregate())
    assert rep2.finite_mle and rep2.n_components == 1
    assert rep2.degree.min() >= 5
    assert len(core) + core.excluded.total == n0 + e0  # every removed row counted
    assert core.excluded.total > e0
    # reference: brute-force check that every core player both won and lost within the core
    f = core.frame
    won, lost = set(f["model_a"]), set(f["model_b"])
    assert set(core.players) == won == lost


def test_pair_claims_split_where_both_sides_are_players():
    import pytest

    from bayesrank.data.claims import split_pair_claim
    from bayesrank.errors import InputError

    assert split_pair_claim("a>b>c", ["a>b", "c"]) == ("a>b", "c")
    assert split_pair_claim("a>b>c", ["a", "b>c"]) == ("a", "b>c")
    assert split_pair_claim(" x > y ") == ("x", "y")
    for text, players in (("a>b>c", ["a", "b", "c", "a>b", "b>c"]), ("a>z", ["a", "b"]), ("a>b>c", None), (">b", None)):
        with pytest.raises(InputError, match="claim"):
            split_pair_claim(text, players)
