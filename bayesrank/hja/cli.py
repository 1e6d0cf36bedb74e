"""``bayesrank hja`` (placeholder until the full command lands)."""

from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser("hja", help="heterogeneous judge-aware ranking (consensus, judge sensitivity, residual heterogeneity)")
    p.add_argument("data")
    p.set_defaults(func=lambda args: 0)
