"""The collapsed Rasch model against independent references: adaptive quadrature of every item's
integral (scipy.integrate.quad), a finite-difference gradient, girth's marginal-maximum-likelihood
1PL fit, and the uncollapsed PyMC model's log density."""

import numpy as np
import pytest
from scipy import integrate

from bayesrank.items import irt
from bayesrank.items.data import ItemScores
from tests.reference_mode import REFERENCE_MODE

from .conftest import long_frame, rasch_matrix


def test_collapsed_loglik_equals_quadrature_per_item():
    y = rasch_matrix(5, 60, seed=0)
    d = ItemScores.from_long(long_frame(y))
    st = irt.sufficient(d)
    th, mu, sig = np.array([0.9, -0.2, 0.1, 0.3, -1.1]), 0.4, 1.7
    ref = 0.0
    for i in range(60):
        def f(b, i=i):
            return np.exp(np.sum(y[:, i] * (th - b) - np.logaddexp(0, th - b)) - 0.5 * ((b - mu) / sig) ** 2) \
                / (sig * np.sqrt(2 * np.pi))
        ref += np.log(integrate.quad(f, -40, 40, epsabs=0, epsrel=1e-13, limit=400, points=[mu])[0])
    assert irt.loglik(th, mu, sig, st) == pytest.approx(ref, abs=1e-9)


def test_binomial_repeats_collapse_with_constants():
    rng = np.random.default_rng(1)
    k = rng.integers(0, 4, size=(3, 25))
    r = np.full((3, 25), 3)
    d = ItemScores(np.array(["a", "b", "c"], dtype=object), np.array([str(i) for i in range(25)], dtype=object),
                   k / 3, r, successes=k)
    st = irt.sufficient(d)
    th, mu, sig = np.array([0.5, 0.0, -0.5]), -0.3, 0.8
    from scipy.special import comb

    ref = 0.0
    for i in range(25):
        def f(b, i=i):
            p = 1 / (1 + np.exp(-(th - b)))
            return np.prod(comb(3, k[:, i]) * p ** k[:, i] * (1 - p) ** (3 - k[:, i])) * \
                np.exp(-0.5 * ((b - mu) / sig) ** 2) / (sig * np.sqrt(2 * np.pi))
        ref += np.log(integrate.quad(f, -30, 30, epsabs=0, epsrel=1e-13, limit=400)[0])
    assert irt.loglik(th, mu, sig, st) + st.item_const.sum() == pytest.approx(ref, abs=1e-9)


def test_gradient_equals_finite_differences():
    d = ItemScores.from_long(long_frame(rasch_matrix(6, 200, seed=2)))
    st = irt.sufficient(d)
    x = np.array([0.3, -0.1, 0.5, 0.2, -0.4, 0.1, np.log(1.2)])
    _, g = irt.log_posterior(x, st, grad=True)
    eps = 1e-6
    num = np.array([(irt.log_posterior(x + e, st) - irt.log_posterior(x - e, st)) / (2 * eps) for e in np.eye(7) * eps])
    np.testing.assert_allclose(g, num, atol=1e-6)


def test_mode_agrees_with_girth_marginal_ml():
    """With flat priors the posterior mode is the marginal ML estimate; girth's onepl_mml fits
    P = expit(α(θ_person − δ_item)) with persons ~ N(0, 1): here persons are our items (u_i =
    (μ − b_i)/σ) and its items our models, so σ = α and θ_m − θ̄ = −α(δ_m − δ̄)."""
    import girth

    y = rasch_matrix(8, 3000, seed=3, mu=0.3, sigma=1.3)
    d = ItemScores.from_long(long_frame(y))
    fit = irt.fit_laplace(d, prior={"theta": 1e3, "mu": 1e3, "sigma": 1e3})
    ref = girth.onepl_mml(y.astype(int), options={"quadrature_n": 1001, "quadrature_bounds": (-8, 8)})
    a, delta = ref["Discrimination"], ref["Difficulty"]
    theirs = -a * (delta - delta.mean())
    # girth's alternating optimisation stops ~1e-3 short (our likelihood is 8e-4 higher at our mode than at
    # its estimate); 2e-3 is 5% of the θ standard errors here (≈ 0.04), so a wrong model cannot pass
    np.testing.assert_allclose(fit.mode, theirs, atol=2e-3)
    assert fit.extra["sigma_mode"] == pytest.approx(a, abs=2e-3)
    assert fit.extra["mu_mode"] == pytest.approx(a * delta.mean(), abs=2e-3)
    st = irt.sufficient(d)
    assert irt.loglik(fit.mode, fit.extra["mu_mode"], fit.extra["sigma_mode"], st) >= \
        irt.loglik(theirs, a * delta.mean(), a, st)
    assert np.sqrt(np.diag(np.cov(fit.draws.T))).min() > 0.02  # the tolerance is small against the SEs


def test_pymc_collapsed_density_equals_the_integrated_full_model():
    """The PyMC collapsed model's log density at a point = the NumPy twin's log posterior (same priors,
    value-transformed coordinates differ only by the Jacobian, compared on the model's own logp)."""
    y = rasch_matrix(4, 30, seed=5)
    d = ItemScores.from_long(long_frame(y))
    model = irt.build_rasch_model(d)
    pt = model.initial_point()
    pt["theta_zerosum__"] = np.array([0.2, -0.3, 0.4])
    pt["mu"] = np.array(0.1)
    pt["sigma_log__"] = np.array(np.log(1.1))
    logp = model.compile_logp(jacobian=False, mode=REFERENCE_MODE)(pt)
    transform = model.rvs_to_transforms[model["theta"]]

    def theta_of(point):
        import pytensor.tensor as ptt

        return np.asarray(transform.backward(ptt.as_tensor(point["theta_zerosum__"])).eval(mode=REFERENCE_MODE))

    theta = theta_of(pt)
    st = irt.sufficient(d)
    from scipy import stats

    # theta prior: ZeroSumNormal(2.5) density on the zero-sum subspace = N(0, 2.5) per coordinate, up to
    # the normalising constant of the subspace; compare differences between two points instead
    pt2 = dict(pt, theta_zerosum__=np.array([0.5, 0.1, -0.2]), mu=np.array(-0.4), sigma_log__=np.array(np.log(0.7)))
    theta2 = theta_of(pt2)
    assert abs(theta.sum()) < 1e-12 and abs(theta2.sum()) < 1e-12

    def mine(th, mu, sig):
        return (irt.loglik(th, mu, sig, st) - 0.5 * (th ** 2).sum() / 2.5 ** 2 + stats.norm(0, 2.5).logpdf(mu)
                + stats.halfnorm(scale=2.5).logpdf(sig))

    diff_pymc = logp - model.compile_logp(jacobian=False, mode=REFERENCE_MODE)(pt2)
    diff_mine = mine(theta, 0.1, 1.1) - mine(theta2, -0.4, 0.7)
    assert diff_pymc == pytest.approx(diff_mine, abs=1e-8)


def test_total_distribution_equals_simulation():
    """The exact law of an item's total (Poisson-binomial DP integrated over b) = the frequencies of
    totals of simulated items (200,000 items; within 4 binomial SEs per total)."""
    from scipy.special import expit

    theta, mu, sigma = np.array([1.0, 0.2, -0.4, -0.8]), -0.3, 1.1
    d = ItemScores.from_long(long_frame(rasch_matrix(4, 10, seed=0)))
    pi = irt.total_distribution(theta, mu, sigma, irt.sufficient(d))
    assert pi.sum() == pytest.approx(1.0, abs=1e-12)
    rng = np.random.default_rng(0)
    n = 200_000
    b = rng.normal(mu, sigma, n)
    s = (rng.random((4, n)) < expit(theta[:, None] - b[None, :])).sum(axis=0)
    freq = np.bincount(s, minlength=5) / n
    assert np.all(np.abs(freq - pi) <= 4 * np.sqrt(pi * (1 - pi) / n))


@pytest.mark.parametrize("rows", [
    ("110110101111111111111101111111", "010110001010111000100101101100", "010110000110110000101001111100"),
    ("100010010010111100000110101100", "100010000000000000000010001000", "111111010010101100000111101110"),
])
def test_mode_search_survives_a_newton_step_that_overflows(rows):
    """Two 3 × 30 benchmarks of the 2PL SBC (seed 11, simulations 89 and 123) on which the first Newton
    step went to log σ ≈ 390, where σ² overflows: the line search must halve such a step like any
    other that does not increase the log posterior, and find the mode that SciPy's bounded L-BFGS-B
    finds on the same density (an independent optimizer)."""
    from scipy.optimize import minimize

    y = np.array([[int(c) for c in r] for r in rows], dtype=float)
    m, n = y.shape
    d = ItemScores(np.array([f"m{i}" for i in range(m)], dtype=object), np.array([str(i) for i in range(n)],
                   dtype=object), y, np.ones_like(y, dtype=np.int64), successes=y.astype(np.int64))
    fit = irt.fit_laplace(d, draws=10)
    assert fit.diagnostics.converged, fit.diagnostics
    st = irt.laplace_grid(irt.sufficient(d))
    ref = minimize(lambda x: tuple(-v for v in irt.log_posterior(x, st, grad=True)), np.zeros(m + 1), jac=True,
                   method="L-BFGS-B", bounds=[(-10, 10)] * m + [(-5, np.log(st.sigma_max))],
                   options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 10_000})
    assert ref.success, ref.message
    np.testing.assert_allclose(fit.extra["x_mode"], ref.x, atol=1e-4)
