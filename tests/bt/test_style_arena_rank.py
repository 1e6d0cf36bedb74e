"""arena-rank's contextual Bradley–Terry (LMArena's style control) on the same battles.

arena-rank conventions (read from its source, v0.1.x): outcomes 1/0/0.5 (tie); features
standardised with ``jnp.std`` (ddof 0) when ``normalize_features=True``; loss
``−mean(w·ll) + reg/2 ‖β‖²`` minimised by L-BFGS from 0 (ratings stay sum-to-zero); sandwich
``H⁻¹ G H⁻¹ / n`` on the mean scale, ``hessian_reg`` added to H's diagonal (set here large
enough that the singular direction 1 of the rating block stays numerically null, small enough
to bias the SDs by ~1e-5; measured). Our sum-scale twin of ``reg`` is ``beta_ridge = reg · n``
(weights have mean 1).
"""

import numpy as np
import pandas as pd
import pytest

from bayesrank.bt import BradleyTerry
from bayesrank.bt.simulate import simulate_style_battles
from bayesrank.data.features import style_feature

ALPHA = 400 / np.log(10)
STYLE = "s0_a:s0_b,s1_a:s1_b"


@pytest.fixture(scope="module")
def sim():
    frame, _, _ = simulate_style_battles(n_players=7, n_battles=3000, beta=(0.5, -0.2), tie_rate=0.1, seed=21,
                                         pair_skew=1.5)
    return frame


def _arena_frame(frame):
    out = pd.DataFrame({"model_a": frame["model_a"], "model_b": frame["model_b"],
                        "winner": frame["outcome"].map({"a": "model_a", "b": "model_b", "tie": "tie"})})
    for f in ("s0", "s1"):
        out[f] = style_feature(frame[f"{f}_a"].to_numpy(float), frame[f"{f}_b"].to_numpy(float))
    return out


def _arena_fit(frame, reweighted, reg):
    from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
    from arena_rank.utils.data_utils import ContextualPairDataset

    ds = ContextualPairDataset.from_pandas(_arena_frame(frame), feature_cols=["s0", "s1"], reweighted=reweighted)
    m = ContextualBradleyTerry(len(ds.competitors), 2, reg=reg, hessian_reg=1e-7, ftol=1e-15, gtol=1e-12,
                               max_iter=5000)
    out = m.compute_ratings_and_cis(ds, ci_method="sandwich")
    return ds, out


@pytest.mark.parametrize("reweighted, reg", [(False, 0.0), (True, 0.0), (True, 1.0)])
def test_contextual_bt_matches_arena_rank(sim, reweighted, reg):
    """Same features (their standardisation of the normalised differences = ours), same ratings,
    coefficients and sandwich SDs — unweighted, inverse-propensity reweighted, and with arena-rank's
    default ridge on β (reg = 1)."""
    ds, out = _arena_fit(sim, reweighted, reg)
    n = len(sim)
    bt = BradleyTerry(sim, STYLE, reweight=reweighted, min_pair_count=50, beta_ridge=reg * n)
    np.testing.assert_allclose(bt.rows.X, np.asarray(ds.features), atol=1e-12)
    if reweighted:
        np.testing.assert_allclose(bt.rows.weight, np.asarray(ds.weights), rtol=1e-12)
    fit = bt.fit("mle", ci="sandwich")
    idx = pd.Index(out["competitors"]).get_indexer(fit.players)
    theta_arena = (np.asarray(out["ratings"])[idx] - 1000) / ALPHA
    np.testing.assert_allclose(theta_arena, fit.score, atol=2e-6)
    np.testing.assert_allclose(np.asarray(out["coeffs"]), fit.coef, atol=2e-6)
    if reg == 0:  # arena-rank's ridge correction of the meat is not a sandwich of the penalised loss: compare at reg = 0
        sd_arena = np.sqrt(np.asarray(out["variances"])[idx]) / ALPHA
        np.testing.assert_allclose(sd_arena, np.sqrt(np.diag(fit.cov))[: len(idx)], rtol=1e-4)
    assert reg == 0 or np.all(np.abs(fit.coef) < np.abs(BradleyTerry(sim, STYLE, reweight=reweighted).fit().coef))


def test_plain_reweighted_bt_matches_arena_rank(sim):
    """Plain BT (no features) with arena-rank's PairDataset(reweighted=True): the same weights
    1/max(n_pair, 50) up to a constant, the same ratings and sandwich SDs."""
    from arena_rank.models.bradley_terry import BradleyTerry as ArenaBT
    from arena_rank.utils.data_utils import PairDataset

    ds = PairDataset.from_pandas(_arena_frame(sim), reweighted=True, min_pair_count=50)
    m = ArenaBT(len(ds.competitors), hessian_reg=1e-6, ftol=1e-15, gtol=1e-12, max_iter=5000)
    out = m.compute_ratings_and_cis(ds, ci_method="sandwich")
    fit = BradleyTerry(sim, reweight=True, min_pair_count=50).fit("mle")  # pair counts with pair weights; sandwich
    idx = pd.Index(out["competitors"]).get_indexer(fit.players)
    np.testing.assert_allclose((np.asarray(out["ratings"])[idx] - 1000) / ALPHA, fit.score, atol=2e-6)
    np.testing.assert_allclose(np.sqrt(np.asarray(out["variances"])[idx]) / ALPHA, np.sqrt(np.diag(fit.cov)), rtol=1e-4)


@pytest.mark.slow
def test_reweighted_real_arena_matches_arena_rank():
    """Real Chatbot Arena votes (1,670,250 battles expanded from the bundled pair counts; both tie
    kinds = tie): our reweighted fit (examples/style_arena_reweight.py) and arena-rank's
    PairDataset(reweighted=True) give the same ratings and the same order."""
    import importlib.util
    import json
    from pathlib import Path

    from arena_rank.models.bradley_terry import BradleyTerry as ArenaBT
    from arena_rank.utils.data_utils import PairDataset

    from bayesrank.datasets import path

    raw = json.loads(path("arena/chatbotarena_20240814.json").read_text())
    models, x, y = np.asarray(raw["models"], dtype=object), np.asarray(raw["X"]), np.asarray(raw["Y"], dtype=np.int64)
    pair = np.repeat(np.repeat(np.arange(len(x)), 4), y.ravel())
    kind = np.repeat(np.tile(np.arange(4), len(x)), y.ravel())
    battles = pd.DataFrame({"model_a": models[x[pair, 0]], "model_b": models[x[pair, 1]],
                            "winner": np.array(["model_a", "model_b", "tie", "tie"], dtype=object)[kind]})
    ds = PairDataset.from_pandas(battles, reweighted=True, min_pair_count=50)
    arena = ArenaBT(len(ds.competitors), hessian_reg=1e-6, ftol=1e-15, gtol=1e-12, max_iter=5000)
    out = arena.compute_ratings_and_cis(ds, ci_method="sandwich")
    spec = importlib.util.spec_from_file_location(
        "style_arena_reweight", Path(__file__).resolve().parents[2] / "examples" / "style_arena_reweight.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fit = mod.main()["fit"]
    idx = pd.Index(out["competitors"]).get_indexer(fit.players)
    theta_arena = (np.asarray(out["ratings"])[idx] - 1000) / ALPHA
    np.testing.assert_allclose(theta_arena, fit.score, atol=1e-5)
    assert list(fit.players[np.argsort(-theta_arena)]) == list(fit.players[np.argsort(-fit.score)])
    assert (fit.rank_change != 0).sum() > 0  # reweighting moves ranks on the real data
