"""Paired per-item tests of a benchmark-score claim "A beats B on benchmark b in configuration c".

The statistics of one paired comparison (exact McNemar, paired and cluster-robust standard errors,
paired bootstrap, Wilson/Jeffreys intervals, minimum detectable effect, Holm) live in
:mod:`bayesrank.stats.paired`, shared with the per-item benchmark kind; this module runs them per
(claim, benchmark, configuration) of a grid.

``p_value`` is the test used for the verdict: exact McNemar for binary ungrouped items, the
cluster-robust Wald test when ``cluster`` is given, the iid Wald test for fractional scores; ``test``
names it. Across the configurations of one claim and benchmark the p-values are Holm-adjusted
(``p_holm``); ``a_better``/``b_better`` count configurations significant each way after Holm.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.errors import InputError
from bayesrank.protocol import Diagnostics, Result
from bayesrank.stats.paired import (  # noqa: F401  (the shared statistics, re-exported for this room's users)
    cluster_se,
    detectable_effect,
    holm,
    jeffreys_interval,
    mcnemar_exact,
    paired_comparison,
    wilson_interval,
)

from .grid import BENCHMARK, MODEL, EvalGrid, config_label


def parse_claim(claim: str, players=None) -> tuple[str, str]:
    """``"A>B"`` -> ``("A", "B")`` (the package's one claim parser,
    :func:`bayesrank.data.claims.split_pair_claim`: names may contain ``>`` when ``players`` is given)."""
    from bayesrank.data.claims import split_pair_claim

    return split_pair_claim(claim, players=players)


# ---------------------------------------------------------------------------------------- result
ROW_COLUMNS = ["claim", "benchmark", "config", "player_a", "player_b", "n_items", "acc_a", "acc_b", "diff", "n10",
               "n01", "test", "p_value", "p_holm", "mcnemar_p", "mcnemar_p_one_sided", "se", "se_cluster",
               "n_clusters", "diff_wald", "diff_bootstrap", "acc_a_wilson", "acc_a_jeffreys", "acc_b_wilson",
               "acc_b_jeffreys", "mde", "effect_for_power", "items_needed", "significant", "direction"]


@dataclass(repr=False)  # the short repr of bayesrank.protocol.Result
class PairedTests(Result):
    """Paired per-item tests of ``A>B`` claims, one row per (claim, benchmark, configuration)."""

    rows: pd.DataFrame
    level: float
    power: float
    n_boot: int
    seed: int
    cluster: str | None
    skipped: list[dict] = field(default_factory=list)

    schema = "configflip_paired"

    @property
    def diagnostics(self) -> Diagnostics:
        return Diagnostics.exact("paired tests (exact McNemar, Wald, seeded bootstrap)", n_boot=self.n_boot,
                                 seed=self.seed)

    def table(self) -> pd.DataFrame:
        return self.rows[ROW_COLUMNS].copy()

    def _quick_table(self) -> pd.DataFrame:
        return self.claims()  # repr and a notebook show the answer per claim

    def claims(self) -> pd.DataFrame:
        """Per (claim, benchmark): configurations tested and how many favour A / B after Holm."""
        rows = []
        for (claim, b), g in self.rows.groupby(["claim", "benchmark"], sort=False):
            sig = g["significant"]
            rows.append({"claim": claim, "benchmark": b, "player_a": g["player_a"].iloc[0],
                         "player_b": g["player_b"].iloc[0], "n_configs": int(len(g)),
                         "a_better": int((sig & (g["direction"] == "a")).sum()),
                         "b_better": int((sig & (g["direction"] == "b")).sum()),
                         "min_p_holm": float(g["p_holm"].min()),
                         "max_diff": float(g["diff"].max()), "min_diff": float(g["diff"].min())})
        t = pd.DataFrame(rows, columns=["claim", "benchmark", "player_a", "player_b", "n_configs", "a_better",
                                        "b_better", "min_p_holm", "max_diff", "min_diff"])
        t["holds_everywhere"] = (t["a_better"] == t["n_configs"])
        t["reversal_supported"] = (t["a_better"] > 0) & (t["b_better"] > 0)
        return t

    def summary(self) -> str:
        lines = [f"paired tests at level {self.level} (Holm across configurations; power {self.power} for the MDE)"]
        if len(self.rows):
            lines.append(self.claims().to_string(index=False))
            cols = ["claim", "benchmark", "config", "n_items", "diff", "test", "p_value", "p_holm", "mde", "items_needed"]
            lines.append(self.rows[cols].to_string(index=False))
        for s in self.skipped:
            lines.append(f"not tested: {s['claim']} on {s['benchmark']}: {s['reason']}")
        return "\n".join(lines)

    def to_dict(self, envelope: bool = True) -> dict:
        d = {"level": self.level, "power": self.power, "n_boot": self.n_boot, "seed": self.seed,
             "cluster": self.cluster, "claims": self.claims(), "tests": self.table(), "skipped": self.skipped}
        return {**self._envelope(), **d} if envelope else {"diagnostics": self.diagnostics.to_dict(), **d}

    def plot(self, ax=None, **kwargs):
        """Paired differences with Wald and bootstrap intervals, one row per (claim, benchmark, config)."""
        import matplotlib.pyplot as plt

        t = self.rows
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 0.3 * max(len(t), 1) + 1.5))
        y = np.arange(len(t))
        wald = np.array(t["diff_wald"].tolist(), float).reshape(-1, 2)
        boot = np.array(t["diff_bootstrap"].tolist(), float).reshape(-1, 2)
        ax.hlines(y, wald[:, 0], wald[:, 1], color="tab:blue", lw=3, label="Wald")
        ax.hlines(y + 0.2, boot[:, 0], boot[:, 1], color="tab:orange", lw=1.5, label="paired bootstrap")
        ax.plot(t["diff"], y, "k|", ms=10)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_yticks(y, [f"{c} | {b} | {cfg}" for c, b, cfg in zip(t["claim"], t["benchmark"], t["config"])],
                      fontsize=6)
        ax.set_xlabel("accuracy difference A − B")
        ax.legend(fontsize=7)
        ax.figure.tight_layout()
        return ax.figure


def paired_tests(grid: EvalGrid, claims: list[str] | str, *, benchmarks: list[str] | None = None,
                 configs: list[str] | None = None, cluster: str | None = None, level: float = 0.95,
                 power: float = 0.8, effect: float | None = None, n_boot: int = 2000, seed: int = 0) -> PairedTests:
    """Paired tests of each claim ``"A>B"`` in every configuration (of ``configs``, default all) of every
    benchmark (``benchmarks``, default all) where both players scored common items. Needs per-item data;
    ``cluster`` names a column of ``grid.items`` grouping items."""
    if grid.items is None:
        raise InputError("paired tests need per-item correctness (a grid built with EvalGrid.from_items, or an "
                         "input with item and correct columns)")
    items = grid.items
    if cluster is not None and cluster not in items.columns:
        raise InputError(f"cluster column {cluster!r} not in the per-item data; columns: {list(items.columns)}")
    claims = [claims] if isinstance(claims, str) else list(claims)
    players = set(items[MODEL])
    rows, skipped = [], []
    for claim in claims:
        a, b = parse_claim(claim, players=players)
        for bench in benchmarks or grid.benchmarks:
            sub = items[(items[BENCHMARK] == bench) & items[MODEL].isin([a, b])]
            if sub.empty:
                skipped.append({"claim": claim, "benchmark": bench, "reason": "no per-item data for these players"})
                continue
            labels = [config_label(r, grid.axes) for r in sub[list(grid.axes)].itertuples(index=False)]
            sub = sub.assign(config=labels)
            keys = ["config", "item"]
            wide = sub.pivot_table(index=keys, columns=MODEL, values="correct", aggfunc="first")
            if a not in wide.columns or b not in wide.columns:
                skipped.append({"claim": claim, "benchmark": bench, "reason": "one player has no per-item data"})
                continue
            wide = wide[[a, b]].dropna()
            if cluster is not None:
                cl = sub.drop_duplicates(keys).set_index(keys)[cluster]
                wide = wide.join(cl.rename("_cluster"))
            block = []
            for cfg, w in wide.groupby(level="config", sort=False):
                if configs is not None and cfg not in configs:
                    continue
                if len(w) < 2:
                    skipped.append({"claim": claim, "benchmark": bench,
                                    "reason": f"configuration {cfg}: fewer than two common items"})
                    continue
                r = paired_comparison(w[a].to_numpy(), w[b].to_numpy(),
                                      None if cluster is None else w["_cluster"].to_numpy(), level=level,
                                      power=power, effect=effect, n_boot=n_boot, seed=seed)
                block.append({"claim": f"{a}>{b}", "benchmark": bench, "config": cfg, "player_a": a, "player_b": b,
                              **r})
            if block:
                p = holm(np.array([x["p_value"] for x in block]))
                for x, ph in zip(block, p):
                    x["p_holm"] = float(ph)
                    x["significant"] = bool(ph < 1 - level)
                    x["direction"] = "a" if x["diff"] > 0 else "b" if x["diff"] < 0 else "tie"
                rows += block
    if not rows:
        raise InputError(f"no configuration has per-item data for both players of {claims}: "
                         + "; ".join(s["reason"] for s in skipped[:5]))
    return PairedTests(pd.DataFrame(rows), level, power, n_boot, seed, cluster, skipped)
