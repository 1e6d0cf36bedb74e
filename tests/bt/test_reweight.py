"""Inverse-propensity pair weights (bayesrank.bt.reweight): closed form, frequency weights, floor,
bad input. (Agreement with arena-rank's weights and fits: tests/bt/test_style_arena_rank.py.)"""

import numpy as np
import pandas as pd
import pytest

from bayesrank.bt.reweight import inverse_propensity_weights, pair_sampling_table
from bayesrank.data.aggregate import pair_rows
from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import InputError


@pytest.fixture
def data():
    rows = [("A", "B")] * 80 + [("B", "A")] * 20 + [("A", "C")] * 10 + [("C", "B")] * 2
    df = pd.DataFrame(rows, columns=["model_a", "model_b"]).assign(outcome="a")
    df.loc[::3, "outcome"] = "b"
    return pair_rows(Comparisons.from_frame(df), per_comparison=True)  # one row per battle


def test_weights_closed_form(data):
    """Pair {A,B}: 100 battles, {A,C}: 10, {B,C}: 2; floor 5 → raw 1/100, 1/10, 1/5; mean 1 over battles."""
    w = inverse_propensity_weights(data, min_pair_count=5)
    raw = np.array([1 / 100] * 100 + [1 / 10] * 10 + [1 / 5] * 2)
    np.testing.assert_allclose(w, raw / raw.mean(), rtol=1e-12)
    # each pair carries the same total weight unless floored: 100·(1/100) = 10·(1/10), and {B,C} = 2·(1/5)
    t = pair_sampling_table(data.replace(weight=w)).set_index(["player_a", "player_b"])
    assert t.loc[("A", "B"), "n_battles"] == 100 and t.loc[("B", "C"), "n_battles"] == 2


def test_frequency_weights_count_as_battles(data):
    """A row standing for f battles counts f times in its pair's count."""
    agg = data.with_counts(data.counts * np.where(np.arange(data.n_rows) == 0, 11.0, 1.0)[:, None])  # first row = 11
    w = inverse_propensity_weights(agg, min_pair_count=0, normalize=False)
    assert w[0] == pytest.approx(1 / 110) and w[-1] == pytest.approx(1 / 2)


def test_bad_floor(data):
    with pytest.raises(InputError, match="min-pair-count"):
        inverse_propensity_weights(data, min_pair_count=-1)


def test_reweighted_fit_from_pair_counts_equals_fit_from_battles(data):
    """Pair counts (e.g. streamed files) carry enough for the reweighted plain BT: same fit and the
    same sandwich as one row per battle (the default interval with weights)."""
    from bayesrank.bt import BradleyTerry

    rows = BradleyTerry(data, reweight=True, min_pair_count=5).fit("mle")
    cells = BradleyTerry(data.pairs(), reweight=True, min_pair_count=5).fit("mle")
    assert rows.interval == cells.interval == "sandwich"
    np.testing.assert_allclose(cells.score, rows.score, atol=1e-10)
    np.testing.assert_allclose(cells.cov, rows.cov, atol=1e-10)
    with pytest.raises(InputError, match="individual comparisons"):
        BradleyTerry(data.pairs(), "x_a:x_b")
