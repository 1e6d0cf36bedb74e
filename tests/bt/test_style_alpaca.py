"""AlpacaEval 2 length control: the rank correlations printed by examples/style_alpaca_eval.py are
the ones computed from the data by an independent route (statsmodels' logistic GLM with the
length feature built here from the raw columns, scipy's Spearman against the published LC win
rates)."""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from bayesrank.datasets import path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "style_alpaca_eval.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("style_alpaca_eval", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def printed(example):
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        numbers = example.main()
    return buf.getvalue(), numbers


def _glm_scores(transform):
    """θ_gen − θ_ref for every player from statsmodels (fractional Binomial outcome, reference
    player coded 0, length feature (l_gen − l_ref)/(l_gen + l_ref) or l_gen − l_ref, unscaled)."""
    import statsmodels.api as sm

    df = pd.read_csv(path("alpaca_eval/alpaca_eval2_weighted_lengths.csv.gz"))
    df = df[df["generator_2"] != "example"]
    y = df["preference"].to_numpy() - 1.0
    lg, lr = df["len_output_2"].to_numpy(float), df["len_output_1"].to_numpy(float)
    x = (lg - lr) / (lg + lr) if transform == "normalized_diff" else lg - lr
    gens, codes = np.unique(df["generator_2"], return_inverse=True)
    design = np.zeros((len(df), len(gens)))
    design[np.arange(len(df)), codes] = 1.0
    res = sm.GLM(y, np.column_stack([design, x]), family=sm.families.Binomial()).fit(tol=1e-12)
    scores = pd.Series(np.append(res.params[: len(gens)], 0.0), index=list(gens) + [df["generator_1"].iloc[0]])
    return scores, res.params[-1]


@pytest.mark.parametrize("transform", ["normalized_diff", "diff"])
def test_printed_rank_correlation_is_computed_from_data(printed, transform):
    text, numbers = printed
    scores, _ = _glm_scores(transform)
    board = pd.read_csv(path("alpaca_eval/alpaca_eval2_weighted_leaderboard.csv"), index_col=0)
    common = scores.index.intersection(board.index)
    rho = spearmanr(scores[common], board.loc[common, "length_controlled_winrate"]).statistic
    line = next(ln for ln in text.splitlines() if ln.startswith(f"[{transform}]"))
    shown = float(re.search(r"published LC win rate\) = ([0-9.]+)", line).group(1))
    assert f"over {len(common)} players" in line
    assert shown == pytest.approx(round(rho, 3), abs=1e-12)
    assert numbers[transform]["spearman_style_vs_lc"] == pytest.approx(rho, abs=1e-9)


def test_plain_fit_reproduces_published_raw_win_rate_order(printed):
    """Sanity anchor: on a star design the plain BT order is the raw win-rate order (Spearman 1)."""
    assert printed[1]["normalized_diff"]["spearman_plain_vs_winrate"] == pytest.approx(1.0)


def test_scores_equal_statsmodels(example):
    data, _ = example.load("normalized_diff")
    from bayesrank.bt.mle import fit_newton

    params = fit_newton(data, "half")[0]
    scores, beta = _glm_scores("normalized_diff")
    k = data.n_players
    ref = data.index_of("gpt4_1106_preview")
    ours = pd.Series(params[:k] - params[ref], index=data.players)
    np.testing.assert_allclose(ours.loc[scores.index], scores, atol=1e-6)
    np.testing.assert_allclose(params[k] / data.transform["len_output"]["sd"], beta, rtol=1e-6)


AUDIT_EXAMPLE = EXAMPLE.with_name("style_alpaca_audit.py")


@pytest.mark.slow
def test_top1_flip_audit_on_alpaca_eval_verified_by_statsmodels():
    """examples/style_alpaca_audit.py (flip, top-1): the #1 is the same with and without length
    control, and each printed budget of flipped judgments really changes the #1 — checked here by
    statsmodels' GLM on the flipped data, and one flip fewer does not."""
    import contextlib
    import io

    import statsmodels.api as sm

    spec = importlib.util.spec_from_file_location("style_alpaca_audit", AUDIT_EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = mod.main(kinds=("flip",), ks=(1,), ci_aware_kinds=(), objectives=())
    tops = {name: str(st.players[st.ranking()[0]]) for name, st in out["models"].items()}
    assert len(set(tops.values())) == 1  # the top-1 survives length control

    def glm_top(data, y):
        k = data.n_players
        z = np.zeros((data.n_rows, k))
        z[np.arange(data.n_rows), data.i] += 1
        z[np.arange(data.n_rows), data.j] -= 1
        design = np.column_stack([z[:, 1:], data.X])
        params = sm.GLM(y, design, family=sm.families.Binomial()).fit(tol=1e-12).params
        return str(data.players[np.argmax(np.concatenate([[0.0], params[: k - 1]]))])

    for (name, _, _), res in out["audits"].items():
        assert res.broken and res.verified
        row = out["table"].query("model == @name").iloc[0]
        assert int(row["budget"]) == res.budget == len(res.actions)  # one battle per flip (frequency 1)
        assert f"{row['budget']}" in buf.getvalue()
        data = out["models"][name].counts
        y = data.share.copy()
        y[res.actions["row"].to_numpy()] = res.actions["y_new"].to_numpy()
        assert glm_top(data, y) == res.final_top[0] != tops[name]
        y[int(res.actions["row"].iloc[-1])] = res.actions["y"].iloc[-1]  # undo the last flip
        assert glm_top(data, y) == tops[name]


@pytest.mark.slow
def test_tau_and_ci_flip_audits_on_alpaca_eval_verified_by_statsmodels():
    """examples/style_alpaca_audit.py, Kendall τ and ci-trace objectives with flips on the
    length-controlled model: statsmodels' GLM on the flipped judgments has scipy Kendall τ ≤ 0.9 to
    the model's own order, and a Fisher covariance whose θ-trace is ≥ 1.5× the original; undoing the
    last flip leaves τ > 0.9 for the τ audit."""
    import contextlib
    import io

    import statsmodels.api as sm
    from scipy.stats import kendalltau

    spec = importlib.util.spec_from_file_location("style_alpaca_audit", AUDIT_EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with contextlib.redirect_stdout(io.StringIO()):
        out = mod.main(kinds=(), ks=(), ci_aware_kinds=(), objectives=("tau", "ci-trace"), objective_kinds=("flip",))
    st = out["models"]["length-controlled BT"]
    data, k = st.counts, st.counts.n_players
    a = np.eye(k) - 1.0 / k

    def glm(y):
        z = np.zeros((data.n_rows, k))
        z[np.arange(data.n_rows), data.i] += 1
        z[np.arange(data.n_rows), data.j] -= 1
        res = sm.GLM(y, np.column_stack([z[:, 1:], data.X]), family=sm.families.Binomial()).fit(tol=1e-12)
        c = np.zeros((k, k))
        c[1:, 1:] = np.asarray(res.cov_params())[: k - 1, : k - 1]
        return np.concatenate([[0.0], res.params[: k - 1]]), np.trace(a @ c @ a)

    tau = out["audits"][("length-controlled BT", "tau", "flip")]
    ci = out["audits"][("length-controlled BT", "ci-trace", "flip")]
    for res in (tau, ci):
        assert res.broken and res.verified and res.budget == len(res.actions)  # frequency 1: one battle per row
    y = data.share.copy()
    y[tau.actions["row"].to_numpy()] = tau.actions["y_new"].to_numpy()
    assert kendalltau(glm(y)[0], st.theta).statistic <= 0.9
    y[int(tau.actions["row"].iloc[-1])] = tau.actions["y"].iloc[-1]  # undo the last flip
    assert kendalltau(glm(y)[0], st.theta).statistic > 0.9
    y = data.share.copy()
    y[ci.actions["row"].to_numpy()] = ci.actions["y_new"].to_numpy()
    assert glm(y)[1] >= 1.5 * glm(data.share)[1]
