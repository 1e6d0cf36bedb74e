import json

import numpy as np

from bayesrank.bt.mle import fit_newton
from bayesrank.cli import main


def test_cli_audit_json(nba, tmp_path):
    out = tmp_path / "audit.json"
    code = main(["audit", "sports/nba_games_2023_24_tidy.csv", "--objective", "top1", "--actions",
                 "drop,flip,add,remove-player", "--json", str(out), "--plots", str(tmp_path / "plots")])
    assert code == 0
    d = json.loads(out.read_text())
    assert set(d["audits"]) == {"drop", "flip", "add", "remove-player"}
    flip = d["audits"]["flip"]
    assert flip["broken"] and flip["verified"]
    assert flip["fraction"] == flip["budget"] / nba.n_matches
    # replay the JSON actions and refit independently: the leader changes
    c = nba.counts
    names = list(map(str, c.players))
    table = c.counts.copy()
    for a in flip["actions"]:
        i, j = names.index(a["player_i"]), names.index(a["player_j"])
        r = np.flatnonzero((c.i == i) & (c.j == j))
        o = ["i_wins", "j_wins"].index(a["outcome"])
        table[r, o] -= a["count"]
        table[r, 1 - o] += a["count"]
    theta = fit_newton(c.with_counts(table))[0]
    assert np.argmax(theta) != nba.ranking()[0]
    assert d["robustness"]["R_top1"]["flip"] == flip["fraction"]
    assert d["audits"]["remove-player"]["largest_displacement"]["displaced"] >= 1
    assert len(list((tmp_path / "plots").glob("*.png"))) >= 3


def test_cli_certify_small_leaderboard(tmp_path):
    """--certify: exhaustive refits below the greedy budget give a certified minimum (5 players)."""
    import pandas as pd

    rng = np.random.default_rng(3)
    theta = np.array([0.6, 0.4, 0.0, -0.3, -0.7])
    rows = []
    for a in range(5):
        for b in range(a + 1, 5):
            for _ in range(3):
                win = rng.random() < 1 / (1 + np.exp(-(theta[a] - theta[b])))
                rows.append({"model_a": f"p{a}", "model_b": f"p{b}", "outcome": "a" if win else "b"})
    csv = tmp_path / "small.csv"
    pd.DataFrame(rows).to_csv(csv, index=False)
    out = tmp_path / "audit.json"
    assert main(["audit", str(csv), "--actions", "drop,flip", "--certify", "3", "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    for action in ("drop", "flip"):
        a, cert = d["audits"][action], d["audits"][action]["certified"]
        assert cert["max_size"] == 3
        if a["broken"] and a["budget"] <= 4:  # everything below the greedy budget was searched
            assert cert["minimum"] is not None and cert["minimum"] <= a["budget"]
        assert cert["lower_bound"] <= (a["budget"] or np.inf)
    # on a larger dataset the search is refused with a clear message
    assert main(["audit", "sports/nba_games_2023_24_tidy.csv", "--actions", "drop", "--certify", "4"]) == 2
