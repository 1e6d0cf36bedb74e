"""Audits of a Firth fit (``BTState.fit(penalty="firth")``, data with no finite MLE) against
firthmodels, an independent Firth logistic regression (tests/bt/test_firth.py: logistic Firth on the
±1 Bradley–Terry design is Firth BT)."""

import numpy as np
import pytest

from bayesrank.errors import InputError
from bayesrank.influence import audit
from bayesrank.influence.baselines import exhaustive_minimum
from bayesrank.influence.state import BTState, refit, refit_one

from ..bt.test_firth import SEPARATED, centred, pair_counts, random_counts, reference_model

pytest.importorskip("firthmodels")


def _firthmodels_theta(state, table):
    return centred(reference_model(state.counts.with_counts(table)).coef_)


def test_state_and_refits_equal_firthmodels():
    """The base fit and the batched refits of perturbed tables (some of them separated) are the
    independent Firth estimates; the Hessian is the information at the estimate."""
    st = BTState.fit(pair_counts(**SEPARATED), penalty="firth")
    assert np.abs(st.theta - _firthmodels_theta(st, st.counts.counts)).max() < 1e-8
    assert st.gradient_norm() < 1e-8
    rng = np.random.default_rng(0)
    tables = np.repeat(st.counts.counts[None], 6, axis=0)
    tables[..., :2] = rng.integers(0, 4, size=tables[..., :2].shape)
    rf = refit(st, tables, with_hinv=True)
    assert rf.ok.all()
    for b in range(len(tables)):
        assert np.abs(rf.theta[b] - _firthmodels_theta(st, tables[b])).max() < 1e-8
        # hinv is the Wald covariance on Σθ = 0: H · hinv is the projection I − 11ᵀ/K
        k = st.n_players
        assert np.allclose(rf.hessian[b] @ rf.hinv[b], np.eye(k) - 1.0 / k, atol=1e-8)


def test_top1_audit_of_a_separated_board_against_exhaustive_firthmodels_refits():
    """p0 never lost (no finite MLE). The audit's verified greedy budget for dropping and flipping
    comparisons equals the exhaustive minimum over every action set, and the minimum set, refitted
    by firthmodels, takes the lead from p0; no single flip does (checked by firthmodels too)."""
    st = BTState.fit(pair_counts(**SEPARATED), penalty="firth")
    assert st.ranking()[0] == 0
    rep = audit(st, "top1", "drop,flip", budget=8, certify=4)
    table = rep.table()
    for kind in ("drop", "flip"):
        ex = exhaustive_minimum(st, rep.objective_object, kind, 4)
        row = table[table.action == kind].iloc[0]
        assert bool(row.verified) and int(row.budget) == ex["budget"] == int(row.certified_minimum)
        new = st.counts.counts.copy()
        for c, m in ex["actions"]:
            new[ex["candidates"].r[c]] += m * ex["candidates"].delta[c]
        assert np.argmax(_firthmodels_theta(st, new)) != 0
    cand = ex["candidates"]  # flips
    for c in range(len(cand)):
        one = st.counts.counts.copy()
        one[cand.r[c]] += cand.delta[c]
        assert np.argmax(_firthmodels_theta(st, one)) == 0


def test_firth_state_options():
    pc = random_counts(1)
    with pytest.raises(InputError, match="alternatives"):
        BTState.fit(pc, ridge=0.1, penalty="firth")
    with pytest.raises(InputError, match="penalty must be"):
        BTState.fit(pc, penalty="jeffreys")
    st = BTState.fit(pc, penalty="firth")
    table = st.counts.counts.copy()
    table[0, :2] = table[0, 1::-1]
    moved = st.with_fit(table, refit_one(st, table))
    assert moved.penalty == "firth" and np.abs(moved.theta - _firthmodels_theta(st, table)).max() < 1e-8
