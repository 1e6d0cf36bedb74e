"""The pairwise section: one Bradley–Terry leaderboard, every fit method, and each claim answered
three ways — frequentist (contrasts with Fisher, sandwich and bootstrap intervals), Bayesian
(posterior probability of the claim) and by perturbation (smallest verified drop / flip / add that
overturns the point estimate, and, for a significant claim, the smallest that removes its
significance).

Every number comes from the modules' own APIs (``bayesrank.bt``, ``bayesrank.influence``), so it
equals what ``bayesrank fit`` and ``bayesrank audit`` give on the same data.

Ranking claims need a set of contrasts ``θ_a − θ_b > 0`` (``A>B``: one; ``top1``: leader vs every
other player; ``topk:K``: every member vs every non-member). The claim is frequentist-supported
when every contrast is significant by the package's rule (``θ_a − θ_b > z·sd_ab``; an
intersection–union test, so no multiplicity correction is needed), with p-value
``max_ab min(1, 2Φ(−est_ab/sd_ab))``; the reported estimate and interval are those of the weakest
contrast. The Bayesian answer is the share of posterior draws in which the claim holds.
The ``order`` claim compares each refitted/drawn order with the reported one by Kendall τ and
holds when τ > 0.9 (the τ audit breaks it at τ ≤ 0.9: one boundary).

Loss of significance: the audit of the claim's objective in its significance mode
(``bayesrank.influence`` ``+sig``: broken when some contrast the claim needs is no longer
significant by the same contrast test with the same default covariance, on the perturbed data),
for every claim the frequentist answer supports. Not for ``order``: its frequentist answer is a
quantile of Kendall τ over Gaussian draws, a Monte Carlo criterion with no contrast to audit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.review.answer import ClaimAnswer
from bayesrank.review.claims import TAU_THRESHOLD, Claim
from bayesrank.review.verdict import verdict

ACTIONS = ("drop", "flip", "add")


# ---------------------------------------------------------------------------------- claim margins
def claim_contrasts(claim: Claim, players: np.ndarray, theta: np.ndarray) -> list[tuple[int, int]]:
    """The (a, b) index pairs whose contrasts θ_a − θ_b > 0 the claim needs (reference = point θ)."""
    index = {str(p): i for i, p in enumerate(players)}
    order = np.argsort(-theta, kind="stable")
    if claim.kind == "pair":
        return [(index[claim.a], index[claim.b])]
    k = 1 if claim.kind == "top1" else claim.k
    top, rest = order[:k], order[k:]
    return [(int(a), int(b)) for a in top for b in rest]


def margins(draws: np.ndarray, pairs: list[tuple[int, int]]) -> np.ndarray:
    """min over the claim's contrasts of θ_a − θ_b, per draw (draws: (S, K))."""
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    return (draws[:, a] - draws[:, b]).min(axis=1)


def kendall_to_reference(draws: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Kendall τ-b between each draw's order and the reference order (vectorised over draws)."""
    from scipy.stats import kendalltau

    return np.array([kendalltau(d, reference).statistic for d in draws])  # τ-b: scipy's default


# ---------------------------------------------------------------------------------- frequentist
def contrast_table(fit, pairs, z: float) -> pd.DataFrame:
    """est, sd, lower, upper of each contrast θ_a − θ_b under ``fit``'s covariance (as
    ``LeaderboardFit.contrast``), and its directional p-value ``min(1, 2Φ(−est/sd))`` (equal to the
    two-sided Wald p-value when est > 0; 1 when the point estimate contradicts the claim)."""
    from scipy.stats import norm

    from bayesrank.bt.result import contrast_sd

    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    est = fit.score[a] - fit.score[b]
    sd = contrast_sd(fit.theta_cov)[a, b]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.minimum(1.0, 2 * norm.sf(est / sd))
    return pd.DataFrame({"a": a, "b": b, "estimate": est, "sd": sd, "lower": est - z * sd, "upper": est + z * sd,
                         "p_value": p})


def bootstrap_contrasts(boot_draws: np.ndarray, score: np.ndarray, pairs, level: float) -> pd.DataFrame:
    """Percentile intervals of each contrast over bootstrap replicates."""
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    d = boot_draws[:, a] - boot_draws[:, b]
    q = (1 - level) / 2
    lo, hi = np.quantile(d, [q, 1 - q], axis=0)
    return pd.DataFrame({"a": a, "b": b, "estimate": score[a] - score[b], "lower": lo, "upper": hi})


def frequentist_answer(claim: Claim, fits: dict, level: float, z: float, seed: int) -> dict:
    """The claim's frequentist answer under the default interval, with every interval side by side."""
    default = fits["default"]
    players, theta = default.players, default.score
    if claim.kind == "order":
        return _order_frequentist(fits, level, seed)
    pairs = claim_contrasts(claim, players, theta)
    tabs = {name: contrast_table(fits[name], pairs, z) for name in ("fisher", "sandwich")}
    tabs["default"] = contrast_table(default, pairs, z)
    boot = bootstrap_contrasts(fits["bootstrap"].draws[:, : len(players)], theta, pairs, level)
    main = tabs["default"]
    w = int(np.argmin(main["lower"].to_numpy()))  # the binding contrast
    a, b = players[main["a"].iloc[w]], players[main["b"].iloc[w]]
    intervals = {name: [float(t["lower"].iloc[w]), float(t["upper"].iloc[w])] for name, t in tabs.items() if name != "default"}
    intervals["bootstrap"] = [float(boot["lower"].iloc[w]), float(boot["upper"].iloc[w])]
    supported_by = {name: bool((t["lower"] > 0).all()) for name, t in tabs.items() if name != "default"}
    supported_by["bootstrap"] = bool((boot["lower"] > 0).all())
    return {
        "estimate": float(main["estimate"].iloc[w]),
        "lower": float(main["lower"].iloc[w]),
        "upper": float(main["upper"].iloc[w]),
        "p_value": float(main["p_value"].max()),
        "interval": default.interval,
        "contrast": f"{a} − {b}",
        "n_contrasts": len(pairs),
        "supported": bool((main["lower"] > 0).all()),
        "intervals": intervals,
        "supported_by": supported_by,
    }


N_GAUSSIAN_ORDERS = 400


def gaussian_order_taus(score: np.ndarray, cov: np.ndarray, reference: np.ndarray, rng) -> np.ndarray:
    """Kendall τ-b to the ``reference`` order of 400 Gaussian draws N(score, cov) (the normal
    approximation to the sampling distribution of the fitted order)."""
    g = rng.multivariate_normal(score, cov, size=N_GAUSSIAN_ORDERS, method="eigh")
    return kendall_to_reference(g, reference)


def tau_interval(taus: np.ndarray, level: float) -> list[float]:
    """Central ``level`` interval of Kendall τ values (quantiles)."""
    q = (1 - level) / 2
    return [float(np.quantile(taus, q)), float(np.quantile(taus, 1 - q))]


def order_answer(taus: np.ndarray, level: float, interval: str, n_players: int) -> dict:
    """The order claim's frequentist answer from Kendall τ values of Gaussian draws vs the reported
    order: supported when the interval's lower bound exceeds the threshold."""
    lo, hi = tau_interval(taus, level)
    return {"estimate": float(np.mean(taus)), "lower": lo, "upper": hi, "p_value": None,
            "interval": f"{interval}: Kendall τ of {N_GAUSSIAN_ORDERS} Gaussian draws vs the reported order",
            "contrast": f"Kendall τ > {TAU_THRESHOLD}", "n_contrasts": n_players * (n_players - 1) // 2,
            "supported": bool(lo > TAU_THRESHOLD)}


def order_holds(draws: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Whether the order claim holds in each posterior draw (≤ ~1,000 draws, evenly thinned)."""
    return kendall_to_reference(draws[:: max(1, len(draws) // 1000)], reference) > TAU_THRESHOLD


def _order_frequentist(fits: dict, level: float, seed: int) -> dict:
    """Kendall τ between resampled orders and the reported one: bootstrap replicates, and Gaussian
    draws from the Fisher and sandwich covariances."""
    default = fits["default"]
    k = len(default.players)
    rng = np.random.default_rng(seed)
    taus = {"bootstrap": kendall_to_reference(fits["bootstrap"].draws[:, :k], default.score)}
    for name in ("fisher", "sandwich", "default"):
        taus[name] = gaussian_order_taus(fits[name].score, fits[name].theta_cov, default.score, rng)
    iv = {n: tau_interval(t, level) for n, t in taus.items() if n != "default"}
    return {**order_answer(taus["default"], level, default.interval, k), "intervals": iv,
            "supported_by": {n: bool(v[0] > TAU_THRESHOLD) for n, v in iv.items()}}


def bayesian_answer(claim: Claim, bayes_fit, reference: np.ndarray) -> dict:
    """P(claim holds) = share of posterior draws in which it holds."""
    k = len(bayes_fit.players)
    draws = bayes_fit.draws[:, :k]
    if claim.kind == "order":
        hold = order_holds(draws, reference)
    else:
        hold = margins(draws, claim_contrasts(claim, bayes_fit.players, reference)) > 0
    return {"probability": float(np.mean(hold)), "method": bayes_fit.method, "n_draws": int(len(hold))}


# ---------------------------------------------------------------------------------- perturbation
def perturbation_answer(claim: Claim, state, actions=ACTIONS, budget=None, seed: int = 0) -> dict:
    """Smallest verified perturbation per action type: ``bayesrank.influence.audit`` of the claim's
    objective (greedy influence audit, every break confirmed by an exact cold-start refit). Each entry
    carries the audit JSON's fields (budget, fraction, verified, actions, reason, ...)."""
    from bayesrank.influence import audit

    if claim.kind == "pair" and not margins(state.theta[None, :], claim_contrasts(claim, state.players, state.theta))[0] > 0:
        return not_audited("the claim is false at the point estimate", actions)
    report = audit(state, objective=claim.objective, actions=actions, budget=budget, seed=seed)
    return {action: report.audits[action].to_dict() for action in actions}


def significance_perturbation_answer(claim: Claim, state, frequentist: dict, level: float, actions=ACTIONS,
                                     budget=None, seed: int = 0) -> dict:
    """Smallest verified perturbation per action type that removes the claim's significance: the
    audit of its objective with ``significance=True`` (same contrast test, same default covariance
    as :func:`frequentist_answer`, checked on every exact refit). Only for significant claims."""
    from bayesrank.errors import InputError
    from bayesrank.influence import audit

    if claim.kind == "order":
        return not_audited("not audited: the order claim's test (a Kendall τ quantile of Gaussian draws) has no "
                           "contrast to audit", actions)
    if not frequentist.get("supported"):
        return not_audited("not significant: no significance to lose", actions)
    try:
        report = audit(state, objective=claim.objective, actions=actions, budget=budget, seed=seed,
                       significance=True, level=level)
    except InputError as e:  # the audit's own test disagrees at the last digit: say so, do not fail the review
        return not_audited(f"not audited: {e}", actions)
    return {action: report.audits[action].to_dict() for action in actions}


def not_audited(reason: str, actions=ACTIONS) -> dict:
    """The perturbation entries of a claim that is not audited (e.g. false at the point estimate)."""
    return {a: {"broken": None, "budget": None, "fraction": None, "verified": False, "actions": [], "reason": reason}
            for a in actions}


def smallest_fraction(perturbation: dict) -> float | None:
    """The smallest verified overturning fraction over action types (None: none found)."""
    fr = [p["fraction"] for p in perturbation.values() if p.get("broken") and p.get("verified")]
    return min(fr) if fr else None


# ---------------------------------------------------------------------------------- the section
def answer_claims(claims, fits: dict, state, *, level: float, z: float, seed: int, fragile_below: float,
                  budget=None, progress=None) -> list[ClaimAnswer]:
    """Frequentist, Bayesian and perturbation answers (reversal and loss of significance) and the
    verdict of each claim (the verdict uses the reversal: :mod:`bayesrank.review.verdict`)."""
    default = fits["default"]
    bayes = fits.get("nuts") or fits.get("laplace")
    out = []
    for n, claim in enumerate(claims):
        if progress:
            progress(f"claim {claim.text}: intervals and audits", n, len(claims))
        freq = frequentist_answer(claim, fits, level, z, seed)
        bay = bayesian_answer(claim, bayes, default.score) if bayes is not None else None
        pert = perturbation_answer(claim, state, budget=budget, seed=seed)
        sig = significance_perturbation_answer(claim, state, freq, level, budget=budget, seed=seed)
        v = verdict(freq["supported"], None if bay is None else bay["probability"], level,
                    smallest_fraction(pert), fragile_below)
        notes = []
        if bay is not None and freq["supported"] != (bay["probability"] >= level):
            notes.append("the frequentist and the Bayesian answers disagree")
        if len(set(freq["supported_by"].values()) | {freq["supported"]}) > 1:
            notes.append("the intervals disagree: " + ", ".join(
                f"{k} {'supports' if v_ else 'does not support'}" for k, v_ in freq["supported_by"].items()))
        out.append(ClaimAnswer(claim, freq, bay, pert, v, level, notes, significance_perturbation=sig))
    return out
