"""``rank="auto"`` where the held-out choice is not identified: it falls back to a smaller rank, says
so, and names the cause (players compared by one judge only)."""

import json
import warnings

import numpy as np
import pytest

from bayesrank.cli import main
from bayesrank.data import read_comparisons
from bayesrank.hja.data import items_seen_by_one_judge
from bayesrank.hja.fisher import NotIdentifiedError
from bayesrank.hja.model import HJA
from bayesrank.protocol import validate
from tests.hja.panels import ONLY_HUMAN, one_judge_panel


@pytest.fixture(scope="module")
def panel():
    return one_judge_panel()


@pytest.fixture(scope="module")
def comps(panel):
    return read_comparisons(panel, judge="judge")


def test_players_seen_by_one_judge_match_a_groupby(panel, comps):
    judges_per_player = (panel.melt(id_vars="judge", value_vars=["model_a", "model_b"])
                         .groupby("value")["judge"].nunique())
    expected = sorted(judges_per_player[judges_per_player == 1].index)
    counts = HJA(comps, rank=0).counts
    assert sorted(map(str, items_seen_by_one_judge(counts))) == expected == ONLY_HUMAN


def test_rank_1_is_not_identified_and_names_the_cause(comps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(NotIdentifiedError, match="compared by one judge only \\(m6, m7, m8, m9\\)"):
            HJA(comps, rank=1).fit("mle")
    assert HJA(comps, rank=0).fit("mle").diagnostics.converged


def test_auto_falls_back_to_rank_0(comps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hja = HJA(comps, rank="auto")
        held_out = int(hja.rank_selection.loc[hja.rank_selection.chosen, "rank"].iloc[0])
        fit = hja.fit("mle")
    assert held_out == 1  # the held-out rule prefers the residual the LLM judges share ...
    assert fit.rank == 0 and fit.diagnostics.converged  # ... which these data do not identify
    tab = hja.rank_selection.set_index("rank")
    assert tab.loc[1, "identified"] is False and tab.loc[0, "identified"] is True and bool(tab.loc[0, "chosen"])
    assert "rank 1 (chosen by held-out fit) is not identified" in fit.info["rank_fallback"]
    ref = HJA(comps, rank=0).fit("mle")
    np.testing.assert_allclose(fit.table()["score"], ref.table()["score"], atol=1e-10)


def test_cli_rank_auto_works_where_rank_0_does(panel, tmp_path):
    data = tmp_path / "panel.csv"
    panel.to_csv(data, index=False)
    out = tmp_path / "auto.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["hja", str(data), "--judge-col", "judge", "--rank", "auto", "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    validate(d, "hja")
    assert d["rank"] == 0 and "not identified" in d["rank_fallback"]
    assert [r["rank"] for r in d["rank_selection"] if r["chosen"]] == [0]
