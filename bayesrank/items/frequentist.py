"""Frequentist answers for a models × items matrix (items are the sampling units).

**Model means** ``ȳ_m = Σ_i y_mi / N`` with intervals: Wilson and Jeffreys for 0/1 scores (the
score interval is the default), ``ȳ ± t_{N−1}·se`` for fractional scores, ``ȳ ± z·se_cluster``
when items are clustered.

**Paired covariance** of the means (the item is the unit: ψ_mi = (y_mi − ȳ_m)/N)::

    V = N/(N−1) · Σ_i ψ_i ψ_iᵀ                       (= the sample covariance of the columns / N)
    V = G/(G−1) · Σ_g (Σ_{i∈g} ψ_i)(Σ_{i∈g} ψ_i)ᵀ    (clusters g = 1..G: CR1, Liang–Zeger)

so ``Var(ȳ_a − ȳ_b) = V_aa + V_bb − 2V_ab`` is exactly the paired ``sd(d)²/N`` (or the cluster-robust
paired variance of :func:`bayesrank.stats.paired.cluster_se`).

**Paired tests** of ``ȳ_a > ȳ_b`` on the shared items: exact McNemar on the discordant items for
0/1 scores, the paired t test (N − 1 df) for fractional scores, the cluster-robust Wald test when
clustered; two-sided and one-sided (in the claim's direction) p-values.

**Rank confidence sets and tie groups** from (ȳ, V): :mod:`bayesrank.stats.ranksets` (simultaneous,
stepdown, Gaussian critical values).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.items.data import ItemScores


def mean_covariance(data: ItemScores) -> np.ndarray:
    """(M, M) covariance of the model means, paired over items (cluster-robust when clustered). For
    0/1 scores without clusters from the integer counts, ``V_ab = (N·B_ab − S_a S_b) / (N²(N − 1))``
    with ``B = y yᵀ`` (:meth:`~bayesrank.items.data.ItemScores.both`) and ``S`` the correct counts:
    the same matrix, with an exact numerator and no float copy of the scores. Computed once per
    data set (a copy is returned)."""
    if "cov" not in data._cache:
        data._cache["cov"] = _mean_covariance(data)
    return data._cache["cov"].copy()


def _mean_covariance(data: ItemScores) -> np.ndarray:
    y = data.scores
    n = y.shape[1]
    codes = data.cluster_codes
    if codes is None and data.binary:
        both = data.both()
        s = np.diag(both)
        return (n * both - np.outer(s, s)) / (float(n) ** 2 * (n - 1))
    psi = (y - y.mean(axis=1, keepdims=True)) / n
    if codes is None:
        return (n / (n - 1)) * (psi @ psi.T)
    g = int(codes.max()) + 1
    sums = np.zeros((y.shape[0], g))
    np.add.at(sums.T, codes, psi.T)
    return (g / (g - 1)) * (sums @ sums.T)


def _t_or_z(data: ItemScores, level: float) -> tuple[float, str]:
    from scipy import stats

    if data.clusters is not None:
        return float(stats.norm.ppf(0.5 + level / 2)), "cluster-robust Wald"
    return float(stats.t.ppf(0.5 + level / 2, data.n_items - 1)), "t"


def model_table(data: ItemScores, level: float = 0.95) -> pd.DataFrame:
    """player, score (mean), lower, upper (the default interval, named in ``attrs["interval"]``),
    se, n_items, and for 0/1 scores wilson_lower/upper and jeffreys_lower/upper."""
    from bayesrank.stats.paired import jeffreys_many, wilson_many

    means = data.means()
    se = np.sqrt(np.diag(mean_covariance(data)))
    n = data.n_items
    out = pd.DataFrame({"player": [str(m) for m in data.models], "score": means, "se": se, "n_items": n})
    if data.binary and data.clusters is None:
        x = np.rint(means * n).astype(int)
        w = wilson_many(x, n, level)
        j = jeffreys_many(x, n, level)
        out["lower"], out["upper"] = w[:, 0], w[:, 1]
        out["wilson_lower"], out["wilson_upper"] = w[:, 0], w[:, 1]
        out["jeffreys_lower"], out["jeffreys_upper"] = j[:, 0], j[:, 1]
        out.attrs["interval"] = "Wilson score"
    else:
        q, name = _t_or_z(data, level)
        out["lower"], out["upper"] = np.clip(means - q * se, 0, 1), np.clip(means + q * se, 0, 1)
        out.attrs["interval"] = ("cluster-robust Wald (CR1)" if data.clusters is not None
                                 else f"paired t ({n - 1} df)")
    return out


def pair_stats(data: ItemScores, a, b, level: float = 0.95, cov: np.ndarray | None = None) -> pd.DataFrame:
    """Paired comparison of ȳ_a − ȳ_b for arrays of model indices ``a``, ``b``: estimate, se, lower,
    upper (two-sided ``level``), n10/n01 (0/1 scores), test, p_two_sided, p_one_sided (H1: ȳ_a > ȳ_b)."""
    from scipy import stats

    from bayesrank.stats.paired import mcnemar_exact_many

    a = np.atleast_1d(np.asarray(a, dtype=int))
    b = np.atleast_1d(np.asarray(b, dtype=int))
    y = data.scores
    v = mean_covariance(data) if cov is None else cov
    means = y.mean(axis=1)
    est = means[a] - means[b]
    se = np.sqrt(np.clip(v[a, a] + v[b, b] - 2 * v[a, b], 0.0, None))
    out = pd.DataFrame({"a": a, "b": b, "estimate": est, "se": se})
    n = data.n_items
    if data.clusters is not None:
        z = np.divide(est, se, out=np.where(est > 0, np.inf, np.where(est < 0, -np.inf, 0.0)), where=se > 0)
        p2, p1 = 2 * stats.norm.sf(np.abs(z)), stats.norm.sf(z)
        test, q = "cluster-robust Wald", stats.norm.ppf(0.5 + level / 2)
    elif data.binary:
        wins = data.wins()  # [a, b]: items a solved and b did not
        n10, n01 = wins[a, b], wins[b, a]
        out["n10"], out["n01"] = n10, n01
        p2, p1 = mcnemar_exact_many(n10, n01)
        test, q = "exact McNemar", stats.norm.ppf(0.5 + level / 2)
    else:
        t = np.divide(est, se, out=np.where(est > 0, np.inf, np.where(est < 0, -np.inf, 0.0)), where=se > 0)
        p2, p1 = 2 * stats.t.sf(np.abs(t), n - 1), stats.t.sf(t, n - 1)
        test, q = "paired t", stats.t.ppf(0.5 + level / 2, n - 1)
    out["lower"], out["upper"] = est - q * se, est + q * se
    out["test"] = test
    out["p_two_sided"], out["p_one_sided"] = np.minimum(1.0, p2), np.minimum(1.0, p1)
    return out


def rank_sets(data: ItemScores, level: float = 0.95, seed: int = 0, n_sim: int | None = None):
    """(simultaneous RankSets, tie groups) from the means and their paired covariance; ``n_sim``
    Monte Carlo draws for the critical values (default 10,000, 4,000 above 50 models, 1,000 —
    csranks's default — from 1,000 models on: the max over K(K−1) contrasts costs K² per draw)."""
    if n_sim is None:
        n_sim = 10_000 if data.n_models <= 50 else 4_000 if data.n_models < 1000 else 1_000
    from bayesrank.stats.ranksets import rank_confidence_sets, tie_groups

    means = data.means()
    players = np.asarray([str(m) for m in data.models], dtype=object)
    df = None if data.clusters is None else data.n_clusters - 1  # CR1 from G clusters: t reference, G − 1 df
    rs = rank_confidence_sets(means, mean_covariance(data), players, level, simultaneous=True, n_sim=n_sim,
                              seed=seed, df=df)
    return rs, tie_groups(means, rs.significant, players)


def order_tau_bound(significant: np.ndarray, means: np.ndarray) -> tuple[float, int, int]:
    """Lower confidence bound of Kendall τ between the true and the reported (point) order:
    ``1 − 2u/P`` with u the pairs not significantly ordered as reported (simultaneous rejections)
    and P = K(K−1)/2 — on the event that every simultaneous interval covers, the significantly
    ordered pairs are concordant and at worst all others are discordant. (bound, u, P)."""
    k = len(means)
    ia, ib = np.triu_indices(k, 1)
    ahead = means[ia] >= means[ib]
    hi, lo = np.where(ahead, ia, ib), np.where(ahead, ib, ia)
    ordered = significant[hi, lo] & (means[hi] > means[lo])
    p = len(ia)
    u = int(p - ordered.sum())
    return 1.0 - 2.0 * u / p, u, p


def effective_units(data: ItemScores, a: int, b: int) -> tuple[float, str]:
    """The number of items (clusters) informing the contrast ȳ_a − ȳ_b: the inverse Simpson index
    ``(Σ v)² / Σ v²`` of the units' shares ``v_i = (d_i − d̄)²`` (clusters: ``v_g = (Σ_{i∈g} (d_i − d̄))²``)
    of the paired variance of the contrast, d_i = y_ai − y_bi — the package's one definition of a
    claim's own evidence (the effective number of comparisons informing its binding contrast). m
    units sharing the variance equally give m; items both models score alike add ~0 (for 0/1 scores
    n ≈ the discordant items). (n, what)."""
    d = data.scores[a] - data.scores[b]
    r = d - d.mean()
    codes = data.cluster_codes
    unit = "items"
    if codes is not None:
        r = np.bincount(codes, weights=r)
        unit = "clusters"
    v = r**2
    total = v.sum()
    if not total > 0:
        return float(len(v)), f"{unit} (the contrast has no variance: all {len(v)})"
    return float(total**2 / (v**2).sum()), f"effective {unit} informing the binding contrast " \
                                             f"{data.models[a]} − {data.models[b]} (inverse Simpson index of " \
                                             f"their shares of its paired variance)"
