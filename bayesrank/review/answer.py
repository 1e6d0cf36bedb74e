"""One claim's answer, whatever the kind of data: the frequentist, Bayesian and perturbation answers,
the verdict, and a one-line reason that says which part of the rule decided it."""

from __future__ import annotations

from dataclasses import dataclass, field


def _p(v) -> str:
    return f"{v:.2g}" if v is not None else "–"


def reason(frequentist: dict, bayesian: dict | None, perturbation: dict, verdict: str, level: float) -> str:
    """Why the verdict: the failing answer(s) for ``unsupported``; the smallest verified perturbation
    for ``fragile``; the smallest one found (or none) for ``supported``."""
    parts = []
    sig = frequentist.get("supported")
    p = frequentist.get("p_value")
    parts.append(("significant" if sig else "not significant") + (f" (p = {_p(p)})" if p is not None else
                                                                   f" ({frequentist.get('interval', 'interval')})"))
    if bayesian and bayesian.get("probability") is not None:
        prob = bayesian["probability"]
        parts.append(f"P(claim) = {prob:.3f}" + ("" if prob >= level else f" < {level:g}"))
    found = [(a, d) for a, d in perturbation.items() if d.get("broken") and d.get("verified")]
    if found:
        a, d = min(found, key=lambda x: x[1]["fraction"])
        verb = {"drop": "dropping", "flip": "flipping", "add": "adding"}.get(a)
        what = d.get("what") or (f"{verb} {d['budget']:,} comparisons" if verb else f"{d['budget']} {a} change(s)")
        parts.append(f"overturned by {what} ({100 * d['fraction']:.3g}%)")
    elif perturbation:
        parts.append("no verified overturning perturbation within the budget")
    return "; ".join(parts)


@dataclass
class ClaimAnswer:
    """``claim`` (a :class:`~bayesrank.review.claims.Claim`), the three answers, the verdict, notes,
    kind-specific fields (``extra``: the group of a confidence claim, ...) and, for pairwise claims,
    ``significance_perturbation``: per action, the smallest verified perturbation that removes the
    claim's significance (same fields as ``perturbation``; None where the kind has none)."""

    claim: object
    frequentist: dict
    bayesian: dict | None
    perturbation: dict
    verdict: str
    level: float
    notes: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)
    significance_perturbation: dict | None = None

    @property
    def reason(self) -> str:
        return reason(self.frequentist, self.bayesian, self.perturbation, self.verdict, self.level)

    def to_dict(self) -> dict:
        d = {"claim": self.claim.text, "kind": self.claim.kind, "verdict": self.verdict, "reason": self.reason}
        if getattr(self.claim, "benchmark", None):
            d["benchmark"] = self.claim.benchmark
        d.update(self.extra)
        d.update(frequentist=self.frequentist, bayesian=self.bayesian, perturbation=self.perturbation)
        if self.significance_perturbation is not None:
            d["significance_perturbation"] = self.significance_perturbation
        d["notes"] = self.notes
        return d
