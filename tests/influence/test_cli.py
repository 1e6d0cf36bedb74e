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
