"""``bayesrank items``: the leaderboard result on the protocol; its pairwise tests against statsmodels
(exact McNemar, Holm and Benjamini–Hochberg via multipletests) and its rank sets' tie groups."""

import json

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from bayesrank.cli import main
from bayesrank.items.data import ItemScores
from bayesrank.items.result import analyze_items

from .conftest import long_frame, rasch_matrix


def test_pairs_equal_statsmodels_and_holm():
    y = rasch_matrix(5, 300, seed=6, spread=0.8)
    res = analyze_items(ItemScores.from_long(long_frame(y)))
    p = res.pairs
    assert len(p) == 10 and (p["test"] == "exact McNemar").all()
    for r in p.itertuples():
        a, b = int(r.player_a[3:]), int(r.player_b[3:])
        n10 = int(((y[a] == 1) & (y[b] == 0)).sum())
        n01 = int(((y[a] == 0) & (y[b] == 1)).sum())
        assert r.p_value == pytest.approx(mcnemar([[0, n10], [n01, 0]], exact=True).pvalue, rel=1e-12)
        assert y[a].mean() >= y[b].mean()  # player_a is the one ahead
    np.testing.assert_allclose(p["p_holm"], multipletests(p["p_value"], method="holm")[1], rtol=1e-12)
    np.testing.assert_allclose(p["p_bh"], multipletests(p["p_value"], method="fdr_bh")[1], rtol=1e-12)
    t = res.table()
    assert list(t["score"]) == sorted(t["score"], reverse=True)
    assert (t["rank_lower"] <= t["rank"]).all() and (t["rank"] <= t["rank_upper"]).all()


def test_items_command(tmp_path, capsys):
    y = rasch_matrix(4, 200, seed=2)
    p = tmp_path / "long.csv"
    long_frame(y).to_csv(p, index=False)
    out = tmp_path / "items.json"
    assert main(["items", str(p), "--json", str(out), "--plots", str(tmp_path / "plots")]) == 0
    doc = json.loads(out.read_text())
    assert doc["schema"] == "items" and doc["n_items"] == 200 and len(doc["pairs"]) == 6
    assert (tmp_path / "plots" / "items_leaderboard.png").exists()
    assert main(["items", str(p), "--level", "2"]) == 2
