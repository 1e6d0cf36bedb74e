"""Independent reference for loss-of-significance breaks: replay an audit's logged actions on
individual comparison rows and redo the review's contrast test with statsmodels.

Rows are ``(a, b, y)`` with ``y`` = 1 (a wins), 0 (b wins), 0.5 (tie). The fit is statsmodels'
logistic GLM on the ±1 design (last player = reference); ties scored as half-wins stay as rows with
``y = 0.5`` (the half-win likelihood) and the covariance is then the HC0 sandwich (White), else the
model-based (Fisher) one; ties dropped are removed. A claim is significant when every contrast it
needs has ``θ_a − θ_b − z·sd > 0``.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd
import statsmodels.api as sm

Y_OF = {"a_wins": 1.0, "b_wins": 0.0, "tie": 0.5}


def rows_from_counts(counts) -> pd.DataFrame:
    """One row per comparison of a :class:`PairCounts` (integer cell counts)."""
    out = []
    for i, j, cells in zip(counts.i, counts.j, counts.counts):
        for y, n in zip((1.0, 0.0, 0.5), cells):
            out += [(str(counts.players[i]), str(counts.players[j]), y)] * round(n)
    return pd.DataFrame(out, columns=["a", "b", "y"])


def _matches(rows: pd.DataFrame, pa: str, pb: str, outcome: str) -> pd.Index:
    y = Y_OF[outcome]
    return rows.index[((rows.a == pa) & (rows.b == pb) & (rows.y == y))
                      | ((rows.a == pb) & (rows.b == pa) & (rows.y == 1.0 - y))]


def replay(rows: pd.DataFrame, actions: list[dict], limit: float | None = None) -> pd.DataFrame:
    """Apply the logged actions (drop / flip / add of ``count`` comparisons of a cell) to the rows;
    ``limit``: only the first ``limit`` comparisons acted on."""
    d = rows.copy()
    left = np.inf if limit is None else float(limit)
    for act in actions:
        n = int(min(act["count"], left))
        left -= n
        if n <= 0:
            break
        pa, pb = act["player_a"], act["player_b"]
        if act["kind"].startswith("add"):
            new = pd.DataFrame({"a": [pa] * n, "b": [pb] * n, "y": [Y_OF[act["outcome"]]] * n})
            d = pd.concat([d, new], ignore_index=True)
            continue
        hit = _matches(d, pa, pb, act["outcome"])[:n]
        assert len(hit) == n, act
        if act["kind"] == "drop":
            d = d.drop(hit)
        else:
            d.loc[hit, "y"] = 1.0 - d.loc[hit, "y"]
    return d.reset_index(drop=True)


def fit_glm(rows: pd.DataFrame, players, ties: str = "half"):
    """(θ with θ_ref = 0, covariance of θ) from statsmodels' GLM; HC0 when half-win ties are present."""
    d = rows[rows.y != 0.5] if ties == "drop" else rows
    idx = {str(p): k for k, p in enumerate(players)}
    x = np.zeros((len(d), len(players)))
    x[np.arange(len(d)), d.a.map(idx).to_numpy()] = 1.0
    x[np.arange(len(d)), d.b.map(idx).to_numpy()] = -1.0
    robust = ties == "half" and bool((d.y == 0.5).any())
    res = sm.GLM(d.y.to_numpy(), x[:, :-1], family=sm.families.Binomial()).fit(
        tol=1e-13, cov_type="HC0" if robust else "nonrobust")
    k = len(players)
    theta = np.append(res.params, 0.0)
    cov = np.zeros((k, k))
    cov[:-1, :-1] = res.cov_params()
    return theta, cov


def significance_margin(rows, players, contrasts, level: float = 0.95, ties: str = "half") -> float:
    """min over the claim's contrasts (a, b) (names) of θ_a − θ_b − z·sd(θ_a − θ_b)."""
    theta, cov = fit_glm(rows, players, ties)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    idx = {str(p): k for k, p in enumerate(players)}
    out = []
    for a, b in contrasts:
        i, j = idx[a], idx[b]
        out.append(theta[i] - theta[j] - z * np.sqrt(cov[i, i] + cov[j, j] - 2 * cov[i, j]))
    return float(min(out))
