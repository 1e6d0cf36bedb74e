"""Player removal: group Newton step vs exact refit for every player of a real dataset."""

import numpy as np

from bayesrank.bt.mle import fit_newton
from bayesrank.influence.players import degree_relation, player_removal, without_player


def test_group_newton_vs_exact_for_every_player(llmfao):
    table = player_removal(llmfao)
    assert len(table) == llmfao.n_players and table["finite_mle"].all()
    # the Newton step captures the change: error ≪ change for every player
    assert (table["max_abs_error_newton"] < 0.1 * table["max_abs_change"]).all()
    assert table["max_abs_error_newton"].median() < 1e-3
    # rank displacement of the others agrees in ≥ 95% of players
    assert (table["displaced"] == table["displaced_newton"]).mean() >= 0.95
    rel = degree_relation(table)
    assert rel["spearman_degree_vs_displaced"] > 0.5  # degree predicts influence (spec)


def test_exact_refit_is_an_independent_fit(nba):
    sub, keep = without_player(nba.counts, 0)
    theta = fit_newton(sub)[0]
    table = player_removal(nba)
    r0 = np.argsort(np.argsort(-(nba.theta[keep] - nba.theta[keep].mean())))
    r1 = np.argsort(np.argsort(-theta))
    assert table.loc[0, "displaced"] == int((r0 != r1).sum())
