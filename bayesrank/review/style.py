"""Claims under style control, beside the plain ones (``--style A_COL:B_COL[,...]``).

The style-controlled Bradley–Terry (``bayesrank.bt.style``: logit P(a beats b) = θ_a − θ_b + βᵀd)
is fitted on the same battles; every claim is answered again on its θ:

* **frequentist**: the same intersection–union contrast test, with the style fit's covariance of θ
  (sandwich when ties are scored as half-wins, Fisher otherwise — the package's default rule);
* **Bayesian**: the share of posterior draws of the style model (NUTS; the PyMC Laplace
  approximation with ``fast``) in which the claim holds;
* **perturbation**: the row-level style audit (``bayesrank.influence.covariates``: drop, flip and
  add battles carrying their covariates, verified by exact refits) for ``top1``, ``topk`` and
  ``A>B`` claims; the order claim is not evaluated under style control (stated in the report).

The claim's text carries the suffix `` [style-controlled]``.
"""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from bayesrank.errors import InputError
from bayesrank.review.answer import ClaimAnswer
from bayesrank.review.claims import Claim
from bayesrank.review.pairwise import claim_contrasts, contrast_table, margins, smallest_fraction
from bayesrank.review.report import Section
from bayesrank.review.verdict import verdict

SUFFIX = " [style-controlled]"


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


def style_claims(path, claims, reference_players, reference_theta, *, style: str, level: float, z: float,
                 fragile_below: float, fast: bool, seed: int, budget=None, progress=None):
    """(answers, sections, diagnostics parts) under style control. The claims are about the players
    of the plain fit (``reference_*``): "X is #1" asks whether the plain leader X stays #1."""
    from bayesrank.bt.style import StyleBT
    from bayesrank.influence.covariates import StyleState, style_audit

    say = progress or (lambda *a: None)
    say("style control: fitting")
    sbt = StyleBT(path, style=style, level=level)
    ties = bool((sbt.data.y == 0.5).any())
    ci = "sandwich" if ties else "fisher"
    mle = sbt.fit("mle", ci=ci)
    bayes = sbt.fit("laplace", seed=seed) if fast else sbt.fit("nuts", seed=seed, draws=500, tune=500, chains=4)
    freq_view = _theta_view(mle)
    state = StyleState.fit(sbt.data)
    answers = []
    for claim in claims:
        styled = Claim(claim.text + SUFFIX, claim.kind, k=claim.k, a=claim.a, b=claim.b)
        notes = []
        if claim.kind == "order":
            freq = {"estimate": None, "lower": None, "upper": None, "p_value": None, "supported": False,
                    "interval": "not computed under style control"}
            notes.append("the order claim is not evaluated under style control")
            pert = {}
            bay = None
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
            if not holds_at_point:
                pert = {a: {"broken": None, "budget": None, "fraction": None, "verified": False, "actions": [],
                            "reason": "the claim is false under style control at the point estimate"}
                        for a in ("drop", "flip", "add")}
            else:
                pert = {}
                target = {"pair": (claim.a, claim.b)} if claim.kind == "pair" else {"k": claim.k}
                for action in ("drop", "flip", "add"):
                    say(f"style control: {claim.text} × {action}")
                    a = style_audit(state, kind=action, budget=budget, **target)
                    d = a.to_dict()
                    pert[action] = {"broken": bool(a.broken), "budget": a.budget, "fraction": a.fraction,
                                    "verified": bool(a.verified), "actions": d.get("actions", []),
                                    "reason": d.get("reason", "")}
        v = verdict(freq["supported"], None if bay is None else bay["probability"], level,
                    smallest_fraction(pert), fragile_below)
        answers.append(ClaimAnswer(styled, freq, bay, pert, v, level, notes))
    coef = pd.DataFrame({"feature": mle.features, "coef": mle.coef, "lower": mle.coef_lower, "upper": mle.coef_upper})
    change = mle.table()
    sec = Section("style", "Under style control",
                  text=[f"Style-controlled Bradley–Terry on {mle.n_comparisons:,.0f} battles with features "
                        f"{', '.join(mle.features)} (normalised differences (x_a − x_b)/(x_a + x_b), standardised); "
                        f"{ci} intervals. The table shows each player's rank with and without style control."],
                  tables=[("style coefficients β", coef), ("leaderboard under style control", change)],
                  data={"style": coef.to_dict(orient="records"), "leaderboard": change.to_dict(orient="records")})
    parts = {"style mle": mle.diagnostics, f"style {bayes.method}": bayes.diagnostics}
    return answers, [sec], parts
