"""``bayesrank configflip`` and ``bayesrank card`` (placeholder until the full commands land)."""

from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser("configflip", help="configuration-conditional rank instability (rho_flip, tau_R, ANOVA)")
    p.add_argument("data")
    p.set_defaults(func=lambda args: 0)
    c = subparsers.add_parser("card", help="build a GRID disclosure card from harness outputs")
    c.add_argument("inputs", nargs="+")
    c.set_defaults(func=lambda args: 0)
