"""The collapsed 2PL likelihood (``bayesrank.items.twopl``): each response pattern's double integral
against scipy's adaptive quadrature, the gradient against central finite differences, the Rasch
kernel as the limit a_i ≡ 1, the Laplace fit's convergence, and the review's ``--twopl``."""

import json

import numpy as np
import pytest
from scipy import integrate
from scipy.special import expit

from bayesrank.items import irt, likelihood, twopl
from bayesrank.items.data import ItemScores

from .conftest import long_frame


def _data(m=4, n=30, seed=1):
    rng = np.random.default_rng(seed)
    th, b, a = rng.normal(0, 1, m), rng.normal(0, 1.2, n), np.exp(rng.normal(0, 0.5, n))
    y = (rng.random((m, n)) < expit(a * (th[:, None] - b))).astype(float)
    return ItemScores(np.array([f"m{i}" for i in range(m)], dtype=object), np.array([str(i) for i in range(n)],
                      dtype=object), y, np.ones_like(y, dtype=np.int64), successes=y.astype(np.int64))


THETA, MU, SIGMA = np.array([1.0, 0.3, -0.4, -0.9]), 0.2, 1.5


def test_pattern_integrals_equal_adaptive_quadrature():
    """log I_g equals scipy's dblquad of the same integrand over x ∈ [−8, 8], u ∈ [−4, 4] to 1e-4:
    the trapezoid rule's error there is its end term at the truncation u = ±4, (h_u²/12)|∂f/∂u| ≈ 2e-5
    of I_g at h_u = 0.5 (the interior error is ~1e-17); a missing factor or node weight errs by > 1e-2."""
    st = twopl.sufficient(_data(), sigma_max=4.0)
    li = twopl.loglik(THETA, MU, SIGMA, st, per_group=True)
    totals = st.group_k.sum(axis=1)
    for g in [int(np.flatnonzero(totals == s)[0]) for s in np.unique(totals)]:  # one pattern per total
        k = st.group_k[g]

        def f(u, x):
            a, b = np.exp(twopl.TAU_A * u), MU + SIGMA * x
            z = a * (THETA - b)
            return np.exp(np.sum(k * z - np.logaddexp(0, z)) - 0.5 * (x * x + u * u)) / (2 * np.pi)

        ref, err = integrate.dblquad(f, -8, 8, -4, 4, epsabs=1e-12, epsrel=1e-9)
        assert abs(li[g] - np.log(ref)) < 1e-4, (g, li[g], np.log(ref))


@pytest.mark.parametrize("trials", [3, 10, 30])
def test_several_trials_integrals_at_the_cap_equal_adaptive_quadrature(trials):
    """With several trials per item a pattern that separates the models piles its integrand up at the
    truncation u = 4, where the plain trapezoid's end term erred by 7e-3 (10 trials) to 0.1 (30 trials)
    in log I_g; the rule in u (finer spacing, Gregory end weights) = scipy's adaptive ``nquad`` to 1e-4."""
    ks = np.array([[trials, trials, 0, 0], [trials, trials, trials, 0], [trials, 0, trials, 0],
                   [trials, trials // 2, 1, 0]], dtype=float)
    x, u, lw = twopl.grid(4 * trials, sigma_max=4.0, model_trials=trials)  # as sufficient() builds it
    st = twopl.TwoPLStats(players=np.array(list("abcd"), dtype=object), patterns=np.full((1, 4), float(trials)),
                          group_pattern=np.zeros(len(ks), dtype=np.int64), group_k=ks, group_count=np.ones(len(ks)),
                          item_group=np.arange(len(ks)), counts=True, x_nodes=x, u_nodes=u, log_w=lw)
    li = twopl.loglik(THETA, MU, SIGMA, st, per_group=True)
    for g, k in enumerate(ks):
        def f(x, u):
            a, b = np.exp(twopl.TAU_A * u), MU + SIGMA * x
            z = a * (THETA - b)
            return np.exp(np.sum(k * z - trials * np.logaddexp(0, z)) - 0.5 * (x * x + u * u)) / (2 * np.pi)

        ref, _ = integrate.nquad(f, [[-8, 8], [-4, 4]], opts=[{"epsabs": 0, "epsrel": 1e-11, "limit": 200},
                                                            {"epsabs": 0, "epsrel": 1e-10, "limit": 200}])
        assert abs(li[g] - np.log(ref)) < 1e-4, (trials, k, li[g], np.log(ref))


def test_gradient_equals_finite_differences():
    st = twopl.sufficient(_data(), sigma_max=4.0)
    _, gt, gm, gs = twopl.loglik(THETA, MU, SIGMA, st, grad=True)
    eps = 1e-6
    for j in range(4):
        d = np.zeros(4)
        d[j] = eps
        fd = (twopl.loglik(THETA + d, MU, SIGMA, st) - twopl.loglik(THETA - d, MU, SIGMA, st)) / (2 * eps)
        assert gt[j] == pytest.approx(fd, rel=1e-6, abs=1e-8)
    assert gm == pytest.approx((twopl.loglik(THETA, MU + eps, SIGMA, st) - twopl.loglik(THETA, MU - eps, SIGMA, st))
                               / (2 * eps), rel=1e-6, abs=1e-8)
    assert gs == pytest.approx((twopl.loglik(THETA, MU, SIGMA + eps, st) - twopl.loglik(THETA, MU, SIGMA - eps, st))
                               / (2 * eps), rel=1e-6, abs=1e-8)
    x = np.concatenate([irt.zerosum_inverse(THETA - THETA.mean()), [MU, np.log(SIGMA)]])
    lp, g = twopl.log_posterior(x, st)
    for j in range(len(x)):
        d = np.zeros(len(x))
        d[j] = eps
        fd = (twopl.log_posterior(x + d, st)[0] - twopl.log_posterior(x - d, st)[0]) / (2 * eps)
        assert g[j] == pytest.approx(fd, rel=1e-6, abs=1e-8)


def test_discrimination_one_is_the_rasch_kernel():
    """τ_a → 0 (a_i ≡ 1): the 2PL likelihood is the Rasch one (bayesrank.items.likelihood, separate
    code) times the u-rule's total weight per item, and the gradients are equal."""
    d = _data()
    st2 = twopl.sufficient(d, sigma_max=4.0, tau=1e-12)
    x = st2.x_nodes[st2.u_nodes == st2.u_nodes[0]]  # every row has the same x grid when a ≡ 1
    lw = -0.5 * x**2 - 0.5 * np.log(2 * np.pi) + np.log(x[1] - x[0])
    lw[[0, -1]] += np.log(0.5)
    lu = np.log(np.exp(st2.log_w).sum() / np.exp(lw).sum())  # log Σ_u w_u
    from dataclasses import replace

    st1 = replace(likelihood.sufficient(d), x_nodes=x, log_w=lw)
    l1, g1, m1, s1 = likelihood.loglik(THETA, MU, SIGMA, st1, grad=True)
    l2, g2, m2, s2 = twopl.loglik(THETA, MU, SIGMA, st2, grad=True)
    assert l2 == pytest.approx(l1 + d.n_items * lu, abs=1e-9)
    np.testing.assert_allclose(np.r_[g2, m2, s2], np.r_[g1, m1, s1], atol=1e-9)


def test_laplace_converges_and_checks_size():
    d = _data(n=60, seed=4)
    fit = irt.fit_laplace(d, twopl=True)
    assert fit.diagnostics.converged and fit.extra["model"] == "2pl"
    assert fit.draws.shape == (4000, 4) and np.allclose(fit.draws.sum(axis=1), 0, atol=1e-9)
    from bayesrank.errors import InputError

    big = twopl.sufficient(_data(m=60, n=300, seed=2))
    with pytest.raises(InputError, match="--twopl"):
        twopl.check_size(big)


def _twopl_csv(tmp_path, m, n, seed=7):
    """A long ``model,item,score`` file of m models × n items simulated from the 2PL (θ evenly spaced
    over ±1, b_i ~ N(−0.5, 1), log a_i ~ N(0, 0.5²))."""
    rng = np.random.default_rng(seed)
    th, b, a = np.linspace(1, -1, m), rng.normal(-0.5, 1.0, n), np.exp(rng.normal(0, 0.5, n))
    y = (rng.random((m, n)) < expit(a * (th[:, None] - b))).astype(float)
    p = tmp_path / "long.csv"
    long_frame(y).to_csv(p, index=False)
    return p


def test_review_twopl_cli(tmp_path):
    m = 5
    p = _twopl_csv(tmp_path, m, 120)
    from bayesrank.cli import main

    out = tmp_path / "r.json"
    assert main(["review", str(p), "--kind", "items", "--twopl", "--fast", "--json", str(out)]) == 0
    rep = json.loads(out.read_text())
    sec = rep["sections"]["items_model"]
    assert sec["model"] == "2pl" and sec["twopl"] is True
    assert all("2PL" in c["bayesian"]["method"] for c in rep["claims"])
    from bayesrank.review.api import review

    page = review(p, kind="items", twopl=True, fast=True).to_markdown()
    assert ("on a small benchmark its posterior equals that of the full 2PL model" in page
            and "its calibration (SBC) is shown on 3 models × 30 items" in page)  # the reader is told
    assert sec["ppc"]["n_totals"] == m + 1 and 0 <= sec["ppc"]["p_value_chi2"] <= 1
    assert "loo" not in sec  # --fast: no PSIS-LOO, as for the Rasch model


def _pattern_stats(m, x, u, lw):
    """Every 0/1 response pattern of m models as its own group, on the given grid."""
    ks = np.array([[(j >> i) & 1 for i in range(m)] for j in range(2**m)], dtype=float)
    return twopl.TwoPLStats(players=np.array([f"m{i}" for i in range(m)], dtype=object), patterns=np.ones((1, m)),
                            group_pattern=np.zeros(len(ks), dtype=np.int64), group_k=ks, group_count=np.ones(len(ks)),
                            item_group=np.arange(len(ks)), counts=True, x_nodes=x, u_nodes=u, log_w=lw), ks


def test_total_distribution_equals_adaptive_quadrature():
    """P(total = s) under the 2PL's item population = scipy's dblquad of Σ_{y: |y| = s} Π p^y (1 − p)^{1−y}
    against the truncated N(0, 1)² of (x, u), normalised on the grid's box, to 1e-6; with a ≡ 1 (τ_a → 0)
    it is the Rasch law (irt.total_distribution, its own code) to 1e-9."""
    import itertools

    th = THETA[:3]
    st, _ = _pattern_stats(3, *twopl.grid(3, sigma_max=4.0))
    law = twopl.total_distribution(th, MU, SIGMA, st)
    box = integrate.dblquad(lambda u, x: np.exp(-0.5 * (x * x + u * u)) / (2 * np.pi), -8, 8, -4, 4)[0]
    for s in range(4):
        def f(u, x, s=s):
            p = expit(np.exp(twopl.TAU_A * u) * (th - MU - SIGMA * x))
            tot = sum(np.prod(np.where(y, p, 1 - p)) for y in itertools.product([0, 1], repeat=3) if sum(y) == s)
            return tot * np.exp(-0.5 * (x * x + u * u)) / (2 * np.pi)

        ref = integrate.dblquad(f, -8, 8, -4, 4, epsabs=1e-13, epsrel=1e-10)[0] / box
        assert abs(law[s] - ref) < 1e-6, (s, law[s], ref)
    rasch = irt.sufficient(_data(m=3))
    flat = twopl.TwoPLStats(**{**st.__dict__, "x_nodes": rasch.x_nodes, "u_nodes": np.zeros_like(rasch.x_nodes),
                               "log_w": rasch.log_w})
    np.testing.assert_allclose(twopl.total_distribution(th, MU, SIGMA, flat),
                               irt.total_distribution(th, MU, SIGMA, rasch), atol=1e-9)


def test_loo_pointwise_law_is_normalised():
    """An item's LOO likelihood exp(log I_g) / Σ_q w_q (twopl.loo_items) is a law over its 2^M response
    patterns: the I_g sum to the grid's total weight Σ_q w_q exactly (1e-12). That weight is the N(0, 1)² mass of
    the box, 1 − 2Φ(−4), plus the trapezoid's end term in u, (h²/12)(f'(4) − f'(−4)) = −(2h²/3)φ(4)
    (Euler–Maclaurin), to 2e-6. A separate θ·k term or a missing factor would break the first."""
    from scipy.stats import norm

    x, u, lw = twopl.grid(4, sigma_max=4.0)
    st, _ = _pattern_stats(4, x, u, lw)
    li = twopl.loglik(THETA, MU, SIGMA, st, per_group=True)
    assert np.exp(li).sum() == pytest.approx(np.exp(lw).sum(), abs=1e-12)
    h = np.diff(np.unique(u))[0]
    assert np.exp(lw).sum() == pytest.approx(1 - 2 * norm.cdf(-4) - 2 * h**2 / 3 * norm.pdf(4), abs=2e-6)


def test_nuts_reports_psis_loo():
    """fit_nuts(twopl=True) reports PSIS-LOO over items: its elpd = ArviZ's loo of the pointwise matrix
    built here, log I_g(i) − log Σ_q w_q on the sampling grid for every thinned draw (0/1 scores: no
    binomial constant)."""
    import arviz as az
    import xarray as xr
    from scipy.special import logsumexp

    d = _data(m=3, n=25, seed=4)
    fit = irt.fit_nuts(d, twopl=True, seed=1, draws=200, tune=200, chains=2)
    loo = fit.extra["loo"]
    st = twopl.sufficient(d)
    step = max(1, len(fit.mu) // 500)
    grid = twopl.nuts_grid(st, twopl.fit_laplace(d, seed=1, stats=st))
    ll = np.stack([twopl.loglik(fit.draws[j], fit.mu[j], fit.sigma[j], grid, per_group=True)[st.item_group]
                   for j in range(0, len(fit.mu), step)]) - logsumexp(grid.log_w)
    dt = xr.DataTree.from_dict({"posterior": xr.Dataset({"mu": (("chain", "draw"), fit.mu[::step].reshape(2, -1))}),
                                "log_likelihood": xr.Dataset({"y": (("chain", "draw", "item"),
                                                                    ll.reshape(2, -1, ll.shape[1]))})})
    assert loo["elpd"] == pytest.approx(float(az.loo(dt).elpd), abs=1e-9)
    assert loo["n_draws"] == len(ll)


def test_twopl_is_for_items_only(tmp_path):
    from bayesrank.errors import InputError
    from bayesrank.review.api import review

    df = __import__("pandas").DataFrame({"a": ["x", "y", "x"], "b": ["y", "z", "z"], "outcome": [1, 0, 1]})
    with pytest.raises(InputError, match="--twopl applies to items"):
        review(df, twopl=True, fast=True)


def test_review_twopl_reports_ppc_and_loo(tmp_path):
    """The review's NUTS path with --twopl reports the predictive check of item totals (M + 1 totals)
    and PSIS-LOO over items in the items_model section, as for the Rasch model."""
    m = 4
    p = _twopl_csv(tmp_path, m, 40)
    from bayesrank.cli import main

    out = tmp_path / "r.json"
    assert main(["review", str(p), "--kind", "items", "--twopl", "--draws", "100", "--tune", "100", "--chains", "2",
                 "--json", str(out)]) == 0
    sec = json.loads(out.read_text())["sections"]["items_model"]
    assert sec["model"] == "2pl"
    assert set(sec["ppc"]) >= {"share_outside_95", "p_value_chi2", "n_totals"} and sec["ppc"]["n_totals"] == m + 1
    assert set(sec["loo"]) >= {"elpd", "se", "p_loo", "pareto_k_max", "n_pareto_k_gt_0.7"}
    assert np.isfinite(sec["loo"]["elpd"]) and sec["loo"]["elpd"] < 0
