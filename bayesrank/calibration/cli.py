"""``bayesrank calibration DATA --correct-col C --verbal-col V --token-col T [...]``

DATA is a CSV / JSON-lines file of confidence records, or ``bundled:boolq`` (the six bundled
Llama-3 BoolQ prompt variants, read with :func:`bayesrank.calibration.readers.read_boolq_llama3`).
The token column holds probabilities, or JSON lists of the answer span's token log-probabilities
(then ``--readout T1|T2`` turns them into a probability).
"""

from __future__ import annotations

import warnings
from pathlib import Path

from bayesrank.errors import InputError, ProtocolWarning


def _csv_list(s: str | None) -> list[str]:
    return [x.strip() for x in s.split(",") if x.strip()] if s else []


def _kv(s: str | None, cast=str) -> dict:
    out = {}
    for part in _csv_list(s):
        if "=" not in part:
            raise InputError(f"expected key=value in {part!r}")
        k, v = part.split("=", 1)
        out[k.strip()] = cast(v.strip())
    return out


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "calibration",
        help="verbal vs token calibration gap with CIs, posterior and protocol card (spec 01)",
        description="Signed calibration gap g = CE(verbal) - CE(token) per group and estimator, with paired "
        "bootstrap CIs, a monotone-curve PyMC posterior (P(g<0)) and the protocol card of every result.",
    )
    p.add_argument("data", help="CSV or JSON-lines file of confidence records, or 'bundled:boolq'")
    p.add_argument("--correct-col", default="correct", help="0/1 or True/False correctness column")
    p.add_argument("--verbal-col", default="verbal", help="verbal confidence column (number in [0,1] or text)")
    p.add_argument("--token-col", default="token", help="token probability column, or JSON lists of token log-probabilities")
    p.add_argument("--readout", default="T1", choices=["T1", "T2"], help="readout for log-probability lists (T1 geometric mean, T2 first token)")
    p.add_argument("--model-col", default="model")
    p.add_argument("--dataset-col", default="dataset")
    p.add_argument("--item-col", default=None)
    p.add_argument("--by", default=None, help="comma-separated grouping columns (default: model,dataset when present)")
    p.add_argument("--axes", default=None, help="extra protocol-axis columns to keep (e.g. prompt_variant)")
    p.add_argument("--estimators", default="ece,kde,ks,smece", help="subset of ece,ece_em,kde,ks,smece")
    p.add_argument("--scores", default="brier,nll,auroc", help="subset of brier,nll,auroc (empty string: none)")
    p.add_argument("--protocol", default=None, help="constant protocol fields, e.g. provenance=self_generated,scored_answer=generated,readout=T1,context=bare")
    p.add_argument("--word-map", default=None, help="verbal phrases -> probability, e.g. 'very certain=0.9,uncertain=0.4'")
    p.add_argument("--token-readout", default="T2_yesno_normalized", choices=["T2_yesno_normalized", "T2_yesno_raw"], help="bundled:boolq only")
    p.add_argument("--n-boot", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-posterior", action="store_true", help="skip the PyMC posterior (bootstrap only)")
    p.add_argument("--draws", type=int, default=500, help="posterior draws per chain (2 chains)")
    p.add_argument("--strict", action="store_true", help="unspecified protocol fields are an error, not a warning")
    p.add_argument("--json", default=None, help="write the per-group results as JSON here")
    p.add_argument("--plots", default=None, help="directory for reliability diagrams and the gap forest plot")
    p.set_defaults(func=run)


def load_records(args):
    from .readers import read_boolq_llama3, read_openai_logprobs
    from .records import from_frame

    if args.data.startswith("bundled:"):
        name = args.data.split(":", 1)[1]
        if name != "boolq":
            raise InputError(f"unknown bundled dataset {name!r}; available: boolq")
        return read_boolq_llama3(token_readout=args.token_readout)
    path = Path(args.data)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    import pandas as pd

    if path.suffix in (".jsonl", ".json"):
        text = path.read_text()
        if '"logprobs"' in text:
            return read_openai_logprobs(path, readout=args.readout, correct_key=args.correct_col, verbal_key=args.verbal_col,
                                        word_map=_kv(args.word_map, float) or None, protocol=_kv(args.protocol) or None)
        df = pd.read_json(path, lines=path.suffix == ".jsonl")
    else:
        df = pd.read_csv(path)
    if args.token_col not in df.columns:
        raise InputError(f"column {args.token_col!r} not found; available columns: {', '.join(map(str, df.columns))}")
    tok = df[args.token_col]
    is_lists = tok.map(lambda v: isinstance(v, (list, tuple)) or (isinstance(v, str) and v.strip().startswith("["))).any()
    return from_frame(
        df, correct_col=args.correct_col, verbal_col=args.verbal_col,
        token_col=None if is_lists else args.token_col, token_logprobs_col=args.token_col if is_lists else None,
        readout=args.readout, model_col=args.model_col, dataset_col=args.dataset_col, item_col=args.item_col,
        protocol=_kv(args.protocol) or None, extra_axes=_csv_list(args.axes), word_map=_kv(args.word_map, float) or None,
    )


def run(args) -> int:
    from bayesrank.report import console, rich_table, write_json

    from .gap import analyze
    from .protocol import ProtocolIncompleteError
    from .shift import protocol_shift

    con = console()
    records = load_records(args)
    by = _csv_list(args.by) if args.by is not None else [c for c in ("model", "dataset") if c in records.frame.columns and records.frame[c].nunique() > 0]
    estimators = _csv_list(args.estimators)
    scores = _csv_list(args.scores)
    caught = []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always", ProtocolWarning)
        try:
            report = analyze(records, by=by, estimators=estimators, scores=scores, n_boot=args.n_boot, seed=args.seed,
                             posterior=not args.no_posterior, posterior_kwargs={"draws": args.draws, "tune": args.draws},
                             strict=args.strict)
        except ProtocolIncompleteError as err:
            con.print(f"[bold red]error (--strict):[/] {err}")
            return 3
        caught = [x for x in w if issubclass(x.category, ProtocolWarning)]
    for x in caught:
        con.print(f"[yellow]ProtocolWarning:[/] {x.message}")
    con.print(f"[bold]records:[/] {records.summary()}")
    cols = [*by, "estimator", "n", "verbal", "token", "gap", "gap_lo", "gap_hi", "post_mean", "post_lo", "post_hi", "p_gap_negative"]
    con.print(rich_table(report.gaps[[c for c in cols if c in report.gaps.columns]], title="g = CE(verbal) - CE(token): plug-in, bootstrap 95% CI, posterior 95% interval"))
    sc = report.signals[report.signals["estimator"].isin(scores)]
    if len(sc):
        con.print(rich_table(sc, title="secondary metrics (bootstrap 95% CI)"))
    card = report.results[0].card.to_dict()
    con.print("[bold]protocol card:[/] " + ", ".join(f"{k}={v}" for k, v in card.items() if k not in ("estimator", "complete")))
    out = report.to_dict()
    axes = [b for b in by if report.gaps[b].nunique() > 1] + (["estimator"] if len(estimators) > 1 else [])
    if axes:
        tab = report.gaps[[*by, "estimator", "gap"]]
        shifts, summary = protocol_shift(tab, axes, columns=[*by, "estimator"])
        con.print(rich_table(summary, title="mean absolute shift of g per axis"))
        out["shift_summary"] = summary
    if args.json:
        path = write_json(out, args.json)
        con.print(f"wrote {path}")
    if args.plots:
        _plots(report, records, by, Path(args.plots))
        con.print(f"figures in {args.plots}")
    return 0


def _plots(report, records, by, outdir: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plots import gap_forest, reliability_diagrams

    outdir.mkdir(parents=True, exist_ok=True)
    for key, g in records.groups(by):
        name = "|".join(map(str, key)) or "all"
        fig = reliability_diagrams(g["verbal"], g["token"], g["correct"], title=name, posterior=report.posterior, cell=name)
        fig.savefig(outdir / f"reliability_{name.replace('|', '_').replace('/', '_')}.png", dpi=110)
        plt.close(fig)
    fig = gap_forest(report.gaps, label_cols=[*by, "estimator"])
    fig.savefig(outdir / "gap_forest.png", dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    """Run only this subcommand (``python -m bayesrank.calibration.cli DATA ...``)."""
    import argparse

    parser = argparse.ArgumentParser(prog="bayesrank")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(["calibration", *(argv if argv is not None else __import__("sys").argv[1:])])
    try:
        return int(args.func(args) or 0)
    except (ValueError, KeyError, FileNotFoundError) as err:
        from bayesrank.report import console

        console(stderr=True).print(f"[bold red]error:[/] {err}")
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
