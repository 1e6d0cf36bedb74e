"""``bayesrank calibration DATA [--format F] [--by COLS] [--estimators ...] [--level L] [--seed N] [--json PATH] [--plots DIR]``

DATA (resolved by :func:`bayesrank.datasets.resolve`, as in every subcommand) is a record table
(CSV/TSV/JSON/JSON-lines/Parquet with correctness, verbal and token columns), OpenAI-style
``logprobs`` responses (JSON/JSON-lines), one Llama-3 BoolQ confidence file (``L3_data*.csv``), a
folder of them, or the name ``boolq`` (the six Llama-3 BoolQ prompt variants; a test fixture of the
source checkout). The token column holds probabilities, or JSON lists of the answer span's token
log-probabilities (``--readout T1|T2``).

Module-level imports: the standard library, :mod:`bayesrank.cli_args` and :mod:`bayesrank.errors` only.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from bayesrank.cli_args import add_data_args, add_output_args, positive_int, report_diagnostics, write_outputs
from bayesrank.errors import InputError, ProtocolWarning

FORMATS = ("table", "openai", "boolq")
BOOLQ_COLUMNS = {"Answer", "Raw_Answer", "Confidence", "Yes_Prob", "No_Prob", "Score"}


def _csv_list(s: str | None) -> list[str]:
    return [x.strip() for x in s.split(",") if x.strip()] if s else []


def _kv(s: str | None, cast=str, flag: str = "") -> dict:
    out = {}
    for part in _csv_list(s):
        if "=" not in part:
            raise InputError(f"{flag}: expected key=value, got {part!r}")
        k, v = part.split("=", 1)
        try:
            out[k.strip()] = cast(v.strip())
        except ValueError:
            raise InputError(f"{flag}: {v.strip()!r} in {part!r} is not a number") from None
    return out


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "calibration",
        help="verbal vs token calibration gap with bootstrap CIs, paired posterior and protocol card (spec 01)",
        description="Signed calibration gap g = CE(verbal) - CE(token) per group and estimator: plug-in estimate, paired "
        "bootstrap interval, the posterior of the same functional from a paired model (both readouts of an item in one "
        "likelihood) with P(g<0), and the protocol card of every result.",
    )
    add_data_args(p, formats=FORMATS, vocabulary=("confidence",))
    p.add_argument("--correct-col", default="correct", help="0/1 or True/False correctness column")
    p.add_argument("--verbal-col", default="verbal", help="verbal confidence column (number in [0,1] or text)")
    p.add_argument("--token-col", default="token", help="token probability column, or JSON lists of token log-probabilities")
    p.add_argument("--readout", default="T1", choices=["T1", "T2"], help="readout for log-probability lists (T1 geometric mean, T2 first token)")
    p.add_argument("--model-col", default="model")
    p.add_argument("--dataset-col", default="dataset")
    p.add_argument("--item-col", default=None)
    p.add_argument("--by", default=None, help="comma-separated grouping columns; each must be in the data "
                                              "(default: model,dataset when present; prompt_variant for BoolQ)")
    p.add_argument("--axes", default=None, help="extra protocol-axis columns to keep (e.g. prompt_variant)")
    p.add_argument("--estimators", default="ece,kde,ks,smece", help="subset of ece,ece_em,kde,ks,smece,ece2_debiased (ece2_debiased: Kumar et al.'s debiased squared "
                                                             "l2 error, bootstrap interval only)")
    p.add_argument("--scores", default="brier,nll,auroc", help="subset of brier,nll,auroc (empty string: none)")
    p.add_argument("--protocol", default=None, help="constant protocol fields, e.g. provenance=self_generated,scored_answer=generated,readout=T1,context=bare")
    p.add_argument("--word-map", default=None, help="verbal phrases -> probability, e.g. 'very certain=0.9,uncertain=0.4'")
    p.add_argument("--token-readout", default="T2_yesno_normalized", choices=["T2_yesno_normalized", "T2_yesno_raw"], help="BoolQ files only")
    p.add_argument("--n-boot", type=positive_int, default=500, help="paired bootstrap resamples (default 500)")
    add_output_args(p)
    p.add_argument("--no-posterior", action="store_true", help="skip the paired PyMC posterior (bootstrap only)")
    p.add_argument("--draws", type=positive_int, default=1000, help="posterior draws per chain (2 chains; tune = draws)")
    p.add_argument("--sampler", default="auto", choices=["auto", "pymc", "nutpie"], help="NUTS implementation (auto: nutpie when installed)")
    p.add_argument("--strict", action="store_true", help="unspecified protocol fields are an input error (exit 2), not a warning")
    p.set_defaults(func=run)


def _detect_format(args, path: Path) -> str:
    if args.format != "auto":
        return args.format
    if path.is_dir():
        return "boolq"
    if path.suffix in (".json", ".jsonl"):
        with open(path, "rb") as f:
            if b'"logprobs"' in f.read(1_000_000):
                return "openai"
    if path.suffix in (".csv", ".tsv"):
        from bayesrank.data.tables import read_header

        if BOOLQ_COLUMNS <= set(read_header(path, getattr(args, "encoding", None))):
            return "boolq"
    return "table"


def _apply_columns(args) -> list[str] | None:
    """``--columns correct=,verbal=,token=,group=`` onto ``--correct-col`` etc.; returns the group
    columns (None when not given)."""
    from bayesrank.data.columns import CONFIDENCE_KEYS, parse_columns

    cols = parse_columns(getattr(args, "columns", None), keys=CONFIDENCE_KEYS)
    for key in ("correct", "verbal", "token"):
        if key in cols:
            setattr(args, f"{key}_col", cols[key])
    return cols.get("group")


def load_records(args):
    """The records DATA names (see module docstring), validated."""
    from bayesrank.datasets import resolve  # files as given, else bundled short names

    from .readers import read_boolq_file, read_openai_logprobs
    from .records import concat, from_frame

    exclude_invalid = bool(getattr(args, "exclude_invalid", False))
    path = resolve(args.data.removeprefix("bundled:"))  # 'bundled:boolq': an old spelling of 'boolq'
    fmt = _detect_format(args, path)
    if fmt == "boolq":
        if not path.is_dir():
            return read_boolq_file(path, token_readout=args.token_readout)
        files = sorted(path.glob("L3_data*.csv"))
        if not files:
            raise InputError(f"{path}: a folder of BoolQ confidence records must hold L3_data*.csv files")
        return concat([read_boolq_file(f, variant=f.stem.replace("L3_data", "prompt"), token_readout=args.token_readout)
                       for f in files])
    if path.is_dir():
        raise InputError(f"{path} is a folder; --format {fmt} needs a file")
    if fmt == "openai":
        return read_openai_logprobs(path, readout=args.readout, correct_key=args.correct_col, verbal_key=args.verbal_col,
                                    word_map=_kv(args.word_map, float, "--word-map") or None,
                                    protocol=_kv(args.protocol, flag="--protocol") or None)
    from bayesrank.data.tables import read_table

    from .records import group_columns

    groups = _apply_columns(args)
    table = read_table(path, encoding=getattr(args, "encoding", None))
    if table.frame is None:
        raise InputError(f"{path}: a JSON object, not a table of confidence records (one record per item)")
    df = table.frame
    if groups:
        args.by = ",".join(groups)
    by = _csv_list(args.by) if args.by is not None else [c for c in ("model", "dataset") if c in df.columns]
    df = group_columns(df, [c for c in by if c in df.columns or groups], table.origin, exclude_invalid)
    if args.token_col not in df.columns:
        raise InputError(f"--token-col {args.token_col!r} is not a column of {path.name}; columns: {', '.join(map(str, df.columns))}")
    tok = df[args.token_col]
    is_lists = tok.map(lambda v: isinstance(v, (list, tuple)) or (isinstance(v, str) and v.strip().startswith("["))).any()
    return from_frame(
        df, correct_col=args.correct_col, verbal_col=args.verbal_col,
        token_col=None if is_lists else args.token_col, token_logprobs_col=args.token_col if is_lists else None,
        readout=args.readout, model_col=args.model_col, dataset_col=args.dataset_col, item_col=args.item_col,
        protocol=_kv(args.protocol, flag="--protocol") or None,
        extra_axes=list(dict.fromkeys(_csv_list(args.axes) + [c for c in (groups or []) if c not in ("model", "dataset")])),
        word_map=_kv(args.word_map, float, "--word-map") or None, exclude_invalid=exclude_invalid,
        origin=table.origin, excluded=df.attrs.get("excluded"),
    )


def default_by(records) -> list[str]:
    """model,dataset when the data have them (with more than one value), else prompt_variant when present."""
    by = [c for c in ("model", "dataset") if c in records.columns and records.frame[c].nunique() > 1]
    if not by and "prompt_variant" in records.columns:
        by = ["prompt_variant"]
    return by


def run(args) -> int:
    from bayesrank.report import console, rich_table

    from .gap import analyze

    con = console()
    if args.n_boot < 1:
        raise InputError(f"--n-boot {args.n_boot}; expected a positive number of resamples")
    if args.draws < 1:
        raise InputError(f"--draws {args.draws}; expected a positive number of draws")
    records = load_records(args)
    by = _csv_list(args.by) if args.by is not None else default_by(records)
    estimators = _csv_list(args.estimators)
    scores = _csv_list(args.scores)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always", ProtocolWarning)
        report = analyze(records, by=by, estimators=estimators, scores=scores, n_boot=args.n_boot, seed=args.seed,
                         level=args.level, posterior=not args.no_posterior, strict=args.strict,
                         posterior_kwargs={"draws": args.draws, "tune": args.draws, "nuts_sampler": args.sampler})
    from bayesrank.escape import rich_escape

    for x in w:
        if issubclass(x.category, ProtocolWarning):
            con.print(f"[yellow]ProtocolWarning:[/] {rich_escape(x.message)}")
    con.print(f"[bold]records:[/] {rich_escape(records.summary())}")
    cols = [*by, "estimator", "n", "verbal", "token", "gap", "gap_lower", "gap_upper", "posterior_mean", "posterior_lower",
            "posterior_upper", "p_gap_negative", "protocol_complete"]
    tab = report.table()
    title = (f"g = CE(verbal) - CE(token): plug-in, paired bootstrap {args.level:.0%} interval"
             + ("" if args.no_posterior else f", posterior of the same functional ({args.level:.0%} interval)"))
    con.print(rich_table(tab[[c for c in cols if c in tab.columns]], title=title))
    sc = report.signals[report.signals["estimator"].isin(scores)]
    if len(sc):
        con.print(rich_table(sc.rename(columns={"estimator": "score", "lo": "lower", "hi": "upper"}),
                             title=f"secondary metrics (bootstrap {args.level:.0%} interval)"))
    cards = report.cards()
    con.print(rich_table(cards, title="protocol card per group (missing fields flagged)"))
    shift = report.shift_summary()
    if len(shift):
        con.print(rich_table(shift, title="mean absolute shift of g per axis"))
    if report.posterior is not None:
        ppc = report.posterior.ppc_summary()
        bad = ppc[ppc["bins_outside"] > 0]
        for _, r in bad.iterrows():
            con.print(f"[yellow]posterior predictive check:[/] {rich_escape(r['cell'])} {rich_escape(r['signal'])}: "
                      f"{r['bins_outside']} of {r['bins']} bins outside the 90% band ({r['items_in_bins_outside']} items)")
    report_diagnostics(con, report.diagnostics)
    write_outputs(con, report, args, figures=_figures(report))
    return 0


def _figures(report) -> dict:
    """``{file name: () -> Figure}``: reliability diagrams per group and the gap forest plot."""
    figs = {}
    for cell in dict.fromkeys(r.cell for r in report.results):
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in cell)
        figs[f"reliability_{safe}.png"] = lambda cell=cell: report.plot(group=cell)
    figs["gap_forest.png"] = report.plot_gaps
    return figs


def main(argv=None) -> int:
    """Run only this subcommand (``python -m bayesrank.calibration.cli DATA ...``), with the
    package's exit codes (bayesrank.cli.main)."""
    import sys

    from bayesrank.cli import main as bayesrank_main

    return bayesrank_main(["calibration", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
