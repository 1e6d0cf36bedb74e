"""Error rates of the review's claim tests and verdicts, by simulation with known truth.

Many small leaderboards are simulated at once from true scores θ (all pairs, ``n`` comparisons per
pair; ties from a Davidson model when ``tie_rate > 0``), refitted by the batched Newton of
``bayesrank.bt.mle`` and answered as the review answers them:

* the **frequentist** answers (:func:`claim_tests`): a pre-specified pair claim (one-sided), the
  data-selected adjacent pair (the fitted #1 vs #2, two-sided), ``top1`` and ``topk`` (two-sided
  intersection–union tests) and the ``order`` claim (:mod:`bayesrank.review.order`), with the
  review's default covariance (Fisher without ties; half-win scoring with the sandwich with ties);
* the **Bayesian** answer of ``--fast`` (:func:`laplace_probabilities`): the share of 2,000 draws of
  the half-win Laplace twin (ridge MLE with ridge 1/σ², inverse ridge Hessian; with ties adjusted
  to the sandwich, as the review) in which
  the claim holds, against the threshold of its level;
* whether the claim is **true** (:func:`truths`) — the false-support rate of a test is the share of
  replicates where it supports a claim that is false for the true θ.

The verdict's perturbation part needs greedy audits with exact refits per replicate; :func:`verdicts`
runs them (the review's own functions on each simulated leaderboard) for the few hundred replicates
the P(fragile) table needs. ``examples/review_error_rates.py`` prints the tables of
docs/review.md; ``tests/review/test_error_rates.py`` checks the rates that have a nominal value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesrank.data.aggregate import PairCounts


@dataclass
class Simulated:
    """``n_rep`` leaderboards on one template (all pairs): counts (R, P, 3), fits and covariances."""

    theta: np.ndarray  # true scores (K,)
    template: PairCounts
    counts: np.ndarray  # (R, P, 3): a wins, b wins, ties
    estimate: np.ndarray  # (R, K) half-win (or binary) MLE
    cov: np.ndarray  # (R, K, K) the review's default covariance (Fisher; sandwich with ties; cluster-robust)
    ok: np.ndarray  # (R,) finite MLE and Newton converged
    clustered: bool = False  # rows are clusters (items judged several times): ``cov`` is cluster-robust
    fisher: np.ndarray | None = None  # (R, K, K) H⁻¹, the independence covariance (clustered simulations)

    @property
    def n_rep(self) -> int:
        return len(self.estimate)

    @property
    def has_ties(self) -> bool:
        return bool(self.counts[..., 2].sum() > 0)


def template(k: int, n_per_pair) -> PairCounts:
    """All K(K−1)/2 pairs with ``n_per_pair`` comparisons each (a number or one per pair)."""
    i, j = np.triu_indices(k, 1)
    n = np.broadcast_to(np.asarray(n_per_pair, dtype=float), i.shape).copy()
    return PairCounts(np.array([f"p{a}" for a in range(k)], dtype=object), i.astype(np.int64), j.astype(np.int64),
                      n, np.zeros_like(n), np.zeros_like(n))


def outcome_probabilities(theta, tpl: PairCounts, tie_rate: float = 0.0) -> np.ndarray:
    """(P, 3) probabilities of (a wins, b wins, tie) per pair: Bradley–Terry, or Davidson with the
    tie parameter ν chosen so that evenly matched players tie with probability ``tie_rate``."""
    d = theta[tpl.i] - theta[tpl.j]
    if tie_rate <= 0:
        p = 1 / (1 + np.exp(-d))
        return np.stack([p, 1 - p, np.zeros_like(p)], axis=1)
    lam = np.log(2 * tie_rate / (1 - tie_rate))  # at d = 0: e^λ / (2 + e^λ) = tie_rate
    logits = np.stack([d / 2, -d / 2, np.full_like(d, lam)], axis=1)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def simulate(theta, n_per_pair, n_rep: int, seed: int, tie_rate: float = 0.0) -> Simulated:
    """Simulate and refit ``n_rep`` leaderboards (see the module docstring)."""
    from bayesrank.bt.likelihood import tie_model
    from bayesrank.bt.mle import constrained_covariance, meat, newton

    theta = np.asarray(theta, dtype=float)
    k = len(theta)
    tpl = template(k, n_per_pair)
    rng = np.random.default_rng(seed)
    probs = outcome_probabilities(theta, tpl, tie_rate)
    n = tpl.total.astype(np.int64)
    counts = np.stack([rng.multinomial(n[r], probs[r], size=n_rep) for r in range(len(n))], axis=1).astype(float)
    model = tie_model("half")
    res = newton(model, tpl, batch_counts=counts, tol=1e-10)
    est = res.params[:, :k]
    ok = res.converged & np.all(np.isfinite(est), axis=1) & (np.abs(est).max(axis=1) < 20)
    cov = np.empty((n_rep, k, k))
    ties = counts[..., 2].sum() > 0
    for r in range(n_rep):
        if not ok[r]:
            cov[r] = np.nan
            continue
        hinv = constrained_covariance(res.hessian[r], k)
        cov[r] = hinv @ meat(model, tpl.with_counts(counts[r]), res.params[r]) @ hinv if ties else hinv
    return Simulated(theta, tpl, counts, est, cov, ok)


def simulate_clustered(theta, items_per_pair: int, judges: int, item_sd: float, n_rep: int, seed: int) -> Simulated:
    """Clustered truth (PandaLM-like panels): every pair of players gets ``items_per_pair`` items,
    each judged by ``judges`` judges; an item shifts the logit of its pair by u ~ N(0, item_sd²)
    shared by its judges, so the judgments of one item are dependent. Rows of the template are the
    items (``cluster`` = item); ``cov`` is the review's default covariance with ``--cluster item``
    (the cluster-robust sandwich with statsmodels' CRV1 factor, ``bt.mle.covariance``), ``fisher``
    the independence one (H⁻¹). With a design symmetric in two tied players the pseudo-true
    (marginal, attenuated) scores of the two are tied too, so a claim between them is false."""
    from bayesrank.bt.likelihood import tie_model
    from bayesrank.bt.mle import constrained_covariance, covariance, newton

    theta = np.asarray(theta, dtype=float)
    k = len(theta)
    pi, pj = np.triu_indices(k, 1)
    i, j = np.repeat(pi, items_per_pair), np.repeat(pj, items_per_pair)
    g = len(i)
    n = np.full(g, float(judges))
    tpl = PairCounts(np.array([f"p{a}" for a in range(k)], dtype=object), i, j, n, np.zeros(g), np.zeros(g),
                     cluster=np.arange(g), cluster_name="item")
    rng = np.random.default_rng(seed)
    logit = theta[i] - theta[j] + item_sd * rng.standard_normal((n_rep, g))
    wins = rng.binomial(judges, 1 / (1 + np.exp(-logit))).astype(float)
    counts = np.stack([wins, judges - wins, np.zeros_like(wins)], axis=-1)
    model = tie_model("half")
    res = newton(model, tpl, batch_counts=counts, tol=1e-10)
    est = res.params[:, :k]
    ok = res.converged & np.all(np.isfinite(est), axis=1) & (np.abs(est).max(axis=1) < 20)
    fisher = np.stack([constrained_covariance(h, k) for h in res.hessian])
    cov = covariance(model, tpl, res.params, res.hessian, "cluster", hinv=fisher, batch_counts=counts)
    return Simulated(theta, tpl, counts, est, cov, ok, clustered=True, fisher=fisher)


def asymptotic_sd(theta, n_per_pair, a: int, b: int) -> float:
    """sd(θ̂_a − θ̂_b) from the Fisher information at the true θ (all pairs, ``n_per_pair`` binary
    comparisons each): ``H = Σ_pairs n σ(d)σ(−d) x xᵀ``, variance ``cᵀ H⁺ c``."""
    theta = np.asarray(theta, dtype=float)
    k = len(theta)
    tpl = template(k, n_per_pair)
    d = theta[tpl.i] - theta[tpl.j]
    w = tpl.total / (2 + np.exp(d) + np.exp(-d))  # n σ(d) σ(−d)
    h = np.zeros((k, k))
    np.add.at(h, (tpl.i, tpl.i), w)
    np.add.at(h, (tpl.j, tpl.j), w)
    np.add.at(h, (tpl.i, tpl.j), -w)
    np.add.at(h, (tpl.j, tpl.i), -w)
    c = np.zeros(k)
    c[a], c[b] = 1.0, -1.0
    return float(np.sqrt(c @ np.linalg.pinv(h) @ c))


# ---------------------------------------------------------------------------------- truth
def truths(sim: Simulated, k_top: int = 2, pair=(0, 1)) -> dict:
    """Per replicate, whether each claim the review would make is true for the true θ: the
    pre-specified ``pair`` claim, the data-selected adjacent pair (fitted #1 > fitted #2), top1 (the
    fitted leader is strictly best), topk (the fitted top-k set is the true one, strictly) and
    order (τ-b between the true scores and the fitted order > 0.9)."""
    from bayesrank.data.claims import TAU_THRESHOLD

    th = sim.theta
    order = np.argsort(-sim.estimate, axis=1, kind="stable")
    first, second = order[:, 0], order[:, 1]
    top1 = np.array([th[f] > np.delete(th, f).max() for f in first])
    topk = []
    for o in order:
        s, rest = o[:k_top], o[k_top:]
        topk.append(th[s].min() > th[rest].max())
    from bayesrank.stats.kendall import kendall_tau_b

    tau = np.array([kendall_tau_b(th, e) for e in sim.estimate])
    return {"pair": np.full(sim.n_rep, th[pair[0]] > th[pair[1]]), "adjacent": th[first] > th[second],
            "top1": top1, "topk": np.array(topk), "order": tau > TAU_THRESHOLD, "tau": tau}


# ---------------------------------------------------------------------------------- frequentist
def _t(est, cov, a, b):
    """t = (θ̂_a − θ̂_b)/sd per replicate (a, b arrays of player indices per replicate)."""
    r = np.arange(len(est))
    d = est[r, a] - est[r, b]
    v = cov[r, a, a] + cov[r, b, b] - 2 * cov[r, a, b]
    return d / np.sqrt(np.maximum(v, 1e-300))


def claim_tests(sim: Simulated, level: float = 0.95, k_top: int = 2, pair=(0, 1), order: bool = True,
                seed: int = 0, n_sim: int = 2000) -> dict:
    """Per replicate, whether the review's frequentist test supports each claim (module docstring).
    The order test (:func:`bayesrank.review.order.order_test`, the review's own) gets ``n_sim``
    Gaussian error draws per replicate (the report uses 10,000; fewer only coarsen its Monte Carlo
    p-value)."""
    from bayesrank.review.verdict import ONE_SIDED, TWO_SIDED, critical_z

    z1, z2 = critical_z(level, ONE_SIDED), critical_z(level, TWO_SIDED)
    est, cov = sim.estimate, sim.cov
    n, k = est.shape
    ranking = np.argsort(-est, axis=1, kind="stable")
    out = {"pair": _t(est, cov, np.full(n, pair[0]), np.full(n, pair[1])) > z1,
           "adjacent": _t(est, cov, ranking[:, 0], ranking[:, 1]) > z2}
    t_top1 = np.min([_t(est, cov, ranking[:, 0], ranking[:, b]) for b in range(1, k)], axis=0)
    out["top1"] = t_top1 > z2
    t_topk = np.min([_t(est, cov, ranking[:, a], ranking[:, b]) for a in range(k_top) for b in range(k_top, k)], axis=0)
    out["topk"] = t_topk > z2
    if order:
        out["order"] = order_supported(sim, level, seed, n_sim)
    for key in out:
        out[key] = out[key] & sim.ok
    return out


def gaussian_error_batch(cov: np.ndarray, n_sim: int, rng) -> np.ndarray:
    """(R, n_sim, K) draws of N(0, cov_r) for every replicate r (eigen square roots: Σ is singular on
    the sum-to-zero space)."""
    w, v = np.linalg.eigh(cov)
    root = v * np.sqrt(np.clip(w, 0, None))[:, None, :]  # (R, K, K): Σ = root rootᵀ
    z = rng.standard_normal((cov.shape[0], n_sim, cov.shape[1]))
    return z @ np.swapaxes(root, 1, 2)


def order_supported(sim: Simulated, level: float = 0.95, seed: int = 0, n_sim: int = 2000, test=None) -> np.ndarray:
    """Per replicate, whether the order claim (the fitted order, τ > 0.9 to the truth) is supported by
    ``test`` (default the review's :func:`bayesrank.review.order.order_test`; any function with its
    signature and a ``supported`` key, e.g. an alternative under study)."""
    from bayesrank.review.order import order_test

    test = order_test if test is None else test
    rng = np.random.default_rng(seed)
    out = np.zeros(sim.n_rep, dtype=bool)
    for lo in range(0, sim.n_rep, 200):
        hi = min(sim.n_rep, lo + 200)
        good = np.flatnonzero(sim.ok[lo:hi]) + lo
        if not len(good):
            continue
        errs = gaussian_error_batch(sim.cov[good], n_sim, rng)
        for e, r in zip(errs, good):
            out[r] = bool(test(sim.estimate[r], sim.cov[r], sim.estimate[r], level, errors=e)["supported"])
    return out


# ---------------------------------------------------------------------------------- Bayesian (--fast)
def laplace_probabilities(sim: Simulated, prior_sigma: float | None = None, draws: int = 2000, seed: int = 0,
                          k_top: int = 2, pair=(0, 1), adjusted: bool | None = None) -> dict:
    """Per replicate, the ``--fast`` posterior probability of each claim: the share of ``draws``
    Gaussian draws of the Laplace twin (ridge MLE with ridge 1/σ², covariance = inverse ridge Hessian)
    of the half-win model; with ties or clusters curvature-adjusted to the review's default covariance
    (the sandwich, the cluster-robust sandwich: as the review's ``bayesrank.review.fits.claims_posterior``).
    ``adjusted=False``: the unadjusted (independence) posterior, for comparison."""
    from bayesrank.bt.likelihood import tie_model
    from bayesrank.bt.mle import constrained_covariance, newton
    from bayesrank.bt.pymc_model import DEFAULT_PRIOR_SIGMA
    from bayesrank.stats.adjusted_posterior import adjust_draws_batch

    sigma = DEFAULT_PRIOR_SIGMA if prior_sigma is None else prior_sigma
    k = len(sim.theta)
    model = tie_model("half")
    res = newton(model, sim.template, batch_counts=sim.counts, ridge=1.0 / sigma**2, tol=1e-10)
    rng = np.random.default_rng(seed)
    adjust = (sim.has_ties or sim.clustered) if adjusted is None else adjusted
    out = {key: np.zeros(sim.n_rep) for key in ("pair", "adjacent", "top1", "topk")}
    rank = np.argsort(-sim.estimate, axis=1, kind="stable")  # claims are about the reported (MLE) order
    for lo in range(0, sim.n_rep, 250):  # batches of replicates: (R, draws, K) arrays
        r = np.arange(lo, min(sim.n_rep, lo + 250))
        good = sim.ok[r] & np.all(np.isfinite(res.params[r]), axis=1)
        r = r[good]  # a replicate without a finite MLE answers nothing (its probabilities stay 0)
        if not len(r):
            continue
        cov = np.stack([constrained_covariance(res.hessian[q], k, model.n_extra)[:k, :k] for q in r])
        g = res.params[r, None, :k] + gaussian_error_batch(cov, draws, rng)
        if adjust:
            g = adjust_draws_batch(g, sim.cov[r], n_players=k)
        rk = rank[r]

        def pick(cols, g=g, r=r):
            return np.take_along_axis(g, np.broadcast_to(cols[:, None, :], (len(r), draws, cols.shape[1])), 2)

        first, second = pick(rk[:, :1])[..., 0], pick(rk[:, 1:2])[..., 0]
        out["pair"][r] = np.mean(g[..., pair[0]] > g[..., pair[1]], axis=1)
        out["adjacent"][r] = np.mean(first > second, axis=1)
        out["top1"][r] = np.mean(first > pick(rk[:, 1:]).max(axis=2), axis=1)
        out["topk"][r] = np.mean(pick(rk[:, :k_top]).min(axis=2) > pick(rk[:, k_top:]).max(axis=2), axis=1)
    return out


def rate(hits: np.ndarray) -> tuple[float, float]:
    """(share, Monte Carlo SE) of a boolean array."""
    hits = np.asarray(hits, dtype=bool)
    p = float(hits.mean())
    return p, float(np.sqrt(max(p * (1 - p), 1e-12) / len(hits)))


# ---------------------------------------------------------------------------------- verdicts
def verdicts(sim: Simulated, claims=("top1",), fragile_below: float = 0.01, level: float = 0.95,
             reps: int | None = None, seed: int = 0, budget: int | None = None) -> list[dict]:
    """The review's verdict of each claim on the first ``reps`` replicates, by the review's own
    functions (``bayesrank.review.pairwise``: the contrast answer with the default covariance, the
    claim's evidence, the greedy audits of drop/flip/add with exact refits, the rule) and the
    ``--fast`` posterior probability (:func:`laplace_probabilities`). Slow (audits): use a few hundred
    replicates. One dict per replicate and claim: ``verdict``, ``supported`` (frequentist),
    ``probability``, ``fraction`` (smallest verified overturning fraction of the claim's evidence),
    ``fraction_of_all``, ``n_eff`` and ``true`` (the claim holds for the true θ)."""
    from types import SimpleNamespace

    from bayesrank.influence.state import BTState
    from bayesrank.review.claims import parse_claim
    from bayesrank.review.pairwise import (
        claim_contrasts,
        claim_evidence,
        contrast_answer,
        decide,
        perturbation_answer,
    )
    from bayesrank.review.verdict import probability_threshold

    players = sim.template.players
    n = sim.n_rep if reps is None else min(reps, sim.n_rep)
    sub = Simulated(sim.theta, sim.template, sim.counts[:n], sim.estimate[:n], sim.cov[:n], sim.ok[:n],
                    clustered=sim.clustered, fisher=None if sim.fisher is None else sim.fisher[:n])
    truth = truths(sub)
    probs = laplace_probabilities(sub, seed=seed)
    parsed = [parse_claim(c, "pairwise", players=players) for c in claims]
    out = []
    for r in range(n):
        if not sub.ok[r]:
            continue
        state = BTState.fit(sim.template.with_counts(sub.counts[r]), ties="half")
        view = SimpleNamespace(players=players, score=sub.estimate[r], theta_cov=sub.cov[r])
        for claim in parsed:
            pairs = claim_contrasts(claim, players, sub.estimate[r])
            freq = contrast_answer(view, pairs, level, claim.sided, "default", players)
            rel = claim_evidence(claim, state, pairs, freq["binding_index"])
            key = {"top1": "top1", "topk": "topk", "pair": "pair"}[claim.kind]
            bay = {"probability": float(probs[key][r]), "threshold": probability_threshold(level, claim.sided)}
            pert = perturbation_answer(claim, state, rel, fragile_below, budget=budget, seed=seed)
            found = [p for p in pert.values() if p.get("broken") and p.get("verified")]
            out.append({"rep": r, "claim": claim.text, "verdict": decide(freq, bay, pert, rel, fragile_below),
                        "supported": bool(freq["supported"]), "probability": bay["probability"],
                        "fraction": min((p["fraction"] for p in found), default=None),
                        "fraction_of_all": min((p["fraction_of_all"] for p in found), default=None),
                        "n_eff": rel["n"], "true": bool(truth[key][r])})
    return out
