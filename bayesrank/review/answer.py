"""One claim's answer, whatever the kind of data: the frequentist, Bayesian and perturbation answers,
the verdict, and a one-line reason that says which part of the rule decided it."""

from __future__ import annotations

from dataclasses import dataclass, field

from bayesrank.review.numbers import count, p_value, percent, plural, probability

VERBS = {"drop": "dropping", "flip": "flipping", "add": "adding", "drop-cluster": "dropping"}


def perturbation_phrase(action: str, entry: dict) -> str:
    """'flipping 198 comparisons' (the audit's own words when it names its unit: 'dropping 3 items')."""
    if entry.get("what"):
        return entry["what"]
    verb = VERBS.get(action)
    if action == "drop-cluster" and verb:
        return f"{verb} {plural(entry['budget'], 'whole cluster')}"
    where = "" if entry.get("clusters") is None else f" in {plural(entry['clusters'], 'cluster')}"
    return f"{verb} {plural(entry['budget'], 'comparison')}{where}" if verb else plural(entry["budget"], f"{action} change")


def reason(frequentist: dict, bayesian: dict | None, perturbation: dict, verdict: str, level: float) -> str:
    """Why the verdict: the failing answer(s) for ``unsupported``; the smallest verified perturbation
    for ``fragile`` (as a share of the claim's evidence, ``relative_to``); how far the greedy audit
    searched for ``supported`` and ``not searched``; the posterior for ``not converged``. Numbers and
    words as the claims table writes them (:mod:`bayesrank.review.numbers`): a supported claim is not
    'overturned' — its smallest perturbation found was not below the threshold."""
    parts = []
    sig = frequentist.get("supported")
    p = frequentist.get("p_value")
    sided = f"{frequentist['sided']} " if frequentist.get("sided") else ""
    shown = p_value(p)
    p_text = f"{sided}p {shown}" if shown.startswith("<") else f"{sided}p = {shown}"
    parts.append(("significant" if sig else "not significant") + (f" ({p_text})" if p is not None else
                                                                   f" ({frequentist.get('interval', 'interval')})"))
    if bayesian and bayesian.get("probability") is not None:
        prob = bayesian["probability"]
        thr = bayesian.get("threshold", level)
        text = probability(prob, bayesian.get("n_draws"))
        parts.append((f"P(claim) {text}" if text[0] in "<>" else f"P(claim) = {text}")
                     + ("" if prob >= thr else f", below {thr:.3g}"))
        if verdict == "not converged":
            parts.append(f"the {bayesian.get('method', 'posterior')} posterior did not converge")
    found = [(a, d) for a, d in perturbation.items() if d.get("broken") and d.get("verified")]
    rel = next((d["relative_to"] for d in perturbation.values() if d.get("relative_to")), None)
    audited = set(perturbation) <= {"drop", "flip", "add", "drop-cluster"}  # greedy audits (else: observed changes of estimator, ...)
    of = ""
    if rel and "unit" not in rel:  # a count of units named by ``what`` (per-item results)
        of = f" of the {count(rel['n'])} {rel['what']}"
    elif rel:
        of = (f" of the claim's {count(rel['n'])} effective {rel['unit']}" if audited
              else f" of {count(rel['n'])} {rel['unit']}")
    if found:
        a, d = min(found, key=lambda x: x[1]["fraction"])
        what = f"{perturbation_phrase(a, d)} ({percent(d['fraction'])}{of})"
        parts.append(f"the smallest overturning perturbation found: {what}" if verdict == "supported"
                     else f"overturned by {what}")
    elif perturbation and all(d.get("broken") is None for d in perturbation.values()):  # not audited: say why
        parts.append(next(iter(perturbation.values())).get("reason") or "not audited")
    elif perturbation and (not audited or any(d.get("exact") for d in perturbation.values())):
        # not a greedy search (configurations, estimators) or an exact minimum (per-item results): its own words
        parts.extend(dict.fromkeys(str(d.get("reason")) for d in perturbation.values() if d.get("reason")))
    elif perturbation and any(d.get("broken") is not None for d in perturbation.values()):
        reached = [d.get("searched_to") for d in perturbation.values()
                   if d.get("broken") is not None and d.get("searched_unit") != "clusters"]
        low = min((r for r in reached if r is not None), default=None)
        per = float(rel.get("comparisons_per_cluster") or 1.0) if rel else 1.0
        if rel and low is not None and rel["n"] > 0 and per > 1:  # clusters: the comparisons of that many clusters
            parts.append(f"none found by the greedy audit within {plural(low, 'comparison')} (those of "
                         f"{percent(low / per / rel['n'])}{of}, at most {count(per)} comparisons each)")
        elif rel and low is not None and rel["n"] > 0:
            parts.append(f"none found by the greedy audit within {count(low)} ({percent(low / rel['n'])}{of})")
        else:
            parts.append("no verified overturning perturbation within the budget")
    return "; ".join(parts)


@dataclass
class ClaimAnswer:
    """``claim`` (a :class:`~bayesrank.review.claims.Claim`), the three answers, the verdict, notes,
    kind-specific fields (``extra``: the group of a confidence claim, ...), ``relative_to`` (the
    claim's evidence, :mod:`bayesrank.review.evidence`) and, for pairwise claims,
    ``significance_perturbation``: per action, the smallest verified perturbation that removes the
    claim's significance (same fields as ``perturbation``; None where the kind has none);
    ``statement``: the claim in words with the players it names (``top1`` → 'X is #1')."""

    claim: object
    frequentist: dict
    bayesian: dict | None
    perturbation: dict
    verdict: str
    level: float
    notes: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)
    significance_perturbation: dict | None = None
    relative_to: dict | None = None
    statement: str | None = None  # what the claim says about whom ('chatgpt-4o-latest is #1')

    @property
    def reason(self) -> str:
        return reason(self.frequentist, self.bayesian, self.perturbation, self.verdict, self.level)

    def to_dict(self) -> dict:
        d = {"claim": self.claim.text, "kind": self.claim.kind, "verdict": self.verdict, "reason": self.reason}
        if self.statement:
            d["statement"] = self.statement
        if getattr(self.claim, "sided", None):
            d["sided"] = self.claim.sided
            d["selected"] = bool(self.claim.selected)
        if getattr(self.claim, "benchmark", None):
            d["benchmark"] = self.claim.benchmark
        d.update(self.extra)
        if self.relative_to is not None:
            d["relative_to"] = self.relative_to
        d.update(frequentist=self.frequentist, bayesian=self.bayesian, perturbation=self.perturbation)
        if self.significance_perturbation is not None:
            d["significance_perturbation"] = self.significance_perturbation
        d["notes"] = self.notes
        return d
