"""The model-free simulation-based-calibration module (bayesrank.sbc) against independent references.

- thinning and ranks: hand-built draws whose values encode (chain, draw); ties broken at random make the
  ranks of a discrete posterior uniform (and counting ties as "not below" does not);
- null distribution: 2,000 sets of 10 quantities of exactly uniform ranks (20,000 tests of each kind per
  simulation count): each test's rejection rate is within 3 Monte Carlo SEs of its level, at 0.05 and at
  the Bonferroni level; the family (Bonferroni over both tests and all quantities) rejects at most alpha;
- dispersion statistic: exact null mean and variance against scipy's discrete uniform (``randint.expect``)
  and against the simulated null;
- power: rank laws by direct simulation (99 draws from a too-narrow / too-wide / shifted normal, the truth
  from N(0, 1)), 2,000 replications per scenario (3 SE ≤ 3.4 points), against :func:`bayesrank.sbc.power`.
"""

import numpy as np
import pytest
from scipy.stats import randint

from bayesrank.sbc import (
    L_DRAWS,
    dispersion_moments,
    power,
    rank_distribution,
    rank_of_truth,
    thin_draws,
    uniformity,
)


def test_thin_draws_interleaves_chains_and_keeps_every_step_th():
    chains, draws = 2, 200
    x = (10_000 * np.arange(chains)[:, None] + np.arange(draws)[None, :]).astype(float)[:, :, None]
    kept = thin_draws(x)  # step = 400 // 100 = 4: interleaved positions 0, 4, 8, ... → chain 0, draws 0, 2, 4, ...
    assert kept.shape == (L_DRAWS, 1)
    np.testing.assert_array_equal(kept[:, 0], 2 * np.arange(L_DRAWS))
    kept3 = thin_draws(np.stack([x[0], x[1], x[0] + 20_000])[:, :150])  # 3 chains × 150: step 4, position j = (chain j % 3, draw j // 3)
    np.testing.assert_array_equal(kept3[:5, 0], [0, 10_001, 20_002, 4, 10_005])
    with pytest.raises(ValueError, match="too few draws"):
        thin_draws(np.zeros((2, 49, 1)))


def test_rank_counts_draws_strictly_below_and_breaks_ties_at_random():
    draws = np.arange(400.0).reshape(2, 200, 1)  # chain 0 = 0..199, chain 1 = 200..399; kept: 0, 2, ..., 196
    assert rank_of_truth(draws, np.array([-1.0]))[0] == 0
    assert rank_of_truth(draws, np.array([1e9]))[0] == L_DRAWS
    assert rank_of_truth(draws, np.array([10.0]))[0] == 5  # interleaved 0, 200, 1, 201, 2, ... → kept 0, 2, 4, 6, 8 < 10
    # a discrete posterior equal to the prior (no data): truth and draws iid Binomial(3, 1/2)
    rng = np.random.default_rng(1)
    truths = rng.binomial(3, 0.5, size=(2000, 1)).astype(float)
    post = rng.binomial(3, 0.5, size=(2000, 1, 100, 1)).astype(float)
    tie_break = np.random.default_rng(2)
    random_ties = np.array([rank_of_truth(p, t, rng=tie_break) for p, t in zip(post, truths)])
    below = np.array([rank_of_truth(p, t) for p, t in zip(post, truths)])
    assert uniformity(random_ties, alpha=0.01)["uniform"]
    res = uniformity(below, alpha=0.01)
    assert not res["uniform"] and res["min_p"] < 1e-10
    assert abs(random_ties.mean() - L_DRAWS / 2) < 3 * np.sqrt((100**2 - 1) / 12 / 2000)


@pytest.mark.parametrize("m", [2, 10, 100, 1000])
def test_dispersion_null_moments_equal_the_discrete_uniform_law(m):
    mean, var = dispersion_moments(m)
    law = randint(0, m)
    ref_mean = law.expect(lambda k: ((k + 0.5) / m - 0.5) ** 2)
    ref_var = law.expect(lambda k: (((k + 0.5) / m - 0.5) ** 2 - ref_mean) ** 2)
    assert mean == pytest.approx(ref_mean, rel=1e-12) and var == pytest.approx(ref_var, rel=1e-10)
    # the null rank law of rank_distribution is exactly uniform (a mixture of binomials over u ~ U(0, 1))
    np.testing.assert_allclose(rank_distribution(1.0, 0.0), np.full(L_DRAWS + 1, 1 / (L_DRAWS + 1)), atol=1e-12)


@pytest.mark.parametrize("n_sims", [50, 150, 200])
def test_uniform_ranks_are_rejected_at_the_nominal_rate(n_sims):
    """2,000 rank sets × 10 quantities of exactly uniform ranks: 20,000 tests of each kind."""
    rng = np.random.default_rng(n_sims)
    sets, p = 2000, 10
    ranks = rng.integers(0, L_DRAWS + 1, size=(sets, n_sims, p))
    res = uniformity(ranks.transpose(1, 0, 2).reshape(n_sims, sets * p), alpha=0.05)
    # the dispersion z is standardised by the exact null moments
    z = res["dispersion_z"]
    assert abs(z.mean()) < 3 / np.sqrt(z.size) and abs(z.std() - 1) < 3 / np.sqrt(2 * z.size)
    for level in (0.05, 0.05 / (2 * p)):
        se = np.sqrt(level * (1 - level) / z.size)
        for key in ("chi2_p", "dispersion_p"):
            rate = (res[key] < level).mean()
            if key == "chi2_p" and n_sims == 50:
                # 5 expected per bin: Pearson's χ² is slightly conservative (measured 0.046 at 0.05)
                assert rate < level + 3 * se, (key, level, rate)
            else:
                assert abs(rate - level) < 3 * se, (key, level, rate)
    # family-wise: Bonferroni over both tests and the 10 quantities of each set at alpha = 0.05
    family = np.array([not uniformity(r, alpha=0.05)["uniform"] for r in ranks])
    assert family.mean() < 0.05 + 3 * np.sqrt(0.05 * 0.95 / sets)
    assert family.mean() > 0.025 - 3 * np.sqrt(0.025 * 0.975 / sets)  # ≥ the chi-square family alone (≈ α/2)


def _simulated_ranks(rng, n_sims, reps, c, delta):
    """(n_sims, reps) ranks of Z ~ N(0, 1) among 99 draws from N(delta, c²) — no use of the package's law."""
    truth = rng.normal(size=(n_sims, reps))
    ranks = np.empty((n_sims, reps), dtype=np.int64)
    for i in range(n_sims):
        ranks[i] = (rng.normal(delta, c, size=(reps, L_DRAWS)) < truth[i][:, None]).sum(axis=1)
    return ranks


@pytest.mark.parametrize(("n_sims", "n_quantities", "c", "delta", "test"), [
    (150, 4, 0.8, 0.0, "dispersion"),  # posterior 20% too narrow (BT test size)
    (150, 4, 1.25, 0.0, "dispersion"),  # 25% too wide
    (50, 20, 1 / 1.5, 0.0, "dispersion"),  # 1.5× too narrow (HJA test size)
    (150, 4, 1.0, 0.35, "chi2"),  # centre 0.35 posterior SDs off
    (50, 20, 1.0, 0.7, "chi2"),
])
def test_power_matches_direct_simulation_of_misscaled_and_shifted_posteriors(n_sims, n_quantities, c, delta, test):
    reps = 2000
    rng = np.random.default_rng(7)
    res = uniformity(_simulated_ranks(rng, n_sims, reps, c, delta), alpha=0.01)
    level = 0.01 / (2 * n_quantities)
    rate = ((res["chi2_p"] if test == "chi2" else res["dispersion_p"]) < level).mean()
    predicted = power(n_sims, n_quantities, c=c, delta=delta, alpha=0.01, test=test)
    se = np.sqrt(predicted * (1 - predicted) / reps + predicted * (1 - predicted) / 20_000)
    assert 0.2 < predicted < 0.8 and 3 * se < 0.05  # informative: tells the prediction from ±5 points
    assert abs(rate - predicted) < 3 * se, (rate, predicted)


def test_dispersion_beats_chi_square_against_a_scale_error_and_vice_versa():
    n, q = 150, 4
    assert power(n, q, c=0.8, test="dispersion") > power(n, q, c=0.8, test="chi2") + 0.2
    assert power(n, q, delta=0.35, test="chi2") > power(n, q, delta=0.35, test="dispersion") + 0.2
    assert power(n, q) < 0.01 and power(n, q, test="dispersion") < 0.01  # no departure: the level 0.00125


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="equal bins"):
        uniformity(np.zeros((10, 2), dtype=int), bins=7)
    with pytest.raises(ValueError, match="0..99"):
        uniformity(np.full((10, 2), 100))
    with pytest.raises(ValueError, match="integer"):
        uniformity(np.zeros((10, 2)))
    with pytest.raises(ValueError, match="test must be"):
        power(100, 2, test="ks")
    with pytest.raises(ValueError, match="quantities"):
        rank_of_truth(np.zeros((2, 100, 3)), np.zeros(2))
