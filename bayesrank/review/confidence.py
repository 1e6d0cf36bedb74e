"""Confidence records: "verbal confidence is better calibrated than token probability".

Per group (a model × dataset, or a prompt variant) the signed gap ``g = CE(verbal) − CE(token)``
(negative: verbal better calibrated) from ``bayesrank.calibration``, for the primary estimator
(the first of ``estimators``, ECE by default) and every other one:

* **frequentist**: the paired-bootstrap interval of g for the primary estimator; the claim is
  supported when its upper bound is below 0;
* **Bayesian**: the posterior probability P(g < 0) of the same functional;
* **perturbation**: a change of estimator (the protocol axis a reader can change without new data):
  the estimators whose plug-in gap is ≥ 0 reverse the claim (``budget`` = how many, ``fraction`` =
  their share, ``verified`` — computed on the same records).

ECE's gap interval under-covers when one signal is nearly calibrated (|·| of a near-zero bin
residual is biased upwards; docs/calibration.md); Kumar et al.'s debiased squared error
``ece2_debiased`` keeps its coverage there, so its interval is reported beside the primary one and a
note says when the two disagree about the claim.

Verdict: ``unsupported`` if the frequentist or the Bayesian answer does not support the claim;
``fragile`` if supported but another estimator reverses its sign; ``supported`` otherwise.
The protocol card of every gap is shown with its unspecified fields flagged.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bayesrank.errors import InputError
from bayesrank.review.answer import ClaimAnswer
from bayesrank.review.report import ReviewReport, Section

ESTIMATORS = ("ece", "kde", "ks", "smece", "ece2_debiased")  # the last: bootstrap only (no posterior)


def confidence_rule(level: float, primary: str) -> str:
    return (f"verbal-better claims: supported when the {level:.0%} paired-bootstrap interval of "
            f"g = CE(verbal) − CE(token) ({primary}) lies below 0 AND the posterior P(g < 0) is at least {level:.2f} "
            f"AND no other estimator gives g ≥ 0; fragile: supported, but another estimator reverses the sign; "
            f"unsupported: otherwise.")


def load_records(path: Path):
    """The bundled Llama-3 BoolQ folder (L3_data*.csv) through the calibration reader, or a CSV/JSON-lines
    file with ``correct``, ``verbal`` and ``token`` columns (+ optional model, dataset, protocol columns)."""
    from bayesrank.calibration.records import from_frame

    if path.is_dir():
        if not list(path.glob("L3_data*.csv")):
            raise InputError(f"{path}: a folder of confidence records must hold the Llama-3 BoolQ files L3_data*.csv")
        from bayesrank.calibration.readers import read_boolq_llama3

        return read_boolq_llama3(), ["prompt_variant"]
    df = pd.read_json(path, lines=path.suffix == ".jsonl") if path.suffix in (".json", ".jsonl") else pd.read_csv(path)
    rec = from_frame(df, correct_col="correct", verbal_col="verbal", token_col="token")
    by = [c for c in ("model", "dataset") if c in df.columns]
    return rec, by


def review_confidence(path, *, claims, level: float, fragile_below: float, fast: bool, seed: int, command=None,
                      progress=None, estimators=ESTIMATORS, n_boot: int = 500, draws: int = 500) -> ReviewReport:
    import warnings

    from bayesrank.calibration.gap import analyze
    from bayesrank.errors import ProtocolWarning
    from bayesrank.review.claims import parse_claim
    from bayesrank.review.reproducibility import appendix

    say = progress or (lambda *a: None)
    for c in claims or ["verbal-better"]:
        claim = parse_claim(c, "confidence")
    say("reading confidence records")
    records, by = load_records(Path(path))
    say("calibration gaps, bootstrap" + ("" if fast else " and posterior"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ProtocolWarning)
        report = analyze(records, by=by, estimators=list(estimators), n_boot=n_boot, level=level, seed=seed,
                         posterior=not fast, posterior_kwargs={"draws": draws, "tune": draws})
    protocol_notes = sorted({str(w.message) for w in caught if issubclass(w.category, ProtocolWarning)})
    gaps = report.table()
    primary = estimators[0]
    answers = []
    for key, g in gaps.groupby(by, sort=False) if by else [(("all",), gaps)]:
        name = "|".join(map(str, key if isinstance(key, tuple) else (key,)))
        row = g[g["estimator"] == primary].iloc[0]
        freq = {"estimate": float(row["gap"]), "lower": float(row["gap_lower"]), "upper": float(row["gap_upper"]),
                "p_value": None, "supported": bool(row["gap_upper"] < 0),
                "interval": f"paired bootstrap ({n_boot} resamples), {primary}"}
        p_neg = row.get("p_gap_negative")
        bay = None if fast or p_neg is None or not np.isfinite(p_neg) else {
            "probability": float(p_neg), "method": f"gap posterior ({primary})"}
        others = g[g["estimator"] != primary]
        rev = others[others["gap"] >= 0]
        pert = {"estimator": {
            "broken": bool(len(rev) > 0), "budget": int(len(rev)),
            "fraction": float(len(rev) / len(others)) if len(others) else None, "verified": True,
            "reason": f"{len(rev)} of {len(others)} other estimators give g ≥ 0",
            "actions": [{"estimator": r.estimator, "gap": float(r.gap), "lower": float(r.gap_lower), "upper": float(r.gap_upper)}
                        for r in rev.itertuples()]}}
        notes = []
        deb = g[g["estimator"] == "ece2_debiased"]
        if primary != "ece2_debiased" and len(deb):
            d = deb.iloc[0]
            freq["debiased"] = {"estimator": "ece2_debiased", "estimate": float(d["gap"]), "lower": float(d["gap_lower"]),
                                "upper": float(d["gap_upper"]), "supported": bool(d["gap_upper"] < 0)}
            if freq["debiased"]["supported"] != freq["supported"]:
                notes.append(f"the debiased squared-error gap (ece2_debiased, valid near calibration) "
                             f"{'supports' if freq['debiased']['supported'] else 'does not support'} the claim: "
                             f"[{d['gap_lower']:.4g}, {d['gap_upper']:.4g}]")
        if not freq["supported"] or (bay is not None and bay["probability"] < level):
            v = "unsupported"
        elif len(rev):
            v = "fragile"
        else:
            v = "supported"
        text = f"verbal-better [{name}]"
        answers.append(ClaimAnswer(type(claim)(text, claim.kind), freq, bay, pert, v, level, notes,
                                   extra={"group": name}))
    cards = report.cards()
    figures = []
    from bayesrank.calibration.plots import reliability_diagrams

    for key, g in records.groups(by):
        label = "|".join(map(str, key)) or "all"
        figures.append((f"reliability diagrams: {label}",
                        lambda g=g, label=label: reliability_diagrams(g["verbal"], g["token"], g["correct"], title=label),
                        None))
    secs = [Section("gaps", "Calibration gaps g = CE(verbal) − CE(token)",
                    text=["Negative g: verbal confidence better calibrated. Bootstrap intervals are paired (items "
                          "resampled with both readouts)" + ("." if fast else "; posterior columns from the gap "
                                                                               "posterior of the same functional.")],
                    tables=[("gap per group and estimator", gaps)], figures=figures[:6],
                    data={"gaps": gaps.to_dict(orient="records")}),
            Section("protocol", "Protocol cards (unspecified fields flagged)",
                    text=protocol_notes or ["Every protocol field is specified."],
                    tables=[("protocol card per group", cards)], data={"cards": cards.to_dict(orient="records")})]
    parts = {"calibration": report.diagnostics}
    rep = appendix(path, len(records), records.exclusions.to_dict(), seed, command)
    title = f"Review of {Path(path).name}: verbal vs token calibration in {len(answers)} group(s)"
    return ReviewReport(kind="confidence", title=title, level=level, fragile_below=fragile_below, claims=answers,
                        sections=secs, reproducibility=rep, parts=parts, notes=protocol_notes,
                        custom_rule=confidence_rule(level, primary), results={"calibration": report, "records": records})
