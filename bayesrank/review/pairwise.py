"""The pairwise section: one Bradley–Terry leaderboard, every fit method, and each claim answered
three ways — frequentist (contrasts with Fisher, sandwich and bootstrap intervals), Bayesian
(posterior probability of the claim) and by perturbation (smallest verified drop / flip / add that
overturns the point estimate, and, for a significant claim, the smallest that removes its
significance), each perturbation measured against the claim's own evidence
(:mod:`bayesrank.review.evidence`).

Every number comes from the modules' own APIs (``bayesrank.bt``, ``bayesrank.influence``), so it
equals what ``bayesrank fit`` and ``bayesrank audit`` give on the same data.

Ranking claims need a set of contrasts ``θ_a − θ_b > 0`` (``A>B``: one; ``top1``: leader vs every
other player; ``topk:K``: every member vs every non-member). The claim is frequentist-supported
when every contrast is significant, ``θ_a − θ_b > z·sd_ab`` with ``z`` one-sided (a claim named in
advance) or two-sided (a claim read off the data; :mod:`bayesrank.review.verdict`): an
intersection–union test, so no multiplicity correction is needed. Its p-value is the largest of
the contrasts' directional p-values, which is the p-value of the **binding** contrast, the one
with the smallest ``t = est/sd``; the reported estimate and interval are that contrast's (so the
interval excludes 0 exactly when p < 1 − level). The Bayesian answer is the share of posterior
draws in which the claim holds, against the threshold of the same level. The ``order`` claim's
test is :mod:`bayesrank.review.order` (a Kendall τ bound from simultaneous contrast intervals).

What would settle it (``to_settle``, :mod:`bayesrank.review.settle`): for a claim that is not
supported, the comparisons to add, and their pairs, for 80% power of the same test if the estimate
were true; null for a supported claim.

Loss of significance: the audit of the claim's objective in its significance mode
(``bayesrank.influence`` ``+sig``: broken when some contrast the claim needs is no longer
significant by the same contrast test, same sidedness and default covariance, on the perturbed
data), for every claim the frequentist answer supports. Not for ``order``: its test is a Monte
Carlo bound over all pairs, not a contrast the audit can follow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesrank.review import evidence
from bayesrank.review.answer import ClaimAnswer
from bayesrank.review.claims import TAU_THRESHOLD, Claim, statement
from bayesrank.review.scale import UNITS
from bayesrank.review.settle import pairwise_to_settle
from bayesrank.review.verdict import (
    ONE_SIDED,
    critical_z,
    p_value,
    probability_threshold,
    verdict,
)

ACTIONS = ("drop", "flip", "add")
CLUSTER_ACTION = "drop-cluster"  # with --cluster: remove whole clusters (the audit's budget counts clusters)


@dataclass(frozen=True)
class Scope:
    """How the answers name the model they are about: the plain fit (the defaults) or a variant
    answered beside it (style control: :data:`bayesrank.review.style.STYLE`). Words only."""

    under: str = ""  # where a claim is false at the point estimate, e.g. " under style control"
    method: str = ""  # appended to the posteriors' method names, e.g. " (style)"
    qualifier: str = ""  # the model in the other tie model's note, e.g. "style-controlled"
    not_converged: str = "the {method} posterior did not converge (see the diagnostics): no verdict"


PLAIN = Scope()


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


def claim_pairs(claim: Claim, reference_players, reference_theta, players) -> list[tuple[int, int]] | None:
    """The claim's contrasts defined on the reference fit (:func:`claim_contrasts`: the same players
    are claimed) as indices of ``players``; None when a claimed player is absent from them."""
    index = {str(p): i for i, p in enumerate(players)}
    out = []
    for a, b in claim_contrasts(claim, reference_players, np.asarray(reference_theta)):
        na, nb = str(reference_players[a]), str(reference_players[b])
        if na not in index or nb not in index:
            return None
        out.append((index[na], index[nb]))
    return out


def reference_scores(players, reference_players, reference_theta) -> np.ndarray:
    """The reference fit's scores in the order of ``players`` (the same players: the order claim)."""
    from bayesrank.errors import InputError

    index = {str(p): i for i, p in enumerate(reference_players)}
    missing = [str(p) for p in players if str(p) not in index]
    if missing or len(players) != len(reference_players):
        raise InputError(f"the order claim needs the same players in both fits; "
                         f"differ: {missing or sorted(set(map(str, reference_players)) - set(map(str, players)))}")
    return np.array([reference_theta[index[str(p)]] for p in players], dtype=float)


def margins(draws: np.ndarray, pairs: list[tuple[int, int]]) -> np.ndarray:
    """min over the claim's contrasts of θ_a − θ_b, per draw (draws: (S, K)). Contrasts that are every
    pair of a set A against a set B (top-k against the rest): ``min_A θ − max_B θ``, the same number
    (a rounded difference is monotone in both terms) without the (S, |A|·|B|) differences."""
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    ua, ub = np.unique(a), np.unique(b)
    if len(pairs) > 1 and len(ua) * len(ub) == len(pairs) == len(set(map(tuple, pairs))):
        return draws[:, ua].min(axis=1) - draws[:, ub].max(axis=1)
    return (draws[:, a] - draws[:, b]).min(axis=1)


def kendall_to_reference(draws: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Kendall τ-b between each draw's order and the reference order (one per draw)."""
    from bayesrank.stats.kendall import kendall_tau_b

    return np.array([kendall_tau_b(d, reference) for d in draws])


# ---------------------------------------------------------------------------------- frequentist
def contrast_table(fit, pairs, z: float, sided: str = "two-sided") -> pd.DataFrame:
    """est, sd, t, lower, upper of each contrast θ_a − θ_b under ``fit``'s covariance (as
    ``LeaderboardFit.contrast``) and its directional p-value (:func:`bayesrank.review.verdict.p_value`:
    ``Φ(−t)`` one-sided, ``min(1, 2Φ(−t))`` two-sided — equal to the two-sided Wald p-value when
    est > 0). One-sided: ``upper`` is +inf (the interval is ``[est − z·sd, ∞)``)."""
    from bayesrank.stats.ranksets import contrast_sd_at

    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    est = fit.score[a] - fit.score[b]
    sd = contrast_sd_at(fit.theta_cov, a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sd > 0, est / np.where(sd > 0, sd, 1.0), np.sign(est) * np.inf)
    upper = est + z * sd if sided != ONE_SIDED else np.full(len(est), np.inf)
    return pd.DataFrame({"a": a, "b": b, "estimate": est, "sd": sd, "t": t, "lower": est - z * sd, "upper": upper,
                         "p_value": p_value(t, sided)})


def binding(table: pd.DataFrame) -> int:
    """Row of the binding contrast: the smallest ``t = est/sd`` (the largest p-value; the claim is
    significant iff this contrast is)."""
    return int(np.argmin(table["t"].to_numpy()))


def bootstrap_contrasts(boot_draws: np.ndarray, score: np.ndarray, pairs, level: float,
                        sided: str = "two-sided") -> pd.DataFrame:
    """Percentile intervals of each contrast over bootstrap replicates (one-sided: the lower
    ``1 − level`` quantile and +inf)."""
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    d = boot_draws[:, a] - boot_draws[:, b]
    q = 1 - level if sided == ONE_SIDED else (1 - level) / 2
    lo, hi = np.quantile(d, [q, 1 - q], axis=0)
    if sided == ONE_SIDED:
        hi = np.full(len(lo), np.inf)
    return pd.DataFrame({"a": a, "b": b, "estimate": score[a] - score[b], "lower": lo, "upper": hi})


def _bound(v) -> float | None:
    return None if not np.isfinite(v) else float(v)


def contrast_answer(fit, pairs, level: float, sided: str, interval: str, players) -> dict:
    """The intersection–union answer of a set of contrasts under ``fit``'s covariance: the binding
    contrast's estimate, interval and p-value, and whether every contrast is significant."""
    z = critical_z(level, sided)
    t = contrast_table(fit, pairs, z, sided)
    w = binding(t)
    return {
        "estimate": float(t["estimate"].iloc[w]),
        "lower": float(t["lower"].iloc[w]),
        "upper": _bound(t["upper"].iloc[w]),
        "p_value": float(t["p_value"].iloc[w]),
        "sided": sided,
        "z": z,
        "interval": interval,
        "unit": UNITS["logit"],
        "contrast": f"{players[t['a'].iloc[w]]} − {players[t['b'].iloc[w]]}",
        "binding_index": w,
        "n_contrasts": len(pairs),
        "supported": bool((t["lower"] > 0).all()),
        "_table": t,
    }


def is_firth(fit) -> bool:
    """Whether ``fit`` is Firth's bias-reduced fit (``BradleyTerry(penalty="firth")``)."""
    return (getattr(fit, "settings", None) or {}).get("penalty") == "firth"


FIRTH_INTERVAL = "profile penalised likelihood (Firth)"


def firth_contrast_answer(fit, pairs, level: float, sided: str, players) -> dict:
    """The intersection–union answer of a set of contrasts under Firth's fit: each contrast's
    penalised likelihood-ratio test (its signed root ``r`` is the statistic: directional p-value
    ``Φ(−r)`` one-sided, ``min(1, 2Φ(−r))`` two-sided, as for a Wald ``t``), the binding contrast =
    the smallest ``r``, and its profile penalised-likelihood interval (one-sided: the lower bound of
    the two-sided interval at level ``2·level − 1``). A contrast is significant iff its profile
    interval excludes 0 (``r > z``)."""
    from bayesrank.bt.firth import FirthFit, binomial_rows, pieces, profile_interval

    rows = fit.counts
    k = len(players)
    counts = np.array(rows.counts, dtype=float)
    if fit.ties == "drop":
        counts[:, 2] = 0.0
    y, n = binomial_rows(counts, fit.ties)
    theta = np.asarray(fit.score, dtype=float)[None]
    at = pieces(theta, rows.i, rows.j, y, n)
    firth = FirthFit(theta, at.value, at.info, 0, np.array([True]))
    c = np.zeros((len(pairs), k))
    for r, (a, b) in enumerate(pairs):
        c[r, a], c[r, b] = 1.0, -1.0
    tests = profile_interval(rows, firth, c, ties=fit.ties, sides=())
    stat = tests.statistic
    w = int(np.argmin(stat))
    z = critical_z(level, sided)
    one = sided == ONE_SIDED
    pi = profile_interval(rows, firth, c[w], level=interval_level(level, sided), ties=fit.ties,
                          sides=(-1,) if one else (-1, 1), p_value=False)
    return {
        "estimate": float(tests.estimate[w]),
        "lower": float(pi.lower[0]),
        "upper": None if one else _bound(pi.upper[0]),
        "p_value": float(p_value(stat[w:w + 1], sided)[0]),
        "sided": sided,
        "z": z,
        "interval": FIRTH_INTERVAL,
        "unit": UNITS["logit"],
        "contrast": f"{players[pairs[w][0]]} − {players[pairs[w][1]]}",
        "binding_index": w,
        "n_contrasts": len(pairs),
        "supported": bool((stat > z).all()),
    }


def frequentist_answer(claim: Claim, fits: dict, level: float, seed: int, pairs=None, reference=None) -> dict:
    """The claim's frequentist answer under the default interval, with every interval of ``fits``
    side by side (for the binding contrast of the default interval). Under Firth's fit the answer is
    the profile penalised likelihood's (:func:`firth_contrast_answer`), the Wald intervals at Firth's
    estimate beside it. ``pairs``: the claim's contrasts (default: on ``fits["default"]``'s point
    estimate); ``reference``: the order claim's reference scores (default: the point estimate)."""
    default = fits["default"]
    players, theta = default.players, default.score
    if claim.kind == "order":
        return _order_frequentist(fits, level, seed, reference)
    pairs = claim_contrasts(claim, players, theta) if pairs is None else pairs
    sided = claim.sided
    if is_firth(default):
        main = firth_contrast_answer(default, pairs, level, sided, players)
    else:
        main = contrast_answer(default, pairs, level, sided, default.interval, players)
    w = main["binding_index"]
    z = main["z"]
    tabs = {name: contrast_table(fits[name], pairs, z, sided) for name in ("fisher", "sandwich") if name in fits}
    if "bootstrap" in fits:
        tabs["bootstrap"] = bootstrap_contrasts(fits["bootstrap"].draws[:, : len(players)], theta, pairs, level,
                                                sided)
    main.pop("_table", None)
    if not tabs:  # one fit only (style control): no intervals beside it
        return main
    intervals = {name: [float(t["lower"].iloc[w]), _bound(t["upper"].iloc[w])] for name, t in tabs.items()}
    supported_by = {name: bool((t["lower"] > 0).all()) for name, t in tabs.items()}
    return {**main, "intervals": intervals, "supported_by": supported_by}


def order_answer(test: dict, estimate: float, interval: str, n_players: int) -> dict:
    """The order claim's frequentist answer from :func:`bayesrank.review.order.order_test`: the
    Kendall τ bound ``[τ_L, 1]`` and the simultaneous test's p-value (always two-sided: the order
    is read off the data)."""
    return {"estimate": float(estimate), "lower": float(test["tau_lower"]), "upper": 1.0,
            "p_value": float(test["p_value"]), "sided": "two-sided", "unit": "Kendall τ",
            "interval": f"{interval}: Kendall τ bound 1 − 2u/N from simultaneous contrast intervals "
                        f"(max-|t|, {test['n_errors']:,} error draws)",
            "contrast": f"Kendall τ > {TAU_THRESHOLD}", "n_contrasts": n_players * (n_players - 1) // 2,
            "critical_value": float(test["critical_value"]), "supported": bool(test["supported"])}


def order_holds(draws: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Whether the order claim holds in each posterior draw (≤ ~1,000 draws, evenly thinned)."""
    return kendall_to_reference(draws[:: max(1, len(draws) // 1000)], reference) > TAU_THRESHOLD


def _order_frequentist(fits: dict, level: float, seed: int, reference=None) -> dict:
    """The order test under the default covariance against the ``reference`` scores (default: the
    point estimate's own order, τ = 1), with the Fisher and sandwich covariances and the bootstrap
    replicates' errors (θ* − θ̂) beside it when ``fits`` has them."""
    from bayesrank.review.order import order_test

    default = fits["default"]
    k = len(default.players)
    ref = default.score if reference is None else reference
    main = order_test(default.score, default.theta_cov, ref, level, seed=seed)
    tests = {name: order_test(fits[name].score, fits[name].theta_cov, ref, level, seed=seed)
             for name in ("fisher", "sandwich") if name in fits}
    if "bootstrap" in fits:
        boot = fits["bootstrap"].draws[:, :k]
        tests["bootstrap"] = order_test(default.score, np.cov(boot.T), ref, level, errors=boot - default.score)
    if reference is None:
        estimate = 1.0
    else:
        from bayesrank.stats.kendall import kendall_tau_b

        estimate = kendall_tau_b(default.score, ref)
    answer = order_answer(main, estimate, default.interval, k)
    if not tests:
        return answer
    return {**answer,
            "intervals": {n: [float(t["tau_lower"]), 1.0] for n, t in tests.items()},
            "supported_by": {n: bool(t["supported"]) for n, t in tests.items()}}


# ---------------------------------------------------------------------------------- Bayesian
def bayesian_answer(claim: Claim, bayes_fit, reference: np.ndarray, level: float, pairs=None,
                    suffix: str = "") -> dict:
    """P(claim holds) = share of posterior draws in which it holds, with the threshold of the
    claim's level (:func:`bayesrank.review.verdict.probability_threshold`). ``pairs``: the claim's
    contrasts (default: on the ``reference`` scores); ``suffix``: appended to the method's name."""
    k = len(bayes_fit.players)
    draws = bayes_fit.draws[:, :k]
    if claim.kind == "order":
        hold = order_holds(draws, reference)
    else:
        hold = margins(draws, claim_contrasts(claim, bayes_fit.players, reference) if pairs is None else pairs) > 0
    return {"probability": float(np.mean(hold)), "threshold": probability_threshold(level, claim.sided),
            "method": bayes_fit.method + suffix, "ties": bayes_fit.ties, "n_draws": int(len(hold)),
            "converged": bool(bayes_fit.diagnostics.converged)}


def disagreement(frequentist: dict, bayesian: dict | None, frequentist_ties: str | None = None) -> str | None:
    """A note when the frequentist and the Bayesian decisions differ by more than the Monte Carlo
    error of the posterior share (2 binomial SEs of the draws); the tie models are named when they
    differ. None when they agree (or the difference is within Monte Carlo error: say so)."""
    if bayesian is None or bayesian.get("probability") is None:
        return None
    p, thr, n = bayesian["probability"], bayesian["threshold"], max(int(bayesian.get("n_draws") or 1), 1)
    if frequentist["supported"] == (p >= thr):
        return None
    mcse = float(np.sqrt(max(p * (1 - p), 1.0 / n) / n))
    if abs(p - thr) <= 2 * mcse:
        return (f"the posterior probability {p:.3f} is within Monte Carlo error (2 × {mcse:.3f}) of its threshold "
                f"{thr:.3g}: the frequentist and Bayesian decisions differ only by sampling noise")
    ties = bayesian.get("ties")
    why = (f" (tie models differ: {frequentist_ties} for the test, {ties} for the posterior)"
           if frequentist_ties and ties and ties != frequentist_ties else "")
    return "the frequentist and the Bayesian answers disagree" + why


# ---------------------------------------------------------------------------------- perturbation
def claim_evidence(claim: Claim, state, pairs, binding_index, reference=None) -> dict:
    """``relative_to`` of the claim (:func:`bayesrank.review.evidence.relative_to`)."""
    return evidence.relative_to(state, claim, pairs, binding_index, reference=reference)


def row_level(state) -> bool:
    """Whether the audit ``state`` is on comparison rows (clusters, a position effect, style features,
    Davidson ties) rather than aggregated zero-feature pair counts."""
    return bool(state.counts.unit or not state.fast)


def claim_actions(rel: dict) -> tuple[str, ...]:
    """The audits' action types: drop, flip, add, and with clusters ``drop-cluster`` (whole clusters)."""
    return ACTIONS + ((CLUSTER_ACTION,) if rel.get("unit") == "clusters" else ())


def row_audits(state, say, label: str, rel: dict, opts: dict, actions=ACTIONS, cluster_opts: dict | None = None,
               **objective) -> dict:
    """The audit of one claim's objective on comparison rows (the one engine,
    :func:`bayesrank.influence.greedy.greedy_audit`: drop, flip and add comparison rows with their
    covariates and clusters, verified by exact refits) with each action, each entry annotated with
    the claim's evidence (``relative_to``, fractions — of clusters touched when clustered —,
    ``searched_to``); with ``significance=True`` the loss-of-significance answer, which also names
    its objective and mode. ``objective``: ``objective=`` (a spec or an Objective), ``pair=(A, B)``
    or ``k=``, plus the objective's options."""
    from bayesrank.influence.greedy import greedy_audit

    spec = objective.pop("objective", None)
    if spec is None:
        pair, k = objective.pop("pair", None), objective.pop("k", 1)
        spec = f"pair:{pair[0]}>{pair[1]}" if pair is not None else ("top1" if k == 1 else f"topk:{k}")
    d = state.counts
    out = {}
    for action in actions:
        say(f"{label} × {action}")
        whole = action == CLUSTER_ACTION
        res = greedy_audit(state, spec, action, **(cluster_opts if whole else opts), **objective).to_dict()
        entry = {k: res[k] for k in ("broken", "budget", "verified", "actions", "reason", "budget_limit", "curve")}
        evidence.annotate(entry, rel, d.n_comparisons, cluster=d.cluster if rel.get("unit") == "clusters" else None,
                          n_clusters=d.n_clusters, whole_clusters=whole)
        entry.pop("curve")
        if objective.get("significance"):
            entry.update(objective=res["objective"], objective_details=res["objective_details"])
        out[action] = entry
    return out


def _row_objective(claim: Claim, state, reference=None) -> dict:
    """The row-level audit's objective of a claim (the order claim: Kendall τ to the ``reference``
    scores, default the state's own point estimate)."""
    if claim.kind == "pair":
        return {"pair": (claim.a, claim.b)}
    if claim.kind in ("top1", "topk"):
        return {"k": 1 if claim.kind == "top1" else claim.k}
    from bayesrank.influence.objectives import SmoothTau

    ref = np.asarray(state.theta) if reference is None else reference
    return {"objective": SmoothTau(state, threshold=TAU_THRESHOLD, reference=ref)}


def perturbation_answer(claim: Claim, state, rel: dict, fragile_below: float, actions=ACTIONS, budget=None,
                        seed: int = 0, progress=None, pairs=None, reference=None, under: str = "") -> dict:
    """Smallest verified perturbation per action type: ``bayesrank.influence.audit`` of the claim's
    objective (greedy influence audit, every break confirmed by an exact cold-start refit) — the
    row-level audit (:func:`row_audits`) when the model has clusters or a position effect — with
    the budget of :func:`bayesrank.review.evidence.audit_options`. Each entry carries the audit
    JSON's fields (budget, verified, actions, reason, ...) and ``relative_to``, ``fraction`` (of the
    claim's evidence), ``fraction_of_all`` and ``searched_to``. A claim about another fit's point
    estimate (``pairs``: its contrasts; ``reference``: the order claim's scores) is audited only where
    it holds at this state's point estimate (``under``: where, in the reason)."""
    from bayesrank.errors import InputError
    from bayesrank.influence import audit

    actions = claim_actions(rel) if actions is ACTIONS else actions
    if pairs is None and claim.kind == "pair":
        pairs = claim_contrasts(claim, state.players, state.theta)
    if pairs is not None:
        from bayesrank.influence.objectives import TIE_TOL

        margin = margins(state.theta[None, :], pairs)[0]
        if not margin > TIE_TOL:  # a tie (|θ_A − θ_B| ≤ 1e-9) has no order to overturn: the audits refuse it
            return not_audited(f"the claim is {'tied' if margin > -TIE_TOL else 'false'}{under} at the point estimate",
                               actions, rel)
    opts = evidence.audit_options(rel, fragile_below, budget)
    if row_level(state):
        try:
            objective = _row_objective(claim, state, reference)
        except InputError as why:
            return not_audited(f"the claim is false{under} at the point estimate: {why}", actions, rel)
        return row_audits(state, progress or (lambda *a: None), claim.text, rel, opts, actions,
                          cluster_opts=evidence.cluster_audit_options(rel, fragile_below, budget), **objective)
    report = audit(state, objective=claim.objective, actions=actions, seed=seed, **opts)
    return {a: evidence.annotate(report.audits[a].to_dict(), rel, state.n_matches) for a in actions}


def significance_perturbation_answer(claim: Claim, state, frequentist: dict, level: float, rel: dict,
                                     fragile_below: float, actions=ACTIONS, budget=None, seed: int = 0,
                                     progress=None) -> dict:
    """Smallest verified perturbation per action type that removes the claim's significance: the
    audit of its objective with ``significance=True`` (same contrast test — same sidedness, same
    default covariance: cluster-robust with clusters — as :func:`frequentist_answer`, checked on
    every exact refit). Only for significant claims."""
    from bayesrank.errors import InputError
    from bayesrank.influence import audit

    actions = claim_actions(rel) if actions is ACTIONS else actions  # with clusters: whole clusters too
    if claim.kind == "order":
        return not_audited("not audited: the order claim's test (a Kendall τ bound over all pairs) has no "
                           "contrast to audit", actions, rel)
    if not frequentist.get("supported"):
        return not_audited("not significant: no significance to lose", actions, rel)
    if frequentist.get("interval") == FIRTH_INTERVAL:
        return not_audited("not audited: the test is Firth's profile penalised likelihood ratio, which the "
                           "significance audit (a Wald contrast test on every refit) does not follow", actions, rel)
    opts = evidence.audit_options(rel, fragile_below, budget)
    try:
        if row_level(state):
            return row_audits(state, progress or (lambda *a: None), f"{claim.text} (significance)", rel, opts,
                              actions, significance=True, level=interval_level(level, claim.sided),
                              cluster_opts=evidence.cluster_audit_options(rel, fragile_below, budget),
                              **_row_objective(claim, state))
        report = audit(state, objective=claim.objective, actions=actions, seed=seed, significance=True,
                       level=interval_level(level, claim.sided), **opts)
    except InputError as e:  # the audit's own test disagrees at the last digit: say so, do not fail the review
        return not_audited(f"not audited: {e}", actions, rel)
    return {a: evidence.annotate(report.audits[a].to_dict(), rel, state.n_matches) for a in actions}


def interval_level(level: float, sided: str) -> float:
    """The two-sided interval level whose z is the claim's: ``2·level − 1`` one-sided (z = Φ⁻¹(level))."""
    return 2 * level - 1 if sided == ONE_SIDED else level


def not_audited(reason: str, actions=ACTIONS, rel: dict | None = None) -> dict:
    """The perturbation entries of a claim that is not audited (e.g. false at the point estimate)."""
    out = {}
    for a in actions:
        out[a] = {"broken": None, "budget": None, "fraction": None, "fraction_of_all": None, "verified": False,
                  "actions": [], "reason": reason, "searched_to": None}
        if rel is not None:
            out[a]["relative_to"] = dict(rel)
    return out


def smallest_fraction(perturbation: dict) -> float | None:
    """The smallest verified overturning fraction (of the claim's evidence) over action types (None: none found)."""
    fr = [p["fraction"] for p in perturbation.values() if p.get("broken") and p.get("verified")]
    return min(fr) if fr else None


def searched(perturbation: dict, rel: dict, fragile_below: float) -> bool:
    """Whether every action's greedy search covered ``fragile_below`` of the claim's evidence
    (vacuously when the claim was not audited)."""
    if all(p.get("broken") is None for p in perturbation.values()):
        return True
    return evidence.covers(perturbation, evidence.threshold_comparisons(rel, fragile_below), fragile_below * rel["n"])


def decide(freq: dict, bay: dict | None, pert: dict, rel: dict, fragile_below: float) -> str:
    """The verdict of one claim from its three answers (:func:`bayesrank.review.verdict.verdict`)."""
    return verdict(freq["supported"], None if bay is None else bay["probability"],
                   None if bay is None else bay["threshold"], smallest_fraction(pert), fragile_below,
                   searched=searched(pert, rel, fragile_below),
                   converged=True if bay is None else bay.get("converged", True))


# ---------------------------------------------------------------------------------- the section
def answer_claims(claims, fits: dict, state, *, level: float, seed: int, fragile_below: float,
                  budget=None, progress=None, reference=None, scope: Scope = PLAIN) -> list[ClaimAnswer]:
    """Frequentist, Bayesian and perturbation answers (reversal and loss of significance) and the
    verdict of each claim (the verdict uses the reversal: :mod:`bayesrank.review.verdict`).

    ``fits``: ``default`` (the frequentist fit; with its ``fisher``/``sandwich``/``bootstrap``
    siblings when present, their intervals beside it), ``claims`` (the deciding posterior) and
    ``nuts``/``laplace`` (the Bayesian fit, reported as the other tie model when its tie model
    differs); ``state``: the audits' fitted state of the same model. ``reference=(players, theta)``:
    the fit the claims are about, when it is another one (style control answers the plain fit's
    claims: "X is #1" asks whether the plain leader stays #1; the order claim is τ to the plain
    order); ``scope`` names the model in the answers' words."""
    default = fits["default"]
    bayes = fits.get("claims") or fits.get("nuts") or fits.get("laplace")
    other = fits.get("nuts") or fits.get("laplace")  # another tie model (Davidson) when the data have ties
    other = None if other is None or bayes is None or other.ties == bayes.ties else other
    players, theta = (default.players, default.score) if reference is None else reference
    ranking = [str(players[i]) for i in np.argsort(-np.asarray(theta), kind="stable")]
    out = []
    for n, claim in enumerate(claims):
        if progress:
            progress(f"claim {claim.text}: intervals and audits", n, len(claims))
        pairs = about = None
        if claim.kind != "order":
            pairs = claim_pairs(claim, players, theta, default.players)
            if pairs is None:
                from bayesrank.errors import InputError

                raise InputError(f"claim {claim.text!r}: a claimed player has no battles in the data of this model")
        elif reference is not None:
            about = reference_scores(default.players, players, theta)
        freq = frequentist_answer(claim, fits, level, seed, pairs, about)
        rel = claim_evidence(claim, state, pairs, freq.pop("binding_index", None), reference=about)
        scores = default.score if about is None else about
        bay = bayesian_answer(claim, bayes, scores, level, pairs, scope.method) if bayes is not None else None
        if other is not None and bay is not None:
            alt = bayesian_answer(claim, other, scores, level, pairs, scope.method)
            bay["other_tie_model"] = {k: alt[k] for k in ("probability", "method", "ties", "converged")}
        say = (lambda label, *a, n=n: progress(label, n, len(claims))) if progress else None
        # about another fit's estimate: audited only where the claim holds at this one's (the plain top-k holds by construction)
        pert = perturbation_answer(claim, state, rel, fragile_below, budget=budget, seed=seed, progress=say,
                                   pairs=None if reference is None else pairs, reference=about, under=scope.under)
        sig = significance_perturbation_answer(claim, state, freq, level, rel, fragile_below, budget=budget, seed=seed,
                                               progress=say)
        v = decide(freq, bay, pert, rel, fragile_below)
        notes = []
        if bay is not None and not bay["converged"]:
            notes.append(scope.not_converged.format(method=bayes.method))
        note = disagreement(freq, bay, default.ties)
        if note:
            notes.append(note)
        alt = (bay or {}).get("other_tie_model")
        if alt and (alt["probability"] >= bay["threshold"]) != (bay["probability"] >= bay["threshold"]):
            model = f", {scope.qualifier}" if scope.qualifier else ""
            board = f"{scope.qualifier} leaderboard" if scope.qualifier else "leaderboard"
            notes.append(f"under the {alt['ties']} tie model ({other.method}{model}) P(claim) = "
                         f"{alt['probability']:.3f}: "
                         f"{'it would support' if alt['probability'] >= bay['threshold'] else 'it would not support'} "
                         f"the claim (another estimand; the half-win posterior, the {board}'s, decides)")
        if len(set(freq.get("supported_by", {}).values()) | {freq["supported"]}) > 1:
            notes.append("the intervals disagree: " + ", ".join(
                f"{k} {'supports' if v_ else 'does not support'}" for k, v_ in freq["supported_by"].items()))
        if progress and v != "supported":
            progress(f"claim {claim.text}: what would settle it", n, len(claims))
        settle = None if v == "supported" else pairwise_to_settle(claim, default, pairs, freq.get("z", 0.0), seed)
        out.append(ClaimAnswer(claim, freq, bay, pert, v, level, notes, extra={"to_settle": settle},
                               significance_perturbation=sig, relative_to=rel, statement=statement(claim, ranking)))
    return out
