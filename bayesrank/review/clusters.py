"""Dependence the answers do not model yet: obvious cluster columns, proposed in the report.

Comparisons that share an item — the same question, prompt or instruction judged by several judges,
or one pair of outputs rated by several workers — are not independent: treating them as independent
makes intervals too narrow and fractions count the repeated judgments of one item as separate
evidence. When the data carry a column whose name says it identifies such a group (``question_id``,
``prompt``, ``instruction``, ``item``, ``id``, ...) and it does group the rows (fewer groups than
rows), the report names it, with the number of groups and rows per group, and whether a pair is
judged in both orders within a group (position swaps of one item: dependent by construction).
"""

from __future__ import annotations

import pandas as pd

CANDIDATES = ("question_id", "question", "prompt_id", "prompt", "instruction_id", "instruction", "item_id", "item",
              "conversation_id", "sample_id", "task_id", "query_id", "query", "id")


def propose(frame: pd.DataFrame, used: str | None = None) -> list[dict]:
    """Candidate cluster columns of a comparisons frame (``model_a``, ``model_b`` + other columns):
    ``{column, n_groups, rows, rows_per_group, both_orders}`` for each column named like a group id
    (:data:`CANDIDATES`, case-insensitive) that groups the rows, except ``used``."""
    out = []
    n = len(frame)
    for col in frame.columns:
        if str(col).lower() not in CANDIDATES or col == used:
            continue
        v = frame[col]
        groups = int(v.nunique(dropna=True))
        if not 1 < groups < n:
            continue
        a, b = frame["model_a"].astype(str), frame["model_b"].astype(str)
        lo, hi = a.where(a <= b, b), b.where(a <= b, a)
        orient = pd.DataFrame({"g": v.to_numpy(), "lo": lo.to_numpy(), "hi": hi.to_numpy(), "first": a.to_numpy()})
        both = bool((orient.groupby(["g", "lo", "hi"], dropna=True)["first"].nunique() > 1).any())
        out.append({"column": str(col), "n_groups": groups, "rows": n, "rows_per_group": n / groups,
                    "both_orders": both})
    return out


def proposal_note(p: dict, used: str | None = None) -> str:
    """One sentence for the report (``used``: the cluster column the answers already use)."""
    swap = "; some pairs are judged in both orders within a group" if p["both_orders"] else ""
    head = (f"possible dependence not modelled: column {p['column']!r} groups the {p['rows']:,} comparisons into "
            f"{p['n_groups']:,} groups ({p['rows_per_group']:.1f} per group){swap}. ")
    if used:
        return head + (f"The answers are cluster-robust for {used!r}; if comparisons of different {used!r} clusters "
                       f"share a {p['column']!r} group and are dependent, review with --cluster {p['column']} "
                       f"(the coarser grouping) instead.")
    return head + ("Comparisons of one group (the same item judged several times) are probably dependent; these "
                   "answers treat them as independent, so their intervals may be too narrow and their fractions "
                   "count repeated judgments of one item separately (--cluster COL accounts for it).")
