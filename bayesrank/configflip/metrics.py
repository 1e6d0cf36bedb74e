"""Configuration-conditional rank-instability metrics on one benchmark's grid.

Notation: ``C_b`` is the set of configurations of benchmark b in the range; ``s_m(c)`` the score of
model m in configuration c.

- ``N+ = #{c: s_A(c) > s_B(c)}``, ``N- = #{c: s_A(c) < s_B(c)}``, ``N0 = #{c: |s_A(c) - s_B(c)| <= tol}``
  over the configurations in which *both* models were scored (so ``|C_b| = N+ + N- + N0``).
- ``rho_flip = min(N+, N-) / |C_b|`` (spec 03); nonzero iff a strict reversal exists in the range.
- Property 1 (one-step test): the pairwise verdict is *strict-reversal-free* on the grid iff
  ``N+ = 0 or N- = 0``; when it fails the witnessing configurations are returned.
- ``tau_R``: mean pairwise Kendall tau-b between the rankings the configurations induce,
  ``tau_R = 2 / (K (K-1)) * sum_{c < c'} tau_b(s(c), s(c'))`` over the K configurations in which every
  model was scored (pairs with an all-tied configuration, where tau-b is undefined, are excluded
  and counted).
- Reachable orderings: the ordering of the models each configuration induces (ties shown with
  ``=``), with frequencies, out of the ``M!`` strict orderings possible.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from bayesrank.errors import InputError

from .grid import BENCHMARK, MODEL, SCORE, EvalGrid, config_label

PLAYER = "player"  # output tables name the ranked model ``player`` (docs/glossary.md)


def _check_configs(wide: pd.DataFrame, benchmark: str) -> None:
    if wide.shape[0] < 2:
        raise InputError(f"benchmark {benchmark!r} has a single configuration ({list(wide.index)}): rank "
                         "instability needs at least two configurations of the axes")
    if wide.shape[1] < 2:
        raise InputError(f"benchmark {benchmark!r} has a single model ({list(wide.columns)}): nothing to rank")


def pairwise_flips(grid: EvalGrid, benchmark: str, tol: float = 0.0) -> pd.DataFrame:
    """One row per unordered player pair ``player_a``, ``player_b`` (A before B in first-seen order): N+, N-, ties, rho_flip,
    Property-1 verdict and witnessing configurations (largest margin each way)."""
    wide = grid.wide(benchmark)
    _check_configs(wide, benchmark)
    rows = []
    for a, b in itertools.combinations(wide.columns, 2):
        d = (wide[a] - wide[b]).dropna()
        n_plus = int((d > tol).sum())
        n_minus = int((d < -tol).sum())
        n_ties = int(len(d) - n_plus - n_minus)
        n_conf = len(d)
        rows.append({
            "player_a": a, "player_b": b,
            "n_plus": n_plus, "n_minus": n_minus, "n_ties": n_ties, "n_configs": n_conf,
            "rho_flip": min(n_plus, n_minus) / n_conf if n_conf else np.nan,
            "strict_order_free": bool(n_plus == 0 or n_minus == 0),
            "witness_a_wins": d.idxmax() if n_plus and n_minus else None,
            "witness_b_wins": d.idxmin() if n_plus and n_minus else None,
            "max_margin": float(d.max()) if n_conf else np.nan,
            "min_margin": float(d.min()) if n_conf else np.nan,
        })
    return pd.DataFrame(rows)


def complete_configurations(grid: EvalGrid, benchmark: str) -> tuple[pd.DataFrame, list[str]]:
    """(configs x models) scores restricted to configurations in which every model was scored,
    plus the labels of the incomplete configurations that were left out."""
    wide = grid.wide(benchmark)
    _check_configs(wide, benchmark)
    complete = wide.notna().all(axis=1)
    return wide[complete], list(wide.index[~complete])


def _pair_signs(scores: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """(K, M) scores -> (K, M(M-1)/2) signs of s_i - s_j for i < j (0 within ``tol``)."""
    i, j = np.triu_indices(scores.shape[1], k=1)
    d = scores[:, i] - scores[:, j]
    return np.where(d > tol, 1.0, np.where(d < -tol, -1.0, 0.0))


def tau_matrix(scores: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """Kendall tau-b between every pair of configurations' score vectors (rows of ``scores``).

    tau_b(x, y) = sum_{i<j} sgn(x_i - x_j) sgn(y_i - y_j) / sqrt(n_x n_y), n_x = # untied pairs in x.
    """
    s = _pair_signs(scores, tol)
    num = s @ s.T
    untied = (s != 0).sum(axis=1).astype(float)
    den = np.sqrt(np.outer(untied, untied))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def tau_r(grid: EvalGrid, benchmark: str, tol: float = 0.0) -> dict:
    """Mean pairwise Kendall tau-b over the complete configurations (see module docstring)."""
    wide, dropped = complete_configurations(grid, benchmark)
    k = wide.shape[0]
    if k < 2:
        return {"tau_R": np.nan, "n_configs": k, "n_pairs_used": 0, "n_pairs_undefined": 0,
                "incomplete_configs_excluded": dropped}
    t = tau_matrix(wide.to_numpy(float), tol)
    iu = np.triu_indices(k, k=1)
    vals = t[iu]
    ok = np.isfinite(vals)
    return {"tau_R": float(vals[ok].mean()) if ok.any() else np.nan, "n_configs": k,
            "n_pairs_used": int(ok.sum()), "n_pairs_undefined": int((~ok).sum()),
            "incomplete_configs_excluded": dropped}


def ordering_label(scores: np.ndarray, models, tol: float = 0.0) -> str:
    """``"A > B = C"``: models by descending score, ``=`` between scores within ``tol``."""
    order = np.argsort(-scores, kind="stable")
    parts = [str(models[order[0]])]
    for prev, cur in zip(order[:-1], order[1:]):
        parts.append(("= " if abs(scores[prev] - scores[cur]) <= tol else "> ") + str(models[cur]))
    return " ".join(parts)


def reachable_orderings(grid: EvalGrid, benchmark: str, tol: float = 0.0) -> tuple[pd.DataFrame, dict]:
    """Orderings induced by the complete configurations, with counts and one example configuration."""
    wide, dropped = complete_configurations(grid, benchmark)
    models = list(wide.columns)
    labels = [ordering_label(row, models, tol) for row in wide.to_numpy(float)]
    counts: dict[str, list] = {}
    for lab, conf in zip(labels, wide.index):
        counts.setdefault(lab, [0, conf])[0] += 1
    table = pd.DataFrame([(k, n, c) for k, (n, c) in counts.items()], columns=["ordering", "count", "example_config"])
    table = table.sort_values("count", ascending=False, kind="stable").reset_index(drop=True)
    table["share"] = table["count"] / max(len(labels), 1)
    strict = table[~table["ordering"].str.contains("=")]
    info = {"n_players": len(models), "n_possible_strict": math.factorial(len(models)),
            "n_reachable": int(len(table)), "n_reachable_strict": int(len(strict)),
            "n_configs": len(labels), "incomplete_configs_excluded": dropped}
    return table, info


def scoring_path_sensitivity(grid: EvalGrid, axis: str, level_a: str, level_b: str) -> pd.DataFrame:
    """Score difference ``s(level_a) - s(level_b)`` per (benchmark, model, other-axes configuration).

    Rows exist only where both scoring paths were observed for the same cell.
    """
    if axis not in grid.axes:
        raise InputError(f"no axis {axis!r}; axes are {list(grid.axes)}")
    others = [a for a in grid.axes if a != axis]
    d = grid.data
    for lev in (level_a, level_b):
        if lev not in set(d[axis]):
            raise InputError(f"axis {axis!r} has no level {lev!r}; levels: {sorted(set(d[axis]))}")
    keys = [BENCHMARK, MODEL, *others]
    a = d[d[axis] == level_a].set_index(keys)[SCORE]
    b = d[d[axis] == level_b].set_index(keys)[SCORE]
    out = pd.concat({level_a: a, level_b: b}, axis=1).dropna().reset_index().rename(columns={MODEL: PLAYER})
    out["difference"] = out[level_a] - out[level_b]
    out["config"] = [config_label(r, others) for r in out[others].itertuples(index=False)] if others else ""
    return out


def cross_harness_differences(grid: EvalGrid, harness_axis: str = "harness",
                              nominal: dict[str, str] | None = None) -> pd.DataFrame:
    """For one nominal configuration (the non-harness axes fixed by ``nominal``; default: every
    configuration in turn), the spread of each model's score across harnesses: max - min, and the
    pair of harnesses attaining it."""
    if harness_axis not in grid.axes:
        raise InputError(f"no axis {harness_axis!r}; axes are {list(grid.axes)}")
    others = [a for a in grid.axes if a != harness_axis]
    d = grid.data
    for k, v in (nominal or {}).items():
        if k not in others:
            raise InputError(f"nominal configuration names {k!r}, not a non-harness axis ({others})")
        d = d[d[k] == str(v)]
    if d.empty:
        raise InputError(f"no cell matches the nominal configuration {nominal}")
    rows = []
    for key, g in d.groupby([BENCHMARK, MODEL, *others], sort=False):
        if len(g) < 2:
            continue
        hi, lo = g.loc[g[SCORE].idxmax()], g.loc[g[SCORE].idxmin()]
        rows.append({BENCHMARK: key[0], PLAYER: key[1], "config": config_label(key[2:], others),
                     "n_harnesses": len(g), "max_minus_min": float(hi[SCORE] - lo[SCORE]),
                     "highest": hi[harness_axis], "lowest": lo[harness_axis],
                     **{f"score[{h}]": s for h, s in zip(g[harness_axis], g[SCORE])}})
    if not rows:
        raise InputError("no (model, configuration) was scored in two or more harnesses")
    return pd.DataFrame(rows)
