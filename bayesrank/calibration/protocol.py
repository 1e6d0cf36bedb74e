"""Protocol axes and the reporting checklist (the "protocol card" every gap result carries).

The seed's checklist: elicitation source, scored answer, token-probability readout, conditioning
context, and the estimator. A number reported without one of them is not interpretable; missing
fields are written as ``"unspecified"`` in the card and raise :class:`ProtocolWarning`, or
:class:`ProtocolIncompleteError` under ``strict=True``.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass

from bayesrank.errors import InputError, ProtocolWarning

UNSPECIFIED = "unspecified"

# Known levels of each axis (other strings are accepted and reported verbatim).
PROVENANCE_LEVELS = ("self_generated", "supplied_gold", "supplied_plausible_wrong", "supplied_type_incompatible")
SCORED_ANSWER_LEVELS = ("generated", "teacher_forced_gold")
CONTEXT_LEVELS = ("bare", "verbal_prefix")

# record column -> card field
PROTOCOL_COLUMNS = {
    "provenance": "elicitation_source",
    "scored_answer": "scored_answer",
    "readout": "readout",
    "context": "conditioning_context",
}


class ProtocolIncompleteError(InputError):
    """A gap was requested with ``strict=True`` but its protocol card has unspecified fields."""


@dataclass(frozen=True)
class ProtocolCard:
    """The measurement protocol that gives a verbal-vs-token calibration gap its meaning."""

    elicitation_source: str = UNSPECIFIED
    scored_answer: str = UNSPECIFIED
    readout: str = UNSPECIFIED
    conditioning_context: str = UNSPECIFIED
    estimator: str = UNSPECIFIED

    @property
    def missing(self) -> list[str]:
        return [k for k, v in asdict(self).items() if v in (None, "", UNSPECIFIED)]

    def to_dict(self) -> dict:
        d = {k: (UNSPECIFIED if v in (None, "") else v) for k, v in asdict(self).items()}
        d["complete"] = not self.missing
        return d

    def check(self, strict: bool = False, where: str = "") -> ProtocolCard:
        """Warn (or raise under ``strict``) when checklist fields are unspecified."""
        miss = self.missing
        if miss:
            msg = (
                f"calibration gap{(' for ' + where) if where else ''} reported with unspecified protocol "
                f"field(s): {', '.join(miss)}. State them (record columns provenance/scored_answer/readout/"
                "context or --protocol key=value); verbal-vs-token gaps are protocol-dependent."
            )
            if strict:
                raise ProtocolIncompleteError(msg)
            warnings.warn(msg, ProtocolWarning, stacklevel=3)
        return self


def card_from_levels(levels: dict, estimator: str | None) -> ProtocolCard:
    """Card from the (single) level of each protocol column in a group; mixed levels -> 'mixed:a|b'."""
    fields = {}
    for col, field in PROTOCOL_COLUMNS.items():
        vals = levels.get(col)
        if vals is None:
            fields[field] = UNSPECIFIED
            continue
        vals = sorted({str(v) for v in vals if v is not None and str(v) not in ("", "nan", UNSPECIFIED)})
        if not vals:
            fields[field] = UNSPECIFIED
        elif len(vals) == 1:
            fields[field] = vals[0]
        else:
            fields[field] = "mixed:" + "|".join(vals)
    return ProtocolCard(estimator=estimator or UNSPECIFIED, **fields)
