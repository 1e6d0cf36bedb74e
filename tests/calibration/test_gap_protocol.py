"""Gap, protocol cards (warning / strict), protocol-shift and provenance analysis, CLI."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from bayesrank.calibration import estimators as E
from bayesrank.calibration.cli import main as cli_main
from bayesrank.calibration.gap import analyze, calibration_gap
from bayesrank.calibration.protocol import ProtocolCard, ProtocolIncompleteError
from bayesrank.calibration.records import from_frame
from bayesrank.calibration.shift import protocol_shift, provenance_analysis
from bayesrank.errors import InputError, ProtocolWarning

FULL = dict(provenance="self_generated", scored_answer="generated", readout="T1", context="bare")


def _sim_frame(n=600, seed=0, models=("m1", "m2"), shift=0.2):
    rng = np.random.default_rng(seed)
    rows = []
    for m in models:
        c = rng.uniform(0.3, 0.9, size=n)
        y = (rng.uniform(size=n) < c).astype(int)
        tok = np.clip(c + shift, 0, 1)
        rows.append(pd.DataFrame({"model": m, "dataset": "toy", "correct": y, "verbal": c, "token": tok}))
    return pd.concat(rows, ignore_index=True)


def test_gap_value_sign_and_card():
    df = _sim_frame(n=1500, models=("m1",))
    res = calibration_gap(df.verbal, df.token, df.correct, "ece", card=ProtocolCard("self_generated", "generated", "T1", "bare"), n_boot=200)
    assert res.gap == pytest.approx(E.ece(df.verbal, df.correct) - E.ece(df.token, df.correct))
    assert res.gap_ci[1] < 0  # verbal perfectly calibrated, token overconfident by 0.2
    assert res.card.estimator == "ece" and res.card.to_dict()["complete"]


def test_missing_protocol_fields_warn_and_strict_raises():
    df = _sim_frame(n=200, models=("m1",))
    with pytest.warns(ProtocolWarning, match="unspecified protocol field\\(s\\): elicitation_source, scored_answer, readout, conditioning_context"):
        res = calibration_gap(df.verbal, df.token, df.correct, "ks", n_boot=20)
    assert res.to_dict()["protocol_card"]["readout"] == "unspecified"
    with pytest.raises(ProtocolIncompleteError, match="conditioning_context"):
        calibration_gap(df.verbal, df.token, df.correct, "ks", card=ProtocolCard("self_generated", "generated", "T1"), strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProtocolWarning)  # a complete card raises nothing
        calibration_gap(df.verbal, df.token, df.correct, "ks", card=ProtocolCard("self_generated", "generated", "T1", "bare"), n_boot=20)


def test_analyze_groups_json_and_exclusions():
    df = _sim_frame(n=400)
    df.loc[0, "verbal"] = np.nan  # counted, not dropped silently
    rec = from_frame(df, correct_col="correct", verbal_col="verbal", token_col="token", protocol=FULL)
    rep = analyze(rec, by=("model",), estimators=("ece", "ks"), n_boot=50, posterior=False)
    assert set(rep.gaps["model"]) == {"m1", "m2"}
    g1 = rep.gaps[(rep.gaps.model == "m1") & (rep.gaps.estimator == "ece")].iloc[0]
    sub = rec.frame[rec.frame.model == "m1"]
    assert g1["gap"] == pytest.approx(E.ece(sub.verbal, sub.correct) - E.ece(sub.token, sub.correct))
    assert g1["n"] == 399
    d = rep.to_dict()
    assert d["exclusions"]["total"] == 1
    grp = d["groups"]["m1"]
    assert set(grp["estimators"]) == {"ece", "ks"}
    assert grp["protocol_card"]["conditioning_context"] == "bare" and grp["protocol_card"]["complete"]
    assert grp["gap"]["ece"]["estimate"] == pytest.approx(g1["gap"])
    brier = rep.signals[(rep.signals.model == "m1") & (rep.signals.estimator == "brier") & (rep.signals.signal == "token")].iloc[0]
    assert brier["value"] == pytest.approx(E.brier(sub.token, sub.correct))


def test_analyze_strict_and_empty_groups():
    df = _sim_frame(n=100)
    rec = from_frame(df, correct_col="correct", verbal_col="verbal", token_col="token")
    with pytest.raises(ProtocolIncompleteError):
        analyze(rec, by=("model",), estimators=("ece",), n_boot=10, posterior=False, strict=True)
    df2 = pd.concat([df, pd.DataFrame({"model": ["tiny"], "dataset": ["toy"], "correct": [1], "verbal": [0.5], "token": [0.5]})])
    rec2 = from_frame(df2, correct_col="correct", verbal_col="verbal", token_col="token", protocol=FULL)
    with pytest.warns(UserWarning, match="fewer than 2"):
        rep = analyze(rec2, by=("model",), estimators=("ece",), scores=(), n_boot=10, posterior=False)
    assert rep.exclusions["groups_too_small"] == {"tiny": 1}
    with pytest.raises(InputError, match="unknown estimator"):
        analyze(rec2, by=("model",), estimators=("mce",), posterior=False)


def test_protocol_shift_known_values():
    # gap table: 2 models x 2 datasets x context {bare, verbal_prefix} x readout {T1, T2}
    rows = []
    fam = {"llama": 0.0, "qwen": 0.3}
    dat = {"sciqa": 0.0, "mmlu": 0.1}
    for m in fam:
        for d in dat:
            for ctx, dc in (("bare", 0.0), ("verbal_prefix", -0.28)):
                for ro, dr in (("T1", 0.0), ("T2", 0.11)):
                    rows.append(dict(model=m, dataset=d, context=ctx, readout=ro, gap=fam[m] + dat[d] + dc + dr))
    tab = pd.DataFrame(rows)
    shifts, summary = protocol_shift(tab, ["context", "readout", "model", "dataset"], levels={"context": ["bare", "verbal_prefix"]})
    s = summary.set_index("axis")
    assert s.loc["context", "mean_abs_shift"] == pytest.approx(0.28)
    assert s.loc["context", "mean_signed_shift_vs_reference"] == pytest.approx(-0.28)
    assert s.loc["readout", "mean_abs_shift"] == pytest.approx(0.11)
    assert s.loc["model", "mean_abs_shift"] == pytest.approx(0.3) and s.loc["model", "kind"] == "spread"
    assert s.loc["dataset", "mean_abs_shift"] == pytest.approx(0.1)
    assert s.loc["context", "n_settings"] == 8
    assert len(shifts[shifts.axis == "context"]) == 8
    # three levels: mean over all pairs
    t3 = pd.DataFrame(dict(model="m", estimator=["ece", "kde", "ks"], gap=[0.0, 0.03, 0.09]))
    _, s3 = protocol_shift(t3, ["estimator"])
    assert s3.iloc[0]["mean_abs_shift"] == pytest.approx((0.03 + 0.09 + 0.06) / 3)
    with pytest.raises(InputError, match="duplicate"):
        protocol_shift(pd.concat([t3, t3]), ["estimator"])


def test_provenance_analysis_recovers_known_means():
    rng = np.random.default_rng(3)
    parts = []
    for prov, mu in (("supplied_gold", 0.80), ("supplied_plausible_wrong", 0.78), ("supplied_type_incompatible", 0.30)):
        parts.append(pd.DataFrame(dict(model="m", dataset="d", provenance=prov, verbal=np.clip(rng.normal(mu, 0.05, 4000), 0, 1))))
    df = pd.concat(parts, ignore_index=True)
    means, contrasts = provenance_analysis(df, n_boot=200)
    c = contrasts.set_index("contrast")
    assert c.loc["supplied_gold - supplied_plausible_wrong", "difference"] == pytest.approx(0.02, abs=0.005)
    assert c.loc["supplied_gold - supplied_type_incompatible", "difference"] == pytest.approx(0.50, abs=0.005)
    lo, hi = c.loc["supplied_gold - supplied_plausible_wrong", ["lo", "hi"]]
    assert lo < 0.02 < hi
    assert means.set_index("provenance").loc["supplied_type_incompatible", "count"] == 4000


def test_cli_json_strict_and_errors(tmp_path, capsys):
    df = _sim_frame(n=300)
    csv = tmp_path / "conf.csv"
    df.to_csv(csv, index=False)
    out = tmp_path / "res.json"
    rc = cli_main([str(csv), "--correct-col", "correct", "--verbal-col", "verbal", "--token-col", "token", "--by", "model",
                   "--estimators", "ece,ks", "--no-posterior", "--n-boot", "30", "--json", str(out),
                   "--protocol", "provenance=self_generated,scored_answer=generated,readout=T1,context=bare"])
    assert rc == 0
    res = json.loads(out.read_text())
    g = res["groups"]["m1"]
    sub = df[df.model == "m1"]
    assert g["estimators"]["ece"]["gap"]["estimate"] == pytest.approx(E.ece(sub.verbal, sub.correct) - E.ece(sub.token, sub.correct))
    assert g["protocol_card"]["readout"] == "T1" and "p_gap_negative" in g
    assert {a["axis"] for a in res["shift_summary"]} == {"model", "estimator"}
    # missing protocol -> warning printed; --strict -> exit code 3
    rc = cli_main([str(csv), "--by", "model", "--estimators", "ece", "--no-posterior", "--n-boot", "10", "--scores", ""])
    assert rc == 0 and "ProtocolWarning" in capsys.readouterr().out
    assert cli_main([str(csv), "--by", "model", "--estimators", "ece", "--no-posterior", "--strict"]) == 3
    # bad input -> exit 2 with a one-line error
    bad = df.copy()
    bad.loc[5, "token"] = 1.5
    bad.to_csv(csv, index=False)
    assert cli_main([str(csv), "--no-posterior"]) == 2
    assert "row 5" in capsys.readouterr().err.replace("\n", "")
    assert cli_main([str(tmp_path / "nope.csv")]) == 2


def test_boolq_end_to_end_plugin_gaps_and_prompt_shift():
    from itertools import combinations

    from bayesrank.calibration.readers import read_boolq_llama3

    rec = read_boolq_llama3()
    rep = analyze(rec, by=("prompt_variant",), estimators=("ece", "ks"), scores=(), n_boot=20, posterior=False)
    for v, g in rec.frame.groupby("prompt_variant"):
        row = rep.gaps[(rep.gaps.prompt_variant == v) & (rep.gaps.estimator == "ece")].iloc[0]
        assert row["gap"] == pytest.approx(E.ece(g.verbal, g.correct) - E.ece(g.token, g.correct), abs=1e-12)
        assert row["card_conditioning_context"] == "verbal_prefix" and row["card_readout"] == "T2_yesno_normalized"
    ece_gaps = rep.gaps[rep.gaps.estimator == "ece"].set_index("prompt_variant")["gap"]
    assert ece_gaps["prompt1"] == pytest.approx(0.217, abs=0.001)  # verbal worse under prompt 1 ...
    assert ece_gaps["prompt5"] == pytest.approx(-0.116, abs=0.001)  # ... better under prompt 5: the sign flips
    _, summary = protocol_shift(rep.gaps[["prompt_variant", "estimator", "gap"]], ["prompt_variant", "estimator"])
    manual = np.mean([abs(a - b) for a, b in combinations(ece_gaps.to_numpy(), 2)] +
                     [abs(a - b) for a, b in combinations(rep.gaps[rep.gaps.estimator == "ks"]["gap"].to_numpy(), 2)])
    assert summary.set_index("axis").loc["prompt_variant", "mean_abs_shift"] == pytest.approx(manual)


def test_plots_reliability_and_forest():
    import matplotlib.pyplot as plt

    from bayesrank.calibration.plots import gap_forest, reliability_diagrams

    df = _sim_frame(n=500, models=("m1",))
    fig = reliability_diagrams(df.verbal, df.token, df.correct, title="sim")
    ax_v, ax_t = fig.axes[:2]
    # one marker per non-empty equal-width bin, at the bin's mean confidence and accuracy
    ids = np.searchsorted(np.linspace(0, 1, 11)[1:-1], df.verbal)
    offsets = ax_v.collections[0].get_offsets()
    assert len(offsets) == np.unique(ids).size
    first = ids == ids.min()
    assert offsets[0][0] == pytest.approx(df.verbal[first].mean()) and offsets[0][1] == pytest.approx(df.correct[first].mean())
    plt.close(fig)
    rec = from_frame(_sim_frame(n=200), correct_col="correct", verbal_col="verbal", token_col="token", protocol=FULL)
    rep = analyze(rec, by=("model",), estimators=("ece", "ks"), scores=(), n_boot=20, posterior=False)
    fig = gap_forest(rep.gaps, label_cols=["model", "estimator"])
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["m1 | ece", "m1 | ks", "m2 | ece", "m2 | ks"]
    plt.close(fig)
