"""``bayesrank calibration`` (placeholder until the full command lands)."""

from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser("calibration", help="verbal vs token calibration gap with protocol card")
    p.add_argument("data")
    p.set_defaults(func=lambda args: 0)
