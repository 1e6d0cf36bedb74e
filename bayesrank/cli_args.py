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
``--position-effect``  Bradley–Terry with an intercept for the side listed first (fit, ranks, audit, review)
``--cluster COL``      cluster-robust intervals / cluster bootstrap by COL (fit, ranks, audit, review)
``--style A:B,...``    style-controlled Bradley–Terry with these feature columns (fit, ranks, audit, review)
=====================  ===================================================================

Numbers are checked when the command line is parsed (before any data are read): counts such as
``--draws``, ``--top``, ``--n-boot`` must be integers >= 1 (``--tune`` >= 0), ``--seed`` an
integer >= 0, ``--level`` strictly between 0 and 1. Output paths (``--json``, ``--plots``,
``--html``, ...) are declared with :func:`declare_outputs` and checked by ``bayesrank.cli.main``
before the command runs (:mod:`bayesrank.outputs`).
"""

from __future__ import annotations

import argparse


# ----------------------------------------------------------------------------- argument types
def _integer(text: str, minimum: int, what: str) -> int:
    try:
        value = int(str(text).strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1 (counts: draws, chains, replicates, rows shown)."""
    return _integer(text, 1, "an integer >= 1")


def nonnegative_int(text: str) -> int:
    """An integer >= 0 (seeds, tuning steps)."""
    return _integer(text, 0, "an integer >= 0")


def fraction(text: str) -> float:
    """A number strictly between 0 and 1 (levels, fractions)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, got {text}")
    return value


def nonnegative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text}")
    return value


def positive_float(text: str) -> float:
    value = nonnegative_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value


def declare_outputs(p: argparse.ArgumentParser, **dests) -> None:
    """Declare output flags: ``dest=("--flag", "file" | "folder")``; ``bayesrank.cli.main`` checks
    them before the command runs (a folder where a file is expected, no permission, ...)."""
    current = dict(p.get_default("_outputs") or {})
    current.update(dests)
    p.set_defaults(_outputs=current)


#: ``--columns`` keys per kind of data (bayesrank.data.columns; docs/your-data.md)
COLUMN_KEYS = {
    "pairwise": "a, b (the players), outcome, score_a, score_b (points: higher wins, equal is a tie), judge, cluster, "
                "weight, pair (one column naming both players)",
    "grid": "model, item, score, benchmark",
    "confidence": "correct, verbal, token, group (repeat group= for several)",
}


def add_data_args(p: argparse.ArgumentParser, formats=None, exclude_invalid: bool = True,
                  vocabulary=("pairwise",)) -> None:
    """``DATA``, ``--format``, ``--exclude-invalid`` and the column vocabulary (``--columns``, and for
    pairwise data ``--outcome-map``, ``--judge-cols``), ``--encoding``, ``--path-pattern``."""
    p.add_argument("data", help="data file (CSV/TSV/JSON/JSONL/Parquet, .gz too), a folder of them, or a bundled "
                                "dataset name (`python -m bayesrank.datasets` lists them)")
    p.add_argument("--format", default="auto", choices=("auto", *formats) if formats else None,
                   help="input format (default: detected from the columns)")
    if exclude_invalid:
        p.add_argument("--exclude-invalid", action="store_true",
                       help="exclude invalid rows and count them by reason (missing names or points, self-comparisons, "
                            "unknown or invalid-mapped outcomes, unreadable JSON lines) instead of stopping at the first")
    g = p.add_argument_group("which column is which (docs/your-data.md)")
    keys = "; ".join(f"{kind}: {COLUMN_KEYS[kind]}" for kind in vocabulary)
    g.add_argument("--columns", default=None, metavar="KEY=COL[,KEY=COL...]",
                   help=f"say which column holds what (default: detected, and the detection is printed). Keys — {keys}")
    if "pairwise" in vocabulary:
        g.add_argument("--outcome-map", default=None, metavar="VALUE=a|b|tie|invalid[,...]",
                       help="what raw outcome values mean, e.g. model_1=a,model_2=b,0=tie,unparsed=invalid "
                            "(needed for numeric codes such as 0/1/2)")
        g.add_argument("--judge-cols", default=None, metavar="COL[,COL...]",
                       help="wide per-judge outcome columns (e.g. annotator1,annotator2,annotator3): one comparison per "
                            "column, judge = the column's name")
    g.add_argument("--encoding", default=None, metavar="NAME",
                   help="text encoding of DATA (default: UTF-8 with or without BOM, UTF-16/32 with BOM; a file that is "
                        "not UTF-8 is read as Windows-1252 and a note says so)")
    if "pairwise" in vocabulary:
        g.add_argument("--join", default=None, metavar="FILE[,FILE...]",
                       help="add the columns of other files that share a key column with DATA (--on), e.g. per-judge "
                            "verdicts kept in separate files keyed by the item id")
        g.add_argument("--on", default=None, metavar="COL", help="the key column of --join")
        g.add_argument("--path-pattern", default=None, metavar="PATTERN",
                       help="DATA is a folder: read the files whose path (relative to it) matches PATTERN and take "
                            "{a}, {b}, {judge} ... from it, e.g. '{a}-vs-{b}-gpt-4-reviewer-threeclass.jsonl' "
                            "(* = any text, ? = one character)")


def data_options(args) -> dict:
    """The reading options of :func:`add_data_args` as keyword arguments of the readers
    (``columns``, ``outcome_map``, ``judge_cols``, ``encoding``, ``path_pattern``; absent ones omitted)."""
    names = ("columns", "outcome_map", "judge_cols", "encoding", "path_pattern", "join", "on")
    return {n: getattr(args, n) for n in names if getattr(args, n, None) not in (None, "")}


def print_reading(out, comps, excluded: bool = True) -> None:
    """The reading notes (encoding or delimiter detected, the columns assumed, files skipped) and
    (``excluded``) the rows excluded, one line each: nothing is assumed or dropped without a word."""
    from bayesrank.escape import terminal_text

    for note in getattr(comps, "notes", None) or []:  # notes and reasons quote the data: plain text
        out.print(terminal_text(f"note: {note}", style="cyan"))
    log = getattr(comps, "excluded", None)
    if excluded and log is not None and log.total:
        out.print(terminal_text(f"excluded: {log.report()}", style="yellow"))


def add_output_args(p: argparse.ArgumentParser, level: bool = True, seed: bool = True, plots: bool = True) -> None:
    """``--level``, ``--seed``, ``--json`` and ``--plots`` (as the command supports them)."""
    if level:
        p.add_argument("--level", type=fraction, default=0.95, help="interval level (default 0.95)")
    if seed:
        p.add_argument("--seed", type=nonnegative_int, default=0, help="random seed (integer >= 0; default 0)")
    p.add_argument("--json", default=None, metavar="PATH", help="write the result as JSON (schema-validated)")
    declare_outputs(p, json=("--json", "file"))
    if plots:
        p.add_argument("--plots", default=None, metavar="DIR", help="write the result's figures into DIR")
        declare_outputs(p, plots=("--plots", "folder"))


#: what to try when no finite estimate exists, in each command's own flags (the library's messages
#: name the Python arguments: ``ridge>0``, ``failed='ridge'``)
REMEDIES = {
    "fit": "pass --ridge 0.01 (a penalty) or --method map / nuts (a prior) for finite scores",
    "ranks": "pass --method laplace or nuts (a prior) for finite scores",
    "audit": "pass --ridge 0.01 for finite scores, or --min-matches N to audit the players with a finite MLE",
    "review": "pass --ridge 0.01 for penalised finite scores (the Bayesian answers use the prior either way)",
}
_API_REMEDIES = (
    "use ridge>0 (or a prior: method='map'/'nuts') for finite scores",
    "use failed='ridge' (--bootstrap-failed ridge) or a ridge > 0",
    "try ridge>0 / beta_ridge>0 or fewer style features",
    "use ridge>0",
)


def in_flags(command: str | None, message: str) -> str:
    """A numerical failure's advice in ``command``'s own flags (never a flag the command lacks)."""
    remedy = REMEDIES.get(command or "")
    text = message.replace("; restrict to the finite core first (bayesrank.data.finite_core)", "")
    if remedy is None:
        return text
    for phrase in _API_REMEDIES:
        if phrase in text:
            text = text.replace(phrase, remedy, 1)
            break
    else:
        if "no finite" in text and remedy not in text:
            text = f"{text}; {remedy}"
    for phrase in _API_REMEDIES:  # a second mention of an API remedy adds nothing
        text = text.replace("; " + phrase, "")
    if command == "fit":
        text = text.replace("(--bootstrap-failed ridge)", "--bootstrap-failed ridge")
    return text


STYLE_HELP = ("style control: per-battle feature columns of player a and player b (e.g. len_a:len_b,bold_a:bold_b); "
              "each feature is (x_a − x_b)/(x_a + x_b), standardised (LMArena's style control); scores are the "
              "adjusted ones, the table shows each player's rank change vs the plain fit")


def add_model_args(p, style_help: str = STYLE_HELP, style: bool = True):
    """The flags that define the Bradley–Terry model beyond its tie model — ``--position-effect``,
    ``--cluster COL`` and (``style=True``) ``--style``, ``--style-transform``, ``--style-standardize`` —
    shared by ``fit``, ``ranks``, ``audit`` and ``review``. Returns the argument group."""
    g = p.add_argument_group("model (position effect, clusters, style features)")
    g.add_argument("--position-effect", action="store_true",
                   help="add an intercept α for the side listed first (model_a): logit P(a beats b) = θ_a − θ_b + α")
    g.add_argument("--cluster", default=None, metavar="COL",
                   help="column of cluster labels (prompt, user, item judged many times): cluster-robust sandwich "
                        "intervals (statsmodels' CRV1) and bootstrap of whole clusters")
    if style:
        g.add_argument("--style", default=None, metavar="A_COL:B_COL[,A_COL:B_COL...]", help=style_help)
        g.add_argument("--style-transform", default="normalized_diff", choices=("normalized_diff", "diff"),
                       help="feature difference: (x_a − x_b)/(x_a + x_b) (default, LMArena) or x_a − x_b")
        g.add_argument("--style-standardize", default="center_scale", choices=("center_scale", "scale", "none"),
                       help="center_scale (default, LMArena: implies a position-a effect tied to β), scale (keeps "
                            "features antisymmetric: use it when every battle involves one reference player), none")
    return g


def model_options(args) -> dict:
    """The :class:`~bayesrank.bt.api.BradleyTerry` keyword arguments of :func:`add_model_args`' flags."""
    out = {"position_effect": bool(getattr(args, "position_effect", False)),
           "cluster": getattr(args, "cluster", None) or getattr(args, "style_cluster", None)}
    if getattr(args, "style", None):
        out.update(style=args.style, transform=args.style_transform, standardize=args.style_standardize)
    elif (getattr(args, "style_transform", "normalized_diff"), getattr(args, "style_standardize", "center_scale")) \
            != ("normalized_diff", "center_scale"):
        from bayesrank.errors import InputError

        raise InputError("--style-transform / --style-standardize need --style")
    return out


def report_diagnostics(out, diagnostics) -> None:
    """Print a :class:`bayesrank.protocol.Diagnostics` line; a failed check is shown as a warning."""
    from bayesrank.escape import rich_escape

    if diagnostics.converged:
        out.print(f"[dim]{rich_escape(diagnostics.line())}[/]")
    else:
        out.print(f"[bold yellow]warning:[/] {rich_escape(diagnostics.line())}")
        for m in diagnostics.messages:  # messages may name players, judges, items
            out.print(f"[yellow]  - {rich_escape(m)}[/]")


def write_outputs(out, result, args, figures: dict | None = None) -> None:
    """The files every command writes the same way: ``--json PATH`` (the result's JSON, validated
    against its schema) and ``--plots DIR`` (each ``{file name: () -> Figure}`` saved as a PNG)."""
    if getattr(args, "json", None):
        from bayesrank.escape import terminal_text

        result.to_json(args.json)
        out.print(terminal_text(f"wrote {args.json}"))
    if getattr(args, "plots", None) and figures:
        save_figures(out, args.plots, figures)


def save_figures(out, folder, figures: dict) -> None:
    """Each ``{file name: () -> Figure}`` saved into ``folder`` (whole files or none; :mod:`bayesrank.outputs`)."""
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayesrank.outputs import save_figure

    folder = Path(folder)
    for name, make in figures.items():
        fig = make()
        try:
            save_figure(fig, folder / name, dpi=120)
        finally:
            plt.close(fig)
        from bayesrank.escape import terminal_text

        out.print(terminal_text(f"wrote {folder / name}"))
