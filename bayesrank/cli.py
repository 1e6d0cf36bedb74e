"""The ``bayesrank`` command. Each subcommand lives beside its method: ``bayesrank/<area>/cli.py``
exposes ``register(subparsers)``, which adds a parser whose ``func`` runs the command."""

from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMAND_MODULES = (
    "bayesrank.demo",
    "bayesrank.bt.cli",
    "bayesrank.influence.cli",
    "bayesrank.hja.cli",
    "bayesrank.calibration.cli",
    "bayesrank.configflip.cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayesrank",
        description="Audit LLM leaderboards and benchmark comparisons (Bradley-Terry, HJA, calibration, config flips).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, KeyError, FileNotFoundError) as err:  # input errors: one clear line, no traceback
        from rich.console import Console

        Console(stderr=True).print(f"[bold red]error:[/] {err}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
