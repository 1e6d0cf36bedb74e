"""Paired per-item tests of a benchmark-score claim "A beats B on benchmark b in configuration c".

Both players answered the same items, so the comparison is paired: with ``d_i = y_Ai − y_Bi`` (item i's
correctness difference), ``diff = mean(d) = acc_A − acc_B``. For each (claim, benchmark, config):

- **exact McNemar** (binary items): among the discordant items, ``n10`` = A right and B wrong,
  ``n01`` = the reverse; under H0 ``n10 ~ Binomial(n10 + n01, 1/2)``. Two-sided p =
  ``min(1, 2·P(X ≤ min(n10, n01)))`` (= statsmodels ``mcnemar(exact=True)`` = scipy ``binomtest``);
  one-sided p for the claim A > B = ``P(X ≥ n10)``.
- **paired standard error** ``se = sd(d)/√n`` (ddof 1; = OLS of d on a constant) and, when items are
  grouped (``cluster``: passages, source documents, templates of one question), the
  **cluster-robust** (CR1, Liang–Zeger) ``se² = G/(G−1)·Σ_g (Σ_{i∈g}(d_i − d̄))² / n²``
  (= statsmodels OLS ``cov_type="cluster"``); a Wald interval ``diff ± z·se`` and p-value.
- **paired bootstrap**: percentile interval of ``diff`` over ``n_boot`` resamples of items (of whole
  clusters when grouped), seeded.
- **per-player accuracy intervals** that stay sensible at 0% and 100%: Wilson (score) and Jeffreys
  (Beta(x + ½, n − x + ½) quantiles, with lower = 0 at x = 0 and upper = 1 at x = n, the boundary
  convention of Brown, Cai & DasGupta 2001, so the interval contains the observed 0% or 100%).
- **minimum detectable effect** at the test level and ``power`` for the two-sided z test with this
  design's standard error (``σ = se·√n``): the δ with ``Φ(δ/se − z) + Φ(−δ/se − z) = power``; and the
  **items needed** to detect ``effect`` (default: the observed |diff|) with that power,
  ``n·(MDE/|effect|)²`` rounded up (power depends on δ√n/σ only).

``p_value`` is the test used for the verdict: exact McNemar for binary ungrouped items, the
cluster-robust Wald test when ``cluster`` is given, the iid Wald test for fractional scores; ``test``
names it. Across the configurations of one claim and benchmark the p-values are Holm-adjusted
(``p_holm``); ``a_better``/``b_better`` count configurations significant each way after Holm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.errors import InputError
from bayesrank.protocol import Diagnostics, Result

from .grid import BENCHMARK, MODEL, EvalGrid, config_label

def parse_claim(claim: str, players=None) -> tuple[str, str]:
    """``"A>B"`` -> ``("A", "B")`` (the package's one claim parser,
    :func:`bayesrank.data.claims.split_pair_claim`: names may contain ``>`` when ``players`` is given)."""
    from bayesrank.data.claims import split_pair_claim

    return split_pair_claim(claim, players=players)


# ---------------------------------------------------------------------------------------- intervals
def wilson_interval(x: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion x/n."""
    from scipy import stats

    z = stats.norm.ppf(0.5 + level / 2)
    p = x / n
    den = 1 + z**2 / n
    centre = (p + z**2 / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def jeffreys_interval(x: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Equal-tailed Jeffreys interval; lower = 0 at x = 0 and upper = 1 at x = n (Brown et al. 2001)."""
    from scipy import stats

    a = (1 - level) / 2
    lo = 0.0 if x == 0 else float(stats.beta.ppf(a, x + 0.5, n - x + 0.5))
    hi = 1.0 if x == n else float(stats.beta.ppf(1 - a, x + 0.5, n - x + 0.5))
    return lo, hi


# ---------------------------------------------------------------------------------------- tests
def mcnemar_exact(n10: int, n01: int) -> tuple[float, float]:
    """(two-sided p, one-sided p for n10 > n01) of the exact McNemar test."""
    from scipy import stats

    m = n10 + n01
    if m == 0:
        return 1.0, 1.0
    two = min(1.0, 2.0 * float(stats.binom.cdf(min(n10, n01), m, 0.5)))
    one = float(stats.binom.sf(n10 - 1, m, 0.5))
    return two, one


def cluster_se(d: np.ndarray, clusters: np.ndarray) -> tuple[float, int]:
    """CR1 cluster-robust standard error of mean(d) (statsmodels' OLS ``cov_type="cluster"``)."""
    n = len(d)
    codes, uniq = pd.factorize(clusters)
    g = len(uniq)
    if g < 2:
        raise InputError("cluster-robust standard errors need at least two clusters")
    sums = np.bincount(codes, weights=d - d.mean(), minlength=g)
    var = (g / (g - 1)) * float(sums @ sums) / n**2  # statsmodels' (n-1)/(n-k) factor is 1 for k = 1
    return math.sqrt(var), g


def detectable_effect(se: float, level: float = 0.95, power: float = 0.8) -> float:
    """δ with two-sided z-test power ``Φ(δ/se − z) + Φ(−δ/se − z) = power`` (z = quantile of ``level``)."""
    from scipy import optimize, stats

    if not se > 0:
        return float("nan")
    z = stats.norm.ppf(0.5 + level / 2)

    def gap(t):
        return stats.norm.cdf(t - z) + stats.norm.cdf(-t - z) - power

    t = optimize.brentq(gap, 0.0, z + stats.norm.ppf(power) + 10.0, xtol=1e-12)
    return float(t * se)


def _resamples(rng, n: int, n_boot: int, max_cells: int = 2_000_000):
    """Index arrays of bootstrap resamples (with replacement from range(n)) in chunks of at most
    ``max_cells`` indices, so memory stays bounded on large benchmarks."""
    step = max(1, max_cells // max(n, 1))
    for start in range(0, n_boot, step):
        yield rng.integers(0, n, size=(min(step, n_boot - start), n))


def paired_comparison(ya: np.ndarray, yb: np.ndarray, clusters: np.ndarray | None = None, *, level: float = 0.95,
                      power: float = 0.8, effect: float | None = None, n_boot: int = 2000, seed: int = 0) -> dict:
    """Every paired statistic of one comparison (see module docstring); ``ya``/``yb`` aligned by item."""
    from scipy import stats

    ya, yb = np.asarray(ya, float), np.asarray(yb, float)
    n = len(ya)
    if n < 2:
        raise InputError(f"a paired comparison needs at least two items scored by both players (got {n})")
    d = ya - yb
    binary = bool(np.isin(ya, (0.0, 1.0)).all() and np.isin(yb, (0.0, 1.0)).all())
    diff = float(d.mean())
    z = stats.norm.ppf(0.5 + level / 2)
    out = {"n_items": n, "acc_a": float(ya.mean()), "acc_b": float(yb.mean()), "diff": diff, "binary": binary}
    for tag, y in (("a", ya), ("b", yb)):
        if binary:
            x = int(y.sum())
            out[f"acc_{tag}_wilson"] = list(wilson_interval(x, n, level))
            out[f"acc_{tag}_jeffreys"] = list(jeffreys_interval(x, n, level))
        else:
            out[f"acc_{tag}_wilson"] = out[f"acc_{tag}_jeffreys"] = None
    if binary:
        n10, n01 = int(((ya == 1) & (yb == 0)).sum()), int(((ya == 0) & (yb == 1)).sum())
        p2, p1 = mcnemar_exact(n10, n01)
        out.update(n10=n10, n01=n01, mcnemar_p=p2, mcnemar_p_one_sided=p1)
    else:
        out.update(n10=None, n01=None, mcnemar_p=None, mcnemar_p_one_sided=None)
    se_iid = float(d.std(ddof=1) / math.sqrt(n))
    out["se"] = se_iid
    se = se_iid
    rng = np.random.default_rng(seed)
    if clusters is not None:
        se_c, g = cluster_se(d, np.asarray(clusters))
        out.update(se_cluster=se_c, n_clusters=g)
        se = se_c
        codes, _ = pd.factorize(np.asarray(clusters))
        sums, sizes = np.bincount(codes, weights=d, minlength=g), np.bincount(codes, minlength=g)
        boot = np.concatenate([(sums[p].sum(axis=1) / sizes[p].sum(axis=1)) for p in _resamples(rng, g, n_boot)])
    else:
        out.update(se_cluster=None, n_clusters=None)
        boot = np.concatenate([d[p].mean(axis=1) for p in _resamples(rng, n, n_boot)])
    a = (1 - level) / 2
    out["diff_wald"] = [diff - z * se, diff + z * se]
    out["diff_bootstrap"] = [float(np.quantile(boot, a)), float(np.quantile(boot, 1 - a))]
    p_wald = float(2 * stats.norm.sf(abs(diff) / se)) if se > 0 else (1.0 if diff == 0 else 0.0)
    if clusters is not None:
        out.update(test="cluster-robust Wald", p_value=p_wald)
    elif binary:
        out.update(test="exact McNemar", p_value=out["mcnemar_p"])
    else:
        out.update(test="Wald (paired)", p_value=p_wald)
    mde = detectable_effect(se, level, power)
    target = abs(diff) if effect is None else abs(effect)
    out["mde"] = mde
    out["effect_for_power"] = target
    out["items_needed"] = int(math.ceil(n * (mde / target) ** 2)) if target > 0 and np.isfinite(mde) else None
    return out


def holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (= statsmodels ``multipletests(method="holm")``)."""
    p = np.asarray(p, float)
    order = np.argsort(p, kind="stable")
    m = len(p)
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


# ---------------------------------------------------------------------------------------- result
ROW_COLUMNS = ["claim", "benchmark", "config", "player_a", "player_b", "n_items", "acc_a", "acc_b", "diff", "n10",
               "n01", "test", "p_value", "p_holm", "mcnemar_p", "mcnemar_p_one_sided", "se", "se_cluster",
               "n_clusters", "diff_wald", "diff_bootstrap", "acc_a_wilson", "acc_a_jeffreys", "acc_b_wilson",
               "acc_b_jeffreys", "mde", "effect_for_power", "items_needed", "significant", "direction"]


@dataclass
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
