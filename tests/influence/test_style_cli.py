"""``bayesrank audit DATA --style A:B``: the JSON equals the API's greedy audit per action and
validates against bayesrank/schemas/audit.json; every break is confirmed by an
INDEPENDENT refit — the logged actions replayed on the raw CSV (features rebuilt with numpy) and
refitted by statsmodels' logistic GLM (±1 player columns + feature columns) — for the top-1, the
CI-aware top-1, Kendall τ and the CI objectives; bad inputs exit 2 with one line."""

import json
from statistics import NormalDist
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from bayesrank.bt.simulate import simulate_style_battles
from bayesrank.cli import main
from bayesrank.data.aggregate import pair_rows as battle_data
from bayesrank.data.readers import read_comparisons
from bayesrank.influence.state import BTState
from bayesrank.protocol import validate
from tests.influence.style_reference import (
    audit_of,
    glm,
    glm_fit,
    replay,
    weakest_significance_margin,
)

STYLE = "s0_a:s0_b,s1_a:s1_b"


@pytest.fixture(scope="module")
def battles(tmp_path_factory):
    frame, _, _ = simulate_style_battles(n_players=6, n_battles=1500, beta=(0.6, -0.3), tie_rate=0.1, seed=4,
                                         theta_sd=0.5)
    csv = tmp_path_factory.mktemp("style_cli") / "battles.csv"
    frame.to_csv(csv, index=False)
    return csv


def _cli_json(csv, tmp_path, *flags):
    out = tmp_path / "audit.json"
    assert main(["audit", str(csv), "--style", STYLE, *flags, "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    validate(d, "audit")
    return d


@pytest.fixture(scope="module")
def top1(battles, tmp_path_factory):
    return _cli_json(battles, tmp_path_factory.mktemp("top1"), "--objective", "top1", "--actions", "drop,flip,add")


# ------------------------------------------------------------------ independent replay and refit
class Battles:
    """The raw CSV as arrays (players indexed by sorted name), with the features built here:
    ``d = (r − mean r)/sd r``, ``r = (x_a − x_b)/(x_a + x_b)`` (population SD, the default transform);
    replayed and refitted by the shared independent reference (tests/influence/style_reference.py)."""

    def __init__(self, csv):
        raw = pd.read_csv(csv)
        players = np.array(sorted(set(raw["model_a"]) | set(raw["model_b"])), dtype=object)
        index = {p: k for k, p in enumerate(players)}
        cols = []
        for f in ("s0", "s1"):
            r = (raw[f"{f}_a"] - raw[f"{f}_b"]) / (raw[f"{f}_a"] + raw[f"{f}_b"])
            cols.append(((r - r.mean()) / r.std(ddof=0)).to_numpy())
        self.data = SimpleNamespace(
            players=players, features=["s0", "s1"], i=raw["model_a"].map(index).to_numpy(),
            j=raw["model_b"].map(index).to_numpy(),
            share=raw["outcome"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy(dtype=float, copy=True),
            total=np.ones(len(raw)), X=np.column_stack(cols), n_players=len(players), n_rows=len(raw))

    @property
    def players(self):
        return self.data.players

    def replay(self, actions):
        """Apply the logged actions (checking that each logged battle is the replayed one)."""
        self.data = replay(self.data, actions)
        return self

    def glm(self):
        """(sum-to-zero θ, its covariance) from statsmodels' Binomial GLM; ``beta`` the features'."""
        self.beta = glm_fit(self.data).params[self.data.n_players - 1:]
        return glm(self.data)

    def leader(self):
        return str(self.players[np.argmax(self.glm()[0])])


# ------------------------------------------------------------------ tests
def test_cli_json_equals_the_api_audit_per_action(top1, battles):
    state = BTState.fit(battle_data(read_comparisons(battles), STYLE))
    n_rows = len(pd.read_csv(battles))
    assert top1["n_comparisons"] == n_rows and top1["exclusions"] == {"total": 0, "by_reason": {}}
    assert top1["settings"]["actions"] == ["drop", "flip", "add"]
    for kind, cli in top1["audits"].items():
        api = audit_of(state, kind, objective="top1").to_dict()
        assert cli["action"] == kind
        for key in ("budget", "fraction", "broken", "verified", "reference_top", "final_top", "budget_limit"):
            assert cli[key] == api[key], (kind, key)
        assert cli["actions"] == api["actions"], kind
        assert cli["budget_limit"] == int(np.ceil(0.05 * n_rows))  # default budget: 5% of the battles


def test_reference_fit_matches_statsmodels(top1, battles):
    """Leader, runner-up and β̂ of the JSON are statsmodels' GLM on the raw CSV."""
    ref = Battles(battles)
    theta, _ = ref.glm()
    order = ref.players[np.argsort(-theta)]
    assert [top1["leader"], top1["runner_up"]] == list(order[:2])
    assert [c["name"] for c in top1["coefficients"]] == ["s0", "s1"]
    np.testing.assert_allclose([c["coef"] for c in top1["coefficients"]], ref.beta, atol=1e-7)


@pytest.mark.parametrize("kind", ["drop", "flip", "add"])
def test_cli_top1_break_confirmed_by_statsmodels(top1, battles, kind):
    audit = top1["audits"][kind]
    assert audit["broken"] and audit["verified"], audit["reason"]
    assert audit["budget"] == sum(a["count"] for a in audit["actions"])
    assert audit["fraction"] == pytest.approx(audit["budget"] / len(pd.read_csv(battles)))
    assert Battles(battles).leader() == top1["leader"] == audit["reference_top"][0]
    after = Battles(battles).replay(audit["actions"]).leader()
    assert after == audit["final_top"][0] != audit["reference_top"][0]


def test_cli_ci_aware_top1_break_is_significant_by_statsmodels(battles, tmp_path):
    """--ci-aware: after the replayed flips the new leader is *significantly* ahead of the old one by
    the GLM's own Wald contrast at level 0.9 (and it was not before)."""
    d = _cli_json(battles, tmp_path, "--actions", "flip", "--ci-aware", "--level", "0.9", "--budget", "300")
    audit = d["audits"]["flip"]
    assert d["settings"]["ci_aware"] and audit["objective"] == "top1+ci"
    assert audit["broken"] and audit["verified"], audit["reason"]
    z = NormalDist().inv_cdf(0.95)
    ref = Battles(battles)
    old = int(np.flatnonzero(ref.players == audit["reference_top"][0])[0])

    def best_contrast(bt):
        theta, cov = bt.glm()
        sd = np.sqrt(np.diag(cov) + cov[old, old] - 2 * cov[:, old])
        stat = np.where(np.arange(len(theta)) == old, -np.inf, (theta - theta[old]) / np.where(sd > 0, sd, 1))
        return stat.max()

    assert best_contrast(ref) < z
    assert best_contrast(Battles(battles).replay(audit["actions"])) > z


def test_cli_tau_break_confirmed_by_statsmodels(battles, tmp_path, capsys):
    from scipy.stats import kendalltau

    d = _cli_json(battles, tmp_path, "--objective", "tau", "--actions", "flip,drop", "--plots", str(tmp_path / "p"))
    assert d["settings"]["tau_threshold"] == 0.9
    assert (tmp_path / "p" / "objective_vs_budget.png").stat().st_size > 0
    ref = Battles(battles).glm()[0]
    players = Battles(battles).players
    shown = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert f"leader '{players[np.argmax(ref)]}'" in shown and "objective tau" in shown
    for kind, audit in d["audits"].items():
        assert audit["objective"] == "tau" and audit["broken"] and audit["verified"], (kind, audit["reason"])
        theta = Battles(battles).replay(audit["actions"]).glm()[0]
        assert kendalltau(ref, theta).statistic <= 0.9, kind
        assert list(players[np.argsort(-ref)]) == audit["reference_top"]
        assert list(players[np.argsort(-theta)]) == audit["final_top"]


def test_cli_ci_player_default_modes_confirmed_by_statsmodels(battles, tmp_path):
    """ci-player:NAME without --ci-mode: drops inflate Var(θ_t) to ≥ 1.5×, adds reduce it to ≤ 0.5×
    (the plain audit's defaults), as the GLM's covariance of the replayed battles shows."""
    d = _cli_json(battles, tmp_path, "--objective", "ci-player:p02", "--actions", "drop,add", "--budget", "600")
    ref = Battles(battles)
    t = int(np.flatnonzero(ref.players == "p02")[0])
    v0 = ref.glm()[1][t, t]
    ratios = {}
    for kind, audit in d["audits"].items():
        assert audit["objective"] == "ci-player:p02" and audit["broken"] and audit["verified"], (kind, audit["reason"])
        ratios[kind] = Battles(battles).replay(audit["actions"]).glm()[1][t, t] / v0
    assert ratios["drop"] >= 1.5 and ratios["add"] <= 0.5, ratios


@pytest.mark.parametrize("flags,named", [
    (["--style", STYLE, "--min-matches", "3"], "--min-matches"),
    (["--style", "s0_a:s0_b,len_a:len_b"], "len_a"),
    (["--style", STYLE, "--objective", "tau", "--ci-aware"], "--ci-aware"),
])
def test_bad_input_exits_2_with_one_line(battles, capsys, flags, named):
    assert main(["audit", str(battles), *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and named in err[0], err


def test_no_finite_estimate_exits_3_with_advice(battles, tmp_path, capsys):
    """A player who never loses has θ → +∞ whatever β is: exit 3 and a message that says what to try."""
    raw = pd.read_csv(battles)
    wins_of = np.where(raw["outcome"] == "a", raw["model_a"], np.where(raw["outcome"] == "b", raw["model_b"], ""))
    keep = ~(((raw["model_a"] == "p02") | (raw["model_b"] == "p02")) & (wins_of != "p02"))
    csv = tmp_path / "unbeaten.csv"
    raw[keep].to_csv(csv, index=False)
    assert main(["audit", str(csv), "--style", STYLE]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no finite maximum-likelihood estimate" in err[0] and "ridge" in err[0], err
    assert main(["audit", str(csv), "--style", STYLE, "--ridge", "0.1", "--actions", "flip"]) == 0


def test_help_lists_style(capsys):
    assert main(["audit", "--help"]) == 0  # main returns argparse's exit code
    out = capsys.readouterr().out
    assert "--style A_COL:B_COL" in out and "--style-transform" in out and "--style-standardize" in out
    assert "--reweight" not in out and "--style-cluster" not in out  # fit-only flags (bayesrank fit --style)


def test_weighted_battles_give_fractional_budgets(battles, tmp_path):
    """Battles with fractional weights (e.g. a soft judge's preferences split into two weighted
    rows): the CLI runs, and each budget is the exact sum of the weights acted on (not rounded)."""
    raw = pd.read_csv(battles)
    raw["weight"] = np.random.default_rng(3).uniform(0.2, 1.0, len(raw)).round(3)
    csv = tmp_path / "weighted.csv"
    raw.to_csv(csv, index=False)
    d = _cli_json(csv, tmp_path, "--actions", "drop,flip")
    assert d["audits"]["drop"]["n_comparisons"] == pytest.approx(raw["weight"].sum())
    for audit in d["audits"].values():
        assert audit["broken"] and audit["verified"], audit["reason"]
        assert audit["budget"] == pytest.approx(sum(a["count"] for a in audit["actions"]), abs=1e-9)
    assert any(a["budget"] != round(a["budget"]) for a in d["audits"].values())


def test_cli_significance_break_confirmed_by_statsmodels(battles, tmp_path, capsys):
    """``--significance`` with ``--style``: the top-1 (significant on this file) loses its significance
    (ties as half-wins: sandwich = statsmodels' HC0) after the logged actions, replayed on the raw CSV."""
    d = _cli_json(battles, tmp_path, "--objective", "top1", "--significance", "--actions", "flip")
    audit = d["audits"]["flip"]
    assert d["settings"]["significance"] and audit["objective"] == "top1+sig", audit["reason"]
    shown = " ".join(capsys.readouterr().out.split())
    assert "no longer significant at level 0.95" in shown and "sandwich" in shown
    assert audit["objective_details"]["covariance"] == "auto" and audit["broken"] and audit["verified"]
    assert d["settings"]["significance_covariance"].startswith("sandwich")
    st = BTState.fit(battle_data(read_comparisons(battles), STYLE))
    order = st.ranking()
    pairs = [(order[0], b) for b in order[1:]]
    assert weakest_significance_margin(st.counts, pairs, cov_type="HC0") > 0
    assert weakest_significance_margin(replay(st.counts, pd.DataFrame(audit["actions"])), pairs, cov_type="HC0") < 0
