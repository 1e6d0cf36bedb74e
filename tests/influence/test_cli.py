"""``bayesrank audit``: JSON validated against bayesrank/schemas/audit.json, actions replayed and
refitted independently, counts checked against the raw file, certified minima on small data."""

import copy
import json

import jsonschema
import numpy as np
import pandas as pd
import pytest

from bayesrank.bt.mle import fit_newton
from bayesrank.cli import main
from bayesrank.datasets import path
from bayesrank.protocol import validate

from .test_audit import replay_table

NBA = "sports/nba_games_2023_24_tidy.csv"


def test_cli_audit_json(nba, tmp_path):
    out = tmp_path / "audit.json"
    code = main(["audit", NBA, "--objective", "top1", "--actions", "drop,flip,add,add_sampled,remove-player",
                 "--json", str(out), "--plots", str(tmp_path / "plots")])
    assert code == 0
    d = json.loads(out.read_text())
    validate(d, "audit")
    assert d["schema"] == "audit" and d["diagnostics"]["converged"] is True
    assert d["diagnostics"]["gradient_norm"] < 1e-8
    assert set(d["audits"]) == {"drop", "flip", "add", "add_sampled"}
    n_games = len(pd.read_csv(path(NBA)))  # the raw file: one row per game
    assert d["n_comparisons"] == n_games
    flip = d["audits"]["flip"]
    assert flip["broken"] and flip["verified"]
    assert flip["budget"] == sum(a["count"] for a in flip["actions"])
    assert flip["fraction"] == pytest.approx(flip["budget"] / n_games)
    # replay every broken audit's JSON actions and refit independently: the leader changes
    for action, a in d["audits"].items():
        assert a["broken"] and a["verified"], action
        theta = fit_newton(replay_table(nba.counts, a["actions"]))[0]
        assert np.argmax(theta) != nba.ranking()[0], action
    # R_top1 rows are exactly the top-1 audits (the only canonical objective run here)
    rob = {(r["score"], r["action"]): r for r in d["robustness"]}
    assert set(rob) == {("R_top1", a) for a in ("drop", "flip", "add", "add_sampled")}
    assert rob[("R_top1", "flip")]["perturbation"] == "reverse the outcome of existing comparisons"
    # player removal: the largest displacement is an exact refit without that player's games
    rp = d["player_removal"]
    worst = rp["largest_displacement"]["player"]
    games = pd.read_csv(path(NBA))
    keep = (games["home_team"] != worst) & (games["away_team"] != worst)
    sub = games[keep]
    from bayesrank.data import read_comparisons

    theta = fit_newton(read_comparisons(sub).aggregate())[0]
    others = [p for p in map(str, nba.players) if p != worst]
    ref = nba.theta[[nba.counts.index_of(p) for p in others]]
    new_players = list(map(str, read_comparisons(sub).aggregate().players))
    new = theta[[new_players.index(p) for p in others]]
    moved = (np.argsort(np.argsort(-ref)) != np.argsort(np.argsort(-new))).sum()
    assert rp["largest_displacement"]["displaced"] == moved
    assert sorted(p.name for p in (tmp_path / "plots").glob("*.png")) == [
        "influence_distribution.png", "objective_vs_budget.png", "player_removal.png"]


def test_schema_rejects_inconsistent_documents(tmp_path):
    """The schema is precise: a not-broken audit with a budget, an R_CI score from an add, an
    unknown action, a missing field or an extra field are all rejected."""
    out = tmp_path / "a.json"
    assert main(["audit", NBA, "--actions", "drop", "--robustness", "--json", str(out)]) == 0
    good = json.loads(out.read_text())
    validate(good, "audit")

    def bad(mutate):
        doc = copy.deepcopy(good)
        mutate(doc)
        with pytest.raises(jsonschema.ValidationError):
            validate(doc, "audit")

    bad(lambda d: d["audits"]["drop"].update(broken=False))  # budget and fraction must then be null
    bad(lambda d: d["robustness"].append(dict(d["robustness"][-1], score="R_CI", action="add")))
    bad(lambda d: d["audits"].update(steal=d["audits"]["drop"]))
    bad(lambda d: d["audits"]["drop"].pop("verified"))
    bad(lambda d: d.update(extra=1))
    bad(lambda d: d["audits"]["drop"]["actions"][0].update(outcome="i_wins"))
    bad(lambda d: d["diagnostics"].pop("gradient_norm"))


def test_cli_pair_claim_ci_aware(tmp_path):
    out = tmp_path / "pair.json"
    assert main(["audit", NBA, "--objective", "pair:Oklahoma City Thunder>Denver Nuggets", "--actions", "flip",
                 "--ci-aware", "--level", "0.9", "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    validate(d, "audit")
    det = d["objective_details"]
    assert (det["player_a"], det["player_b"], det["ci_aware"]) == ("Oklahoma City Thunder", "Denver Nuggets", True)
    assert det["z"] == pytest.approx(1.6448536269514722)  # two-sided 90%
    assert d["audits"]["flip"]["verified"]


def test_cli_json_not_broken_within_budget(tmp_path):
    out = tmp_path / "a.json"
    assert main(["audit", NBA, "--actions", "drop", "--budget", "2", "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    validate(d, "audit")
    a = d["audits"]["drop"]
    assert a["broken"] is False and a["budget"] is None and a["fraction"] is None and a["verified"] is False
    assert d["robustness"] == [dict(d["robustness"][0], fraction=None, budget=None,
                                    bound="none: not broken within the budget")]


def test_cli_certify_small_leaderboard(tmp_path):
    """--certify: exhaustive refits below the greedy budget. On this 5-player board the certified
    minimum equals an independent exhaustive search up to the greedy budget, and its action set
    breaks the top-1 after an independent refit."""
    from bayesrank.data import read_comparisons
    from bayesrank.influence.baselines import exhaustive_minimum
    from bayesrank.influence.objectives import TopK
    from bayesrank.influence.state import BTState

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
    assert main(["audit", str(csv), "--actions", "drop,flip", "--budget", "6", "--certify", "3", "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    validate(d, "audit")
    st = BTState.fit(read_comparisons(csv).aggregate())
    for action in ("drop", "flip"):
        a, cert = d["audits"][action], d["audits"][action]["certified"]
        assert a["broken"] and a["verified"] and cert["max_size"] == 3
        e = exhaustive_minimum(st, TopK(st, 1), action, max_size=a["budget"])
        assert cert["minimum"] == e["budget"] and cert["lower_bound"] == e["budget"]
        table = st.counts.counts.copy()
        for c, m in e["actions"]:
            table[e["candidates"].r[c]] += m * e["candidates"].delta[c]
        assert np.argmax(fit_newton(st.counts.with_counts(table))[0]) != st.ranking()[0]
    # on a larger dataset the search is refused with a clear message
    assert main(["audit", NBA, "--actions", "drop", "--certify", "4"]) == 2


def test_cli_module_imports_only_stdlib_and_shared_flags():
    import subprocess
    import sys

    code = ("import sys; import bayesrank.influence.cli; "
            "bad = [m for m in ('numpy', 'pandas', 'scipy', 'pymc', 'matplotlib') if m in sys.modules]; print(bad)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "[]"
