"""Gap, protocol cards (warning / strict), protocol-shift and provenance analysis, CLI."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import brier_score_loss

from bayesrank.calibration.cli import main as cli_main
from bayesrank.calibration.gap import analyze, calibration_gap
from bayesrank.calibration.protocol import ProtocolCard, ProtocolIncompleteError
from bayesrank.calibration.records import from_frame
from bayesrank.calibration.shift import protocol_shift, provenance_analysis
from bayesrank.errors import InputError, ProtocolWarning
from bayesrank.protocol import validate
from bayesrank.report import to_jsonable

from .references import sklearn_ece

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
    assert res.gap == pytest.approx(sklearn_ece(df.verbal, df.correct) - sklearn_ece(df.token, df.correct), abs=1e-12)
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
    tab = rep.table()
    assert set(tab["model"]) == {"m1", "m2"}
    g1 = tab[(tab.model == "m1") & (tab.estimator == "ece")].iloc[0]
    sub = df.iloc[1:][df.iloc[1:].model == "m1"]
    assert g1["gap"] == pytest.approx(sklearn_ece(sub.verbal, sub.correct) - sklearn_ece(sub.token, sub.correct), abs=1e-12)
    assert g1["n"] == 399 and g1["protocol_complete"] and g1["protocol_missing"] == ""
    d = rep.to_dict()
    validate(json.loads(json.dumps(to_jsonable(d))), "calibration")
    assert d["exclusions"]["total"] == 1 and d["exclusions"]["by_reason"] == {"missing verbal confidence (verbal)": 1}
    ece_m1 = next(x for x in d["gaps"] if x["group"] == {"model": "m1"} and x["estimator"] == "ece")
    assert ece_m1["gap"]["estimate"] == pytest.approx(g1["gap"]) and ece_m1["posterior"] is None
    assert ece_m1["protocol_card"]["conditioning_context"] == "bare" and ece_m1["protocol_card"]["missing"] == []
    brier = next(x for x in d["secondary_scores"] if x["group"] == {"model": "m1"} and x["score"] == "brier" and x["signal"] == "token")
    assert brier["estimate"] == pytest.approx(brier_score_loss(sub.correct, sub.token), abs=1e-12)
    assert rep.diagnostics.kind == "composite" and rep.diagnostics.converged
    boot = rep.diagnostics.extra["parts"]["bootstrap"]
    assert boot["kind"] == "resampling" and boot["n_failed"] == 0
    assert boot["n_replicates"] == 50 * (2 * 2 + 2 * 2 * 3)  # 2 gaps + 3 scores x 2 signals, per model


def test_by_column_missing_from_the_data_is_an_input_error():
    df = _sim_frame(n=50).drop(columns=["model"])
    rec = from_frame(df, correct_col="correct", verbal_col="verbal", token_col="token", protocol=FULL)
    assert "model" not in rec.columns and "dataset" in rec.columns
    with pytest.raises(InputError, match="--by column 'model' is not in the data; columns you can group by: dataset"):
        analyze(rec, by=("model",), estimators=("ece",), scores=(), n_boot=10, posterior=False)


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


def test_cli_json_validates_strict_and_errors(tmp_path, capsys):
    df = _sim_frame(n=300)
    csv = tmp_path / "conf.csv"
    df.to_csv(csv, index=False)
    out = tmp_path / "res.json"
    rc = cli_main([str(csv), "--correct-col", "correct", "--verbal-col", "verbal", "--token-col", "token", "--by", "model",
                   "--estimators", "ece,ks", "--no-posterior", "--n-boot", "30", "--json", str(out),
                   "--protocol", "provenance=self_generated,scored_answer=generated,readout=T1,context=bare"])
    assert rc == 0
    res = json.loads(out.read_text())
    validate(res, "calibration")  # the schema, independently of to_json
    assert res["schema"] == "calibration" and res["diagnostics"]["kind"] == "composite"
    assert res["diagnostics"]["extra"]["parts"]["bootstrap"]["kind"] == "resampling"
    sub = df[df.model == "m1"]
    ece_m1 = next(x for x in res["gaps"] if x["group"] == {"model": "m1"} and x["estimator"] == "ece")
    assert ece_m1["gap"]["estimate"] == pytest.approx(sklearn_ece(sub.verbal, sub.correct) - sklearn_ece(sub.token, sub.correct), abs=1e-12)
    assert ece_m1["protocol_card"]["readout"] == "T1" and ece_m1["protocol_card"]["complete"]
    assert {a["axis"] for a in res["shift_summary"]} == {"model", "estimator"}
    # missing protocol -> warning printed and the card flags the fields; --strict -> bad input, exit 2
    rc = cli_main([str(csv), "--by", "model", "--estimators", "ece", "--no-posterior", "--n-boot", "10", "--scores", ""])
    printed = capsys.readouterr().out
    assert rc == 0 and "ProtocolWarning" in printed and "elicitation_source, scored_answer, readout," in printed
    assert cli_main([str(csv), "--by", "model", "--estimators", "ece", "--no-posterior", "--strict"]) == 2
    assert "conditioning_context" in capsys.readouterr().err
    # --by a column the data lack -> exit 2 naming it (not one 'unspecified' group)
    df.drop(columns=["model"]).to_csv(tmp_path / "nomodel.csv", index=False)
    assert cli_main([str(tmp_path / "nomodel.csv"), "--by", "model", "--no-posterior"]) == 2
    assert "--by column 'model' is not in the data" in capsys.readouterr().err
    # bad input -> exit 2 with a one-line error naming the row; --exclude-invalid counts and drops it
    bad = df.copy()
    bad.loc[5, "token"] = 1.5
    bad.to_csv(csv, index=False)
    assert cli_main([str(csv), "--no-posterior"]) == 2
    # data row 5 is line 7 of the file (the header is line 1)
    assert f"line 7 of {csv}: column 'token' has confidence 1.5 outside [0, 1]" in capsys.readouterr().err.replace("\n", "")
    rc = cli_main([str(csv), "--no-posterior", "--exclude-invalid", "--scores", "", "--estimators", "ece", "--n-boot", "10",
                   "--json", str(out)])
    assert rc == 0
    assert json.loads(out.read_text())["exclusions"]["by_reason"] == {"invalid confidence (token): outside [0, 1]": 1}
    assert cli_main([str(tmp_path / "nope.csv")]) == 2
    assert cli_main([str(csv), "--no-posterior", "--estimators", "mce"]) == 2


def test_boolq_end_to_end_plugin_gaps_and_prompt_shift():
    """Plug-in gaps per prompt against scikit-learn's calibration_curve on the raw files' own
    columns (the authors' Confidence, Prob_Score, Score), not against values this package produced."""
    from itertools import combinations

    from bayesrank.calibration.readers import read_boolq_llama3
    from bayesrank.datasets import path as data_path

    rec = read_boolq_llama3()
    rep = analyze(rec, by=("prompt_variant",), estimators=("ece", "ks"), scores=(), n_boot=20, posterior=False)
    tab = rep.table()
    for v in range(1, 7):
        raw = pd.read_csv(data_path(f"calibration/L3_data{v}.csv"), index_col=0)
        y = raw["Score"].to_numpy(float)
        row = tab[(tab.prompt_variant == f"prompt{v}") & (tab.estimator == "ece")].iloc[0]
        assert row["gap"] == pytest.approx(sklearn_ece(raw["Confidence"], y) - sklearn_ece(raw["Prob_Score"], y), abs=1e-6)
        ks_row = tab[(tab.prompt_variant == f"prompt{v}") & (tab.estimator == "ks")].iloc[0]
        assert ks_row["gap"] == pytest.approx(_ks_tie_blocks(raw["Confidence"], y) - _ks_tie_blocks(raw["Prob_Score"], y), abs=1e-6)
        assert row["card_conditioning_context"] == "verbal_prefix" and row["card_readout"] == "T2_yesno_normalized"
    ece_gaps = tab[tab.estimator == "ece"].set_index("prompt_variant")["gap"]
    assert ece_gaps["prompt1"] > 0 > ece_gaps["prompt5"]  # the sign flips between prompt variants
    _, summary = protocol_shift(tab[["prompt_variant", "estimator", "gap"]], ["prompt_variant", "estimator"])
    manual = np.mean([abs(a - b) for a, b in combinations(ece_gaps.to_numpy(), 2)] +
                     [abs(a - b) for a, b in combinations(tab[tab.estimator == "ks"]["gap"].to_numpy(), 2)])
    assert summary.set_index("axis").loc["prompt_variant", "mean_abs_shift"] == pytest.approx(manual)


def _ks_tie_blocks(c, y):
    """Hand computation of KS with tied confidences as blocks: pandas groupby-sum, cumulative sum."""
    s = pd.DataFrame({"c": np.asarray(c, float), "r": np.asarray(c, float) - y}).groupby("c")["r"].sum()
    return float(np.abs(np.cumsum(s.to_numpy())).max() / len(y))


def test_plots_reliability_and_forest():
    import matplotlib.pyplot as plt

    from bayesrank.calibration.plots import reliability_diagrams

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
    fig = rep.plot_gaps()
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["m1 | ece", "m1 | ks", "m2 | ece", "m2 | ks"]
    plt.close(fig)
