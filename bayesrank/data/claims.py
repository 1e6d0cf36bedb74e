"""Claims shared by the audits and the review: pairwise claims ``"A>B"`` between players whose
names may themselves contain ``>``, and the order claim's Kendall τ threshold."""

from __future__ import annotations

from bayesrank.errors import InputError

#: The order claim holds while Kendall τ to the reported order exceeds this; the τ audit (and R_τ)
#: breaks it at τ ≤ this. Import-free, so the review's claim parser loads no audit code.
TAU_THRESHOLD = 0.9


def split_pair_claim(text: str, players=None) -> tuple[str, str]:
    """``"A>B"`` → ``("A", "B")``. With ``players``, the split whose two sides are both players
    (names may contain ``>``); without, exactly one ``>`` with a name on each side."""
    t = str(text).strip()
    splits = [(t[:q].strip(), t[q + 1:].strip()) for q in range(len(t)) if t[q] == ">"]
    if players is not None:
        names = set(map(str, players))
        found = [(a, b) for a, b in splits if a in names and b in names]
        if len(found) == 1:
            return found[0]
        unknown = [x for a, b in splits for x in (a, b) if x not in names][:2]
        raise InputError(f"claim {t!r}: expected 'A>B' with two players of the data"
                         + (f"; unknown player(s) {unknown}" if unknown else ""))
    if len(splits) != 1 or not all(splits[0]):
        raise InputError(f"claim {t!r}: expected 'A>B' with a player name on each side")
    return splits[0]
