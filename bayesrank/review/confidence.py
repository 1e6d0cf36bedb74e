"""Confidence records: "verbal confidence is better calibrated than token probability".

Per group (a model × dataset, or a prompt variant) the signed gap ``g = CE(verbal) − CE(token)``
(negative: verbal better calibrated) from ``bayesrank.calibration``, for the deciding estimator
(the first of ``estimators``: Kumar et al.'s debiased squared error ``ece2_debiased``) and every
other one. "verbal-better" is named in advance with its direction, so its test is one-sided:

* **frequentist** (decides): the paired bootstrap of g for the deciding estimator; the claim is
  supported when the one-sided ``level`` upper bound of g (the upper end of the two-sided
  ``2·level − 1`` interval) is below 0. ``ece2_debiased`` decides because its interval covers near
  calibration (95.6% over 1,500 replications where one signal is nearly calibrated), where the
  binned ECE's and KS's gap intervals under-cover (87% / 86%: |·| of a near-zero bin residual is
  biased upwards; docs/calibration.md);
* **Bayesian** (reported, does not decide): the posterior probability P(g < 0) of the binned-ECE
  functional. The debiased squared error has no posterior (a posterior draw has no label noise to
  debias, docs/calibration.md), and the ECE functional's posterior is biased upwards near
  calibration like its plug-in: letting it decide would reintroduce the bias the deciding
  estimator removes. A note says when it disagrees;
* **perturbation**: a change of estimator (the protocol axis a reader can change without new data):
  the estimators whose plug-in gap is ≥ 0 reverse the claim (``budget`` = how many, ``fraction`` =
  their share, ``verified`` — computed on the same records).

Verdict: ``unsupported`` if the frequentist answer does not support the claim; ``fragile`` if
supported but another estimator reverses its sign; ``supported`` otherwise. The protocol card of
every gap is shown with its unspecified fields flagged.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from bayesrank.errors import InputError
from bayesrank.review.answer import ClaimAnswer
from bayesrank.review.report import ReviewReport, Section

ESTIMATORS = ("ece2_debiased", "ece", "kde", "ks", "smece")  # the first decides (bootstrap only, no posterior)
POSTERIOR_ESTIMATOR = "ece"  # the functional whose posterior is reported beside the deciding interval


def confidence_rule(level: float, primary: str) -> str:
    return (f"verbal-better claims (named in advance: one-sided): supported when the one-sided {level:.0%} "
            f"paired-bootstrap upper bound of g = CE(verbal) − CE(token) ({primary}, whose interval covers near "
            f"calibration) lies below 0 AND no other estimator gives g ≥ 0; fragile: supported, but another "
            f"estimator reverses the sign; unsupported: otherwise. The posterior P(g < 0) of the binned ECE is "
            f"reported beside it and does not decide (no posterior of the debiased error exists).")


def load_records(path, columns=None, encoding=None, exclude_invalid: bool = False):
    """The bundled Llama-3 BoolQ folder (L3_data*.csv) through the calibration reader, or a
    CSV/JSON/JSON-lines/Parquet file (or a DataFrame) with correctness, verbal and token columns (``correct``,
    ``verbal``, ``token`` unless ``columns`` names others; ``group`` columns are the groups, default
    model and dataset when present)."""
    from bayesrank.calibration.records import from_frame, group_columns
    from bayesrank.data.columns import CONFIDENCE_KEYS, parse_columns
    from bayesrank.data.frames import is_frame
    from bayesrank.data.tables import read_table

    cols = parse_columns(columns, keys=CONFIDENCE_KEYS)
    if not is_frame(path) and path.is_dir():
        if not list(path.glob("L3_data*.csv")):
            raise InputError(f"{path}: a folder of confidence records must hold the Llama-3 BoolQ files L3_data*.csv")
        if cols:
            raise InputError("--columns applies to a file of confidence records, not to the bundled BoolQ folder")
        from bayesrank.calibration.readers import read_boolq_llama3

        return read_boolq_llama3(), ["prompt_variant"]
    table = read_table(path, encoding=encoding)
    if table.frame is None:
        raise InputError(f"{path}: a JSON object, not a table of confidence records (one record per item)")
    df = table.frame
    by = list(cols.get("group") or [c for c in ("model", "dataset") if c in df.columns])
    df = group_columns(df, by, table.origin, exclude_invalid)
    rec = from_frame(df, correct_col=cols.get("correct", "correct"), verbal_col=cols.get("verbal", "verbal"),
                     token_col=cols.get("token", "token"), extra_axes=[c for c in by if c not in ("model", "dataset")],
                     exclude_invalid=exclude_invalid, origin=table.origin, excluded=df.attrs.get("excluded"))
    return rec, by


_UNSPECIFIED = re.compile(r"calibration gap(?: for (?P<group>.*?))? reported with unspecified protocol field\(s\): "
                          r"(?P<fields>[^.]*)\.")


def protocol_note(messages: list[str]) -> list[str]:
    """The calibration module's protocol warnings (one per group) as one sentence per set of missing
    fields, naming the groups, with the remedy a review can use (record columns; the review has no
    ``--protocol`` flag)."""
    by_fields: dict[str, list[str]] = {}
    other = []
    for m in dict.fromkeys(messages):
        hit = _UNSPECIFIED.match(m)
        if hit:
            by_fields.setdefault(hit["fields"], []).append(hit["group"] or "all records")
        else:
            other.append(m)
    out = [f"protocol field(s) unspecified: {fields}, for {len(groups)} group(s) ({', '.join(groups)}). State them as "
           "columns of the records (provenance, scored_answer, readout, context): verbal-vs-token gaps depend on "
           "the protocol." for fields, groups in by_fields.items()]
    return out + other


def review_confidence(path, *, claims, level: float, fragile_below: float, fast: bool, seed: int, command=None,
                      progress=None, estimators=ESTIMATORS, n_boot: int = 500, draws: int = 500,
                      reading: dict | None = None, exclude_invalid: bool = False) -> ReviewReport:
    import warnings

    from bayesrank.calibration.gap import analyze
    from bayesrank.errors import ProtocolWarning
    from bayesrank.review.claims import parse_claim
    from bayesrank.review.reproducibility import appendix

    say = progress or (lambda *a: None)
    for c in claims or ["verbal-better"]:
        claim = parse_claim(c, "confidence")
    say("reading confidence records")
    reading = dict(reading or {})
    if reading.get("path_pattern"):
        raise InputError("--path-pattern reads pairwise comparisons from a folder of files, not confidence records")
    from bayesrank.data.frames import is_frame

    records, by = load_records(path if is_frame(path) else Path(path), reading.get("columns"), reading.get("encoding"), exclude_invalid)
    say("calibration gaps, bootstrap" + ("" if fast else " and posterior"))
    interval_level = 2 * level - 1  # its upper end is the one-sided `level` bound
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ProtocolWarning)
        report = analyze(records, by=by, estimators=list(estimators), n_boot=n_boot, level=interval_level, seed=seed,
                         posterior=not fast, posterior_kwargs={"draws": draws, "tune": draws})
    protocol_notes = protocol_note([str(w.message) for w in caught if issubclass(w.category, ProtocolWarning)])
    gaps = report.table()
    primary = estimators[0]
    answers = []
    for key, g in gaps.groupby(by, sort=False) if by else [(("all",), gaps)]:
        name = "|".join(map(str, key if isinstance(key, tuple) else (key,)))
        row = g[g["estimator"] == primary].iloc[0]
        freq = {"estimate": float(row["gap"]), "lower": None, "upper": float(row["gap_upper"]),
                "p_value": None, "supported": bool(row["gap_upper"] < 0), "sided": "one-sided", "unit": f"{primary} gap",
                "interval": f"paired bootstrap ({n_boot} resamples), {primary}: one-sided {level:.0%} upper bound",
                "intervals": {r.estimator: [None, float(r.gap_upper)] for r in g.itertuples()},
                "supported_by": {r.estimator: bool(r.gap_upper < 0) for r in g.itertuples()}}
        post = g[g["estimator"] == POSTERIOR_ESTIMATOR]
        p_neg = post["p_gap_negative"].iloc[0] if len(post) else None
        bay = None if fast or p_neg is None or not np.isfinite(p_neg) else {
            "probability": float(p_neg), "method": f"gap posterior ({POSTERIOR_ESTIMATOR}; reported, does not decide)",
            "threshold": level, "decides": False}
        others = g[g["estimator"] != primary]
        rev = others[others["gap"] >= 0]
        rel = {"what": "other estimators of the gap", "n": float(len(others)), "unit": "estimators"}
        frac = float(len(rev) / len(others)) if len(others) else None
        pert = {"estimator": {
            "broken": bool(len(rev) > 0), "budget": int(len(rev)), "fraction": frac, "fraction_of_all": frac,
            "relative_to": rel, "searched_to": float(len(others)), "verified": True,
            "reason": f"{len(rev)} of {len(others)} other estimators give g ≥ 0",
            "actions": [{"estimator": r.estimator, "gap": float(r.gap), "lower": float(r.gap_lower), "upper": float(r.gap_upper)}
                        for r in rev.itertuples()]}}
        notes = []
        if bay is not None and (bay["probability"] >= level) != freq["supported"]:
            notes.append(f"the {POSTERIOR_ESTIMATOR} gap posterior (P(g < 0) = {bay['probability']:.3f}) "
                         f"{'supports' if bay['probability'] >= level else 'does not support'} the claim; it does not "
                         f"decide (biased near calibration, like the plug-in ECE)")
        if not freq["supported"]:
            v = "unsupported"
        elif len(rev):
            v = "fragile"
        else:
            v = "supported"
        text = f"verbal-better [{name}]"
        answers.append(ClaimAnswer(type(claim)(text, claim.kind), freq, bay, pert, v, level, notes,
                                   extra={"group": name}, relative_to=rel))
    cards = report.cards()
    figures = []
    from bayesrank.calibration.plots import reliability_diagrams

    for key, g in records.groups(by):
        label = "|".join(map(str, key)) or "all"
        figures.append((f"reliability diagrams: {label}",
                        lambda g=g, label=label: reliability_diagrams(g["verbal"], g["token"], g["correct"], title=label),
                        None))
    secs = [Section("gaps", "Calibration gaps g = CE(verbal) − CE(token)",
                    text=[f"Negative g: verbal confidence better calibrated. Bootstrap intervals are paired (items "
                          f"resampled with both readouts), two-sided at {interval_level:.0%}: their upper ends are "
                          f"the one-sided {level:.0%} bounds the claims use" + ("." if fast else
                          "; posterior columns from the gap posterior of the same functional.")],
                    tables=[("gap per group and estimator", gaps)], figures=figures[:6],
                    data={"gaps": gaps.to_dict(orient="records")}),
            Section("protocol", "Protocol cards (unspecified fields flagged)",
                    text=protocol_notes or ["Every protocol field is specified."],
                    tables=[("protocol card per group", cards)], data={"cards": cards.to_dict(orient="records")})]
    parts = {"calibration": report.diagnostics}
    rep = appendix(path, len(records), records.exclusions.to_dict(), seed, command)
    from bayesrank.review.reproducibility import data_name

    title = f"Review of {data_name(path if is_frame(path) else Path(path))}: verbal vs token calibration in {len(answers)} group(s)"
    from bayesrank.review.joint import joint_statement

    return ReviewReport(kind="confidence", title=title, level=level, fragile_below=fragile_below, claims=answers,
                        sections=secs, reproducibility=rep, parts=parts,
                        notes=([f"excluded: {records.exclusions.report()}"] if records.exclusions.total else [])
                        + protocol_notes,
                        custom_rule=confidence_rule(level, primary), results={"calibration": report, "records": records},
                        joint=joint_statement(answers, level))
