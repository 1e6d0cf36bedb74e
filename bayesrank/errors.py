"""Error and exclusion-reporting types shared by every area, and the command line's exit codes.

=====  ========================================================================================
code   meaning
=====  ========================================================================================
0      success
1      a ``--fail-on`` condition was met (e.g. ``bayesrank review --fail-on fragile``)
2      bad input (:class:`InputError`, a missing file): one line naming the row/column and what
       was expected, no traceback
3      numerical failure (:class:`NumericalError`): the input is valid but the estimate cannot be
       computed (no finite MLE, an optimizer that does not converge); the message says what to try
=====  ========================================================================================

Anything else is a programming error and keeps its traceback.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field


EXIT_OK = 0
EXIT_FAIL_ON = 1
EXIT_INPUT = 2
EXIT_NUMERICAL = 3


class InputError(ValueError):
    """Bad input: the message names the row/column and what was expected (exit code 2)."""


class NumericalError(RuntimeError):
    """Valid input whose estimate cannot be computed; the message says what to try (exit code 3)."""


class NoFiniteEstimateError(NumericalError):
    """The data admit no finite maximum-likelihood estimate (and the message says what to do)."""


class ProtocolWarning(UserWarning):
    """A reported number lacks part of the measurement protocol that gives it meaning."""


@dataclass
class ExclusionLog:
    """Counts every excluded row by reason, so nothing is dropped silently."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list] = field(default_factory=dict)

    def add(self, reason: str, n: int, example_rows=()) -> None:
        if n <= 0:
            return
        self.counts[reason] = self.counts.get(reason, 0) + int(n)
        ex = self.examples.setdefault(reason, [])
        ex.extend(list(example_rows)[: max(0, 5 - len(ex))])

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def report(self) -> str:
        if not self.counts:
            return "no rows excluded"
        parts = [f"{n} {reason} (e.g. rows {self.examples.get(reason, [])})" for reason, n in self.counts.items()]
        return f"{self.total} rows excluded: " + "; ".join(parts)

    def warn(self) -> None:
        if self.counts:
            warnings.warn(self.report(), UserWarning, stacklevel=3)

    def to_dict(self) -> dict:
        return {"total": self.total, "by_reason": dict(self.counts)}
