"""Simulation-based calibration (Talts et al. 2018) of the HJA PyMC model under NUTS.

For each simulation: draw the identified parameters from the model's prior with independent NumPy code,
simulate binomial counts on a fixed design (every judge compares every pair ``per_cell`` times), fit the
package's model (built once, compiled once by nutpie, refitted with ``with_data``), thin the draws to
L = 99 and record the rank of the truth among them for scalar quantities: the consensus scores μ_i,
the sensitivities γ_k, the singular values s_c and the entries of the structured residual ``R = U Vᵀ``
(sign-free, so no dependence on the sign convention). If the posterior computation is right every rank
is uniform on {0, …, 99}.

Prior (the model's, ``bayesrank.hja.pymc_model.build_hja_model``), drawn here without PyMC:

- ``μ = z − z̄``, ``z_i ~ N(0, σ_μ²)`` (ZeroSumNormal); ``γ = 1 + (w − w̄)``, ``w_k ~ N(0, σ_γ²)``;
- ``s_c = Σ_{l ≥ c} e_l``, ``e_l ~ HalfNormal(σ_s)``;
- ``V`` = a Haar-uniform orthonormal r-frame in the orthogonal complement of ``[1, μ]`` (QR with positive
  diagonal of a projected Gaussian matrix), ``P`` likewise in the complement of ``1`` (judges); the
  model's Bartlett potentials act on the Gram–Schmidt radii only, so they leave these directions
  Haar-uniform (models/hja.md); ``U = P diag(s)``; column signs folded so that ``V[a_c, c] > 0``.

Uniformity (``bayesrank.sbc``, shared with the Bradley–Terry SBC): per quantity a chi-square test on 10
equal bins and a dispersion test on the mean of ``(u − ½)²`` (exact null moments), Bonferroni over all
tests and quantities (family-wise level ``alpha``); ``bayesrank.sbc.power`` gives each test's chance to
detect a posterior whose SD is off by a factor ``c`` or whose centre is off by ``delta`` posterior SDs.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from bayesrank.hja.data import JudgePairCounts
from bayesrank.sbc import L_DRAWS, rank_of_truth

__all__ = ["design", "prior_draw", "quantities", "quantity_names", "sbc_ranks"]


def design(n_judges: int, n_players: int, per_cell: int) -> JudgePairCounts:
    """Every judge compares every pair ``per_cell`` times (counts y = 0 placeholder)."""
    i, j = np.triu_indices(n_players, 1)
    K, R = n_judges, len(i)
    return JudgePairCounts(np.array([f"judge{k}" for k in range(K)], dtype=object),
                           np.array([f"player{p}" for p in range(n_players)], dtype=object),
                           np.repeat(np.arange(K), R), np.tile(i, K), np.tile(j, K), np.zeros(K * R),
                           np.full(K * R, float(per_cell)))


def _haar_frame(rng, dim: int, r: int, exclude: np.ndarray) -> np.ndarray:
    """Orthonormal r-frame, Haar-uniform in the orthogonal complement of the columns of ``exclude``."""
    E, _ = np.linalg.qr(exclude)
    Z = rng.normal(size=(dim, r))
    Z = Z - E @ (E.T @ Z)
    Q, Rm = np.linalg.qr(Z)
    return Q * np.sign(np.diag(Rm))


def prior_draw(rng, K: int, N: int, r: int, sigma_mu=3.0, sigma_gamma=1.0, sigma_s=3.0, anchors=None) -> dict:
    """One draw of the identified parameters from the model's prior (module docstring)."""
    z = rng.normal(0.0, sigma_mu, N)
    mu = z - z.mean()
    w = rng.normal(0.0, sigma_gamma, K)
    gamma = 1.0 + w - w.mean()
    if not r:
        return {"mu": mu, "gamma": gamma, "s": np.zeros(0), "U": np.zeros((K, 0)), "V": np.zeros((N, 0))}
    e = np.abs(rng.normal(0.0, sigma_s, r))
    s = np.cumsum(e[::-1])[::-1]
    V = _haar_frame(rng, N, r, np.column_stack([np.ones(N), mu]))
    P = _haar_frame(rng, K, r, np.ones((K, 1)))
    a = np.zeros(r, dtype=int) if anchors is None else np.asarray(anchors, dtype=int)
    flip = np.sign(V[a, np.arange(r)])
    return {"mu": mu, "gamma": gamma, "s": s, "U": P * (s * flip), "V": V * flip}


def quantities(mu, gamma, s, U, V) -> np.ndarray:
    """Scalar quantities ranked (last axis): μ (N), γ (K), s (r), vec(U Vᵀ) (K·N)."""
    R = np.einsum("...kc,...ic->...ki", U, V)
    lead = np.shape(mu)[:-1]
    return np.concatenate([mu, gamma, s, R.reshape(lead + (-1,))], axis=-1)


def quantity_names(K: int, N: int, r: int) -> list[str]:
    return ([f"mu[{i}]" for i in range(N)] + [f"gamma[{k}]" for k in range(K)] + [f"s[{c}]" for c in range(r)]
            + [f"R[{k},{i}]" for k in range(K) for i in range(N)])


def sbc_ranks(n_sims: int = 200, seed: int = 0, n_judges: int = 3, n_players: int = 4, rank: int = 1,
              per_cell: int = 20, draws: int = 500, tune: int = 500, prior: dict | None = None):
    """(n_sims × Q) ranks of the true quantities among L = 99 thinned posterior draws, the number of
    divergent transitions over all fits and the quantity names."""
    import nutpie

    from bayesrank.hja.pymc_model import build_hja_model, nutpie_backend

    prior = prior or {}
    K, N, r = n_judges, n_players, rank
    tmpl = design(K, N, per_cell)
    anchors = np.zeros(r, dtype=int)
    model = build_hja_model(tmpl, r, anchors, **prior)
    backend = nutpie_backend()
    compiled = nutpie.compile_pymc_model(model, freeze_model=False, backend=backend, gradient_backend=backend)
    rng = np.random.default_rng(seed)
    ranks, divergences = [], 0
    for _ in range(n_sims):
        t = prior_draw(rng, K, N, r, anchors=anchors, **prior)
        S = np.outer(t["gamma"], t["mu"]) + t["U"] @ t["V"].T
        y = rng.binomial(tmpl.n.astype(np.int64), expit(S[tmpl.k, tmpl.i] - S[tmpl.k, tmpl.j])).astype(float)
        tr = nutpie.sample(compiled.with_data(wins_obs=y), draws=draws, tune=tune, chains=2, cores=1,
                           seed=int(rng.integers(2**31)), progress_bar=False)
        post = tr.posterior

        def arr(name, shape, post=post):
            return post[name].values.reshape((2 * draws,) + shape)

        if r:
            q = quantities(arr("mu", (N,)), arr("gamma", (K,)), arr("singular_values", (r,)), arr("U", (K, r)),
                           arr("V", (N, r)))
        else:
            q = quantities(arr("mu", (N,)), arr("gamma", (K,)), np.zeros((2 * draws, 0)), np.zeros((2 * draws, K, 0)),
                           np.zeros((2 * draws, N, 0)))
        truth = quantities(t["mu"], t["gamma"], t["s"], t["U"], t["V"])
        ranks.append(rank_of_truth(q.reshape(2, draws, -1), truth, L_DRAWS))
        divergences += int(np.asarray(tr.sample_stats["diverging"]).sum())
    return np.array(ranks), divergences, quantity_names(K, N, r)

