"""Rank distributions, rank confidence sets and pairwise tests against independent references:
closed forms (normal integrals, Tukey's studentized range), statsmodels (multipletests, Logit Wald
tests) and brute-force recomputation of the set formula."""

import numpy as np
import pandas as pd
import pytest
from scipy import integrate
from scipy.stats import norm, studentized_range

from bayesrank.bt.ranks import (
    adjust_pvalues,
    contrast_sd,
    prob_ahead,
    prob_rank_at_most,
    rank_confidence_sets,
    rank_matrix,
    rank_probabilities,
    rank_quantile_intervals,
    significance_tiers,
    top_k_sets,
)
from bayesrank.errors import InputError


# ---------------------------------------------------------------------- rank distributions
def test_rank_matrix_ties_share_the_smaller_rank():
    d = np.array([[3.0, 1.0, 2.0, 2.0], [0.0, 0.0, 0.0, 1.0], [1.0, 2.0, 3.0, 4.0]])
    np.testing.assert_array_equal(rank_matrix(d), [[1, 4, 2, 2], [2, 2, 2, 1], [4, 3, 2, 1]])


def test_rank_probabilities_match_normal_integrals():
    """Independent N(μ_a, 1) scores: P(a is #1) = ∫ φ(x−μ_a) Π_b Φ(x−μ_b) dx and P(a is last) =
    ∫ φ(x−μ_a) Π_b (1−Φ(x−μ_b)) dx; the middle rank is the remainder."""
    mu = np.array([0.5, 0.0, -0.3])
    s = 200_000
    draws = np.random.default_rng(11).normal(mu, 1.0, size=(s, 3))
    probs = rank_probabilities(draws, ["a", "b", "c"])
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    for i in range(3):
        others = [j for j in range(3) if j != i]
        top = integrate.quad(lambda x: norm.pdf(x - mu[i]) * np.prod([norm.cdf(x - mu[j]) for j in others]),
                             -12, 12)[0]
        last = integrate.quad(lambda x: norm.pdf(x - mu[i]) * np.prod([norm.sf(x - mu[j]) for j in others]),
                              -12, 12)[0]
        for got, want in ((probs.iloc[i, 0], top), (probs.iloc[i, 2], last), (probs.iloc[i, 1], 1 - top - last)):
            se = np.sqrt(want * (1 - want) / s)
            assert abs(got - want) < 3 * se, (i, got, want, se)
    # P(rank ≤ 2) is the cumulative sum; P(θ_a > θ_b) = Φ((μ_a − μ_b)/√2)
    np.testing.assert_allclose(prob_rank_at_most(probs, 2), probs[1] + probs[2])
    pa = prob_ahead(draws, ["a", "b", "c"])
    want = norm.cdf((mu[0] - mu[1]) / np.sqrt(2))
    assert abs(pa.loc["a", "b"] - want) < 3 * np.sqrt(want * (1 - want) / s)
    np.testing.assert_allclose(pa.to_numpy() + pa.to_numpy().T, 1 - np.eye(3))  # no ties in continuous draws


def test_rank_quantile_intervals_hold_the_level():
    # player x takes ranks 1..4 in 10%, 20%, 30%, 40% of draws (y, z, w fill the other places)
    ranks_x = np.repeat([1, 2, 3, 4], [10, 20, 30, 40])
    d = np.zeros((100, 4))
    for s, r in enumerate(ranks_x):
        d[s] = [4 - r + 0.5, 3, 2, 1]  # x's value lands between the fixed values 3, 2, 1
    d[:, 0] = np.where(ranks_x == 1, 10, np.where(ranks_x == 2, 2.5, np.where(ranks_x == 3, 1.5, 0)))
    assert (rank_matrix(d)[:, 0] == ranks_x).all()
    iv = rank_quantile_intervals(d, ["x", "y", "z", "w"], level=0.8)
    assert tuple(iv.loc["x"]) == (1, 4)  # P(rank ≤ 1) = 0.1 ≥ 0.1; smallest r with P(≤ r) ≥ 0.9 is 4
    iv = rank_quantile_intervals(d, ["x", "y", "z", "w"], level=0.6)
    assert tuple(iv.loc["x"]) == (2, 4)  # α/2 = 0.2: P(≤1) = 0.1 < 0.2 ≤ P(≤2); 0.8: P(≤3) = 0.6 < 0.8


def test_top_k_sets_add_up_to_rank_probabilities():
    rng = np.random.default_rng(3)
    names = list("abcde")
    d = rng.normal([1.0, 0.8, 0.7, 0.0, -0.5], 0.4, size=(5000, 5))
    sets = top_k_sets(d, names, 2, n=None)
    assert sets["probability"].sum() == pytest.approx(1.0)
    le2 = prob_rank_at_most(rank_probabilities(d, names), 2)
    for p in names:  # P(a in the top-2) = sum over sets containing a = P(rank ≤ 2)
        mass = sets.loc[sets["players"].map(lambda s: p in s), "probability"].sum()
        assert mass == pytest.approx(le2[p], abs=1e-12)
    # exact count for the most probable set
    top = np.sort(np.argsort(-d, axis=1)[:, :2], axis=1)
    best = sets.iloc[0]
    idx = sorted(names.index(p) for p in best["players"])
    assert best["probability"] == pytest.approx(np.mean((top == idx).all(axis=1)))


# ---------------------------------------------------------------------- confidence sets
def _critical_se(level, n, density):
    """Monte Carlo standard error of an empirical quantile: sqrt(p(1−p)/n) / density at the quantile."""
    return np.sqrt(level * (1 - level) / n) / density


def test_two_players_critical_value_is_the_normal_quantile():
    n = 100_000
    rs = rank_confidence_sets([0.1, 0.0], np.diag([0.02, 0.03]), ["a", "b"], n_sim=n, seed=5)
    c = rs.critical_values[0]
    z = norm.ppf(0.975)
    assert abs(c - z) < 3 * _critical_se(0.95, n, 2 * norm.pdf(z))


@pytest.mark.parametrize("k", [5, 10])
def test_critical_value_is_tukeys_studentized_range(k):
    """Independent equal variances: max_{a,b} |Z_a − Z_b| / (σ√2) = range / √2, so the simultaneous
    critical value is q_{level}(K, ∞) / √2 (Tukey's HSD constant)."""
    n = 100_000
    score = np.linspace(0, 1, k)
    rs = rank_confidence_sets(score, 0.04 * np.eye(k), n_sim=n, seed=7, stepdown=False)
    q = studentized_range.ppf(0.95, k, np.inf)
    c = rs.critical_values[0]
    density = np.sqrt(2) * studentized_range.pdf(q, k, np.inf)
    assert abs(c - q / np.sqrt(2)) < 3 * _critical_se(0.95, n, density), (c, q / np.sqrt(2))


def _formula_sets(score, cov, c):
    sd = contrast_sd(cov)
    diff = score[None, :] - score[:, None]  # [a, b] = θ_b − θ_a
    k = len(score)
    return 1 + (diff > c * sd).sum(axis=1), k - (-diff > c * sd).sum(axis=1)


def _random_cov(k, rng, scale=0.05):
    a = rng.normal(size=(k, k))
    c = scale * (a @ a.T / k + np.eye(k))
    p = np.eye(k) - 1 / k  # project onto the sum-to-zero space, as a BT covariance
    return p @ c @ p


def test_single_step_sets_follow_the_formula_and_stepdown_only_shrinks():
    rng = np.random.default_rng(2)
    k = 12
    score = np.sort(rng.normal(0, 0.6, k))[::-1]
    cov = _random_cov(k, rng)
    single = rank_confidence_sets(score, cov, level=0.9, n_sim=20_000, seed=1, stepdown=False)
    lo, hi = _formula_sets(score, cov, single.critical_values[0])
    np.testing.assert_array_equal(single.rank_lower, lo)
    np.testing.assert_array_equal(single.rank_upper, hi)
    step = rank_confidence_sets(score, cov, level=0.9, n_sim=20_000, seed=1, stepdown=True)
    assert (step.rank_lower >= single.rank_lower).all() and (step.rank_upper <= single.rank_upper).all()
    assert list(step.critical_values) == sorted(step.critical_values, reverse=True)
    assert step.critical_values[0] == single.critical_values[0]
    # the last stepdown critical value reproduces the sets on the pairs not yet rejected; sets
    # are nested [1, K] and contain the point rank
    point = 1 + (score[None, :] > score[:, None]).sum(axis=1)
    for rs in (single, step):
        assert ((1 <= rs.rank_lower) & (rs.rank_lower <= point) & (point <= rs.rank_upper) & (rs.rank_upper <= k)).all()


def test_marginal_sets_use_one_players_contrasts_and_are_not_wider():
    rng = np.random.default_rng(4)
    k = 8
    score = np.sort(rng.normal(0, 0.5, k))[::-1]
    cov = _random_cov(k, rng)
    marg = rank_confidence_sets(score, cov, simultaneous=False, n_sim=20_000, seed=3, stepdown=False)
    simul = rank_confidence_sets(score, cov, simultaneous=True, n_sim=20_000, seed=3, stepdown=False)
    sd = contrast_sd(cov)
    z = np.random.default_rng(3).multivariate_normal(np.zeros(k), cov, size=20_000, method="eigh")
    for a in range(k):  # independent recomputation: quantile of max_b |Z_a − Z_b| / sd_ab
        others = [b for b in range(k) if b != a]
        c = np.quantile((np.abs(z[:, [a]] - z[:, others]) / sd[a, others]).max(axis=1), 0.95)
        assert marg.critical_values[a] == pytest.approx(c, rel=1e-12)
        lo, hi = _formula_sets(score, cov, c)
        assert (marg.rank_lower[a], marg.rank_upper[a]) == (lo[a], hi[a])
    assert (marg.rank_lower >= simul.rank_lower).all() and (marg.rank_upper <= simul.rank_upper).all()
    assert max(marg.critical_values) < simul.critical_values[0]


def test_bootstrap_errors_are_used_as_given():
    rng = np.random.default_rng(8)
    k = 6
    score = np.linspace(1, -1, k)
    cov = _random_cov(k, rng)
    err = rng.multivariate_normal(np.zeros(k), cov, size=5000, method="eigh")
    rs = rank_confidence_sets(score, cov, errors=err, stepdown=False)
    sd = contrast_sd(cov)
    t = np.max([np.abs(err[:, a] - err[:, b]) / sd[a, b] for a in range(k) for b in range(a + 1, k)], axis=0)
    assert rs.critical == "bootstrap" and rs.n_errors == 5000
    assert rs.critical_values[0] == pytest.approx(np.quantile(t, 0.95), rel=1e-12)


def test_bad_inputs_raise_input_error():
    with pytest.raises(InputError):
        rank_confidence_sets([0.0, 1.0], np.eye(2), level=1.5)
    with pytest.raises(InputError):
        rank_confidence_sets([0.0, 1.0], np.zeros((2, 2)))
    with pytest.raises(InputError):
        rank_probabilities(np.array([[0.0, np.nan]]), ["a", "b"])
    with pytest.raises(InputError):
        top_k_sets(np.zeros((3, 2)), ["a", "b"], 2)


# ---------------------------------------------------------------------- multiplicity
def test_adjusted_pvalues_equal_statsmodels_multipletests_exactly():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(0)
    for m in (1, 2, 7, 45, 400):  # (statsmodels' multipletests takes ~0.1 s a call)
        p = rng.uniform(size=m) ** 3
        p[::7] = p[0]  # ties
        p[::11] = 1.0
        np.testing.assert_array_equal(adjust_pvalues(p, "holm"), multipletests(p, method="holm")[1])
        np.testing.assert_array_equal(adjust_pvalues(p, "bh"), multipletests(p, method="fdr_bh")[1])


def test_tiers_start_at_the_first_player_significantly_behind_the_leader():
    pairs = pd.DataFrame({
        "player_a": ["a", "a", "a", "a", "b", "b", "b", "c", "c", "d"],
        "player_b": ["b", "c", "d", "e", "c", "d", "e", "d", "e", "e"],
        "p_holm": [0.5, 0.01, 0.001, 0.001, 0.2, 0.04, 0.001, 0.3, 0.02, 0.6],
        "p_bh": [0.5, 0.2, 0.04, 0.001, 0.2, 0.2, 0.01, 0.3, 0.2, 0.6],
    })
    order = list("abcde")
    assert significance_tiers(pairs, order, 0.05, "holm").to_dict() == {"a": 1, "b": 1, "c": 2, "d": 2, "e": 3}
    assert significance_tiers(pairs, order, 0.05, "bh").to_dict() == {"a": 1, "b": 1, "c": 1, "d": 2, "e": 2}


def test_rank_matrix_equals_scipy_min_ranking():
    from scipy.stats import rankdata

    rng = np.random.default_rng(9)
    d = rng.integers(0, 6, size=(500, 9)).astype(float)  # many ties
    np.testing.assert_array_equal(rank_matrix(d), rankdata(-d, method="min", axis=1))


def test_incremental_stepdown_equals_recomputing_every_draw():
    """The stepdown recomputes the max-t only for draws whose maximising pair was rejected; a naive
    stepdown that recomputes every draw at every step gives the same rejections and critical values."""
    from bayesrank.bt.ranks import _stepdown, gaussian_errors, max_t

    k = 20  # unequal precisions and even spacing: rejections come in several steps
    cov = np.diag(np.geomspace(0.0005, 0.05, k))
    score = -0.1 * np.arange(k)
    sd = contrast_sd(cov)
    errors = gaussian_errors(cov, 3000, 1)
    pairs = ~np.eye(k, dtype=bool)
    got, got_crits = _stepdown(score, sd, errors, pairs, 0.95, True)
    diff = score[:, None] - score[None, :]
    active, rejected, crits = pairs.copy(), np.zeros_like(pairs), []
    while active.any():
        c = float(np.quantile(max_t(errors, sd, active), 0.95))
        crits.append(c)
        new = active & (diff > c * sd)
        if not new.any():
            break
        rejected |= new
        active &= ~new
    assert len(crits) > 2  # several steps: the incremental path is exercised
    assert (got == rejected).all() and got_crits == crits


def test_max_t_argmax_equals_the_full_t_matrix():
    """The blocked max-t (one leading player at a time, transposed draws; a pair active both ways
    computed once as |t|) equals the brute force over every draw's full (K, K) matrix of t
    statistics: the maximum and the first pair attaining it, for masks with pairs active both ways,
    one way only, and none."""
    from bayesrank.stats.ranksets import contrast_sd, max_t, max_t_argmax

    rng = np.random.default_rng(3)
    k, s = 7, 400
    a = rng.normal(size=(k, k))
    cov = a @ a.T / k + 0.1 * np.eye(k)
    cov[0, 1] = np.nextafter(cov[1, 0], np.inf)  # symmetric only up to rounding, as fitted covariances are
    errors = rng.multivariate_normal(np.zeros(k), cov, size=s)
    sd = contrast_sd(cov)
    assert np.array_equal(sd, sd.T)
    one_way = np.triu(rng.random((k, k)) < 0.5, 1)
    for pairs in (~np.eye(k, dtype=bool), rng.random((k, k)) < 0.3, ~np.eye(k, dtype=bool) & ~one_way,
                  np.zeros((k, k), dtype=bool)):
        pairs = pairs & ~np.eye(k, dtype=bool)
        m, arg = max_t_argmax(errors, sd, pairs)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (errors[:, :, None] - errors[:, None, :]) / sd[None]
        t = np.where(pairs[None], t, -np.inf).reshape(s, -1)
        np.testing.assert_array_equal(m, t.max(axis=1))
        np.testing.assert_array_equal(max_t(errors, sd, pairs), t.max(axis=1))
        expected = np.where(np.isfinite(t.max(axis=1)), t.argmax(axis=1), -1)
        np.testing.assert_array_equal(arg, expected)
