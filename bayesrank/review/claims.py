"""Claims a reviewer checks, parsed from text into objects the sections evaluate.

Pairwise and judge data (players ranked by Bradley–Terry scores θ):

==============  =====================================================================  ===============
claim           holds when (margin > 0)                                                 audit objective
==============  =====================================================================  ===============
``top1``        the current leader X is ahead of everyone: min_b (θ_X − θ_b)             ``top1``
``topk:K``      the current top-K set S stays the top K: min_{a∈S, b∉S} (θ_a − θ_b)      ``topk:K``
``A>B``         θ_A − θ_B                                                              ``pair:A>B``
``order``       Kendall τ between the refitted and the reported order > 0.9             ``tau``
==============  =====================================================================  ===============

Per-item benchmark results (``items``): the same claims about mean scores (``bayesrank.review.items``).
Grid data: ``A>B`` (on every benchmark) or ``A>B@BENCHMARK``. Published results tables
(``table``): ``top1``, ``topk:K``, ``A>B``, each optionally ``@BENCHMARK`` (:mod:`bayesrank.review.table`). Confidence records: ``verbal-better``
(verbal confidence is better calibrated than token probability: g = CE(verbal) − CE(token) < 0).

A claim is *data-selected* (``selected=True``: tested two-sided, :mod:`bayesrank.review.verdict`)
when the data chose what it asserts — ``top1``, ``topk:K`` and ``order`` always (the leader, the
top set and the order are the fitted ones), the default claims (adjacent pairs in the fitted
order; a grid's best vs second best) — and *pre-specified* (one-sided) when the user named it
with its direction (``--claim A>B``, ``A>B@X``, ``verbal-better``).
"""

from __future__ import annotations

from dataclasses import dataclass

from bayesrank.data.claims import (  # one τ threshold for claim and audit
    TAU_THRESHOLD,
    split_pair_claim,
)
from bayesrank.errors import InputError

KINDS = ("pairwise", "judges", "grid", "confidence", "items", "table")


@dataclass(frozen=True)
class Claim:
    """One parsed claim. ``kind``: top1 | topk | pair | order | verbal-better; ``selected``: chosen by
    the data (two-sided) rather than named in advance (one-sided)."""

    text: str
    kind: str
    k: int | None = None
    a: str | None = None
    b: str | None = None
    benchmark: str | None = None
    selected: bool = False

    @property
    def sided(self) -> str:
        """``two-sided`` for a data-selected claim, ``one-sided`` for a pre-specified one."""
        return "two-sided" if self.selected else "one-sided"

    @property
    def objective(self) -> str:
        """The influence objective whose break overturns the claim (pairwise data)."""
        if self.kind == "top1":
            return "top1"
        if self.kind == "topk":
            return f"topk:{self.k}"
        if self.kind == "pair":
            return f"pair:{self.a}>{self.b}"
        if self.kind == "order":
            return "tau"
        raise ValueError(f"no audit objective for a {self.kind} claim")


def parse_claim(text: str, kind: str, players=None, benchmarks=None) -> Claim:
    """Parse one ``--claim`` for data of ``kind`` (players/benchmarks validate names when given)."""
    t = text.strip()
    if kind == "confidence":
        if t in ("verbal-better", "verbal<token"):
            return Claim(t, "verbal-better")
        raise InputError(f"claim {text!r}: confidence records support the claim 'verbal-better' "
                         "(verbal confidence is better calibrated than token probability)")
    if kind == "grid":
        body, _, bench = t.partition("@")
        if bench and benchmarks is not None and bench not in set(map(str, benchmarks)):
            raise InputError(f"claim {text!r}: unknown benchmark {bench!r}; benchmarks: {sorted(map(str, benchmarks))}")
        a, b = split_pair_claim(body, players)
        return Claim(t, "pair", a=a, b=b, benchmark=bench or None)
    if t == "top1":
        return Claim(t, "top1", k=1, selected=True)
    if t.startswith("topk:"):
        try:
            k = int(t.split(":", 1)[1])
        except ValueError:
            raise InputError(f"claim {text!r}: expected topk:K with an integer K") from None
        n = None if players is None else len(players)
        if k < 1 or (n is not None and k >= n):
            raise InputError(f"claim {text!r}: K must be between 1 and {(n or 2) - 1} (number of players − 1)")
        return Claim(t, "topk", k=k, selected=True)
    if t == "order":
        return Claim(t, "order", selected=True)
    if ">" in t:
        a, b = split_pair_claim(t, players)
        if a == b:
            raise InputError(f"claim {text!r}: a player cannot be compared with itself")
        return Claim(t, "pair", a=a, b=b)
    raise InputError(f"unknown claim {text!r}; expected top1, topk:K, A>B or order")


def default_claims(ranking: list[str]) -> list[Claim]:
    """top1, topk:3 (topk:5 with ≥ 20 players) and each adjacent pair of the top 5 below the leader
    (``#1>#2`` is not repeated: ``top1`` claims it, and more) — all data-selected."""
    n = len(ranking)
    out = [Claim("top1", "top1", k=1, selected=True)]
    k = 5 if n >= 20 else 3
    if k < n:
        out.append(Claim(f"topk:{k}", "topk", k=k, selected=True))
    for i in range(1, min(5, n) - 1):
        a, b = ranking[i], ranking[i + 1]
        out.append(Claim(f"{a}>{b}", "pair", a=a, b=b, selected=True))
    return out


def statement(claim: Claim, ranking: list[str]) -> str | None:
    """The claim in words with the players it names, for the reported ``ranking`` (best first):
    ``top1`` → 'X is #1', ``topk:K`` → 'X, Y, Z are the top 3'; None for a pair (its text names both)."""
    if claim.kind == "top1":
        return f"{ranking[0]} is #1"
    if claim.kind == "topk":
        return ", ".join(ranking[: claim.k]) + f" are the top {claim.k}"
    if claim.kind == "order":
        return f"the reported order of all {len(ranking)} players (Kendall τ > {TAU_THRESHOLD})"
    return None
