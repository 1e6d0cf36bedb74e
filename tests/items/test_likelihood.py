"""The collapsed Rasch likelihood's derivatives and the NUTS density against independent references:
central finite differences (gradient and analytic Hessian), the PyMC model's own log density and
its PyTensor-autodiff gradient (``compile_logp`` / ``compile_dlogp``), and the quadrature grid
against the default grid (the accuracy the grid rule states, and a failure outside it)."""

import numpy as np
import pytest

from bayesrank.items import irt
from bayesrank.items.data import ItemScores
from bayesrank.items.likelihood import log_posterior_function
from tests.reference_mode import REFERENCE_MODE

from .conftest import long_frame, rasch_matrix


def _repeats(seed=4, m=5, n=80):
    """Binomial repeats with several trial patterns (items graded 1–3 times, some models fewer times),
    so the kernel's pattern loop and its r ≠ 1 branch are exercised."""
    rng = np.random.default_rng(seed)
    r = rng.integers(1, 4, size=(m, n))
    k = rng.binomial(r, 0.55)
    return ItemScores(np.array([f"m{i}" for i in range(m)], dtype=object),
                      np.array([str(i) for i in range(n)], dtype=object), k / r, r, successes=k)


def _fd_hessian(grad, x, eps=1e-5):
    return np.array([(grad(x + e) - grad(x - e)) / (2 * eps) for e in np.eye(len(x)) * eps])


@pytest.mark.parametrize("data", ["binary", "repeats"])
def test_gradient_and_hessian_equal_finite_differences(data):
    d = ItemScores.from_long(long_frame(rasch_matrix(6, 300, seed=2))) if data == "binary" else _repeats()
    st = irt.sufficient(d)
    m = d.n_models
    x = np.concatenate([np.linspace(-0.6, 0.7, m - 1), [-0.3], [np.log(1.4)]])
    lp, g, h = irt.log_posterior(x, st, hess=True)
    eps = 1e-6
    num = np.array([(irt.log_posterior(x + e, st) - irt.log_posterior(x - e, st)) / (2 * eps)
                    for e in np.eye(m + 1) * eps])
    np.testing.assert_allclose(g, num, rtol=1e-7, atol=1e-6)
    h_num = _fd_hessian(lambda y: irt.log_posterior(y, st, grad=True)[1], x)
    np.testing.assert_allclose(h, 0.5 * (h_num + h_num.T), rtol=1e-6, atol=1e-5 * np.abs(h).max())
    # the likelihood's own Hessian in (θ, μ, σ) (before the change of coordinates), off-diagonal terms included
    theta, mu, sigma = irt.zerosum(x[: m - 1]), x[m - 1], np.exp(x[m])
    p = np.concatenate([theta, [mu, sigma]])

    def grad_ll(q):
        _, gt, gm, gs = irt.loglik(q[:m], q[m], q[m + 1], st, grad=True)
        return np.concatenate([gt, [gm, gs]])

    hl = irt.loglik_hessian(theta, mu, sigma, st)
    hl_num = _fd_hessian(grad_ll, p)
    np.testing.assert_allclose(hl, 0.5 * (hl_num + hl_num.T), rtol=1e-6, atol=1e-5 * np.abs(hl).max())


@pytest.mark.parametrize("data", ["binary", "repeats"])
def test_nuts_density_equals_the_pymc_models_logp_and_autodiff_gradient(data):
    """The compiled NUTS density at points in PyMC's unconstrained coordinates (theta_zerosum__, mu,
    sigma_log__): its gradient = PyMC's dlogp (PyTensor autodiff, Jacobian included) and its
    differences between points = PyMC's logp differences (the constants differ)."""
    d = ItemScores.from_long(long_frame(rasch_matrix(5, 120, seed=7))) if data == "binary" else _repeats(seed=5)
    st = irt.sufficient(d)
    model = irt.build_rasch_model(st)
    assert [v.name for v in model.value_vars] == ["theta_zerosum__", "mu", "sigma_log__"]
    logp, dlogp = model.compile_logp(mode=REFERENCE_MODE), model.compile_dlogp(mode=REFERENCE_MODE)
    mine = log_posterior_function(st, irt.PRIOR)
    rng = np.random.default_rng(0)
    m = d.n_models
    xs = [np.concatenate([rng.normal(0, 0.8, m - 1), rng.normal(0, 1, 1), [np.log(rng.uniform(0.3, 3))]])
          for _ in range(5)]
    values = []
    for x in xs:
        pt = {"theta_zerosum__": x[: m - 1], "mu": np.array(x[m - 1]), "sigma_log__": np.array(x[m])}
        v, g = mine(x)
        np.testing.assert_allclose(g, dlogp(pt), rtol=1e-9, atol=1e-9)
        values.append((v, logp(pt)))
        # the NumPy form used by the Laplace fit is the same function
        v2, g2 = irt.log_posterior(x, st, grad=True)
        assert v2 == pytest.approx(v, abs=1e-9)
        np.testing.assert_allclose(g2, g, rtol=1e-12, atol=1e-10)
    (v0, r0) = values[0]
    for v, r in values[1:]:
        assert v - v0 == pytest.approx(r - r0, abs=1e-8)


def test_nuts_grid_is_as_accurate_as_stated_and_fails_outside_its_range():
    """The coarse grid accurate for σ ≤ sigma_max (spacing = the narrowest integrand's spread) gives
    the default grid's log-likelihood to < 1e-10 per item at σ within its range (measured: ~1e-14); at
    3 × sigma_max the error breaks that bound (~2e-7: the range check in fit_nuts is needed)."""
    y = rasch_matrix(40, 2000, seed=8, mu=-0.5, sigma=1.2)
    d = ItemScores.from_long(long_frame(y))
    st = irt.sufficient(d)
    coarse = st.regrid(1.5)
    assert len(coarse.x_nodes) < len(st.x_nodes) / 3
    theta = np.linspace(1, -1, 40)
    errs = {s: abs(irt.loglik(theta, -0.5, s, coarse) - irt.loglik(theta, -0.5, s, st)) / d.n_items
            for s in (0.6, 1.2, 1.5, 4.5)}
    assert max(errs[0.6], errs[1.2], errs[1.5]) < 1e-10, errs
    assert errs[4.5] > 1e-9, errs
    # the default grid itself agrees with a finer one at the prior's largest σ
    fine = st.regrid(40.0)
    assert abs(irt.loglik(theta, -0.5, 10.0, st) - irt.loglik(theta, -0.5, 10.0, fine)) / d.n_items < 1e-10


@pytest.mark.parametrize("data", ["binary", "repeats"])
def test_c_callable_density_equals_the_python_one(data):
    """The cfuncs nutpie calls without Python (bayesrank.stats.nuts.CFuncDensity) give the same log
    density, gradient and stored variables (θ, μ, σ) as the NumPy/numba functions, called through ctypes."""
    import ctypes

    from bayesrank.items.likelihood import compiled_density

    d = ItemScores.from_long(long_frame(rasch_matrix(5, 120, seed=7))) if data == "binary" else _repeats(seed=5)
    st = irt.sufficient(d)
    cd = compiled_density(st, irt.PRIOR)
    dbl = ctypes.POINTER(ctypes.c_double)
    logp = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_uint64, dbl, dbl, dbl, ctypes.c_void_p)(cd.logp_address)
    expand = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_uint64, ctypes.c_uint64, dbl, dbl,
                              ctypes.c_void_p)(cd.expand_address)
    m = d.n_models
    py = log_posterior_function(st, irt.PRIOR)
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = np.concatenate([rng.normal(0, 0.8, m - 1), rng.normal(0, 1, 1), [np.log(rng.uniform(0.3, 3))]])
        g, lp, out = np.zeros(m + 1), np.zeros(1), np.zeros(m + 2)
        assert logp(m + 1, x.ctypes.data_as(dbl), g.ctypes.data_as(dbl), lp.ctypes.data_as(dbl), cd.data.ctypes.data) == 0
        v, gr = py(x)
        assert lp[0] == pytest.approx(v, abs=1e-12)
        np.testing.assert_allclose(g, gr, rtol=1e-13, atol=1e-12)
        assert expand(m + 1, m + 2, x.ctypes.data_as(dbl), out.ctypes.data_as(dbl), cd.data.ctypes.data) == 0
        np.testing.assert_allclose(out[:m], irt.zerosum(x[: m - 1]), atol=1e-14)
        assert out[m] == x[m - 1] and out[m + 1] == pytest.approx(np.exp(x[m]), rel=1e-15)
