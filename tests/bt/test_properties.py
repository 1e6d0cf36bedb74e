"""Invariances of the Bradley-Terry fit (hypothesis): row order, player labels, a/b orientation,
duplicated rows vs frequency weight 2. Scores and Fisher SDs are compared by player name."""

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayesrank.bt import BradleyTerry
from bayesrank.data import read_comparisons

FLIP = {"a": "b", "b": "a", "tie": "tie"}
RIDGE = 0.2  # keeps every random dataset finite; all invariances hold with a ridge too


@st.composite
def comparison_frames(draw):
    k = draw(st.integers(3, 6))
    n = draw(st.integers(6, 30))
    names = [f"player {c}" for c in "ABCDEF"[:k]]
    rows = []
    for _ in range(n):
        a = draw(st.integers(0, k - 1))
        b = draw(st.integers(0, k - 2))
        b = b if b < a else b + 1
        rows.append((names[a], names[b], draw(st.sampled_from(["a", "b", "tie"])), float(draw(st.integers(1, 3)))))
    df = pd.DataFrame(rows, columns=["model_a", "model_b", "outcome", "weight"])
    ties = draw(st.sampled_from(["half", "drop", "davidson"]))
    if ties == "davidson" and not 0 < (df["outcome"] == "tie").sum() < len(df):
        ties = "half"  # Davidson needs a tie and a decisive result for a finite λ (check_finite_mle)
    if ties == "drop" and (df["outcome"] != "tie").sum() == 0:
        ties = "half"
    return df, ties, draw(st.integers(0, 2**31 - 1))


def _fit(df, ties):
    f = BradleyTerry(read_comparisons(df), ties=ties, ridge=RIDGE).fit("mle")
    return pd.DataFrame({"score": f.score, "sd": f.sd}, index=[str(p) for p in f.players]).sort_index()


def _same(a, b):
    pd.testing.assert_index_equal(a.index, b.index)
    np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), atol=1e-7, rtol=1e-7)


PROP = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROP
@given(comparison_frames())
def test_row_permutation(case):
    df, ties, seed = case
    perm = np.random.default_rng(seed).permutation(len(df))
    _same(_fit(df, ties), _fit(df.iloc[perm].reset_index(drop=True), ties))


@PROP
@given(comparison_frames())
def test_player_relabelling(case):
    """Renaming players with a permutation that changes their sort order maps scores along."""
    df, ties, seed = case
    names = sorted(set(df["model_a"]) | set(df["model_b"]))
    perm = np.random.default_rng(seed).permutation(len(names))
    new = {n: f"z{p}-{n[::-1]}" for n, p in zip(names, perm)}
    ref = _fit(df, ties)
    got = _fit(df.assign(model_a=df["model_a"].map(new), model_b=df["model_b"].map(new)), ties)
    back = {v: k for k, v in new.items()}
    got.index = [back[n] for n in got.index]
    _same(ref, got.sort_index())


@PROP
@given(comparison_frames())
def test_swap_sides_with_inverse_outcome(case):
    df, ties, seed = case
    flip = np.random.default_rng(seed).random(len(df)) < 0.5
    sw = df.copy()
    sw.loc[flip, "model_a"] = df.loc[flip, "model_b"]
    sw.loc[flip, "model_b"] = df.loc[flip, "model_a"]
    sw.loc[flip, "outcome"] = df.loc[flip, "outcome"].map(FLIP)
    _same(_fit(df, ties), _fit(sw, ties))


@PROP
@given(comparison_frames())
def test_duplicate_row_equals_weight_two(case):
    df, ties, seed = case
    r = int(np.random.default_rng(seed).integers(len(df)))
    dup = pd.concat([df, df.iloc[[r]]], ignore_index=True)
    w2 = df.copy()
    w2.loc[r, "weight"] = 2 * df.loc[r, "weight"]
    _same(_fit(dup, ties), _fit(w2, ties))
    # and integer weights equal literally repeated unit-weight rows
    rep = df.loc[df.index.repeat(df["weight"].astype(int))].assign(weight=1.0).reset_index(drop=True)
    _same(_fit(df, ties), _fit(rep, ties))
