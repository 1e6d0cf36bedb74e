"""Multi-factor Type-II ANOVA with interactions (NumPy/SciPy; statsmodels is only the test reference).

For a term T in a hierarchical model with terms 𝒯 (all factor combinations up to ``max_order``, plus
additive ``blocks``), the Type-II sum of squares is

    SS(T) = RSS(M_T⁻) - RSS(M_T⁻ ∪ {T}),   M_T⁻ = {U ∈ 𝒯 : T ⊄ U}

(T adjusted for every term that does not contain it), ``df(T)`` the rank it adds,
``F = (SS(T)/df(T)) / (RSS_full/df_resid)``, ``p = 1 - F_{df(T), df_resid}(F)``. This equals
statsmodels' ``anova_lm(ols(...), typ=2)`` (a Wald test of the same hypothesis in the full model).

Reported beside them: ``share = SS(T)/SS_total`` with ``SS_total = Σ(y - ȳ)²`` and partial
``η² = SS(T)/(SS(T) + RSS_full)``. With one observation per cell and every interaction included
the model is saturated (RSS = 0, df_resid = 0): SS and shares are still defined, F/p/partial η² are not
(NaN), and the default ``max_order`` drops the highest-order interaction for that reason.
"""

from __future__ import annotations

import functools
import itertools
import warnings

import numpy as np
import pandas as pd

from bayesrank.errors import InputError


def _dummies(col: pd.Series) -> np.ndarray:
    """Treatment coding: one 0/1 column per level except the first (in first-seen order)."""
    codes, uniques = pd.factorize(col, sort=False)
    return (codes[:, None] == np.arange(1, len(uniques))[None, :]).astype(float)


def _term_columns(term: tuple[str, ...], dummies: dict[str, np.ndarray]) -> np.ndarray:
    """Row-wise products of the factors' dummy columns (all level combinations)."""
    block = np.ones((len(next(iter(dummies.values()))), 1))
    for f in term:
        d = dummies[f]
        block = (block[:, :, None] * d[:, None, :]).reshape(len(d), -1)
    return block


class _Gram:
    """Residual sums of squares of nested least-squares fits from one Gram matrix.

    With y and every column centred (the intercept is in every model), the RSS of the fit on column
    subset S is ``y'y - c_S' G_SS^+ c_S`` (G = X'X, c = X'y); ``G_SS^+`` via a symmetric eigen-
    decomposition, whose positive eigenvalues also give the rank (empty cells make designs deficient).
    """

    def __init__(self, x: np.ndarray, y: np.ndarray):
        xc = x - x.mean(axis=0)
        yc = y - y.mean()
        self.g = xc.T @ xc
        self.c = xc.T @ yc
        self.yy = float(yc @ yc)
        self.scale = float(np.max(np.diag(self.g))) if self.g.size else 1.0

    def rss_rank(self, cols: np.ndarray) -> tuple[float, int]:
        if len(cols) == 0:
            return self.yy, 1
        w, v = np.linalg.eigh(self.g[np.ix_(cols, cols)])
        keep = w > 1e-10 * max(self.scale, 1.0) * len(cols)
        proj = v[:, keep].T @ self.c[cols]
        return max(self.yy - float(np.sum(proj**2 / w[keep])), 0.0), int(keep.sum()) + 1


def term_name(term: tuple[str, ...]) -> str:
    return ":".join(term)


def anova_type2(data: pd.DataFrame, response: str, factors: list[str] | tuple[str, ...],
                max_order: int | None = None, blocks: list[str] | tuple[str, ...] = ()) -> pd.DataFrame:
    """Type-II ANOVA (see module docstring). The many small eigendecompositions run with one BLAS
    thread: multithreaded BLAS on matrices this small is slower, dramatically so on a loaded machine."""
    with _blas_controller().limit(limits=1, user_api="blas"):
        return _anova_type2(data, response, factors, max_order, blocks)


@functools.lru_cache(maxsize=1)
def _blas_controller():
    from threadpoolctl import ThreadpoolController  # scanning the loaded libraries is slow: do it once

    return ThreadpoolController()


def _anova_type2(data: pd.DataFrame, response: str, factors: list[str] | tuple[str, ...],
                 max_order: int | None = None, blocks: list[str] | tuple[str, ...] = ()) -> pd.DataFrame:
    """Type-II ANOVA table: term, sum_sq, df, F, p, share, partial_eta_sq (+ a Residual row).

    ``factors`` are crossed with all interactions up to ``max_order`` (default: every order that
    leaves residual degrees of freedom); ``blocks`` enter additively (e.g. task within a benchmark
    family, or item), never in interactions.
    """
    factors, blocks = list(factors), list(blocks)
    missing = [c for c in [response, *factors, *blocks] if c not in data.columns]
    if missing:
        raise InputError(f"ANOVA: column(s) {missing} not in the data ({list(data.columns)})")
    y = pd.to_numeric(data[response], errors="coerce").to_numpy(float)
    if not np.isfinite(y).all():
        raise InputError(f"ANOVA: response {response!r} has non-finite values")
    single = [f for f in factors + blocks if data[f].nunique() < 2]
    if single:
        raise InputError(f"ANOVA: factor(s) {single} have a single level in this data; drop them")
    dummies = {f: _dummies(data[f].astype(str)) for f in factors + blocks}

    def terms_up_to(order):
        return [t for k in range(1, order + 1) for t in itertools.combinations(factors, k)]

    n = len(y)
    if max_order is None:
        max_order = len(factors)
        n_cells = data[factors].astype(str).drop_duplicates().shape[0]
        if n_cells == n and not blocks and len(factors) > 1:  # one observation per cell: saturated
            max_order = len(factors) - 1
    if not 1 <= max_order <= len(factors):
        raise InputError(f"ANOVA: max_order must be between 1 and {len(factors)}, got {max_order}")
    terms = terms_up_to(max_order) + [(b,) for b in blocks]
    blocks_x, col_idx, start = [], {}, 0
    for t in terms:
        block = _term_columns(t, dummies)
        blocks_x.append(block)
        col_idx[t] = np.arange(start, start + block.shape[1])
        start += block.shape[1]
    gram = _Gram(np.hstack(blocks_x), y)

    def columns(ts):
        return np.concatenate([col_idx[t] for t in ts]) if ts else np.array([], dtype=int)

    rss_full, rank_full = gram.rss_rank(columns(terms))
    df_resid = n - rank_full
    ss_total = float(((y - y.mean()) ** 2).sum())
    if df_resid == 0:
        warnings.warn("ANOVA model is saturated (no residual degrees of freedom): F, p and partial eta^2 are "
                      "not identifiable; lower max_order or add replicates (items, tasks)", UserWarning,
                      stacklevel=2)
    from scipy import stats

    rows = []
    for t in terms:
        reduced = [u for u in terms if not set(t) <= set(u)]
        rss0, rank0 = gram.rss_rank(columns(reduced))
        rss1, rank1 = gram.rss_rank(columns(reduced + [t]))
        ss, df = max(rss0 - rss1, 0.0), rank1 - rank0
        if df_resid > 0 and df > 0:
            f = (ss / df) / (rss_full / df_resid) if rss_full > 0 else np.inf
            p = float(stats.f.sf(f, df, df_resid))
            eta = ss / (ss + rss_full) if ss + rss_full > 0 else np.nan
        else:
            f = p = eta = np.nan
        rows.append({"term": term_name(t), "sum_sq": ss, "df": float(df), "F": f, "p": p,
                     "share": ss / ss_total if ss_total > 0 else np.nan, "partial_eta_sq": eta})
    rows.append({"term": "Residual", "sum_sq": rss_full, "df": float(df_resid), "F": np.nan, "p": np.nan,
                 "share": rss_full / ss_total if ss_total > 0 else np.nan, "partial_eta_sq": np.nan})
    out = pd.DataFrame(rows)
    out.attrs.update({"ss_total": ss_total, "max_order": max_order, "blocks": blocks, "n": n})
    return out


def attribution_summary(table: pd.DataFrame, model_factor: str = "player") -> dict:
    """Shares of SS_total grouped as: player (model identity), execution main effects, interactions,
    blocks, residual."""
    blocks = set(table.attrs.get("blocks", []))
    s = {"player": 0.0, "execution_main": 0.0, "interactions": 0.0, "blocks": 0.0, "residual": 0.0}
    for term, share in zip(table["term"], table["share"]):
        if term == "Residual":
            s["residual"] += share
        elif term in blocks:
            s["blocks"] += share
        elif ":" in term:
            s["interactions"] += share
        elif term == model_factor:
            s["player"] += share
        else:
            s["execution_main"] += share
    return s
