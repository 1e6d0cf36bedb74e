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
130    interrupted (Ctrl-C): one line, no traceback, and no output file at a requested path
=====  ========================================================================================

Reading or writing a file that fails (a missing file, no permission, a full disk) is bad input too:
one line naming the path, exit code 2.

Anything else is a programming error and keeps its traceback.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

EXIT_OK = 0
EXIT_FAIL_ON = 1
EXIT_INPUT = 2
EXIT_NUMERICAL = 3
EXIT_INTERRUPTED = 130


class InputError(ValueError):
    """Bad input: the message names the row/column and what was expected (exit code 2)."""


class OutputError(InputError):
    """A path the command must write cannot be written (checked before the work starts; exit code 2)."""


class NumericalError(RuntimeError):
    """Valid input whose estimate cannot be computed; the message says what to try (exit code 3)."""


class NoFiniteEstimateError(NumericalError):
    """The data admit no finite maximum-likelihood estimate (and the message says what to do)."""


class ProtocolWarning(UserWarning):
    """A reported number lacks part of the measurement protocol that gives it meaning."""


@dataclass
class ExclusionLog:
    """Counts every excluded row by reason, so nothing is dropped silently. ``examples`` hold up to
    five places per reason (file lines, ``file:line``, or a DataFrame's index labels: ``unit``)."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list] = field(default_factory=dict)
    unit: str = "rows"

    def add(self, reason: str, n: int, example_rows: Iterable[Any] = ()) -> None:
        if n <= 0:
            return
        self.counts[reason] = self.counts.get(reason, 0) + int(n)
        ex = self.examples.setdefault(reason, [])
        ex.extend(list(example_rows)[: max(0, 5 - len(ex))])

    def merge(self, other: ExclusionLog) -> ExclusionLog:
        """Add ``other``'s counts and examples (in place; returns self)."""
        for reason, n in other.counts.items():
            self.add(reason, n, other.examples.get(reason, []))
        if other.counts and not self.counts.keys() - other.counts.keys():
            self.unit = other.unit
        return self

    def copy(self) -> ExclusionLog:
        return ExclusionLog(dict(self.counts), {k: list(v) for k, v in self.examples.items()}, self.unit)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def report(self) -> str:
        if not self.counts:
            return "no rows excluded"
        parts = []
        for reason, n in self.counts.items():
            ex = self.examples.get(reason, [])
            unit = (self.unit[:-1] if len(ex) == 1 and self.unit.endswith("s") else self.unit) + " " if self.unit else ""
            parts.append(f"{n:,} {reason}" + (f" (e.g. {unit}{', '.join(map(str, ex))})" if ex else ""))
        return f"{self.total:,} rows excluded: " + "; ".join(parts)

    def warn(self) -> None:
        if self.counts:
            warnings.warn(self.report(), UserWarning, stacklevel=3)

    def to_dict(self) -> dict:
        return {"total": self.total, "by_reason": dict(self.counts)}
