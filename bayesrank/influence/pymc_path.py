"""The influence inputs from the PyMC model: MAP θ and Laplace ``H⁻¹`` from PyTensor
(:func:`bayesrank.bt.pymc_model.map_laplace`), per-match score/curvature/third derivative by
PyTensor autodiff of the Bernoulli log-density. Feeding them to the same formulas as the NumPy
path gives the same influence numbers: ``ZeroSumNormal(σ)`` adds ``‖θ‖²/(2σ²)`` to the negative
log posterior, so the MAP is the ridge MLE with ``ridge = 1/σ²`` and the Laplace covariance is its
``H⁻¹`` on the sum-to-zero space.
"""

from __future__ import annotations

import numpy as np

from bayesrank.data.aggregate import PairCounts
from bayesrank.influence.state import BTState, check_ties


def _compile_match_derivatives(ties: str):
    """PyTensor function d ↦ (score, curvature, third) (n,3) of the per-match negative log-lik."""
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt

    d = pt.vector("d")
    win = pm.logp(pm.Bernoulli.dist(logit_p=d), pt.ones_like(d))
    loss_ = pm.logp(pm.Bernoulli.dist(logit_p=d), pt.zeros_like(d))
    cells = [-win, -loss_, -(0.5 * win + 0.5 * loss_) if ties == "half" else pt.zeros_like(d)]
    outs = []
    for nll in cells:
        s = pytensor.grad(nll.sum(), d)  # elementwise: each entry depends on its own d only
        c = pytensor.grad(s.sum(), d)
        c3 = pytensor.grad(c.sum(), d)
        outs.extend([s, c, c3])
    fn = pytensor.function([d], outs, on_unused_input="ignore")

    def derivatives(dv):
        dv = np.asarray(dv, dtype=float)
        flat = fn(dv.ravel())
        s = np.stack(flat[0::3], axis=-1).reshape(dv.shape + (3,))
        c = np.stack(flat[1::3], axis=-1).reshape(dv.shape + (3,))
        c3 = np.stack(flat[2::3], axis=-1).reshape(dv.shape + (3,))
        return s, c, c3

    return derivatives


class PyMCState(BTState):
    """A :class:`BTState` whose θ̂, H⁻¹ and per-match derivatives come from the PyMC model."""

    _derivs = None

    def match_derivatives(self, d, which=None):
        out = self._derivs(d)
        return out if which is None else out[which]


def state_from_pymc(counts: PairCounts, ties: str = "half", prior_sigma: float = 3.0) -> PyMCState:
    """MAP + Laplace of ``bt.pymc_model.build_bt_model(counts, ties, prior_sigma)`` as a state;
    its NumPy twin is ``BTState.fit(counts, ties, ridge=1/prior_sigma**2)``."""
    from bayesrank.bt.pymc_model import build_bt_model, map_laplace

    check_ties(ties)
    model = build_bt_model(counts, ties=ties, prior_sigma=prior_sigma)
    lap = map_laplace(model)
    k = counts.n_players
    cov = lap.cov[:k, :k]
    # H on θ: the Laplace precision on the sum-to-zero space, plus the null direction 1 (any
    # value; H is only used through the constrained inverse, which ignores it)
    one = np.ones((k, k)) / k
    hess = np.linalg.inv(cov + one) - one
    st = PyMCState(counts, ties, 1.0 / prior_sigma**2, np.asarray(lap.theta, float), hess, cov)
    st._derivs = _compile_match_derivatives(ties)
    return st
