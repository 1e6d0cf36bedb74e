import json

import pytest

from bayesrank.cli import main
from bayesrank.errors import InputError
from bayesrank.influence.api import parse_actions
from bayesrank.influence.greedy import greedy_audit
from bayesrank.influence.objectives import CIObjective, TopK, parse_objective


def test_bad_objectives(nba):
    with pytest.raises(InputError, match="unknown player"):
        parse_objective("ci-player:Nobody FC", nba)
    with pytest.raises(InputError, match="k must be an integer in 1..29"):
        parse_objective("topk:30", nba)
    with pytest.raises(InputError, match="k must be"):
        parse_objective("topk:0", nba)
    with pytest.raises(InputError, match="integer K"):
        parse_objective("topk:x", nba)
    with pytest.raises(InputError, match="unknown objective"):
        parse_objective("top2", nba)
    leader = str(nba.players[nba.ranking()[0]])
    with pytest.raises(InputError, match="already in the top-1"):
        TopK(nba, 1, target=leader, goal="promote")
    with pytest.raises(InputError, match="--goal"):
        TopK(nba, 1, target=leader)
    with pytest.raises(InputError, match="ratio"):
        CIObjective(nba, None, "reduce", 1.5)


def test_bad_actions_and_budget(nba):
    with pytest.raises(InputError, match="empty"):
        parse_actions(" , ")
    with pytest.raises(InputError, match="unknown action"):
        parse_actions("drop,steal")
    with pytest.raises(InputError, match="budget"):
        greedy_audit(nba, TopK(nba, 1), "drop", budget=0)


def test_cli_errors_are_one_line(capsys):
    code = main(["audit", "sports/nba_games_2023_24_tidy.csv", "--objective", "topk:99"])
    assert code == 2
    assert "k must be an integer" in capsys.readouterr().err
    assert main(["audit", "sports/nba_games_2023_24_tidy.csv", "--actions", ""]) == 2
    assert main(["audit", "sports/nba_games_2023_24_tidy.csv", "--target", "Nobody", "--goal", "promote"]) == 2


def test_cli_json_not_broken_within_budget(tmp_path):
    out = tmp_path / "a.json"
    assert main(["audit", "sports/nba_games_2023_24_tidy.csv", "--actions", "drop", "--budget", "2", "--json", str(out)]) == 0
    d = json.loads(out.read_text())["audits"]["drop"]
    assert d["broken"] is False and d["budget"] is None and d["fraction"] is None and d["verified"] is False


def test_bad_pair_claims_and_flags(nba):
    from bayesrank.influence import audit

    order = nba.ranking()
    first, second = str(nba.players[order[0]]), str(nba.players[order[1]])
    with pytest.raises(InputError, match="does not hold on the data"):
        parse_objective(f"pair:{second}>{first}", nba)
    with pytest.raises(InputError, match="unknown player"):
        parse_objective(f"pair:{first}>Nobody FC", nba)
    with pytest.raises(InputError, match="itself"):
        parse_objective(f"{first}>{first}", nba)
    with pytest.raises(InputError, match="ci-aware applies"):
        audit(nba, "tau", "flip", ci_aware=True)
    with pytest.raises(InputError, match="level must be in"):
        audit(nba, "top1", "flip", ci_aware=True, level=1.5)
    with pytest.raises(InputError, match="min_matches"):
        audit(nba, "top1", "flip", min_matches=3)


def test_cli_bad_pair_claim_is_one_line(capsys):
    assert main(["audit", "sports/nba_games_2023_24_tidy.csv", "--objective", "pair:Utah Jazz>Boston Celtics"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not hold on the data" in err[0]
