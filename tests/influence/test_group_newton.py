"""The batched one-step Newton prediction of whole-cluster actions (``BTState._group_newton``: the
groups of one size stacked into one solve) equals the per-group solve it replaced
(:func:`per_group_newton`, written out below) on clustered boards with ties, features and a position effect, for
clusters of many sizes, several numbers of applications, and a chunk size that splits the batches;
and both predict the exact refit after dropping a cluster to second order (the difference shrinks
as the cluster's weight does)."""

import numpy as np
import pytest

from bayesrank.data.comparisons import Comparisons
from bayesrank.influence.actions import candidates
from bayesrank.influence.api import load_state
from bayesrank.influence.state import _block_diag

from .test_models_audit import STYLE, _frame


def per_group_newton(state, cand, n: int, m: float) -> np.ndarray:
    """One-step Newton Δφ of cluster ``n`` applied ``m`` times, one group at a time:
    ``−B (I + C A)⁻¹ g`` with ``B = [H⁻¹J_r]``, ``A = JᵀB``, ``C`` block diagonal."""
    rows, delta = cand.member_rows(n)
    s, c = state.local_derivatives(rows)
    g = (delta[:, :, None] * s).sum(axis=1).reshape(-1) * m  # (M·L,)
    big, a = state._group_jacobian(rows)
    bd = _block_diag(np.einsum("mo,molk->mlk", delta, c) * m)
    return -big @ np.linalg.solve(np.eye(len(g)) + bd @ a, g)


def _state(ties, style, position, seed=0):
    f = _frame(tie_rate=0.2 if ties == "davidson" else 0.0, seed=seed, n=400, k=5)
    rng = np.random.default_rng(seed)
    f["prompt"] = [f"q{n:02d}" for n in rng.geometric(0.08, len(f))]  # clusters of very different sizes
    state, _ = load_state(Comparisons.from_frame(f), ties=ties, cluster="prompt", style=style,
                          position_effect=position)
    return state


@pytest.mark.parametrize("ties,style,position", [("half", None, False), ("half", STYLE, True),
                                                 ("davidson", None, False), ("davidson", STYLE, True)])
def test_batched_group_newton_equals_the_per_group_solve(ties, style, position):
    state = _state(ties, style, position)
    cand = candidates(state, "drop-cluster")
    ptr = cand.members[0]
    sizes = np.diff(ptr)
    assert len(np.unique(sizes)) >= 5  # the batches are of many sizes
    sel = np.arange(len(cand))
    m = np.random.default_rng(1).uniform(0.2, 1.0, len(cand))
    ref = np.stack([per_group_newton(state, cand, int(n), float(mm)) for n, mm in zip(sel, m)])
    got = state.shift(cand, m, order="1sN")
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    few = state._group_newton(cand, sel[::2], m[::2], chunk=1)  # one group per batch
    np.testing.assert_allclose(few, ref[::2], rtol=1e-10, atol=1e-12)
    assert state.shift(cand, 1.0, order="1sN", idx=[]).shape == (0, state.n_params)


@pytest.mark.parametrize("ties,style,position", [("half", STYLE, True), ("davidson", None, False)])
def test_batched_variance_change_equals_the_woodbury_inverse_per_cluster(ties, style, position):
    """``uᵀ(H + J mC Jᵀ)⁻¹u − uᵀH⁻¹u`` batched (in batches small enough to split the sizes) equals the
    same quadratic form of the per-cluster Woodbury update ``predicted_hinv``."""
    state = _state(ties, style, position, seed=3)
    cand = candidates(state, "drop-cluster")
    m = np.random.default_rng(2).uniform(0.2, 1.0, len(cand))
    u = np.zeros(state.n_params)
    u[[0, 2]] = 1.0, -1.0
    got = state.group_quadratic_change(cand, m, u, chunk=5_000)
    ref = np.array([u @ state.predicted_hinv(cand, n, m[n]) @ u for n in range(len(cand))]) - u @ state.hinv @ u
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-13)
