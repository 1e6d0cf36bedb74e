"""Claims under style control, beside the plain ones (``--style A_COL:B_COL[,...]``).

The style-controlled Bradley–Terry (``BradleyTerry(..., style=...)``: logit P(a beats b) = θ_a − θ_b + βᵀd)
is fitted on the same battles; every claim is answered again on its θ, through the plain claims'
one loop (:func:`bayesrank.review.pairwise.answer_claims` with ``reference`` = the plain fit the
claims are about, and the style fits in its place). This module holds only what is style-specific:
the style fits, the deciding posterior, the "Under style control" section and the answers' words
(:data:`STYLE`):

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
  add battles carrying their covariates, and with ``--cluster`` whole clusters, verified by exact
  refits) of the claim's objective, its fractions relative to the battles informing the claim's
  binding contrast under style control (:mod:`bayesrank.review.evidence`); a claim false under
  style control at the point estimate is not audited.

The ``order`` claim asks whether the *reported* (plain) order survives style control: the Kendall
τ bound of the simultaneous contrast intervals of the style-controlled θ against the plain point
estimate's order (:mod:`bayesrank.review.order`); its posterior answer is the share of draws with
τ-b > 0.9; its audit is the τ objective against that order.

The claim's text carries the suffix `` [style-controlled]``.
"""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from bayesrank.review.claims import Claim
from bayesrank.review.pairwise import Scope, answer_claims
from bayesrank.review.report import Section

SUFFIX = " [style-controlled]"
#: the words of the style-controlled answers (:func:`bayesrank.review.pairwise.answer_claims`)
STYLE = Scope(under=" under style control", method=" (style)", qualifier="style-controlled",
              not_converged="the {method} posterior of the style model did not converge: no verdict")
FEATURE_TEXT = {"normalized_diff": "normalised differences (x_a − x_b)/(x_a + x_b)", "diff": "differences x_a − x_b"}
STANDARDIZE_TEXT = {"center_scale": "centred and scaled", "scale": "scaled, not centred", "none": "not standardised"}


def theta_view(fit, interval: str):
    """The θ block of a style fit (scores, their covariance, tie model), shaped like the plain
    review's default fit for :func:`~bayesrank.review.pairwise.answer_claims`, with its ``interval`` label."""
    k = len(fit.players)
    return SimpleNamespace(players=fit.players, score=fit.score, theta_cov=fit.cov[:k, :k], interval=interval,
                           ties=fit.ties)


def style_claims(comparisons, claims, reference_players, reference_theta, *, style: str, level: float,
                 fragile_below: float, fast: bool, seed: int, budget=None, progress=None,
                 transform: str = "normalized_diff", standardize: str = "center_scale", cluster: str | None = None,
                 position_effect: bool = False):
    """(answers, sections, diagnostics parts) under style control (``cluster``, ``position_effect``:
    the review's model terms, in the style model too). The claims are about the players
    of the plain fit (``reference_*``): "X is #1" asks whether the plain leader X stays #1. ``comparisons``
    are the review's validated comparisons (read once, with its reader options). Every claim goes
    through the plain claims' loop (:func:`~bayesrank.review.pairwise.answer_claims`) on the style fits."""
    from bayesrank.bt import BradleyTerry
    from bayesrank.influence.state import BTState
    from bayesrank.review.fits import nuts_fit

    say = progress or (lambda *a: None)
    say("style control: fitting")
    sbt = BradleyTerry(comparisons, style, level=level, transform=transform, standardize=standardize, cluster=cluster,
                       position_effect=position_effect)
    mle = sbt.fit("mle")  # the default interval: sandwich with ties as half-wins or a soft judge's shares
    ci = mle.settings["ci_used"]
    first = sbt.fit("laplace", seed=seed) if fast else nuts_fit(sbt, draws=500, chains=4, seed=seed, progress=say)
    fits = {"default": theta_view(mle, f"{ci} (style-controlled)"), "laplace" if fast else "nuts": first}
    bayes = first
    if first.ties != mle.ties:  # ties: the Bayesian default is Davidson, the test's and the audits' estimand half-wins
        say("style control: the half-win posterior")  # the Davidson fit is reported beside each claim, not deciding
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
    fits["claims"] = bayes
    state = BTState.fit(sbt.rows, position=position_effect)
    styled = [Claim(c.text + SUFFIX, c.kind, k=c.k, a=c.a, b=c.b, selected=c.selected) for c in claims]
    answers = answer_claims(styled, fits, state, level=level, seed=seed, fragile_below=fragile_below, budget=budget,
                            progress=lambda label, *a: say(label), reference=(reference_players, reference_theta),
                            scope=STYLE)
    coef = pd.DataFrame({"feature": mle.features, "coef": mle.coef, "lower": mle.coef_lower, "upper": mle.coef_upper})
    change = mle.table()
    sec = Section("style", "Under style control",
                  text=[f"Style-controlled Bradley–Terry on {mle.n_comparisons:,.0f} battles with features "
                        f"{', '.join(mle.features)} ({FEATURE_TEXT[transform]}, {STANDARDIZE_TEXT[standardize]}); "
                        f"{ci} intervals. The table shows each player's rank with and without style control."],
                  tables=[("style coefficients β", coef), ("leaderboard under style control", change)],
                  data={"style": coef.to_dict(orient="records"), "leaderboard": change.to_dict(orient="records")})
    parts = {"style mle": mle.diagnostics, f"style {bayes.method}": bayes.diagnostics}
    if first.ties != bayes.ties:
        parts[f"style {first.method} ({first.ties})"] = first.diagnostics
    return answers, [sec], parts
