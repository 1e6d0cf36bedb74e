"""The review on the one Bradley–Terry model: ``cluster=`` and ``position_effect=`` change the model
every fit uses (checked against statsmodels' GLM on the battles), and the review reads the data once
for the plain and the style-controlled fits (reader options such as ``exclude_invalid`` reach both)."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.special import expit

from bayesrank.review import review

PLAYERS = ["p0", "p1", "p2", "p3"]
THETA = np.array([0.5, 0.2, 0.0, -0.7])


@pytest.fixture(scope="module")
def battles(tmp_path_factory):
    """1,200 battles in 200 prompts (6 each, one pair per prompt), a first-listed edge of 0.3 logits,
    a length column; plus one self-comparison (row 5) that only ``exclude_invalid`` accepts."""
    rng = np.random.default_rng(3)
    n_prompts, per = 200, 6
    a = np.repeat(rng.integers(0, 4, n_prompts), per)
    b = (a + np.repeat(rng.integers(1, 4, n_prompts), per)) % 4
    y = rng.random(len(a)) < expit(THETA[a] - THETA[b] + 0.3)
    df = pd.DataFrame({"model_a": np.array(PLAYERS)[a], "model_b": np.array(PLAYERS)[b],
                       "outcome": np.where(y, "a", "b"), "prompt": np.repeat(np.arange(n_prompts), per),
                       "len_a": rng.lognormal(5, 0.4, len(a)).round(1), "len_b": rng.lognormal(5, 0.4, len(a)).round(1)})
    bad = df.copy()
    bad.loc[5, "model_b"] = bad.loc[5, "model_a"]
    folder = tmp_path_factory.mktemp("terms")
    df.to_csv(folder / "battles.csv", index=False)
    bad.to_csv(folder / "with_self.csv", index=False)
    return folder, df


def _glm(df, intercept=False, cov_type="nonrobust", **kw):
    idx = {p: k for k, p in enumerate(PLAYERS)}
    z = np.zeros((len(df), 4))
    z[np.arange(len(df)), df["model_a"].map(idx)] += 1
    z[np.arange(len(df)), df["model_b"].map(idx)] -= 1
    x = np.column_stack([z[:, 1:], np.ones(len(df))]) if intercept else z[:, 1:]
    return sm.GLM((df["outcome"] == "a").to_numpy(float), x, family=sm.families.Binomial()).fit(
        tol=1e-13, cov_type=cov_type, **kw)


def _contrast(res, a, b):
    """θ_a − θ_b and its SE from a treatment-coded fit (player 0 the reference)."""
    c = np.zeros(len(res.params))
    for p, sign in ((a, 1), (b, -1)):
        if p:
            c[p - 1] += sign
    return float(c @ res.params), float(np.sqrt(c @ res.cov_params() @ c))


@pytest.mark.parametrize("option", ["cluster", "position"])
def test_claim_answers_use_the_model_of_the_options(battles, option):
    folder, df = battles
    kw = {"cluster": "prompt"} if option == "cluster" else {"position_effect": True}
    rep = review(folder / "battles.csv", fast=True, claims=["p1>p2"], budget=20, **kw)
    freq = rep.claims[0].frequentist
    ref = (_glm(df, cov_type="cluster", cov_kwds={"groups": df["prompt"].to_numpy()}) if option == "cluster"
           else _glm(df, intercept=True))
    est, se = _contrast(ref, 1, 2)
    from scipy.stats import norm

    assert freq["sided"] == "one-sided"  # a pair named in advance: one-sided at the level
    assert freq["estimate"] == pytest.approx(est, abs=1e-6)
    assert freq["lower"] == pytest.approx(est - norm.ppf(0.95) * se, abs=1e-6)
    lb = next(s for s in rep.sections if s.key == "leaderboard")
    if option == "cluster":
        assert freq["interval"] == "cluster-robust sandwich" and "cluster-robust" in " ".join(lb.text)
    else:
        lo, hi = ref.conf_int()[-1]
        assert lb.data["position"]["coef"] == pytest.approx(ref.params[-1], abs=1e-6)
        assert lb.data["position"]["lower"] == pytest.approx(lo, abs=1e-6)
        assert "Position effect" in " ".join(lb.text)
    assert any("perturbation answers audit" in n for n in rep.notes)
    from bayesrank.protocol import validate

    validate(rep.to_dict(), "review")


def test_review_reads_once_for_plain_and_style_fits(battles):
    """A file with one self-comparison: ``exclude_invalid=True`` is accepted by the plain and by the
    style-controlled fits alike (one read, one exclusion counted), and the style fit has the
    remaining battles."""
    folder, df = battles
    rep = review(folder / "with_self.csv", fast=True, claims=["p0>p3"], style="len_a:len_b", budget=10,
                 exclude_invalid=True)
    assert rep.reproducibility["n_excluded"] == 1
    assert rep.reproducibility["excluded_by_reason"] == {"self-comparison": 1}
    style = next(s for s in rep.sections if s.key == "style")
    assert f"{len(df) - 1:,}" in style.text[0]


def test_style_twin_uses_the_clusters_too(battles):
    """--style with --cluster: the style-controlled answers are cluster-robust as well — the twin's
    contrast equals statsmodels' GLM with the standardised normalised length difference and
    cov_type='cluster' (groups = prompts), its posterior is adjusted to that covariance, its
    evidence counts prompts and its audits remove whole prompts too."""
    folder, df = battles
    rep = review(folder / "battles.csv", fast=True, claims=["p1>p2"], style="len_a:len_b", cluster="prompt", budget=20)
    styled = rep.claims[1]
    idx = {p: k for k, p in enumerate(PLAYERS)}
    z = np.zeros((len(df), 4))
    z[np.arange(len(df)), df["model_a"].map(idx)] += 1
    z[np.arange(len(df)), df["model_b"].map(idx)] -= 1
    raw = (df.len_a - df.len_b) / (df.len_a + df.len_b)
    d = ((raw - raw.mean()) / raw.std(ddof=0)).to_numpy()
    ref = sm.GLM((df["outcome"] == "a").to_numpy(float), np.column_stack([z[:, 1:], d]),
                 family=sm.families.Binomial()).fit(tol=1e-13, cov_type="cluster",
                                                     cov_kwds={"groups": df["prompt"].to_numpy()})
    est, se = _contrast(ref, 1, 2)
    from scipy.stats import norm

    f = styled.frequentist
    assert f["estimate"] == pytest.approx(est, abs=1e-6)
    assert f["estimate"] - f["lower"] == pytest.approx(norm.ppf(0.95) * se, abs=1e-6)
    assert "cluster-robust" in styled.bayesian["method"]
    assert styled.relative_to["unit"] == "clusters"
    # its audits include whole-cluster removal, as the plain claim's do (budget and search counted in prompts)
    whole = styled.perturbation["drop-cluster"]
    assert set(styled.perturbation) == set(rep.claims[0].perturbation) == {"drop", "flip", "add", "drop-cluster"}
    assert whole["searched_unit"] == "clusters" and whole["searched_to"] <= df["prompt"].nunique()
