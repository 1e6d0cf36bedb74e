"""Claims under style control, beside the plain ones (``--style A_COL:B_COL[,...]``).

The style-controlled Bradley–Terry (``bayesrank.bt.style``: logit P(a beats b) = θ_a − θ_b + βᵀd)
is fitted on the same battles; every claim is answered again on its θ:

* **frequentist**: the same intersection–union contrast test, with the style fit's covariance of θ
  (sandwich when some outcomes are fractional — ties scored as half-wins, a soft judge's shares —
  Fisher otherwise: the package's default rule, ``bt.mle.default_interval``);
* **Bayesian**: the share of posterior draws of the style model (NUTS; the PyMC Laplace
  approximation with ``fast``) in which the claim holds;
* **perturbation**: the row-level style audit (``bayesrank.influence.covariates``: drop, flip and
  add battles carrying their covariates, verified by exact refits) of the claim's objective.

The ``order`` claim asks whether the *reported* (plain) order survives style control: Kendall τ-b
between the style-controlled θ (Gaussian draws from its covariance; posterior draws) and the plain
point estimate's order, holding when τ > 0.9; its audit is the τ objective against that order.

The claim's text carries the suffix `` [style-controlled]``.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from bayesrank.errors import InputError
from bayesrank.review.answer import ClaimAnswer
from bayesrank.review.claims import TAU_THRESHOLD, Claim
from bayesrank.review.pairwise import (
    ACTIONS,
    claim_contrasts,
    contrast_table,
    gaussian_order_taus,
    margins,
    not_audited,
    order_answer,
    order_holds,
    smallest_fraction,
)
from bayesrank.review.report import Section
from bayesrank.review.verdict import verdict

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


def _order_claim(mle, bayes, state, reference_players, reference_theta, ci, level, seed, budget, say):
    """(frequentist, Bayesian, perturbation) answers of the order claim under style control."""
    k = len(mle.players)
    ref = _reference_scores(mle.players, reference_players, reference_theta)
    taus = gaussian_order_taus(mle.score, mle.cov[:k, :k], ref, np.random.default_rng(seed))
    freq = order_answer(taus, level, f"{ci} (style-controlled)", k)
    hold = order_holds(bayes.draws[:, :k], ref)
    bay = {"probability": float(hold.mean()), "method": f"{bayes.method} (style)", "n_draws": int(len(hold))}
    from bayesrank.influence.covariates import StyleTau

    try:  # the audit's own criterion (τ-b with score differences within 1e-9 as ties) decides
        objective = StyleTau(state, reference=ref, threshold=TAU_THRESHOLD)
    except InputError as why:
        return freq, bay, not_audited(f"the claim is false under style control at the point estimate: {why}")
    return freq, bay, _audits(state, budget, say, "order", objective=objective)


def _audits(state, budget, say, label: str, **objective) -> dict:
    """The style audit of one claim's objective with each action (the perturbation answer; with
    ``significance=True`` the loss-of-significance answer, which also names its objective and mode)."""
    from bayesrank.influence.covariates import style_audit

    out = {}
    for action in ACTIONS:
        say(f"style control: {label} × {action}")
        d = style_audit(state, kind=action, budget=budget, **objective).to_dict()
        out[action] = {k: d[k] for k in ("broken", "budget", "fraction", "verified", "actions", "reason",
                                         "budget_limit")}
        if objective.get("significance"):
            out[action].update(objective=d["objective"], objective_details=d["objective_details"])
    return out


def _significance_answer(state, claim, freq: dict, target: dict, level: float, budget, say) -> dict:
    """Smallest verified perturbation that removes a significant style-controlled claim's significance
    (the style audit's significance mode: the same contrast test and default covariance as ``freq``)."""
    if not freq["supported"]:
        return not_audited("not significant: no significance to lose")
    try:
        return _audits(state, budget, say, f"{claim.text} (significance)", significance=True, level=level, **target)
    except InputError as e:  # the audit's own test disagrees at the last digit: say so, do not fail the review
        return not_audited(f"not audited: {e}")


def style_claims(path, claims, reference_players, reference_theta, *, style: str, level: float, z: float,
                 fragile_below: float, fast: bool, seed: int, budget=None, progress=None,
                 transform: str = "normalized_diff", standardize: str = "center_scale"):
    """(answers, sections, diagnostics parts) under style control. The claims are about the players
    of the plain fit (``reference_*``): "X is #1" asks whether the plain leader X stays #1."""
    from bayesrank.bt.mle import default_interval
    from bayesrank.bt.style import StyleBT
    from bayesrank.influence.covariates import StyleState

    say = progress or (lambda *a: None)
    say("style control: fitting")
    sbt = StyleBT(path, style=style, level=level, transform=transform, standardize=standardize)
    fractional = bool(((sbt.data.y > 0) & (sbt.data.y < 1)).any())  # ties as half-wins, or a soft judge's shares
    ci = default_interval("half", fractional)
    mle = sbt.fit("mle", ci=ci)
    bayes = sbt.fit("laplace", seed=seed) if fast else sbt.fit("nuts", seed=seed, draws=500, tune=500, chains=4)
    freq_view = _theta_view(mle)
    state = StyleState.fit(sbt.data)
    answers = []
    for claim in claims:
        styled = Claim(claim.text + SUFFIX, claim.kind, k=claim.k, a=claim.a, b=claim.b)
        notes = []
        if claim.kind == "order":
            freq, bay, pert = _order_claim(mle, bayes, state, reference_players, reference_theta, ci, level, seed,
                                           budget, say)
            sig = not_audited("not audited: the order claim's test (a Kendall τ quantile of Gaussian draws) has no "
                              "contrast to audit")
        else:
            pairs = _pairs_by_name(claim, reference_players, reference_theta, mle.players)
            if pairs is None:
                raise InputError(f"claim {claim.text!r}: a claimed player has no battles in the style data")
            t = contrast_table(freq_view, pairs, z)
            w = int(t["lower"].to_numpy().argmin())
            freq = {"estimate": float(t["estimate"].iloc[w]), "lower": float(t["lower"].iloc[w]),
                    "upper": float(t["upper"].iloc[w]), "p_value": float(t["p_value"].max()),
                    "interval": f"{ci} (style-controlled)", "supported": bool((t["lower"] > 0).all()),
                    "contrast": f"{mle.players[t['a'].iloc[w]]} − {mle.players[t['b'].iloc[w]]}",
                    "n_contrasts": len(pairs)}
            k = len(mle.players)
            hold = margins(bayes.draws[:, :k], pairs) > 0
            bay = {"probability": float(hold.mean()), "method": f"{bayes.method} (style)", "n_draws": int(len(hold))}
            holds_at_point = bool(margins(mle.score[None, :], pairs)[0] > 0)
            target = {"pair": (claim.a, claim.b)} if claim.kind == "pair" else {"k": claim.k}
            if not holds_at_point:
                pert = not_audited("the claim is false under style control at the point estimate")
            else:
                pert = _audits(state, budget, say, claim.text, **target)
            sig = _significance_answer(state, claim, freq, target, level, budget, say)
        v = verdict(freq["supported"], None if bay is None else bay["probability"], level,
                    smallest_fraction(pert), fragile_below)
        answers.append(ClaimAnswer(styled, freq, bay, pert, v, level, notes, significance_perturbation=sig))
    coef = pd.DataFrame({"feature": mle.features, "coef": mle.coef, "lower": mle.coef_lower, "upper": mle.coef_upper})
    change = mle.table()
    sec = Section("style", "Under style control",
                  text=[f"Style-controlled Bradley–Terry on {mle.n_comparisons:,.0f} battles with features "
                        f"{', '.join(mle.features)} ({FEATURE_TEXT[transform]}, {STANDARDIZE_TEXT[standardize]}); "
                        f"{ci} intervals. The table shows each player's rank with and without style control."],
                  tables=[("style coefficients β", coef), ("leaderboard under style control", change)],
                  data={"style": coef.to_dict(orient="records"), "leaderboard": change.to_dict(orient="records")})
    parts = {"style mle": mle.diagnostics, f"style {bayes.method}": bayes.diagnostics}
    return answers, [sec], parts
