"""bt.design: the information of a design against the fit's own covariance, closed forms for one
contrast, the c-optimal allocation against SciPy's SLSQP, and the stated power against simulation
from the fitted model refitted independently (statsmodels' binomial GLM)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from bayesrank.bt import BradleyTerry
from bayesrank.bt.design import Design, Power, _candidates, _frank_wolfe, largest_remainder, plan
from bayesrank.bt.result import contrast_sd
from bayesrank.data import read_comparisons
from bayesrank.data.rows import PairRows
from bayesrank.review.claims import parse_claim
from bayesrank.review.pairwise import claim_contrasts
from bayesrank.review.verdict import critical_z
from tests.tiers import record, tiers

Z2 = critical_z(0.95, "two-sided")


@pytest.fixture(scope="module")
def nba():
    fit = BradleyTerry(read_comparisons("nba")).fit("mle")
    claim = parse_claim("top1", "pairwise", players=fit.players)
    pairs = claim_contrasts(claim, fit.players, fit.score)
    gamma = np.array([fit.score[a] - fit.score[b] for a, b in pairs])
    design = Design.from_fit(fit)
    return fit, design, pairs, gamma, plan(design, pairs, gamma, Z2)


def test_information_is_the_fits_fisher_covariance(nba):
    """The grounded Laplacian's contrast variances equal the MLE's Fisher covariance (bt.mle's
    constrained inverse), on every pair of players."""
    fit, design, *_ = nba
    k = len(fit.players)
    every = [(a, b) for a in range(k) for b in range(a + 1, k)]
    v = np.diag(design.contrast_cov(every))
    want = np.array([contrast_sd(fit.theta_cov)[a, b] ** 2 for a, b in every])
    np.testing.assert_allclose(v, want, rtol=1e-8)


def test_drop_ties_information():
    """With ties dropped, a pair's information counts its decisive comparisons only: = the drop-ties
    MLE's Fisher covariance; a new comparison of a pair carries (1 − its tie share) w."""
    rows = PairRows(np.array(["a", "b", "c", "d"]), [0, 0, 1, 2, 1], [1, 2, 2, 3, 3],
                    [30, 12, 9, 14, 6], [10, 8, 11, 6, 9], [20, 0, 5, 10, 5])
    fit = BradleyTerry(rows, ties="drop").fit("mle", ci="fisher")
    d = Design.from_fit(fit)
    every = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    want = np.array([contrast_sd(fit.theta_cov)[a, b] ** 2 for a, b in every])
    np.testing.assert_allclose(np.diag(d.contrast_cov(every)), want, rtol=1e-8)
    w = d.weight(np.array([0]), np.array([1]))[0]
    assert d.new_weight([0], [1])[0] == pytest.approx(w * (1 - 20 / 60))
    assert d.new_weight([0], [3])[0] == pytest.approx(d.weight([0], [3])[0] * (1 - 40 / 155))  # unseen: overall share


def test_one_contrast_closed_forms(nba):
    """One contrast: power = Φ(γ/sd − z); comparisons added to its own pair give
    V' = V/(1 + N w V) (Sherman–Morrison), so the smallest uniform N is ⌈(V/V* − 1)/(wV)⌉ with
    V* = (γ/(z + Φ⁻¹(0.8)))²."""
    fit, design, *_ = nba
    a, b = (int(np.flatnonzero(fit.players == p)[0]) for p in ("Denver Nuggets", "Minnesota Timberwolves"))
    gamma = fit.score[a] - fit.score[b]
    z = critical_z(0.95, "one-sided")
    v = design.contrast_cov([(a, b)])[0, 0]
    pw = Power(design, [(a, b)], [gamma], z)
    assert pw() == pytest.approx(stats.norm.cdf(gamma / math.sqrt(v) - z), rel=1e-12)
    w = design.new_weight([a], [b])[0]
    assert pw([a], [b], [250]) == pytest.approx(stats.norm.cdf(gamma / math.sqrt(v / (1 + 250 * w * v)) - z),
                                                rel=1e-10)
    p = plan(design, [(a, b)], [gamma], z)
    target = (gamma / (z + stats.norm.ppf(0.8))) ** 2
    assert p.uniform_additional == math.ceil((v / target - 1) / (w * v))
    assert p.additional <= p.uniform_additional and p.power >= 0.8


def test_c_optimal_allocation_matches_slsqp():
    """A small board (6 players): the shares the plan's Frank–Wolfe finds for one contrast give the
    variance SciPy's SLSQP finds minimising c'M(π)⁻¹c over the simplex (one contrast: maximising its
    power is minimising its variance). Candidates: every pair but the contrast's own (to which the
    whole design would go) — the optimum spreads over the paths between the two."""
    rng = np.random.default_rng(0)
    k = 6
    theta = np.array([0.8, 0.5, 0.2, 0.0, -0.6, -0.9])
    ii, jj = np.triu_indices(k, 1)
    n = rng.integers(2, 9, len(ii))
    n[[0, 5, 9]] = 0  # a few pairs never met (0–1 among them: the claim's own pair)
    p = 1 / (1 + np.exp(-(theta[ii] - theta[jj])))
    wins = rng.binomial(n, p)
    keep = n > 0
    rows = PairRows(np.array(list("abcdef")), ii[keep], jj[keep], wins[keep], (n - wins)[keep], np.zeros(keep.sum()))
    fit = BradleyTerry(rows).fit("mle")
    d = Design.from_fit(fit)
    pair = (0, 1) if fit.score[0] > fit.score[1] else (1, 0)
    gamma = abs(fit.score[0] - fit.score[1])
    pw = Power(d, [pair], [gamma], Z2)
    ca, cb = _candidates(d, [pair])
    direct = (np.minimum(ca, cb) == 0) & (np.maximum(ca, cb) == 1)
    ca, cb = ca[~direct], cb[~direct]  # with the pair itself allowed all goes to it: test the paths around it
    total = 120.0
    start = np.ones(len(ca))
    shares = _frank_wolfe(pw, ca, cb, total, start, iters=2000)

    def var(s):
        s = np.clip(s, 0, None)
        return d.contrast_cov([pair], ca, cb, total * s * d.new_weight(ca, cb))[0, 0]

    best = optimize.minimize(var, start / len(ca), method="SLSQP", bounds=[(0, 1)] * len(ca),
                             constraints=[{"type": "eq", "fun": lambda s: s.sum() - 1}],
                             options={"ftol": 1e-14, "maxiter": 1000})
    assert best.success
    assert var(shares) == pytest.approx(best.fun, rel=2e-3)
    assert var(shares) < var(start / len(ca))  # and better than spreading over every pair


def _glm_power(fit, design, pairs, alloc, reps: int, seed: int, scale: float = 1.0) -> float:
    """Share of datasets (the existing pair counts plus ``alloc``, every outcome drawn from the fitted
    scores) whose statsmodels binomial-GLM refit makes every contrast of ``pairs`` significant (two-sided
    Wald, the fit's Fisher covariance)."""
    import statsmodels.api as sm

    k = len(fit.players)
    ii = np.concatenate([design.i, [a for a, _, _ in alloc]]).astype(int)
    jj = np.concatenate([design.j, [b for _, b, _ in alloc]]).astype(int)
    nn = np.concatenate([design.n, [round(n * scale) for _, _, n in alloc]]).astype(np.int64)
    x = np.zeros((len(ii), k))
    x[np.arange(len(ii)), ii] += 1.0
    x[np.arange(len(ii)), jj] -= 1.0
    x = x[:, 1:]  # θ_0 = 0: a gauge, contrasts unchanged
    c = np.zeros((len(pairs), k))
    for r, (a, b) in enumerate(pairs):
        c[r, a] += 1.0
        c[r, b] -= 1.0
    c = c[:, 1:]
    prob = 1 / (1 + np.exp(-(fit.score[ii] - fit.score[jj])))
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(reps):
        w = rng.binomial(nn, prob)
        res = sm.GLM(np.column_stack([w, nn - w]), x, family=sm.families.Binomial()).fit()
        est = c @ res.params
        sd = np.sqrt(np.einsum("ij,jk,ik->i", c, res.cov_params(), c))
        hits += bool(np.all(est / sd > Z2))
    return hits / reps


@tiers(default={"reps": 500}, validation={"reps": 4000})
def test_nba_top1_plan_reaches_its_power_by_independent_refit(nba, tier):
    """The issue's check: the allocation for NBA 2023–24's top1 (not significant, p = 0.38), simulated
    from the fitted model and refitted by statsmodels' GLM, reaches the stated power within 3 Monte
    Carlo SEs (default tier: 500 datasets, 3 SE = 0.054, so a power of 0.7 stated as 0.8 fails;
    validation: 4,000); 0.75× the allocation falls clearly short."""
    fit, design, pairs, gamma, p = nba
    assert p.settleable and p.power >= 0.8 and p.power_now < 0.1
    assert p.additional < p.uniform_additional < p.proportional_additional
    assert sum(n for *_, n in p.allocation) == p.additional
    achieved = _glm_power(fit, design, pairs, p.allocation, tier.reps, seed=0)
    se = math.sqrt(p.power * (1 - p.power) / tier.reps)
    record("bt.design power (NBA top1, GLM refit)", tier, reps=tier.reps, stated=p.power, achieved=achieved,
           mc_se=se, additional=p.additional)
    assert abs(achieved - p.power) < 3 * se
    short = _glm_power(fit, design, pairs, p.allocation, 400, seed=1, scale=0.75)
    assert short < 0.8 - 3 * math.sqrt(0.8 * 0.2 / 400)


def test_largest_remainder():
    n = largest_remainder(10, np.array([0.5, 0.3, 0.2, 0.0]))
    assert n.tolist() == [5, 3, 2, 0]
    n = largest_remainder(7, np.array([1.0, 1.0, 1.0]))
    assert n.sum() == 7 and n.max() - n.min() <= 1
