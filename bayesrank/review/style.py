"""Claims under style control, beside the plain ones (``--style A_COL:B_COL[,...]``).

The style-controlled Bradley–Terry (``BradleyTerry(..., style=...)``: logit P(a beats b) = θ_a − θ_b + βᵀd)
is fitted on the same battles; every claim is answered again on its θ:

* **frequentist**: the same intersection–union contrast test (same sidedness, binding contrast),
  with the style fit's covariance of θ (sandwich when some outcomes are fractional — ties scored as
  half-wins, a soft judge's shares — Fisher otherwise: the package's default rule,
  ``bt.mle.default_interval``);
* **Bayesian**: the share of posterior draws of the style model (NUTS, re-run with more tuning if
  it fails its checks; the PyMC Laplace approximation with ``fast``) in which the claim holds,
  against the threshold of the claim's level. One estimand with the test and the audits: with
  ties the deciding posterior is the half-win one (the style-controlled leaderboard's scoring),
  curvature-adjusted to the sandwich, the covariance of the frequentist answer
  (``bayesrank.stats.adjusted_posterior``; likewise with a soft judge's shares) — the half-win
  likelihood misstates the variance of a tie, the adjustment restores it; the tie-aware Davidson
  style posterior is reported beside each claim (``bayesian.other_tie_model``, a note when it would
  decide differently);
* **perturbation**: the row-level style audit (the one audit engine ``bayesrank.influence`` on comparison rows: drop, flip and
  add battles carrying their covariates, verified by exact refits) of the claim's objective, its
  fractions relative to the battles informing the claim's binding contrast under style control
  (:mod:`bayesrank.review.evidence`).

The ``order`` claim asks whether the *reported* (plain) order survives style control: the Kendall
τ bound of the simultaneous contrast intervals of the style-controlled θ against the plain point
estimate's order (:mod:`bayesrank.review.order`); its posterior answer is the share of draws with
τ-b > 0.9; its audit is the τ objective against that order.

The claim's text carries the suffix `` [style-controlled]``.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from bayesrank.errors import InputError
from bayesrank.review.answer import ClaimAnswer
from bayesrank.review import evidence
from bayesrank.review.claims import TAU_THRESHOLD, Claim, statement
from bayesrank.review.pairwise import (
    claim_contrasts,
    contrast_answer,
    decide,
    disagreement,
    interval_level,
    margins,
    not_audited,
    order_answer,
    order_holds,
    row_audits,
)
from bayesrank.review.report import Section
from bayesrank.review.verdict import probability_threshold

SUFFIX = " [style-controlled]"
FEATURE_TEXT = {"normalized_diff": "normalised differences (x_a − x_b)/(x_a + x_b)", "diff": "differences x_a − x_b"}
STANDARDIZE_TEXT = {"center_scale": "centred and scaled", "scale": "scaled, not centred", "none": "not standardised"}


def _theta_view(fit, method: str | None = None):
    """The θ block of a style fit, shaped like a LeaderboardFit for the contrast and posterior helpers."""
    k = len(fit.players)
    draws = None if fit.draws is None else fit.draws[:, :k]
    return SimpleNamespace(players=fit.players, score=fit.score, theta_cov=fit.cov[:k, :k], interval=fit.interval,
                           draws=draws, method=method or fit.method)


def _pairs_by_name(claim, reference_players, reference_theta, players) -> list[tuple[int, int]] | None:
    """The claim's contrasts (defined on the plain fit: the same players are claimed) as indices of
    ``players``; None when a claimed player is absent from the style data."""
    index = {str(p): i for i, p in enumerate(players)}
    out = []
    for a, b in claim_contrasts(claim, reference_players, reference_theta):
        na, nb = str(reference_players[a]), str(reference_players[b])
        if na not in index or nb not in index:
            return None
        out.append((index[na], index[nb]))
    return out


def _reference_scores(players, reference_players, reference_theta) -> np.ndarray:
    """The plain fit's scores in the order of the style fit's ``players`` (the same players)."""
    index = {str(p): i for i, p in enumerate(reference_players)}
    missing = [str(p) for p in players if str(p) not in index]
    if missing or len(players) != len(reference_players):
        raise InputError(f"the order claim needs the same players with and without style control; "
                         f"differ: {missing or sorted(set(map(str, reference_players)) - set(map(str, players)))}")
    return np.array([reference_theta[index[str(p)]] for p in players], dtype=float)


def _bayes(hold: np.ndarray, bayes, claim, level: float) -> dict:
    return {"probability": float(hold.mean()), "threshold": probability_threshold(level, claim.sided),
            "method": f"{bayes.method} (style)", "ties": bayes.ties, "n_draws": int(len(hold)),
            "converged": bool(bayes.diagnostics.converged)}


def _beside(bay: dict, other, hold: np.ndarray) -> list[str]:
    """Put the other tie model's (Davidson's) answer beside ``bay`` (``other_tie_model``); a note when
    it would decide differently (another estimand: the half-win posterior decides)."""
    if other is None:
        return []
    p = float(hold.mean())
    bay["other_tie_model"] = {"probability": p, "method": f"{other.method} (style)", "ties": other.ties,
                              "converged": bool(other.diagnostics.converged)}
    if (p >= bay["threshold"]) == (bay["probability"] >= bay["threshold"]):
        return []
    return [f"under the {other.ties} tie model ({other.method}, style-controlled) P(claim) = {p:.3f}: "
            f"{'it would support' if p >= bay['threshold'] else 'it would not support'} the claim (another "
            f"estimand; the half-win posterior, the style-controlled leaderboard's, decides)"]


def _order_claim(claim, mle, bayes, state, reference_players, reference_theta, ci, level, seed, rel, opts, say):
    """(frequentist, Bayesian, perturbation) answers of the order claim under style control."""
    from bayesrank.review.order import order_test

    k = len(mle.players)
    ref = _reference_scores(mle.players, reference_players, reference_theta)
    test = order_test(mle.score[:k], mle.cov[:k, :k], ref, level, seed=seed)
    from bayesrank.stats.kendall import kendall_tau_b

    freq = order_answer(test, kendall_tau_b(mle.score[:k], ref), f"{ci} (style-controlled)", k)
    bay = _bayes(order_holds(bayes.draws[:, :k], ref), bayes, claim, level)
    from bayesrank.influence.objectives import parse_objective

    try:  # the audit's own criterion (τ-b with score differences within 1e-9 as ties) decides
        objective = parse_objective("tau", state, reference=ref, tau_threshold=TAU_THRESHOLD)
    except InputError as why:
        return freq, bay, not_audited(f"the claim is false under style control at the point estimate: {why}",
                                      rel=rel)
    return freq, bay, _audits(state, say, "order", rel, opts, objective=objective)


def _audits(state, say, label: str, rel: dict, opts: dict, **objective) -> dict:
    """The style audit of one claim's objective with each action (:func:`bayesrank.review.pairwise.row_audits`)."""
    return row_audits(state, say, f"style control: {label}", rel, opts, **objective)


def _significance_answer(state, claim, freq: dict, target: dict, level: float, rel, opts, say) -> dict:
    """Smallest verified perturbation that removes a significant style-controlled claim's significance
    (the style audit's significance mode: the same contrast test and default covariance as ``freq``)."""
    if not freq["supported"]:
        return not_audited("not significant: no significance to lose", rel=rel)
    try:
        return _audits(state, say, f"{claim.text} (significance)", rel, opts, significance=True,
                       level=interval_level(level, claim.sided), **target)
    except InputError as e:  # the audit's own test disagrees at the last digit: say so, do not fail the review
        return not_audited(f"not audited: {e}", rel=rel)


def _options(rel: dict, fragile_below: float, budget) -> dict:
    return evidence.audit_options(rel, fragile_below, budget)


def style_claims(comparisons, claims, reference_players, reference_theta, *, style: str, level: float,
                 fragile_below: float, fast: bool, seed: int, budget=None, progress=None,
                 transform: str = "normalized_diff", standardize: str = "center_scale", cluster: str | None = None,
                 position_effect: bool = False):
    """(answers, sections, diagnostics parts) under style control (``cluster``, ``position_effect``:
    the review's model terms, in the style model too). The claims are about the players
    of the plain fit (``reference_*``): "X is #1" asks whether the plain leader X stays #1. ``comparisons``
    are the review's validated comparisons (read once, with its reader options)."""
    from bayesrank.bt import BradleyTerry
    from bayesrank.influence.state import BTState
    from bayesrank.review.fits import nuts_fit

    say = progress or (lambda *a: None)
    say("style control: fitting")
    sbt = BradleyTerry(comparisons, style, level=level, transform=transform, standardize=standardize, cluster=cluster,
                       position_effect=position_effect)
    mle = sbt.fit("mle")  # the default interval: sandwich with ties as half-wins or a soft judge's shares
    ci = mle.settings["ci_used"]
    bayes = sbt.fit("laplace", seed=seed) if fast else nuts_fit(sbt, draws=500, chains=4, seed=seed, progress=say)
    other = None
    if bayes.ties != mle.ties:  # ties: the Bayesian default is Davidson, the test's and the audits' estimand half-wins
        say("style control: the half-win posterior")
        other = bayes  # reported beside each claim (bayesian.other_tie_model), not deciding
        half = BradleyTerry(sbt.rows, ties=mle.ties, level=level, prior_sigma=sbt.prior_sigma,
                            beta_sigma=sbt.beta_sigma, position_effect=position_effect)
        bayes = half.fit("laplace", seed=seed) if fast else nuts_fit(half, draws=500, chains=4, seed=seed,
                                                                     progress=say)
    if ci != "fisher":  # ties or fractional outcomes: the half-win posterior rescaled to the sandwich (fits.claims_posterior)
        import dataclasses

        from bayesrank.stats.adjusted_posterior import adjust_draws

        target = "cluster-robust sandwich" if ci == "cluster" else "sandwich"
        scoring = ", half-win" if sbt.has_ties or sbt.rows.fractional else ""
        adjusted = adjust_draws(bayes.draws, mle.cov, n_players=len(mle.players))
        bayes = dataclasses.replace(bayes, draws=adjusted, method=f"{bayes.method}{scoring}, adjusted to the {target}")
    freq_view = _theta_view(mle)
    state = BTState.fit(sbt.rows, position=position_effect)
    k = len(mle.players)
    ranking = [str(reference_players[i]) for i in np.argsort(-np.asarray(reference_theta), kind="stable")]
    answers = []
    for claim in claims:
        styled = Claim(claim.text + SUFFIX, claim.kind, k=claim.k, a=claim.a, b=claim.b, selected=claim.selected)
        notes = []
        if claim.kind == "order":
            ref = _reference_scores(mle.players, reference_players, reference_theta)
            rel = evidence.relative_to(state, claim, None, None, reference=ref)
            opts = _options(rel, fragile_below, budget)
            freq, bay, pert = _order_claim(claim, mle, bayes, state, reference_players, reference_theta, ci, level,
                                           seed, rel, opts, say)
            sig = not_audited("not audited: the order claim's test (a Kendall τ bound over all pairs) has no "
                              "contrast to audit", rel=rel)
        else:
            pairs = _pairs_by_name(claim, reference_players, reference_theta, mle.players)
            if pairs is None:
                raise InputError(f"claim {claim.text!r}: a claimed player has no battles in the style data")
            freq = contrast_answer(freq_view, pairs, level, claim.sided, f"{ci} (style-controlled)", mle.players)
            freq.pop("_table")
            rel = evidence.relative_to(state, claim, pairs, freq.pop("binding_index"))
            opts = _options(rel, fragile_below, budget)
            bay = _bayes(margins(bayes.draws[:, :k], pairs) > 0, bayes, claim, level)
            if other is not None:
                notes += _beside(bay, other, margins(other.draws[:, :k], pairs) > 0)
            holds_at_point = bool(margins(mle.score[None, :], pairs)[0] > 0)
            target = {"pair": (claim.a, claim.b)} if claim.kind == "pair" else {"k": claim.k}
            if not holds_at_point:
                pert = not_audited("the claim is false under style control at the point estimate", rel=rel)
            else:
                pert = _audits(state, say, claim.text, rel, opts, **target)
            sig = _significance_answer(state, claim, freq, target, level, rel, opts, say)
        v = decide(freq, bay, pert, rel, fragile_below)
        if not bay["converged"]:
            notes.append(f"the {bayes.method} posterior of the style model did not converge: no verdict")
        if claim.kind == "order" and other is not None:
            notes += _beside(bay, other, order_holds(other.draws[:, :k],
                                                     _reference_scores(mle.players, reference_players, reference_theta)))
        note = disagreement(freq, bay, mle.ties)
        if note:
            notes.append(note)
        answers.append(ClaimAnswer(styled, freq, bay, pert, v, level, notes, significance_perturbation=sig,
                                   relative_to=rel, statement=statement(claim, ranking)))
    coef = pd.DataFrame({"feature": mle.features, "coef": mle.coef, "lower": mle.coef_lower, "upper": mle.coef_upper})
    change = mle.table()
    sec = Section("style", "Under style control",
                  text=[f"Style-controlled Bradley–Terry on {mle.n_comparisons:,.0f} battles with features "
                        f"{', '.join(mle.features)} ({FEATURE_TEXT[transform]}, {STANDARDIZE_TEXT[standardize]}); "
                        f"{ci} intervals. The table shows each player's rank with and without style control."],
                  tables=[("style coefficients β", coef), ("leaderboard under style control", change)],
                  data={"style": coef.to_dict(orient="records"), "leaderboard": change.to_dict(orient="records")})
    parts = {"style mle": mle.diagnostics, f"style {bayes.method}": bayes.diagnostics}
    if other is not None:
        parts[f"style {other.method} ({other.ties})"] = other.diagnostics
    return answers, [sec], parts
