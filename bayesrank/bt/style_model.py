"""Style-controlled Bradley–Terry as a PyMC model on individual battles.

Generative story (one row ``n`` per battle; ``f_n v_n`` its frequency × importance weight)::

    θ ~ ZeroSumNormal(σ)                 dims player     (Σθ = 0 by construction)
    β ~ Normal(0, σ_β)                   dims feature    (per SD of the standardised feature difference)
    η_n = θ[a_n] − θ[b_n] + d_nᵀβ
    y_n ~ Bernoulli(σ(η_n)), weighted    dims battle     (y = ½ for a half-tie)

The weighted (fractional) Bernoulli kernel ``f v [y log σ(η) + (1 − y) log σ(−η)]`` is written
as a Binomial kernel with fractional ``n = f v`` and ``value = f v y``.
Frequentist twin: the ZeroSumNormal transform is an isometry, so the MAP is the penalised MLE of
:mod:`bayesrank.bt.style` with ``ridge = 1/σ²`` on θ and ``beta_ridge = 1/σ_β²`` on β.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from bayesrank.bt.pymc_model import DEFAULT_PRIOR_SIGMA
from bayesrank.bt.style import BattleData

#: Prior SD of a style coefficient: 1 logit per SD of the standardised feature difference
#: (LMArena's fitted coefficients are 0.02–0.27): weakly informative.
DEFAULT_BETA_SIGMA = 1.0


def _weighted_bernoulli_logp(value, n, eta):
    """``value·log σ(η) + (n − value)·log σ(−η)`` with fractional ``n = f v``, ``value = f v y``."""
    return -value * pt.softplus(-eta) - (n - value) * pt.softplus(eta)


def _weighted_bernoulli_random(n, eta, rng=None, size=None):
    from scipy.special import expit

    return rng.binomial(np.round(n).astype(np.int64), expit(eta), size=size).astype(float)


def build_style_model(data: BattleData, prior_sigma: float = DEFAULT_PRIOR_SIGMA,
                      beta_sigma: float = DEFAULT_BETA_SIGMA) -> pm.Model:
    """PyMC model of ``data`` (named dims ``player``, ``feature``, ``battle``)."""
    w = data.freq * data.weight
    keep = np.flatnonzero(w > 0)
    coords = {"player": [str(p) for p in data.players], "feature": list(data.features), "battle": keep}
    with pm.Model(coords=coords) as model:
        theta = pm.ZeroSumNormal("theta", sigma=prior_sigma, dims="player")
        eta = theta[data.i[keep]] - theta[data.j[keep]]
        if data.n_features:
            beta = pm.Normal("beta", 0.0, beta_sigma, dims="feature")
            eta = eta + pt.dot(pt.as_tensor(data.X[keep]), beta)
        pm.CustomDist("y", w[keep], eta, logp=_weighted_bernoulli_logp, random=_weighted_bernoulli_random,
                      observed=w[keep] * data.y[keep], dims="battle", dtype="floatX")
    return model
