"""Flags that mean the same thing in every subcommand, and how a command reports diagnostics.

Import only the standard library here: every subcommand module imports this at start-up.

=====================  ===================================================================
flag                   meaning (every command that has it)
=====================  ===================================================================
``DATA``               a file (CSV/TSV/JSON/JSONL/Parquet) or a bundled dataset name
``--format F``         input format, ``auto`` (default) detects it from the columns
``--exclude-invalid``  count and drop invalid rows instead of stopping (counts reported)
``--level L``          interval level (default 0.95)
``--seed N``           random seed of every random step (default 0)
``--json PATH``        write the result as JSON (validated against its schema)
``--plots DIR``        write the result's figures into DIR
=====================  ===================================================================
"""

from __future__ import annotations

import argparse


def add_data_args(p: argparse.ArgumentParser, formats=None, exclude_invalid: bool = True) -> None:
    """``DATA``, ``--format`` and ``--exclude-invalid``."""
    p.add_argument("data", help="data file (CSV/TSV/JSON/JSONL/Parquet) or a bundled dataset name "
                                "(`python -m bayesrank.datasets` lists them)")
    p.add_argument("--format", default="auto", choices=("auto", *formats) if formats else None,
                   help="input format (default: detected from the columns)")
    if exclude_invalid:
        p.add_argument("--exclude-invalid", action="store_true",
                       help="count and drop invalid rows (self-comparisons, missing names) instead of stopping")


def add_output_args(p: argparse.ArgumentParser, level: bool = True, seed: bool = True, plots: bool = True) -> None:
    """``--level``, ``--seed``, ``--json`` and ``--plots`` (as the command supports them)."""
    if level:
        p.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    if seed:
        p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--json", default=None, metavar="PATH", help="write the result as JSON (schema-validated)")
    if plots:
        p.add_argument("--plots", default=None, metavar="DIR", help="write the result's figures into DIR")


def report_diagnostics(out, diagnostics) -> None:
    """Print a :class:`bayesrank.protocol.Diagnostics` line; a failed check is shown as a warning."""
    if diagnostics.converged:
        out.print(f"[dim]{diagnostics.line()}[/]")
    else:
        out.print(f"[bold yellow]warning:[/] {diagnostics.line()}")
        for m in diagnostics.messages:
            out.print(f"[yellow]  - {m}[/]")


def write_outputs(out, result, args, figures: dict | None = None) -> None:
    """The files every command writes the same way: ``--json PATH`` (the result's JSON, validated
    against its schema) and ``--plots DIR`` (each ``{file name: () -> Figure}`` saved as a PNG)."""
    if getattr(args, "json", None):
        result.to_json(args.json)
        out.print(f"wrote {args.json}")
    if getattr(args, "plots", None) and figures:
        from pathlib import Path

        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        folder = Path(args.plots)
        folder.mkdir(parents=True, exist_ok=True)
        for name, make in figures.items():
            fig = make()
            fig.savefig(folder / name, dpi=120)
            plt.close(fig)
            out.print(f"wrote {folder / name}")
