"""The ``bayesrank`` command. Each subcommand lives beside its method: ``bayesrank/<area>/cli.py``
exposes ``register(subparsers)``, which adds a parser whose ``func`` runs the command.

Start-up: only the chosen subcommand's module is imported (``bayesrank fit`` never loads the HJA or
calibration code); ``bayesrank --help`` lists the commands from the static table below without
importing any of them. ``tests/test_cli_startup.py`` checks the table against the modules.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# command -> (module whose register() adds it, one-line help shown by ``bayesrank --help``)
COMMANDS = {
    "review": ("bayesrank.review.cli", "the reviewer's report: claims -> verdicts with evidence (HTML, Markdown, JSON)"),
    "demo": ("bayesrank.demo", "the reviewer's report on a bundled leaderboard (every fit method; writes out/review.html)"),
    "fit": ("bayesrank.bt.cli", "fit a Bradley-Terry leaderboard with CIs"),
    "ranks": ("bayesrank.bt.ranks_cli", "rank confidence sets (simultaneous, csranks), P(rank <= k), top-k sets, pairwise tiers"),
    "audit": ("bayesrank.influence.cli", "leaderboard perturbation audit (influence, verified greedy breaks, R scores)"),
    "hja": ("bayesrank.hja.cli", "heterogeneous judge-aware ranking (consensus, judge sensitivity, residual heterogeneity)"),
    "calibration": ("bayesrank.calibration.cli", "verbal vs token calibration gap with bootstrap CIs, paired posterior and protocol card (spec 01)"),
    "configflip": ("bayesrank.configflip.cli", "configuration-conditional rank instability (rho_flip, tau_R, orderings, ANOVA)"),
    "card": ("bayesrank.configflip.cli", "build a GRID disclosure card (JSON/YAML + Markdown) from harness outputs"),
    "items": ("bayesrank.items.cli", "leaderboard of per-item benchmark results: intervals, rank sets, tie groups, paired tests"),
}
SUBCOMMAND_MODULES = tuple(dict.fromkeys(module for module, _ in COMMANDS.values()))



def chosen_command(argv: list[str]) -> str | None:
    """The subcommand named in ``argv`` (its first positional argument), if it is a known one."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``error: bayesrank fit: argument --top: ... (see bayesrank fit --help)``."""

    def error(self, message):
        from bayesrank.escape import visible

        sys.stderr.write(visible(f"error: {self.prog}: {message} (see `{self.prog} --help`)") + "\n")
        sys.exit(2)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with ``command``'s module registered; every other command is a help-only stub.
    ``command=None`` registers no module (``bayesrank --help``, typos); ``"all"`` registers all."""
    parser = Parser(
        prog="bayesrank",
        description="Audit LLM leaderboards and benchmark comparisons (Bradley-Terry, HJA, calibration, config flips).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    modules = SUBCOMMAND_MODULES if command == "all" else (COMMANDS[command][0],) if command else ()
    for name in modules:
        importlib.import_module(name).register(sub)
    for name, (_, help_line) in COMMANDS.items():
        if name not in sub.choices:
            sub.add_parser(name, help=help_line, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command. Exit codes: 0 ok, 1 a ``--fail-on`` condition, 2 bad input or an unreadable /
    unwritable path (one line), 3 numerical failure (one line saying what to try), 130 interrupted
    (one line; nothing half-written at a requested path); anything else keeps its traceback."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(chosen_command(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help, or a bad flag (one line already printed): its exit code
        return int(done.code or 0) if not isinstance(done.code, str) else 2
    from bayesrank import outputs

    previous = outputs.install_interrupt_handler()
    try:
        return _run(args, outputs)
    finally:
        outputs.restore_interrupt_handler(previous)


def _run(args, outputs) -> int:
    from bayesrank.errors import EXIT_INPUT, EXIT_NUMERICAL, InputError, NumericalError

    try:
        outputs.check_outputs({flag: (getattr(args, dest, None), kind)
                               for dest, (flag, kind) in getattr(args, "_outputs", {}).items()})
        code = int(args.func(args) or 0)
    except KeyboardInterrupt:
        return _interrupted(outputs.written())
    except (InputError, FileNotFoundError) as err:  # bad input: one clear line, no traceback
        _error_line(f"error: {err}")
        return EXIT_INPUT
    except OSError as err:  # reading or writing a path failed (permissions, a full disk, ...)
        where = f"{err.filename}: " if err.filename else ""
        _error_line(f"error: {where}{err.strerror or err}")
        return EXIT_INPUT
    except NumericalError as err:  # valid input, estimate not computable: the message says what to try
        from bayesrank.cli_args import in_flags

        _error_line(f"numerical failure: {in_flags(getattr(args, 'command', None), str(err))}")
        return EXIT_NUMERICAL
    except Exception:
        # SIGINT raised inside compiled code (a numba-compiled PyTensor graph) comes back wrapped, as
        # "SystemError: ... returned a result with an exception set": an interrupt, not a bug
        if outputs.interrupted():
            return _interrupted(outputs.written())
        raise
    if outputs.interrupted():  # a library caught the interrupt and carried on (e.g. PyMC's sampler)
        return _interrupted(outputs.written())
    return code


def _interrupted(written: list[str]) -> int:
    from bayesrank.errors import EXIT_INTERRUPTED

    done = f"; finished before it: {', '.join(written)}" if written else "; nothing was written"
    _error_line(f"interrupted (Ctrl-C){done}")
    return EXIT_INTERRUPTED


def _error_line(text: str) -> None:
    """One line on stderr: a name with a newline or a terminal escape in it is shown, not acted on."""
    from bayesrank.escape import visible

    sys.stderr.write(visible(text.rstrip()) + "\n")


if __name__ == "__main__":
    sys.exit(main())
