"""``bayesrank audit`` (placeholder until the full command lands)."""

from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser("audit", help="leaderboard perturbation audit (influence, greedy breaks, robustness scores)")
    p.add_argument("data")
    p.set_defaults(func=lambda args: 0)
