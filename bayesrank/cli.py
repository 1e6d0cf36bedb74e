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
    from bayesrank.errors import EXIT_INPUT, EXIT_NUMERICAL, InputError, NumericalError

    try:
        return int(args.func(args) or 0)
    except (InputError, FileNotFoundError) as err:  # bad input: one clear line, no traceback
        _error_line(f"error: {err}")
        return EXIT_INPUT
    except NumericalError as err:  # valid input, estimate not computable: the message says what to try
        _error_line(f"numerical failure: {err}")
        return EXIT_NUMERICAL


def _error_line(text: str) -> None:
    sys.stderr.write(text.rstrip() + "\n")


if __name__ == "__main__":
    sys.exit(main())
