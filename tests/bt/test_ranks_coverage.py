"""Coverage of rank confidence sets on simulated Bradley–Terry leaderboards with known θ.

Each replicate simulates all-pairs binary comparisons from the true θ, refits the MLE (batched
Newton) with its Fisher covariance, builds the sets and checks the *joint* statement: every
player's true rank lies in its set (simultaneous) or one player's does (marginal). 2,000
replicates give a Monte Carlo SE of 0.49 points at 95%, enough to tell 95% from 93%.
"""

import numpy as np
import pytest
from scipy.special import expit

from bayesrank.bt.likelihood import tie_model
from bayesrank.bt.mle import bootstrap_counts, constraint_basis, newton
from bayesrank.bt.ranks import contrast_sd, rank_confidence_sets
from bayesrank.data.aggregate import PairCounts

LEVEL = 0.95


def template(k, n_per_pair):
    """All pairs; ``n_per_pair`` games each (a number, or one count per pair)."""
    i, j = np.triu_indices(k, 1)
    z = np.zeros(len(i))
    return PairCounts(np.array([f"p{a:02d}" for a in range(k)], dtype=object), i, j, z + n_per_pair, z, z)


def simulate_fits(theta, n_per_pair, n_rep, seed):
    """(n_rep, K) MLEs and (n_rep, K, K) Fisher covariances of simulated leaderboards."""
    k = len(theta)
    tpl = template(k, n_per_pair)
    rng = np.random.default_rng(seed)
    n = tpl.total.astype(int)
    wins = rng.binomial(n, expit(theta[tpl.i] - theta[tpl.j]), size=(n_rep, len(n))).astype(float)
    batch = np.stack([wins, n - wins, np.zeros_like(wins)], axis=-1)
    res = newton(tie_model("half"), tpl, batch_counts=batch)
    assert res.converged.all()
    q = constraint_basis(k)
    cov = q @ np.linalg.inv(np.swapaxes(q, 0, 1)[None] @ res.hessian @ q) @ q.T
    return res.params[:, :k], cov, tpl, batch


def true_ranks(theta):
    return 1 + (theta[None, :] > theta[:, None]).sum(axis=1)


def covered(rs, ranks, idx=slice(None)):
    return bool(np.all((rs.rank_lower[idx] <= ranks[idx]) & (ranks[idx] <= rs.rank_upper[idx])))


def contrasts_covered(est, theta, cov, c, rows=None):
    """All |θ̂_a − θ̂_b − (θ_a − θ_b)| ≤ c·sd_ab (for a in ``rows``, default every player)."""
    err = est - theta
    t = np.abs(err[:, None] - err[None, :]) / (contrast_sd(cov) + np.eye(len(theta)))
    return bool((t if rows is None else t[rows]).max() <= c)


def single_step_sets(est, cov, c):
    """rank_lower = 1 + #{b: θ̂_b − θ̂_a > c·sd_ab}, rank_upper = K − #{b: θ̂_a − θ̂_b > c·sd_ab}."""
    diff = est[None, :] - est[:, None]  # [a, b] = θ̂_b − θ̂_a
    sd = contrast_sd(cov)
    return 1 + (diff > c * sd).sum(axis=1), len(est) - (-diff > c * sd).sum(axis=1)


def se(n):
    return np.sqrt(LEVEL * (1 - LEVEL) / n)


def report(name, rate, n):
    print(f"{name}: {rate:.4f} over {n} replicates (nominal {LEVEL}, MC SE {se(n):.4f})")


def run_gaussian(theta, n_per_pair, n_rep, seed, player):
    est, cov, _, _ = simulate_fits(theta, n_per_pair, n_rep, seed)
    ranks = true_ranks(theta)
    hits = {key: np.zeros(n_rep, dtype=bool) for key in
            ("contrasts", "single", "stepdown", "marg_contrasts", "marginal", "top3")}
    true_top3 = set(np.flatnonzero(ranks <= 3))
    for r in range(n_rep):
        kw = dict(level=LEVEL, n_sim=2000, seed=100_000 + r)
        step = rank_confidence_sets(est[r], cov[r], stepdown=True, **kw)
        marg = rank_confidence_sets(est[r], cov[r], simultaneous=False, stepdown=True, indices=player, **kw)
        c = step.critical_values[0]  # the single-step critical value (same error draws)
        hits["contrasts"][r] = contrasts_covered(est[r], theta, cov[r], c)
        lo, hi = single_step_sets(est[r], cov[r], c)
        hits["single"][r] = np.all((lo <= ranks) & (ranks <= hi))
        hits["stepdown"][r] = covered(step, ranks)
        hits["top3"][r] = true_top3 <= set(np.flatnonzero(step.rank_lower <= 3))  # csranks' tau-best set
        hits["marg_contrasts"][r] = contrasts_covered(est[r], theta, cov[r], marg.critical_values[player], [player])
        hits["marginal"][r] = covered(marg, ranks, player)
    return {key: v.mean() for key, v in hits.items()}


@pytest.mark.slow
def test_uneven_design_with_close_players():
    """K = 12, θ ~ N(0, 0.4²) (several neighbours < 0.1 apart), games per pair log-uniform on 8..300
    (sparse and dense pairs, as on crowd-sourced arenas)."""
    rng = np.random.default_rng(30)
    theta = np.sort(rng.normal(0, 0.4, 12))[::-1]
    theta -= theta.mean()
    games = np.round(np.exp(rng.uniform(np.log(8), np.log(300), 66)))
    n = 2000
    res = run_gaussian(theta, games, n, seed=31, player=5)
    report("uneven design: all 66 contrasts covered", res["contrasts"], n)
    report("uneven design: all 12 true ranks covered (stepdown)", res["stepdown"], n)
    assert abs(res["contrasts"] - LEVEL) <= 3 * se(n)
    assert res["stepdown"] >= LEVEL - 3 * se(n)
    assert res["marginal"] >= LEVEL - 3 * se(n)


@pytest.fixture(scope="module")
def spread_out():
    """K = 10, θ equally spaced on [−1, 1] (neighbours 0.22 apart, contrast SD ≈ 0.18), 30 games per pair."""
    return run_gaussian(np.linspace(1, -1, 10), 30, 2000, seed=20, player=4)


@pytest.mark.slow
def test_simultaneous_contrast_intervals_hold_their_level(spread_out):
    n = 2000
    report("all 45 contrasts covered", spread_out["contrasts"], n)
    assert abs(spread_out["contrasts"] - LEVEL) <= 3 * se(n)


@pytest.mark.slow
def test_simultaneous_rank_sets_cover_all_true_ranks(spread_out):
    n = 2000
    for key in ("single", "stepdown"):
        report(f"all 10 true ranks in their sets ({key})", spread_out[key], n)
        assert spread_out[key] >= LEVEL - 3 * se(n)
    # implied by construction: stepdown sets are subsets, so they cover less often (or as often)
    assert spread_out["stepdown"] <= spread_out["single"]
    report("true top 3 inside {a: rank_lower(a) <= 3}", spread_out["top3"], n)
    assert spread_out["top3"] >= LEVEL - 3 * se(n)


@pytest.mark.slow
def test_marginal_rank_set_covers_one_players_rank(spread_out):
    n = 2000
    report("player 5's 9 contrasts covered", spread_out["marg_contrasts"], n)
    report("player 5's true rank in its marginal set", spread_out["marginal"], n)
    assert abs(spread_out["marg_contrasts"] - LEVEL) <= 3 * se(n)
    assert spread_out["marginal"] >= LEVEL - 3 * se(n)


@pytest.mark.slow
def test_rank_sets_are_sharp_when_all_players_are_equal():
    """All θ equal: every true rank is 1 (ties share the smaller rank), covered iff nothing is
    rejected, which happens with probability exactly P(max |t| ≤ c) → level: not conservative."""
    n = 2000
    res = run_gaussian(np.zeros(8), 30, n, seed=21, player=0)
    report("equal players: all true ranks (=1) covered, stepdown", res["stepdown"], n)
    assert abs(res["stepdown"] - LEVEL) <= 3 * se(n)
    assert abs(res["contrasts"] - LEVEL) <= 3 * se(n)


@pytest.mark.slow
def test_bootstrap_critical_values_cover():
    """Nonparametric bootstrap (battles resampled, as LMArena) instead of N(0, Σ)."""
    theta = np.linspace(0.6, -0.6, 6)
    n_rep, n_boot = 1000, 400
    est, _, tpl, batch = simulate_fits(theta, 40, n_rep, seed=22)
    ranks = true_ranks(theta)
    model = tie_model("half")
    hits_c = np.zeros(n_rep, dtype=bool)
    hits_r = np.zeros(n_rep, dtype=bool)
    for r in range(n_rep):
        tc = tpl.with_counts(batch[r])
        boot = newton(model, tc, batch_counts=bootstrap_counts(tc, n_boot, 500_000 + r), ridge=1e-6,
                      start=est[r]).params
        rs = rank_confidence_sets(est[r], np.cov(boot.T), errors=boot - est[r], level=LEVEL, stepdown=True)
        hits_c[r] = contrasts_covered(est[r], theta, np.cov(boot.T), rs.critical_values[0])
        hits_r[r] = covered(rs, ranks)
    report("bootstrap: all 15 contrasts covered", hits_c.mean(), n_rep)
    report("bootstrap: all 6 true ranks covered (stepdown)", hits_r.mean(), n_rep)
    assert abs(hits_c.mean() - LEVEL) <= 3 * se(n_rep)
    assert hits_r.mean() >= LEVEL - 3 * se(n_rep)
