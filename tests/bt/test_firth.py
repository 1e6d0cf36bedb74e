"""Firth's bias-reduced Bradley–Terry (bayesrank.bt.firth) against independent implementations.

References:
* ``firthmodels`` (PyPI, an independent Firth logistic regression: its own Newton–Raphson on the
  penalised likelihood, Venzon–Moolgavkar profile intervals, penalised LR tests): logistic Firth on
  the Bradley–Terry design (x = e_i − e_j, reference coding, one weighted row per outcome, no
  intercept) is Firth BT. Ties counted as half a win are one success and one failure of weight ½.
* a direct ``scipy.optimize`` maximisation of ℓ(θ) + ½ log det I(θ) on a basis of the sum-to-zero space,
  and a brute-force profile: that maximisation on each hyperplane cᵀθ = t, the bounds by ``brentq``.
* coverage: 4,000 simulated tournaments per setting, most of them separated (some player never
  won or never lost, no finite MLE).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from bayesrank.bt.firth import firth_fit, pieces, profile_interval
from bayesrank.data.aggregate import PairCounts
from bayesrank.errors import NoFiniteEstimateError

firthmodels = pytest.importorskip("firthmodels")


def pair_counts(k, i, j, wins_i, wins_j, ties=None):
    return PairCounts(players=np.array([f"p{x}" for x in range(k)], dtype=object), i=np.asarray(i), j=np.asarray(j),
                      wins_i=np.asarray(wins_i, float), wins_j=np.asarray(wins_j, float),
                      ties=np.zeros(len(i)) if ties is None else np.asarray(ties, float))


def reference_model(pc: PairCounts):
    """firthmodels on the BT design (player 0 the reference), half-win ties as weight-½ rows."""
    k = pc.n_players
    x, y, w = [], [], []
    for r, (a, b) in enumerate(zip(pc.i, pc.j)):
        row = np.zeros(k)
        row[a], row[b] = 1.0, -1.0
        for target, weight in ((1, pc.wins_i[r] + pc.ties[r] / 2), (0, pc.wins_j[r] + pc.ties[r] / 2)):
            if weight > 0:
                x.append(row[1:])
                y.append(target)
                w.append(weight)
    m = firthmodels.FirthLogisticRegression(fit_intercept=False, gtol=1e-9, xtol=1e-8, max_iter=200)
    return m.fit(np.array(x), np.array(y), sample_weight=np.array(w))


def centred(coef):
    theta = np.r_[0.0, coef]
    return theta - theta.mean()


def scipy_firth(pc: PairCounts, c=None, t=0.0, start=None):
    """argmax of ℓ + ½ log det I on θ = Q β (Q an orthonormal basis of 1ᵀθ = 0), by BFGS; with a
    contrast ``c``: on cᵀθ = t (θ = t·c/cᵀc + Q β, Q a basis of the space orthogonal to 1 and c)."""
    k = pc.n_players
    fixed = np.ones((1, k)) if c is None else np.vstack([np.ones(k), c])
    q = np.linalg.svd(fixed)[2][len(fixed):].T
    offset = np.zeros(k) if c is None else t * (c - c.mean()) / ((c - c.mean()) @ (c - c.mean()))
    y = pc.wins_i + pc.ties / 2
    n = pc.wins_i + pc.wins_j + pc.ties
    x = np.zeros((len(pc.i), k))
    x[np.arange(len(pc.i)), pc.i] = 1
    x[np.arange(len(pc.i)), pc.j] = -1
    xq = x @ q

    qk = np.linalg.svd(np.ones((1, k)))[2][1:].T  # the information on the whole sum-to-zero space
    xk = x @ qk

    def negative(beta):
        d = x @ offset + xq @ beta
        p = expit(d)
        info = xk.T @ (xk * (n * p * (1 - p))[:, None])
        return -((y * log_expit(d) + (n - y) * log_expit(-d)).sum() + 0.5 * np.linalg.slogdet(info)[1])

    x0 = np.zeros(q.shape[1]) if start is None else q.T @ start
    res = minimize(negative, x0, method="BFGS", options={"gtol": 1e-10, "maxiter": 10_000})
    return offset + q @ res.x, -res.fun


# A small tournament in which p3 never wins and p0 never loses: no finite MLE.
SEPARATED = dict(k=5, i=[0, 0, 0, 0, 1, 1, 1, 2, 2, 3], j=[1, 2, 3, 4, 2, 3, 4, 3, 4, 4],
                 wins_i=[3, 2, 4, 1, 0, 2, 3, 1, 2, 0], wins_j=[0, 0, 0, 0, 2, 0, 1, 0, 1, 3])


def random_counts(seed, k=7, games=3, ties=False):
    rng = np.random.default_rng(seed)
    i, j = np.triu_indices(k, 1)
    theta = rng.normal(0, 1.2, k)
    p = expit(theta[i] - theta[j])
    n = rng.integers(0, games + 1, len(i))
    t = rng.binomial(n, 0.2) if ties else np.zeros(len(i), int)
    wi = rng.binomial(n - t, p)
    keep = n > 0
    return pair_counts(k, i[keep], j[keep], wi[keep], (n - t - wi)[keep], t[keep])


CASES = [pair_counts(**SEPARATED)] + [random_counts(s) for s in range(4)] + [random_counts(10 + s, ties=True)
                                                                              for s in range(2)]


@pytest.mark.parametrize("pc", CASES, ids=[f"case{n}" for n in range(len(CASES))])
def test_estimate_equals_firthmodels_and_direct_maximisation(pc):
    fit = firth_fit(pc, ties="half")
    theta = fit.theta[0]
    assert np.abs(theta - centred(reference_model(pc).coef_)).max() < 1e-8
    direct, value = scipy_firth(pc)
    assert np.abs(theta - direct).max() < 1e-5  # BFGS's own precision
    assert fit.value[0] >= value - 1e-9
    # the modified score vanishes at the estimate
    y = (pc.wins_i + pc.ties / 2)[None]
    n = (pc.wins_i + pc.wins_j + pc.ties)[None]
    assert np.abs(pieces(fit.theta, pc.i, pc.j, y, n).score).max() < 1e-8


@pytest.mark.parametrize("pc", CASES[:4], ids=[f"case{n}" for n in range(4)])
def test_profile_intervals_and_tests_equal_firthmodels(pc):
    """Every player's contrast with the reference player 0: the profile penalised-likelihood interval
    (95% and 90%) and the penalised likelihood-ratio p-value."""
    fit = firth_fit(pc)
    ref = reference_model(pc)
    ref.lrt()
    for level in (0.95, 0.9):
        bounds = ref.conf_int(alpha=1 - level, method="pl", tol=1e-10, max_iter=200)
        for p in range(1, pc.n_players):
            c = np.zeros(pc.n_players)
            c[p], c[0] = 1.0, -1.0
            pi = profile_interval(pc, fit, c, level=level)
            assert abs(pi.lower[0] - bounds[p - 1, 0]) < 1e-6
            assert abs(pi.upper[0] - bounds[p - 1, 1]) < 1e-6
            assert abs(pi.p_value[0] - ref.lrt_pvalues_[p - 1]) < 1e-7
            assert np.sign(pi.statistic[0]) == np.sign(pi.estimate[0])


@pytest.mark.parametrize("pc", [CASES[0], CASES[5]], ids=["separated", "ties"])
def test_profile_interval_equals_brute_force_profile(pc):
    """The 95% profile interval of θ₁ − θ₃ equals a brute-force profile (scipy on each hyperplane,
    ``brentq`` for the bounds): on the separated board and on one with half-win ties (which
    firthmodels' check above does not cover)."""
    from scipy.optimize import brentq
    from scipy.stats import chi2

    c = np.zeros(pc.n_players)
    c[1], c[3] = 1.0, -1.0
    top, best = scipy_firth(pc)
    est = c @ top
    cut = chi2.ppf(0.95, 1)

    def excess(t):
        return 2 * (best - scipy_firth(pc, c, t, start=top)[1]) - cut

    lo = brentq(excess, est - 15, est, xtol=1e-9)
    hi = brentq(excess, est, est + 15, xtol=1e-9)
    pi = profile_interval(pc, firth_fit(pc), c)
    assert abs(pi.lower[0] - lo) < 1e-6 and abs(pi.upper[0] - hi) < 1e-6


def test_batched_equals_one_at_a_time():
    """Replicates on the same pair rows fitted together equal each fitted alone (the simulations' path)."""
    base = CASES[1]
    rng = np.random.default_rng(5)
    n = base.total
    wi = rng.binomial(n.astype(int), 0.5, size=(6, len(n))).astype(float)
    batch = np.stack([wi, n - wi, np.zeros_like(wi)], axis=-1)
    together = firth_fit(base, batch_counts=batch)
    c = np.zeros(base.n_players)
    c[2], c[5] = 1.0, -1.0
    pi = profile_interval(base, together, c, batch_counts=batch)
    for b in range(len(batch)):
        alone = base.with_counts(batch[b])
        one = firth_fit(alone)
        assert np.abs(one.theta[0] - together.theta[b]).max() < 1e-9
        pa = profile_interval(alone, one, c)
        for field in ("lower", "upper", "p_value"):
            assert abs(getattr(pa, field)[0] - getattr(pi, field)[b]) < 1e-7


def test_ties_drop_ignores_ties():
    pc = CASES[-1]
    dropped = pair_counts(pc.n_players, pc.i, pc.j, pc.wins_i, pc.wins_j)
    assert np.allclose(firth_fit(pc, ties="drop").theta, firth_fit(dropped).theta, atol=1e-10)


def test_disconnected_graph_has_no_estimate():
    """Groups never compared with each other: their difference is not estimable, penalty or not
    (ℓ* is flat along it); one data set raises, replicates are flagged (NaN)."""
    pc = pair_counts(4, [0, 2, 1], [1, 3, 2], [2, 1, 1], [1, 2, 1])
    with pytest.raises(NoFiniteEstimateError, match="connected comparison graph"):
        firth_fit(pc.with_counts(np.array([[2, 1, 0], [1, 2, 0], [0, 0, 0.]])))
    batch = np.array([pc.counts, [[2, 1, 0], [1, 2, 0], [0, 0, 0]]], dtype=float)
    fit = firth_fit(pc, batch_counts=batch, strict=False)
    assert fit.converged.tolist() == [True, False]
    assert np.isfinite(fit.theta[0]).all() and np.isnan(fit.theta[1]).all()


def simulate(theta, games, reps, seed):
    k = len(theta)
    i, j = np.triu_indices(k, 1)
    rng = np.random.default_rng(seed)
    wi = rng.binomial(games, expit(theta[i] - theta[j]), size=(reps, len(i))).astype(float)
    counts = np.stack([wi, games - wi, np.zeros_like(wi)], axis=-1)
    template = pair_counts(k, i, j, counts[0, :, 0], counts[0, :, 1])
    wins = np.zeros((reps, k))
    losses = np.zeros((reps, k))
    np.add.at(wins.T, i, counts[..., 0].T)
    np.add.at(wins.T, j, counts[..., 1].T)
    np.add.at(losses.T, i, counts[..., 1].T)
    np.add.at(losses.T, j, counts[..., 0].T)
    separated = ((wins == 0) | (losses == 0)).any(axis=1)
    return template, counts, separated


@pytest.mark.slow
@pytest.mark.parametrize("games, contrast", [(1, (5, 0)), (2, (5, 4)), (4, (5, 0))])
def test_profile_interval_coverage(games, contrast):
    """95% profile penalised-likelihood intervals in 4,000 six-player round robins with 1, 2 or 4
    games per pair; 75% (1 game) and 30% (2 games) of the tournaments have no finite MLE. Where most
    tournaments are separated the intervals are conservative, as Heinze & Schemper (2002) report for
    logistic regression: the claim is coverage >= 95% (within 3 Monte Carlo SEs, also among the
    separated tournaments) and below 98.5% (not vacuous). With 4 games per pair (3% separated) the
    coverage is 95% within 3 Monte Carlo SEs, both sides."""
    theta = np.array([-1.5, -0.8, -0.2, 0.2, 0.8, 1.5])
    reps = 4000
    template, counts, separated = simulate(theta, games, reps, seed=games)
    assert separated.mean() > {1: 0.7, 2: 0.25, 4: 0.0}[games]
    fit = firth_fit(template, ties="drop", batch_counts=counts)
    assert np.isfinite(fit.theta).all()
    c = np.zeros(len(theta))
    c[contrast[0]], c[contrast[1]] = 1.0, -1.0
    pi = profile_interval(template, fit, c, ties="drop", batch_counts=counts, p_value=False)
    truth = theta[contrast[0]] - theta[contrast[1]]
    covered = (pi.lower <= truth) & (truth <= pi.upper)
    rate = covered.mean()
    se = np.sqrt(0.95 * 0.05 / reps)
    assert rate >= 0.95 - 3 * se, rate
    if games == 4:
        assert rate <= 0.95 + 3 * se, rate
    else:
        assert rate <= 0.985, rate
        assert covered[separated].mean() >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / separated.sum())


def test_many_contrasts_of_one_data_set_at_once():
    """(m, K) contrasts (chunked) equal each contrast alone; one-sided bounds and the test alone."""
    pc = CASES[2]
    fit = firth_fit(pc)
    k = pc.n_players
    pairs = [(a, b) for a in range(k) for b in range(k) if a != b][:9]
    cs = np.zeros((len(pairs), k))
    for r, (a, b) in enumerate(pairs):
        cs[r, a], cs[r, b] = 1.0, -1.0
    together = profile_interval(pc, fit, cs, level=0.9, chunk=4)
    lower_only = profile_interval(pc, fit, cs, level=0.9, sides=(-1,))
    test_only = profile_interval(pc, fit, cs, sides=())
    for r in range(len(pairs)):
        alone = profile_interval(pc, fit, cs[r], level=0.9)
        for field in ("estimate", "lower", "upper", "p_value", "statistic"):
            assert abs(getattr(alone, field)[0] - getattr(together, field)[r]) < 1e-8
        assert abs(lower_only.lower[r] - alone.lower[0]) < 1e-8 and np.isnan(lower_only.upper[r])
        assert abs(test_only.p_value[r] - alone.p_value[0]) < 1e-10 and np.isnan(test_only.lower[r])


def test_estimator_with_firth_penalty():
    """``BradleyTerry(penalty="firth")``: the mle fit is Firth's estimate (firthmodels), its default
    interval per player the profile interval of the centred score (brute-force scipy profile), the
    Wald options use the information at the estimate; options Firth does not cover are refused."""
    from scipy.optimize import brentq
    from scipy.stats import chi2

    from bayesrank.bt import BradleyTerry
    from bayesrank.errors import InputError

    pc = CASES[0]
    bt = BradleyTerry(pc, penalty="firth")
    fit = bt.fit("mle")
    assert np.abs(fit.score - centred(reference_model(pc).coef_)).max() < 1e-8
    assert fit.interval == "profile penalised likelihood (Firth)" and fit.diagnostics.converged
    k = pc.n_players
    c = np.eye(k)[0]
    top, best = scipy_firth(pc)

    def excess(t):
        return 2 * (best - scipy_firth(pc, c, t, start=top)[1]) - chi2.ppf(0.95, 1)

    lo, hi = brentq(excess, top[0] - 15, top[0], xtol=1e-9), brentq(excess, top[0], top[0] + 15, xtol=1e-9)
    assert abs(fit.lower[0] - lo) < 1e-6 and abs(fit.upper[0] - hi) < 1e-6
    wald = bt.fit("mle", ci="fisher")
    info = pieces(fit.score[None], pc.i, pc.j, (pc.wins_i + pc.ties / 2)[None], pc.total[None]).info[0]
    assert np.allclose(wald.cov, np.linalg.pinv(info), atol=1e-8) and wald.interval.startswith("Wald at Firth")
    for kw in ({"ridge": 0.1}, {"ties": "davidson"}):
        with pytest.raises(InputError, match="plain Bradley–Terry"):
            BradleyTerry(pc, penalty="firth", **kw)
    with pytest.raises(InputError, match="penalty must be"):
        BradleyTerry(pc, penalty="jeffreys")
