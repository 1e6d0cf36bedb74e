"""Grid and confidence reports on data with known truth against independent references (scipy's
paired t-tests, a hand-computed ECE, Kumar et al.'s debiased error, statsmodels' McNemar), and one
integration check against the configflip command (named test_integration_*)."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayesrank.cli import main
from bayesrank.protocol import validate
from bayesrank.review import review


@pytest.fixture(scope="module")
def grid_csv(tmp_path_factory):
    """3 players x 2 templates x 3 few-shot counts on one benchmark (500 items per cell): A beats B by
    8-10 points everywhere; C beats B by 2 points with few-shot 0 and loses by 3 points otherwise."""
    rows = []
    for t in ("plain", "chat"):
        for k, fewshot in enumerate((0, 3, 5)):
            base = 0.55 + 0.02 * k + (0.01 if t == "chat" else 0.0)
            rows += [("A", t, fewshot, base + 0.08 + 0.01 * k), ("B", t, fewshot, base),
                     ("C", t, fewshot, base + (0.02 if fewshot == 0 else -0.03))]
    df = pd.DataFrame(rows, columns=["model", "template", "fewshot", "score"]).assign(benchmark="quiz", n_items=500)
    path = tmp_path_factory.mktemp("grid") / "grid.csv"
    df.to_csv(path, index=False)
    return path, df


def test_grid_claims_follow_known_truth(grid_csv):
    path, df = grid_csv
    rep = review(path, fast=True, claims=["A>B", "C>B@quiz"])
    assert rep.kind == "grid"
    by = {c.claim.text: c for c in rep.claims}
    ab, cb = by["A>B@quiz"], by["C>B@quiz"]
    w = df.pivot_table(index=["template", "fewshot"], columns="model", values="score")
    for ans, (a, b) in ((ab, ("A", "B")), (cb, ("C", "B"))):
        # named in advance: one-sided (scipy's alternative="greater" test and its one-sided interval)
        d = (w[a] - w[b]).to_numpy()
        t = stats.ttest_1samp(d, 0.0, alternative="greater")
        ci = t.confidence_interval(0.95)
        assert ans.frequentist["sided"] == "one-sided" and np.isinf(ci.high)
        assert ans.frequentist["estimate"] == pytest.approx(d.mean())
        assert ans.frequentist["lower"] == pytest.approx(ci.low) and ans.frequentist["upper"] is None
        assert ans.frequentist["p_value"] == pytest.approx(t.pvalue)
    assert ab.frequentist["p_value"] < 1e-4
    assert ab.verdict == "supported" and ab.perturbation["configuration"]["budget"] == 0
    # C beats B in 2 of 6 configurations, on average it loses: unsupported; the 4 reversals are the witnesses
    assert cb.verdict == "unsupported" and cb.frequentist["estimate"] < 0
    acts = cb.perturbation["configuration"]["actions"]
    assert cb.perturbation["configuration"]["budget"] == 4 and len(acts) == 4
    assert sorted(a["difference"] for a in acts) == pytest.approx([-0.03] * 4)
    assert all("fewshot=0" not in a["config"] for a in acts)
    validate(json.loads(rep.to_json()), "review")


def test_default_grid_claims_are_read_off_the_data_and_two_sided(grid_csv):
    """The default claim (best vs second best by mean score) is data-selected: scipy's two-sided t-test."""
    path, df = grid_csv
    rep = review(path, fast=True)
    (c,) = rep.claims
    assert c.claim.text == "A>B@quiz" and c.frequentist["sided"] == "two-sided"
    w = df.pivot_table(index=["template", "fewshot"], columns="model", values="score")
    d = (w["A"] - w["B"]).to_numpy()
    t = stats.ttest_1samp(d, 0.0)
    ci = t.confidence_interval(0.95)
    assert c.frequentist["lower"] == pytest.approx(ci.low) and c.frequentist["upper"] == pytest.approx(ci.high)
    assert c.frequentist["p_value"] == pytest.approx(t.pvalue)
    assert c.bayesian["threshold"] == pytest.approx(0.975)


def test_integration_grid_section_equals_the_configflip_command(grid_csv, tmp_path):
    """Integration (bayesrank against itself): the review's flip table is `bayesrank configflip`'s."""
    path, _ = grid_csv
    rep = review(path, fast=True, claims=["A>B"])
    out = tmp_path / "cf.json"
    assert main(["configflip", str(path), "--axes", "template,fewshot", "--n-items-col", "n_items",
                 "--json", str(out)]) == 0
    cmd = pd.DataFrame(json.loads(out.read_text())["benchmarks"]["quiz"]["pairs"])
    mine = pd.DataFrame(next(s for s in rep.sections if s.key == "flips").data["pairs"])
    key = ["player_a", "player_b"]
    merged = mine.merge(cmd, on=key, suffixes=("", "_cmd"))
    assert len(merged) == 3
    np.testing.assert_allclose(merged["rho_flip"], merged["rho_flip_cmd"])
    assert (merged["n_plus"] == merged["n_plus_cmd"]).all() and (merged["n_minus"] == merged["n_minus_cmd"]).all()


@pytest.fixture(scope="module")
def confidence_csv(tmp_path_factory):
    """800 items: verbal confidence calibrated (P(correct) = verbal), token probability overconfident
    (token = verbal pushed towards 1), so CE(verbal) < CE(token) by construction."""
    rng = np.random.default_rng(11)
    verbal = rng.uniform(0.3, 0.95, 800)
    correct = (rng.random(800) < verbal).astype(int)
    token = np.clip(verbal + 0.6 * (1 - verbal), 0, 0.999)
    df = pd.DataFrame({"correct": correct, "verbal": verbal.round(3), "token": token.round(4), "model": "m",
                       "dataset": "d", "provenance": "self_generated", "scored_answer": "generated",
                       "readout": "T1", "context": "bare"})
    path = tmp_path_factory.mktemp("conf") / "records.csv"
    df.to_csv(path, index=False)
    return path


def test_confidence_claim_on_known_truth_equals_the_calibration_command(confidence_csv, tmp_path):
    rep = review(confidence_csv, fast=True)
    assert rep.kind == "confidence" and len(rep.claims) == 1
    c = rep.claims[0]
    assert c.verdict == "supported" and c.frequentist["upper"] < 0
    frame = pd.read_csv(confidence_csv)
    mine = {r["estimator"]: r for r in next(s for s in rep.sections if s.key == "gaps").data["gaps"]}

    def ece(conf, y, bins=10):  # equal-width, right-closed bins on [0, 1], by hand
        idx = np.clip(np.ceil(conf * bins).astype(int) - 1, 0, bins - 1)
        return sum(abs(y[idx == b].mean() - conf[idx == b].mean()) * (idx == b).mean() for b in range(bins) if (idx == b).any())

    y = frame["correct"].to_numpy(float)
    expected = ece(frame["verbal"].to_numpy(), y) - ece(frame["token"].to_numpy(), y)
    assert mine["ece"]["gap"] == pytest.approx(expected, abs=1e-12)
    cards = next(s for s in rep.sections if s.key == "protocol").data["cards"]
    assert all(card["missing"] == "" for card in cards)  # every protocol field given in the records
    # the claim decides on the debiased squared-error gap (valid near calibration): Kumar et al.'s own code
    from calibration import utils as kumar

    def square(conf):
        return float(kumar.unbiased_square_ce(kumar.bin(list(zip(conf, y)), kumar.get_equal_bins(conf, num_bins=10))))

    f = c.frequentist
    assert f["sided"] == "one-sided" and f["lower"] is None and "ece2_debiased" in f["interval"]
    assert f["estimate"] == pytest.approx(square(frame["verbal"].to_numpy()) - square(frame["token"].to_numpy()),
                                          abs=1e-12)
    assert f["estimate"] == pytest.approx(mine["ece2_debiased"]["gap"], abs=1e-15)
    # the one-sided 95% bound is the upper end of the two-sided 90% interval the gap table shows
    assert f["upper"] == pytest.approx(mine["ece2_debiased"]["gap_upper"]) and f["upper"] < 0
    assert c.perturbation["estimator"]["relative_to"] == {"what": "other estimators of the gap", "n": 4.0,
                                                          "unit": "estimators"}


def test_per_item_grids_get_paired_tests_equal_to_statsmodels_mcnemar(tmp_path):
    """Per-item correctness: A is right on 60 items more than B in every template (known truth);
    the claim's paired tests equal an exact McNemar test from statsmodels."""
    from statsmodels.stats.contingency_tables import mcnemar

    rng = np.random.default_rng(3)
    rows = []
    for t, shift in (("plain", 0.0), ("chat", 0.05), ("cot", -0.05)):
        base = rng.random(400) < 0.55 + shift
        a = base | (rng.random(400) < 0.25)      # A fixes some of B's errors
        b = base & (rng.random(400) < 0.95)      # B loses some of its own successes
        for i in range(400):
            rows += [("A", t, i, int(a[i])), ("B", t, i, int(b[i]))]
    df = pd.DataFrame(rows, columns=["model", "template", "item", "correct"]).assign(benchmark="quiz")
    path = tmp_path / "items.csv"
    df.to_csv(path, index=False)
    rep = review(path, fast=True, claims=["A>B"])
    c = rep.claims[0]
    pt = c.extra["paired_tests"]
    assert pt["n_configs"] == 3 and pt["a_better"] == 3 and pt["b_better"] == 0
    tests = pd.DataFrame(next(s for s in rep.sections if s.key == "paired").data["tests"])
    for t, g in df.groupby("template"):
        w = g.pivot(index="item", columns="model", values="correct")
        table = pd.crosstab(w["A"], w["B"]).reindex(index=[0, 1], columns=[0, 1], fill_value=0).to_numpy()
        expected = mcnemar(table, exact=True).pvalue
        row = tests[tests["config"].str.contains(t)]
        assert len(row) == 1 and row["p_value"].iloc[0] == pytest.approx(expected, rel=1e-10)
    assert c.verdict == "supported"


def test_unspecified_protocol_is_one_note_naming_the_groups_and_no_missing_flag(confidence_csv, tmp_path):
    """Records without the protocol columns, three models: one note (not one per group) names the
    missing fields and the groups, advises record columns (the review has no --protocol flag), and
    the protocol cards flag the same fields."""
    df = pd.read_csv(confidence_csv).drop(columns=["readout", "context"])
    df["model"] = np.repeat(["m1", "m2", "m3"], [300, 300, 200])
    path = tmp_path / "records.csv"
    df.to_csv(path, index=False)
    rep = review(path, fast=True)
    notes = [n for n in rep.notes if "protocol" in n]
    assert len(notes) == 1 and "readout, context" in notes[0] and "3 group(s)" in notes[0], rep.notes
    assert all("--protocol" not in n for n in rep.notes)
    cards = next(s for s in rep.sections if s.key == "protocol").data["cards"]
    assert len(cards) == 3 and all("readout" in c["missing"] and "context" in c["missing"] for c in cards)
