"""The collapsed 2PL option (``bayesrank.items.irt.fit_nuts(twopl=True)``: a_i and b_i integrated out
per response pattern by the 2-D trapezoid rule of ``bayesrank.items.twopl``, nutpie on its numba
kernel) has the same posterior of (θ, μ, σ) as an independent full 2PL model written here in PyMC
(every b_i and log a_i sampled, PyMC's NUTS) on a small benchmark simulated from the 2PL story:
means within 4 Monte Carlo standard errors of each other, SDs within 4 standard errors of an SD.
The two share no code but the priors' values (written out below, not imported)."""

from dataclasses import replace

import numpy as np
import pytest
from scipy.special import expit

from bayesrank.items import irt, twopl

from .sbc import items
from .test_full_model import _nuts, assert_same_posterior

SD_THETA, SD_MU, SD_SIGMA = 2.5, 2.5, 2.5  # θ ~ ZeroSumNormal(2.5), μ ~ N(0, 2.5), σ ~ HalfNormal(2.5)
TAU_A, U_RANGE = 0.5, 4.0  # log a_i ~ N(0, 0.5²) truncated to ±4 SDs


def twopl_scores(m, n, seed, spread=0.8, mu=-0.5, sigma=1.2):
    """0/1 scores of m models on n items from the 2PL story: θ evenly spaced over ±spread,
    b_i ~ N(mu, sigma), log a_i = τ_a u_i with u_i ~ N(0, 1) on ±4 (by rejection)."""
    rng = np.random.default_rng(seed)
    th = np.linspace(spread, -spread, m)
    b = rng.normal(mu, sigma, n)
    u = rng.normal(0.0, 1.0, n)
    while np.any(bad := np.abs(u) > U_RANGE):
        u[bad] = rng.normal(0.0, 1.0, int(bad.sum()))
    a = np.exp(TAU_A * u)
    return (rng.random((m, n)) < expit(a[None, :] * (th[:, None] - b[None, :]))).astype(float)


def full_twopl_model(y):
    """The uncollapsed 2PL model with every b_i = μ + σ x_i and log a_i = τ_a u_i sampled
    (non-centred; u_i ~ N(0, 1) truncated to ±4: PyMC's TruncatedNormal), Bernoulli outcomes."""
    import pymc as pm

    m, n = y.shape
    with pm.Model(coords={"player": [f"m{i}" for i in range(m)], "item": np.arange(n)}) as model:
        theta = pm.ZeroSumNormal("theta", sigma=SD_THETA, dims="player")
        mu = pm.Normal("mu", 0.0, SD_MU)
        sigma = pm.HalfNormal("sigma", SD_SIGMA)
        x = pm.Normal("x", 0.0, 1.0, dims="item")
        u = pm.TruncatedNormal("u", 0.0, 1.0, lower=-U_RANGE, upper=U_RANGE, dims="item")
        b, a = mu + sigma * x, pm.math.exp(TAU_A * u)
        pm.Bernoulli("y", logit_p=a[None, :] * (theta[:, None] - b[None, :]), observed=y, dims=("player", "item"))
    return model


@pytest.mark.slow
@pytest.mark.validation  # ~1.5 min of NUTS on the full model; the default suite keeps the 2PL SBC and the quadrature checks
def test_collapsed_and_full_twopl_posteriors_agree():
    y = twopl_scores(4, 30, seed=8)
    col = irt.fit_nuts(items(y), seed=3, draws=1000, twopl=True)
    full = _nuts(full_twopl_model(y), seed=4, draws=2000, tune=1000)
    assert_same_posterior(col.idata, full)
    # the quadrature is not what separates the two: reweighting the collapsed draws by
    # exp(loglik on a grid 4× denser in each direction, x on ±10 − loglik on the production grid)
    # (importance sampling onto the denser rule's posterior) moves no mean by 1e-3 (0.003 posterior SDs)
    st = twopl.sufficient(items(y))
    x, u, lw = _dense_grid(st.max_trials)
    dense = replace(st, x_nodes=x, u_nodes=u, log_w=lw)
    idx = np.arange(0, len(col.mu), 8)
    prod = col.extra["grid"]["sigma_max"]
    st_prod = st.regrid(prod) if prod != st.sigma_max else st
    dl = np.array([twopl.loglik(col.draws[i], col.mu[i], col.sigma[i], dense)
                   - twopl.loglik(col.draws[i], col.mu[i], col.sigma[i], st_prod) for i in idx])
    w = np.exp(dl - dl.max())
    w /= w.sum()
    for v in (col.mu[idx], col.sigma[idx], *col.draws[idx].T):
        assert abs(w @ v - v.mean()) < 1e-3, (w @ v, v.mean())


def _dense_grid(trials, f=4.0, x_range=10.0):
    """A trapezoid rule 4× denser than the production rule's in u and x (x on ±10), written here."""
    t = max(trials, 1.0)
    hu = min(0.5, 1 / np.sqrt(1 + TAU_A**2 * t)) / f
    u_row = np.linspace(-U_RANGE, U_RANGE, int(np.ceil(2 * U_RANGE / hu)) + 1)
    xs, us, lw = [], [], []
    for u in u_row:
        a = np.exp(TAU_A * u)
        hx = min(0.5, 1 / np.sqrt(1 + 100.0 * a**2 * t / 4)) / f
        x = np.linspace(-x_range, x_range, int(np.ceil(2 * x_range / hx)) + 1)
        wx = np.full(len(x), x[1] - x[0])
        wx[[0, -1]] /= 2
        wu = (u_row[1] - u_row[0]) / (2 if u in (u_row[0], u_row[-1]) else 1)
        xs.append(x)
        us.append(np.full(len(x), u))
        lw.append(np.log(wx * wu) - 0.5 * (x**2 + u**2) - np.log(2 * np.pi))
    return np.concatenate(xs), np.concatenate(us), np.concatenate(lw)
