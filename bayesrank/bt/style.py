"""Style-controlled (covariate-adjusted) Bradley–Terry on individual battles.

Model (one row ``n`` per battle, ``a = i_n``, ``b = j_n``)::

    logit P(a beats b) = θ_a − θ_b + βᵀ d_n,        Σθ = 0

``d_n`` holds the battle's style-feature differences. By default (as LMArena's style control and
arena-rank's contextual Bradley–Terry example) each feature is the *normalised difference*
``(x_a − x_b)/(x_a + x_b)`` (0 when ``x_a + x_b = 0``), then *standardised* over the battles
(mean 0, SD 1, frequency-weighted; ``standardize="center_scale"``). Centring adds the constant
``−β·mean/sd`` to every battle's logit, i.e. an implicit position-a effect tied to β (LMArena's
choice); ``standardize="scale"`` divides by the root mean square only and keeps features
antisymmetric (swapping a and b negates ``d``).

Outcomes: ``y = 1`` (a wins), ``0`` (b wins), ``½`` for a tie (``ties="half"``, the package
default) or ties excluded and counted (``ties="drop"``). Each row has a frequency weight ``f``
(how many identical battles it stands for) and an importance weight ``v`` (1, or inverse-propensity
weights from :mod:`bayesrank.bt.reweight`). With ``x_n = (e_a − e_b, d_n)`` and ``φ = (θ, β)`` the
loss is

    L(φ) = Σ_n f_n v_n [softplus(η_n) − y_n η_n] + ridge/2 ‖θ‖² + beta_ridge/2 ‖β‖²,   η_n = x_nᵀφ

with gradient ``Σ r_n x_n`` (``r = f v (σ(η) − y)``) and Hessian ``Σ c_n x_n x_nᵀ``
(``c = f v σ(η)(1 − σ(η))``). Battles with covariates do not aggregate to pair counts, so the
Newton step assembles both by ``bincount`` over player indices (θθ block from one bincount over
ordered pair codes, θβ block one bincount per feature) and dense ``(p × p)`` feature blocks:
``O(N p)`` per iteration. Steps solve ``(H + uuᵀ/K) s = g`` with ``u = (1_K, 0_p)`` (``Hu = 0``,
``g ⟂ u``), which keeps ``Σθ = 0``.

Covariances (on the sum-to-zero space, ``Q (QᵀHQ)⁻¹ Qᵀ``): Fisher ``H⁻¹``; sandwich
``H⁻¹ B H⁻¹`` with ``B = Σ_n f_n v_n² (σ(η_n) − y_n)² x_n x_nᵀ`` (Huber/White; with ``v = 1`` it is
the per-battle outer product of scores, as arena-rank's); bootstrap resamples battles.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

from bayesrank.errors import ExclusionLog, InputError, NoFiniteEstimateError

TRANSFORMS = ("normalized_diff", "diff")
STANDARDIZE = ("center_scale", "scale", "none")
STYLE_TIES = ("half", "drop")
#: A logit-scale estimate beyond this means the MLE runs off to infinity (separation), not a finite score.
DIVERGED = 30.0


class CentredReferenceWarning(UserWarning):
    """Centred style features on data where one player is in every battle (module docstring)."""


def warn_if_centred_reference(data: "BattleData", standardize: str) -> None:
    """Centring adds ``−β·mean/sd`` to every battle's logit; when one player takes part in every
    battle (AlpacaEval's reference) that constant moves only that player's score against all the
    others, so the style-adjusted ranking depends on the centring. Warn and name the fix."""
    if standardize != "center_scale" or not data.n_features:
        return
    k = data.n_players
    every = np.bincount(data.i, minlength=k) + np.bincount(data.j, minlength=k) == data.n_rows
    if k > 2 and every.any():
        import warnings

        ref = str(data.players[np.flatnonzero(every)[0]])
        warnings.warn(f"every battle involves {ref!r}: centring the style features (standardize='center_scale') "
                      f"acts as a position effect tied to beta and shifts only {ref!r} against the others; use "
                      f"standardize='scale' (--style-standardize scale) for such data", CentredReferenceWarning,
                      stacklevel=3)


# ---------------------------------------------------------------------------------------- data
def parse_style(spec) -> list[tuple[str, str]]:
    """``"A_COL:B_COL[,A_COL:B_COL...]"`` (or a list of pairs) → ``[(a_col, b_col), ...]``."""
    if isinstance(spec, str):
        pairs = []
        for part in [p.strip() for p in spec.split(",") if p.strip()]:
            cols = part.split(":")
            if len(cols) != 2 or not all(c.strip() for c in cols):
                raise InputError(f"--style: {part!r} is not A_COL:B_COL (two column names separated by ':')")
            pairs.append((cols[0].strip(), cols[1].strip()))
        spec = pairs
    pairs = [tuple(p) for p in spec]
    if any(len(p) != 2 for p in pairs):
        raise InputError(f"style features must be (a_col, b_col) pairs, got {spec!r}")
    return pairs


def feature_name(a_col: str, b_col: str) -> str:
    """A readable name for a column pair: the shared stem (``len_output_1``/``len_output_2`` →
    ``len_output``, ``bold_count_a``/``bold_count_b`` → ``bold_count``), else ``a_col-b_col``."""
    n = 0
    while n < min(len(a_col), len(b_col)) and a_col[n] == b_col[n]:
        n += 1
    stem = re.sub(r"[_\-. ]+(a|b|1|2)?$", "", a_col[:n])
    if stem and a_col[n:] and b_col[n:] and len(a_col) - n <= 2 and len(b_col) - n <= 2:
        return stem
    return f"{a_col}-{b_col}"


@dataclass
class BattleData:
    """One row per battle (or per ``f`` identical battles): player indices, outcome, weights, features.

    ``players`` (K,), ``i``/``j`` (N,) indices of player a / player b, ``y`` (N,) in {1, ½, 0},
    ``freq`` frequency weights, ``weight`` importance weights, ``X`` (N, p) transformed features
    named ``features``; ``transform`` records how each feature was built (columns, mean, SD);
    ``cluster`` optional integer cluster codes (e.g. the prompt) for the cluster-robust sandwich.
    """

    players: np.ndarray
    i: np.ndarray
    j: np.ndarray
    y: np.ndarray
    freq: np.ndarray
    weight: np.ndarray
    X: np.ndarray
    features: list
    transform: dict = field(default_factory=dict)
    ties: str = "half"
    exclusions: ExclusionLog = field(default_factory=ExclusionLog)
    raw: pd.DataFrame | None = field(default=None, repr=False)
    cluster: np.ndarray | None = None
    cluster_name: str | None = None

    @property
    def n_players(self) -> int:
        return len(self.players)

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_rows(self) -> int:
        return len(self.y)

    @property
    def n_comparisons(self) -> float:
        return float(self.freq.sum())

    def pair_code(self) -> np.ndarray:
        """Ordered pair code ``i·K + j`` of each row (computed once per object)."""
        cached = self.__dict__.get("_pair_code")
        if cached is None or len(cached) != len(self.i):
            cached = self.__dict__["_pair_code"] = self.i * self.n_players + self.j
        return cached

    def matches_per_player(self) -> np.ndarray:
        k = self.n_players
        return np.bincount(self.i, self.freq, k) + np.bincount(self.j, self.freq, k)

    def with_rows(self, **changes) -> "BattleData":
        """A copy with some row arrays replaced (``freq=``, ``y=``, ``weight=``, ``X=``, ``i=``, ``j=``)."""
        return replace(self, **changes)

    def without_features(self) -> "BattleData":
        return replace(self, X=np.zeros((self.n_rows, 0)), features=[], transform={})

    def index_of(self, name: str) -> int:
        hit = np.flatnonzero(self.players == name)
        if len(hit) == 0:
            raise InputError(f"unknown player {name!r}")
        return int(hit[0])

    def append(self, i, j, y, freq, X, weight=None) -> "BattleData":
        """Rows added at the end (e.g. the added battles of an audit)."""
        weight = np.ones(len(np.atleast_1d(y))) if weight is None else weight
        return replace(
            self, i=np.concatenate([self.i, np.atleast_1d(i)]), j=np.concatenate([self.j, np.atleast_1d(j)]),
            y=np.concatenate([self.y, np.atleast_1d(y).astype(float)]),
            freq=np.concatenate([self.freq, np.atleast_1d(freq).astype(float)]),
            weight=np.concatenate([self.weight, np.atleast_1d(weight).astype(float)]),
            X=np.vstack([self.X, np.asarray(X, dtype=float).reshape(len(np.atleast_1d(y)), self.n_features)]),
            cluster=None if self.cluster is None else np.concatenate(
                [self.cluster, self.cluster.max() + 1 + np.arange(len(np.atleast_1d(y)))]),
        )


def _numeric(frame: pd.DataFrame, col: str, rows: np.ndarray) -> np.ndarray:
    """Column ``col`` as floats; ``rows`` maps frame rows to the comparisons' row numbers."""
    if col not in frame.columns:
        raise InputError(f"--style: no column {col!r}; the data have columns {list(frame.columns)}")
    v = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(v)
    if bad.any():
        from bayesrank.data.comparisons import describe_rows

        raise InputError(f"{describe_rows(frame, np.flatnonzero(bad))}: column {col!r} has a missing or "
                         f"non-numeric style value ({int(bad.sum())} rows); expected finite numbers")
    return v


def style_feature(xa: np.ndarray, xb: np.ndarray, transform: str = "normalized_diff") -> np.ndarray:
    """Raw style difference of one feature: ``(x_a − x_b)/(x_a + x_b)`` (0 where the sum is 0) or
    ``x_a − x_b``."""
    if transform == "diff":
        return xa - xb
    tot = xa + xb
    return np.divide(xa - xb, tot, out=np.zeros_like(tot), where=tot != 0)


def battle_data(
    data,
    style=(),
    ties: str = "half",
    transform: str = "normalized_diff",
    standardize: str = "center_scale",
    cluster: str | None = None,
    **read_kw,
) -> BattleData:
    """:class:`BattleData` from :class:`~bayesrank.data.comparisons.Comparisons` (or a path or
    DataFrame read with :func:`~bayesrank.data.readers.read_comparisons`) and style column pairs.

    ``style``: ``"A_COL:B_COL,..."`` or ``[(a_col, b_col), ...]`` naming numeric columns of the
    comparisons (carried through the readers). See the module docstring for ``transform`` and
    ``standardize``. Ties: ``"half"`` (y = ½) or ``"drop"`` (excluded and counted). ``cluster``
    names a column of cluster labels (e.g. the prompt) for the cluster-robust sandwich.
    """
    from bayesrank.data.comparisons import Comparisons

    if ties not in STYLE_TIES:
        raise InputError(f"style-controlled BT supports ties in {STYLE_TIES}, got {ties!r}")
    if transform not in TRANSFORMS:
        raise InputError(f"transform must be one of {TRANSFORMS}, got {transform!r}")
    if standardize not in STANDARDIZE:
        raise InputError(f"standardize must be one of {STANDARDIZE}, got {standardize!r}")
    if isinstance(data, (str, Path, pd.DataFrame)):
        from bayesrank.data.readers import read_comparisons

        data = read_comparisons(data, **read_kw)
    if not isinstance(data, Comparisons):
        raise InputError(f"style data must be Comparisons, a DataFrame or a path; got {type(data).__name__}")
    pairs = parse_style(style)
    frame = data.frame
    log = ExclusionLog(dict(data.excluded.counts), {k: list(v) for k, v in data.excluded.examples.items()})
    outcome = np.asarray(frame["outcome"].cat.codes)
    keep = np.asarray(frame["weight"].to_numpy(dtype=float) > 0)
    log.add("zero weight", int((~keep).sum()), [int(r) for r in np.flatnonzero(~keep)[:5]])
    if ties == "drop":
        tie = (outcome == 2) & keep
        log.add("tie (ties='drop')", int(tie.sum()), [int(r) for r in np.flatnonzero(tie)[:5]])
        keep &= ~tie
    row_numbers = np.flatnonzero(keep)
    from bayesrank.data.comparisons import carry_places

    frame = carry_places(data.frame, frame[keep].reset_index(drop=True), row_numbers)
    outcome = outcome[keep]
    if len(frame) == 0:
        raise InputError("no battles left after exclusions: " + log.report())
    a_codes = np.asarray(frame["model_a"].cat.codes)
    b_codes = np.asarray(frame["model_b"].cat.codes)
    used = np.unique(np.concatenate([a_codes, b_codes]))
    remap = np.full(len(frame["model_a"].cat.categories), -1)
    remap[used] = np.arange(len(used))
    players = np.asarray(frame["model_a"].cat.categories, dtype=object)[used]
    freq = frame["weight"].to_numpy(dtype=float)
    y = np.array([1.0, 0.0, 0.5])[outcome]
    X, names, info = _feature_matrix(frame, pairs, freq, transform, standardize, row_numbers)
    clusters = _cluster_codes(frame, cluster, row_numbers)
    out = BattleData(players=players, i=remap[a_codes].astype(np.int64), j=remap[b_codes].astype(np.int64), y=y,
                     freq=freq, weight=np.ones(len(frame)), X=X, features=names, transform=info, ties=ties,
                     exclusions=log, raw=frame, cluster=clusters, cluster_name=cluster)
    warn_if_centred_reference(out, standardize)
    return out


def _feature_matrix(frame, pairs, freq, transform, standardize, row_numbers):
    """(X, names, transform info) of the style column pairs (module docstring)."""
    cols, names, info = [], [], {}
    for a_col, b_col in pairs:
        xa, xb = _numeric(frame, a_col, row_numbers), _numeric(frame, b_col, row_numbers)
        if transform == "normalized_diff":
            for col, x in ((a_col, xa), (b_col, xb)):
                if (x < 0).any():
                    from bayesrank.data.comparisons import describe_rows

                    raise InputError(f"{describe_rows(frame, np.flatnonzero(x < 0))}: column {col!r} "
                                     f"has negative style values ({int((x < 0).sum())} rows); the normalised difference "
                                     "(x_a − x_b)/(x_a + x_b) needs values >= 0 (counts, lengths): pass "
                                     "--style-transform diff for signed features")
        raw = style_feature(xa, xb, transform)
        mean = float(np.average(raw, weights=freq)) if standardize == "center_scale" else 0.0
        sd = float(np.sqrt(np.average((raw - mean) ** 2, weights=freq)))  # scale only: root mean square
        sd = sd if sd > 0 else 1.0
        if standardize == "center_scale":
            col = (raw - mean) / sd
        elif standardize == "scale":
            col = raw / sd
        else:
            col, mean, sd = raw, 0.0, 1.0
        name = feature_name(a_col, b_col)
        if name in names:
            name = f"{a_col}-{b_col}"
        names.append(name)
        cols.append(col)
        info[name] = {"a_col": a_col, "b_col": b_col, "transform": transform, "standardize": standardize,
                      "mean": mean, "sd": sd}
    X = np.asfortranarray(np.column_stack(cols)) if cols else np.zeros((len(frame), 0))
    return X, names, info


def _cluster_codes(frame, cluster, row_numbers):
    if cluster is None:
        return None
    if cluster not in frame.columns:
        raise InputError(f"cluster: no column {cluster!r}; the data have columns {list(frame.columns)}")
    missing = frame[cluster].isna().to_numpy()
    if missing.any():
        from bayesrank.data.comparisons import describe_rows

        raise InputError(f"{describe_rows(frame, np.flatnonzero(missing))}: column {cluster!r} has no "
                         f"cluster label ({int(missing.sum())} rows)")
    return pd.factorize(frame[cluster])[0].astype(np.int64)


def soft_battle_data(frame: pd.DataFrame, model_a: str, model_b: str, prob_a: str, style=(), cluster: str | None = None,
                     transform: str = "normalized_diff", standardize: str = "center_scale") -> BattleData:
    """:class:`BattleData` with *fractional* outcomes: ``prob_a`` ∈ [0, 1] is the share of the battle
    won by ``model_a`` (e.g. AlpacaEval's weighted judge: ``2 − preference``). One row per battle
    (frequency 1), so drops/flips and the sandwich act on whole battles. Rows with a missing
    ``prob_a`` are excluded and counted; self-comparisons raise."""
    if transform not in TRANSFORMS or standardize not in STANDARDIZE:
        raise InputError(f"transform must be in {TRANSFORMS} and standardize in {STANDARDIZE}")
    for col in (model_a, model_b, prob_a):
        if col not in frame.columns:
            raise InputError(f"no column {col!r}; the data have columns {list(frame.columns)}")
    log = ExclusionLog()
    y = pd.to_numeric(frame[prob_a], errors="coerce").to_numpy(dtype=float)
    missing = ~np.isfinite(y)
    log.add(f"missing {prob_a}", int(missing.sum()), [int(r) for r in np.flatnonzero(missing)[:5]])
    out = (~missing) & ((y < 0) | (y > 1))
    if out.any():
        raise InputError(f"column {prob_a!r}: rows {[int(r) for r in np.flatnonzero(out)[:5]]} outside [0, 1]")
    same = (frame[model_a].astype(str) == frame[model_b].astype(str)).to_numpy() & ~missing
    if same.any():
        raise InputError(f"rows {[int(r) for r in np.flatnonzero(same)[:5]]} (DataFrame positions): columns "
                         f"{model_a!r}/{model_b!r} name the same player twice ({int(same.sum())} self-comparisons)")
    row_numbers = np.flatnonzero(~missing)
    f = frame[~missing].reset_index(drop=True)
    codes, players = pd.factorize(pd.concat([f[model_a].astype(str), f[model_b].astype(str)]), sort=True)
    n = len(f)
    freq = np.ones(n)
    X, names, info = _feature_matrix(f, parse_style(style), freq, transform, standardize, row_numbers)
    out = BattleData(players=np.asarray(players, dtype=object), i=codes[:n].astype(np.int64),
                     j=codes[n:].astype(np.int64), y=y[~missing], freq=freq, weight=np.ones(n), X=X, features=names,
                     transform=info, ties="half", exclusions=log, raw=f,
                     cluster=_cluster_codes(f, cluster, row_numbers), cluster_name=cluster)
    warn_if_centred_reference(out, standardize)
    return out


def counts_battle_data(counts, ties: str = "half") -> BattleData:
    """:class:`BattleData` without style features from :class:`~bayesrank.data.aggregate.PairCounts`:
    one row per non-empty (pair, outcome) cell with the count as frequency weight (enough for the
    reweighted plain BT; style features need the individual battles)."""
    if ties not in STYLE_TIES:
        raise InputError(f"battle-level BT supports ties in {STYLE_TIES}, got {ties!r}")
    c = counts.counts
    log = ExclusionLog()
    if ties == "drop":
        log.add("tie (ties='drop')", int(round(c[:, 2].sum())))
        c = c.copy()
        c[:, 2] = 0.0
    r, o = np.nonzero(c > 0)
    n = len(r)
    return BattleData(players=np.asarray(counts.players, dtype=object), i=counts.i[r].astype(np.int64),
                      j=counts.j[r].astype(np.int64), y=np.array([1.0, 0.0, 0.5])[o], freq=c[r, o],
                      weight=np.ones(n), X=np.zeros((n, 0)), features=[], ties=ties, exclusions=log)


def pair_counts(data: BattleData):
    """The battles as :class:`~bayesrank.data.aggregate.PairCounts` (features ignored; importance
    weights multiply the counts; a fractional outcome y counts y wins and 1 − y losses, y = ½ a
    tie): the plain Bradley–Terry sufficient statistics."""
    from bayesrank.data.aggregate import PairCounts

    k = data.n_players
    lo, hi = np.minimum(data.i, data.j), np.maximum(data.i, data.j)
    swapped = data.i > data.j
    yi = np.where(swapped, 1.0 - data.y, data.y)  # outcome from the view of the lower index
    w = data.freq * data.weight
    tie = data.y == 0.5
    code = lo * k + hi
    seen = np.bincount(code, minlength=k * k) > 0  # bincount over the K² pair cells, not a sort of N rows
    tab = np.column_stack([np.bincount(code, np.where(tie, 0.0, w * yi), k * k),  # fractional outcomes split
                           np.bincount(code, np.where(tie, 0.0, w * (1 - yi)), k * k),
                           np.bincount(code, np.where(tie, w, 0.0), k * k)])[seen]
    uniq = np.flatnonzero(seen)
    return PairCounts(data.players, (uniq // k).astype(np.int64), (uniq % k).astype(np.int64), tab[:, 0], tab[:, 1], tab[:, 2])


# ---------------------------------------------------------------------------------------- Newton
def loss_terms(data: BattleData, params: np.ndarray, freq=None):
    """(η, σ(η), per-row loss weight ``f·v``) at ``params = (θ, β)``."""
    k = data.n_players
    eta = params[data.i] - params[data.j]
    if data.n_features:
        eta = eta + data.X @ params[k:]
    fw = (data.freq if freq is None else freq) * data.weight
    return eta, expit(eta), fw


def _by_pair(data: BattleData, values: np.ndarray) -> np.ndarray:
    """``values`` summed per ordered pair cell (a, b): (K, K) by one bincount."""
    k = data.n_players
    return np.bincount(data.pair_code(), values, k * k).reshape(k, k)


def assemble(data: BattleData, row_weight: np.ndarray) -> np.ndarray:
    """``Σ_n row_weight_n x_n x_nᵀ`` ((K+p) × (K+p)) by bincount over ordered pair cells."""
    k, p = data.n_players, data.n_features
    cc = _by_pair(data, row_weight)
    s = cc + cc.T
    out = np.zeros((k + p, k + p))
    out[:k, :k] = np.diag(s.sum(axis=1)) - s
    if p:
        cx = np.empty(data.X.shape, order="F")  # column by column: contiguous when X is Fortran-ordered
        cross = np.empty((k, p))
        for f in range(p):
            np.multiply(row_weight, data.X[:, f], out=cx[:, f])
            t = _by_pair(data, cx[:, f])
            cross[:, f] = t.sum(axis=1) - t.sum(axis=0)  # Σ over battles as player a − as player b
        out[:k, k:] = cross
        out[k:, :k] = cross.T
        out[k:, k:] = data.X.T @ cx
    return out


def gradient(data: BattleData, row_score: np.ndarray) -> np.ndarray:
    """``Σ_n row_score_n x_n`` ((K+p),)."""
    t = _by_pair(data, row_score)
    g = t.sum(axis=1) - t.sum(axis=0)
    if data.n_features:
        g = np.concatenate([g, data.X.T @ row_score])
    return g


def _penalty(data, params, ridge, beta_ridge):
    k = data.n_players
    pen = np.zeros(len(params))
    pen[:k] = ridge
    pen[k:] = beta_ridge
    return pen


def objective(data: BattleData, params, ridge=0.0, beta_ridge=0.0, freq=None, derivatives=True):
    """Loss, and unless ``derivatives=False`` its gradient and Hessian (module docstring)."""
    eta, p, fw = loss_terms(data, params, freq)
    pen = _penalty(data, params, ridge, beta_ridge)
    loss = float(np.sum(fw * (np.logaddexp(0.0, eta) - data.y * eta)) + 0.5 * np.sum(pen * params**2))
    if not derivatives:
        return loss
    g = gradient(data, fw * (p - data.y)) + pen * params
    h = assemble(data, fw * p * (1 - p))
    h[np.diag_indices_from(h)] += pen
    return loss, g, h


@dataclass
class StyleNewton:
    """Result of :func:`fit_style_newton`: ``params = (θ, β)``, loss, gradient, Hessian, iterations."""

    params: np.ndarray
    loss: float
    grad: np.ndarray
    hessian: np.ndarray
    iterations: int
    converged: bool

    @property
    def gradient_norm(self) -> float:
        return float(np.linalg.norm(self.grad))


def newton(data: BattleData, start=None, ridge=0.0, beta_ridge=0.0, freq=None, tol=1e-10, max_iter=100) -> StyleNewton:
    """Damped Newton on ``Σθ = 0`` (steps solve ``(H + uuᵀ/K) s = g``; backtracking on the loss)."""
    k, p = data.n_players, data.n_features
    u = np.zeros(k + p)
    u[:k] = 1.0
    pin = np.outer(u, u) / k
    x = np.zeros(k + p) if start is None else np.array(start, dtype=float)
    x[:k] -= x[:k].mean()
    loss, g, h = objective(data, x, ridge, beta_ridge, freq)
    it, converged = 0, False
    for it in range(1, max_iter + 1):
        try:
            step = np.linalg.solve(h + pin, g)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(h + pin, g, rcond=None)[0]
        t = 1.0
        for _ in range(50):  # the full step is almost always accepted: evaluate derivatives with the loss
            cand = x - t * step
            closs, cg, ch = objective(data, cand, ridge, beta_ridge, freq)
            if closs <= loss + 1e-12 * abs(loss):
                break
            t /= 2
        x, loss, g, h = cand, closs, cg, ch
        if np.max(np.abs(step)) < tol:  # the full Newton step, not the damped one (a stalled line search is no optimum)
            converged = True
            break
    return StyleNewton(x, loss, g, h, it, converged)


def check_finite(data: BattleData, ridge: float, counts=None) -> None:
    """No finite MLE when the plain win graph is not strongly connected: a player (or group) that
    never wins against the rest has θ → −∞ whatever β is (``counts``: the pair counts, if at hand)."""
    if ridge > 0:
        return
    from bayesrank.data.aggregate import comparison_graph

    rep = comparison_graph(pair_counts(data) if counts is None else counts, ties=data.ties)
    if not rep.finite_mle:
        raise NoFiniteEstimateError("no finite maximum-likelihood estimate: " + rep.advice())


def fit_style_newton(data: BattleData, ridge=0.0, beta_ridge=0.0, start=None, tol=1e-10,
                     checked: bool = False) -> StyleNewton:
    """Single MLE (or ridge-penalised) fit; raises :class:`NoFiniteEstimateError` when none exists
    (``checked=True``: the win graph was already checked)."""
    if not checked:
        check_finite(data, ridge)
    res = newton(data, start=start, ridge=ridge, beta_ridge=beta_ridge, tol=tol)
    big = float(np.max(np.abs(res.params))) if np.all(np.isfinite(res.params)) else np.inf
    if not res.converged or big > DIVERGED:
        raise NoFiniteEstimateError(
            f"no finite style-controlled MLE: Newton {'did not converge' if not res.converged else 'ran off'} "
            f"(max |estimate| {big:.3g} logits; the players and style features (quasi-)separate the outcomes); "
            "try ridge>0 / beta_ridge>0 or fewer style features")
    return res


def meat(data: BattleData, params: np.ndarray) -> np.ndarray:
    """``B = Σ_n f_n v_n² (σ(η_n) − y_n)² x_n x_nᵀ``; with clusters ``B = Σ_c S_c S_cᵀ``,
    ``S_c = Σ_{n ∈ c} f_n v_n (σ(η_n) − y_n) x_n`` (cluster-robust, e.g. battles sharing a prompt)."""
    _, p, _ = loss_terms(data, params)
    if data.cluster is None:
        return assemble(data, data.freq * data.weight**2 * (p - data.y) ** 2)
    k, q = data.n_players, data.n_features
    r = data.freq * data.weight * (p - data.y)
    c = data.cluster
    n_c = int(c.max()) + 1
    s = (np.bincount(c * k + data.i, r, n_c * k) - np.bincount(c * k + data.j, r, n_c * k)).reshape(n_c, k)
    if q:
        s = np.hstack([s, np.column_stack([np.bincount(c, r * data.X[:, f], n_c) for f in range(q)])])
    return s.T @ s


def covariance(data: BattleData, params: np.ndarray, hessian: np.ndarray, kind: str = "fisher") -> np.ndarray:
    """Fisher ``H⁻¹`` or sandwich ``H⁻¹ B H⁻¹`` on the sum-to-zero space ((K+p) × (K+p))."""
    from bayesrank.bt.mle import constrained_covariance

    hinv = constrained_covariance(hessian, data.n_players, data.n_features)
    if kind == "fisher":
        return hinv
    if kind == "sandwich":
        return hinv @ meat(data, params) @ hinv
    raise InputError(f"ci must be 'fisher' or 'sandwich', got {kind!r}")


def bootstrap_freqs(data: BattleData, n_boot: int, seed: int) -> np.ndarray:
    """(B, N) multinomial resamples of the battles (frequency weights as cell sizes; the draw size
    is the rounded total number of battles), as LMArena's bootstrap of battles. With clusters
    (e.g. prompts) whole clusters are resampled: row frequency × times its cluster was drawn."""
    rng = np.random.default_rng(seed)
    if data.cluster is not None:
        n_c = int(data.cluster.max()) + 1
        times = rng.multinomial(n_c, np.full(n_c, 1.0 / n_c), size=n_boot).astype(float)
        return data.freq[None, :] * times[:, data.cluster]
    total = int(round(data.freq.sum()))
    return rng.multinomial(total, data.freq / data.freq.sum(), size=n_boot).astype(float)


def bootstrap_fits(data: BattleData, n_boot=200, seed=0, ridge=0.0, beta_ridge=0.0, start=None, progress=None):
    """(B, K+p) refits on resampled battles (warm start at ``start``; ridge 1e-6 when none is set,
    so a replicate in which a player never wins stays finite) and the number of failed replicates."""
    freqs = bootstrap_freqs(data, n_boot, seed)
    out = np.full((n_boot, data.n_players + data.n_features), np.nan)
    failed = 0
    for b in range(n_boot):
        res = newton(data, start=start, ridge=ridge if ridge > 0 else 1e-6, beta_ridge=beta_ridge, freq=freqs[b])
        if res.converged and np.all(np.isfinite(res.params)):
            out[b] = res.params
        else:
            failed += 1
        if progress is not None:
            progress(1)
    return out, failed


# ---------------------------------------------------------------------------------------- estimator
STYLE_METHODS = ("mle", "map", "laplace", "nuts", "bootstrap")


class StyleBT:
    """Style-controlled Bradley–Terry: ``StyleBT(data, style="A:B,...").fit(method=...)``.

    ``data``: :class:`BattleData`, :class:`~bayesrank.data.comparisons.Comparisons`, a DataFrame or
    a path (then ``style`` names the column pairs; see :func:`battle_data`). ``reweight=True``
    applies inverse-propensity pair weights with floor ``min_pair_count``
    (:mod:`bayesrank.bt.reweight`). ``cluster`` (a column) makes the sandwich cluster-robust.
    ``ridge``/``beta_ridge`` penalise the MLE; ``prior_sigma`` /
    ``beta_sigma`` are the PyMC priors (MAP = penalised MLE with ridge 1/σ², beta_ridge 1/σ_β²).

    ========== ==========================================================================
    method     point estimate and interval
    ========== ==========================================================================
    mle        row-level Newton; Fisher (default) or sandwich (``ci="sandwich"``) intervals
    bootstrap  MLE with percentile intervals from resampled battles
    map        PyMC posterior mode, Wald intervals from the PyTensor Hessian
    laplace    Gaussian approximation at the mode, with draws
    nuts       NUTS posterior, equal-tailed credible intervals
    ========== ==========================================================================
    """

    def __init__(self, data, style=(), ties: str = "half", transform: str = "normalized_diff",
                 standardize: str = "center_scale", reweight: bool = False, min_pair_count: float = 50,
                 ridge: float = 0.0, beta_ridge: float = 0.0, prior_sigma: float | None = None,
                 beta_sigma: float | None = None, level: float = 0.95, cluster: str | None = None):
        if not 0 < level < 1:
            raise InputError(f"level must be in (0, 1), got {level}")
        for name, v in (("ridge", ridge), ("beta_ridge", beta_ridge)):
            if not (np.isfinite(v) and v >= 0):
                raise InputError(f"{name} must be a finite number >= 0, got {v}")
        from bayesrank.data.aggregate import PairCounts

        if isinstance(data, PairCounts):
            if parse_style(style):
                raise InputError("style features need the individual battles, not pair counts (a folder or glob "
                                 "is streamed to pair counts: pass one file)")
            data = counts_battle_data(data, ties)
        elif not isinstance(data, BattleData):
            data = battle_data(data, style, ties=ties, transform=transform, standardize=standardize, cluster=cluster)
        if reweight:
            from bayesrank.bt.reweight import inverse_propensity_weights

            data = data.with_rows(weight=inverse_propensity_weights(data, min_pair_count=min_pair_count))
        from bayesrank.bt.pymc_model import DEFAULT_PRIOR_SIGMA

        self.data = data
        self.reweight = bool(reweight)
        self.min_pair_count = float(min_pair_count)
        self.ridge, self.beta_ridge = float(ridge), float(beta_ridge)
        self.prior_sigma = float(prior_sigma if prior_sigma is not None else DEFAULT_PRIOR_SIGMA)
        self.beta_sigma = float(beta_sigma if beta_sigma is not None else 1.0)
        self.level = level
        self._model = None
        self._mle = None

    @property
    def players(self) -> np.ndarray:
        return self.data.players

    @property
    def model(self):
        """The PyMC model (built once)."""
        if self._model is None:
            from bayesrank.bt.style_model import build_style_model

            self._model = build_style_model(self.data, self.prior_sigma, self.beta_sigma)
        return self._model

    def mle(self) -> StyleNewton:
        """Row-level Newton, started at the plain fit (θ of the aggregated BT MLE, β = 0)."""
        if self._mle is None:
            check_finite(self.data, self.ridge, self._counts(False))  # the graph does not depend on weights
            start = np.concatenate([self.plain_scores(self.ridge, weighted=True), np.zeros(self.data.n_features)])
            self._mle = fit_style_newton(self.data, self.ridge, self.beta_ridge, start=start, checked=True)
        return self._mle

    def _counts(self, weighted: bool):
        """Pair counts of the battles (importance weights applied when ``weighted``; cached)."""
        cache = self.__dict__.setdefault("_pair_counts", {})
        weighted = weighted and self.reweight
        if weighted not in cache:
            data = self.data if weighted else self.data.with_rows(weight=np.ones(self.data.n_rows))
            cache[weighted] = pair_counts(data)
        return cache[weighted]

    def plain_scores(self, ridge: float = 0.0, weighted: bool = False) -> np.ndarray:
        """Plain Bradley–Terry θ on the same battles: no style features and, unless ``weighted``, no
        importance weights (the default ``bayesrank fit`` leaderboard); cached."""
        from bayesrank.bt.mle import fit_newton

        weighted = weighted and self.reweight
        cache = self.__dict__.setdefault("_plain", {})
        if (ridge, weighted) not in cache:
            cache[(ridge, weighted)] = fit_newton(self._counts(weighted), "half", ridge=ridge)[0]
        return cache[(ridge, weighted)]

    def _z(self) -> float:
        from bayesrank.bt.result import two_sided_z

        return two_sided_z(self.level)

    def _result(self, method, params, cov, lower, upper, interval, diagnostics, plain_ridge, **kw):
        from bayesrank.bt.style_result import StyleFit

        k = self.data.n_players
        d = self.data
        settings = {"ridge": self.ridge, "beta_ridge": self.beta_ridge, "reweight": self.reweight,
                    "min_pair_count": self.min_pair_count if self.reweight else None, **kw.pop("settings", {})}
        return StyleFit(
            method=method, ties=d.ties, players=d.players, score=params[:k], lower=lower[:k], upper=upper[:k],
            features=list(d.features), coef=params[k:], coef_lower=lower[k:], coef_upper=upper[k:], cov=cov,
            plain_score=self.plain_scores(plain_ridge), diagnostics=diagnostics, n_matches=d.matches_per_player(),
            level=self.level, interval=interval, plain_method="mle" if plain_ridge == self.ridge == 0 else
            f"ridge {plain_ridge:g}", n_comparisons=d.n_comparisons, n_rows=d.n_rows,
            n_excluded=d.exclusions.total, exclusions=d.exclusions.to_dict(), transform=d.transform,
            settings=settings, **kw,
        )

    def fit(self, method: str = "mle", *, ci: str = "fisher", n_boot: int = 200, seed: int = 0, draws: int = 1000,
            tune: int = 1000, chains: int = 4, sampler: str = "pymc", progress: bool = False, loo: bool = True,
            target_accept: float | None = None):
        """Fit with ``method`` in :data:`STYLE_METHODS` (see the class docstring); NUTS diagnostics
        carry PSIS-LOO over battles unless ``loo=False``; ``target_accept`` (nuts): NUTS's target
        acceptance rate (the sampler's default when None)."""
        from bayesrank.protocol import Diagnostics

        if method not in STYLE_METHODS:
            raise InputError(f"method must be one of {STYLE_METHODS}, got {method!r}")
        z = self._z()
        a = (1 - self.level) / 2
        if method in ("mle", "bootstrap"):
            res = self.mle()
            point = Diagnostics.optimizer("mle", res.converged, res.gradient_norm, iterations=res.iterations,
                                          status="converged" if res.converged else "not converged")
            if method == "mle":
                if ci not in ("fisher", "sandwich"):
                    raise InputError(f"ci must be 'fisher' or 'sandwich', got {ci!r}")
                cov = covariance(self.data, res.params, res.hessian, ci)
                sd = np.sqrt(np.clip(np.diag(cov), 0, None))
                label = ci
                if ci == "sandwich" and self.data.cluster is not None:
                    label = f"sandwich (clustered by {self.data.cluster_name}, {int(self.data.cluster.max()) + 1} clusters)"
                return self._result("mle", res.params, cov, res.params - z * sd, res.params + z * sd, label, point,
                                    self.ridge)
            boot, failed = self._bootstrap(n_boot, seed, res.params, progress)
            ok = boot[np.all(np.isfinite(boot), axis=1)]
            lo, hi = np.quantile(ok, [a, 1 - a], axis=0)
            diag = Diagnostics.resampling("bootstrap", point, n_boot, failed, "dropped")
            unit = "battles" if self.data.cluster is None else f"clusters of {self.data.cluster_name}"
            return self._result("bootstrap", res.params, np.cov(ok.T), lo, hi,
                                f"percentile ({n_boot} resamples of {unit}, seed {seed})", diag, self.ridge, draws=ok,
                                settings={"n_boot": n_boot, "seed": seed})
        prior_ridge = 1.0 / self.prior_sigma**2
        if method in ("map", "laplace"):
            from bayesrank.bt.pymc_model import map_laplace

            lf = map_laplace(self.model)
            beta = np.atleast_1d(lf.extra.get("beta", np.zeros(0))) if self.data.n_features else np.zeros(0)
            params = np.concatenate([lf.theta, beta])
            _, g, _ = objective(self.data, params, prior_ridge, 1.0 / self.beta_sigma**2)
            g[: self.data.n_players] -= g[: self.data.n_players].mean()  # gradient on the Σθ = 0 space
            diag = Diagnostics.optimizer(method, lf.converged, float(np.linalg.norm(g)), iterations=lf.iterations,
                                         status="converged" if lf.converged else "not converged")
            sd = np.sqrt(np.clip(np.diag(lf.cov), 0, None))
            lower, upper = params - z * sd, params + z * sd
            prior = {"prior_sigma": self.prior_sigma, "beta_sigma": self.beta_sigma}
            if method == "map":
                return self._result("map", params, lf.cov, lower, upper, "Wald (PyMC Hessian)", diag, prior_ridge,
                                    settings=prior)
            rng = np.random.default_rng(seed)
            sample = rng.multivariate_normal(params, lf.cov, size=draws, method="eigh")
            return self._result("laplace", params, lf.cov, lower, upper, "Laplace (Gaussian at the mode)", diag,
                                prior_ridge, draws=sample, settings={**prior, "draws": draws, "seed": seed})
        from bayesrank.bt.pymc_model import sample_nuts

        dt = sample_nuts(self.model, draws=draws, tune=tune, chains=chains, seed=seed, sampler=sampler,
                         progressbar=progress, target_accept=target_accept)
        k = self.data.n_players
        post = dt.posterior
        th = post["theta"].transpose("chain", "draw", "player").values.reshape(-1, k)
        parts = [th]
        names = ["theta"]
        if self.data.n_features:
            parts.append(post["beta"].transpose("chain", "draw", "feature").values.reshape(-1, self.data.n_features))
            names.append("beta")
        sample = np.concatenate(parts, axis=1)
        lo, hi = np.quantile(sample, [a, 1 - a], axis=0)
        extra = {}
        if loo:
            from bayesrank.bt.api import loo_summary

            extra["loo"] = loo_summary(dt)  # PSIS-LOO over battles (each battle one LOO unit)
        diag = Diagnostics.sampler("nuts", dt, var_names=names, **extra)
        return self._result("nuts", sample.mean(axis=0), np.cov(sample.T), lo, hi, "equal-tailed credible", diag,
                            prior_ridge, draws=sample, idata=dt,
                            settings={"prior_sigma": self.prior_sigma, "beta_sigma": self.beta_sigma, "draws": draws,
                                      "tune": tune, "chains": chains, "seed": seed, "sampler": sampler})

    def _bootstrap(self, n_boot, seed, start, progress):
        kw = dict(n_boot=n_boot, seed=seed, ridge=self.ridge, beta_ridge=self.beta_ridge, start=start)
        if not progress:
            return bootstrap_fits(self.data, **kw)
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("bootstrap refits", total=n_boot)
            return bootstrap_fits(self.data, progress=lambda n: bar.advance(task, n), **kw)


def simulate_style_battles(n_players: int = 10, n_battles: int = 5000, beta=(0.5,), theta_sd: float = 1.0,
                           tie_rate: float = 0.0, seed: int = 0, pair_skew: float = 0.0):
    """Battles with known truth: ``(frame, theta, beta)``.

    Feature ``f`` of each response is log-normal (columns ``s{f}_a``, ``s{f}_b``); the battle's
    style difference is the standardised normalised difference (the default transform), so the
    fitted β estimates ``beta``. Ties: with probability ``tie_rate`` a battle is a tie
    (independent of θ). ``pair_skew > 0`` samples pairs unevenly (pair propensity ∝ exp(skew·z)).
    """
    rng = np.random.default_rng(seed)
    beta = np.asarray(beta, dtype=float)
    theta = rng.normal(0, theta_sd, n_players)
    theta -= theta.mean()
    ii, jj = np.triu_indices(n_players, 1)
    prop = np.exp(pair_skew * rng.normal(size=len(ii)))
    pick = rng.choice(len(ii), size=n_battles, p=prop / prop.sum())
    swap = rng.random(n_battles) < 0.5
    a = np.where(swap, jj[pick], ii[pick])
    b = np.where(swap, ii[pick], jj[pick])
    cols = {}
    d = np.zeros((n_battles, len(beta)))
    for f in range(len(beta)):
        xa = rng.lognormal(5.0, 0.6, n_battles)
        xb = rng.lognormal(5.0, 0.6, n_battles)
        raw = (xa - xb) / (xa + xb)
        d[:, f] = (raw - raw.mean()) / raw.std()
        cols[f"s{f}_a"], cols[f"s{f}_b"] = xa, xb
    p = expit(theta[a] - theta[b] + d @ beta)
    u = rng.random(n_battles)
    tie = rng.random(n_battles) < tie_rate
    outcome = np.where(tie, "tie", np.where(u < p, "a", "b"))
    names = np.array([f"p{k:02d}" for k in range(n_players)], dtype=object)
    frame = pd.DataFrame({"model_a": names[a], "model_b": names[b], "outcome": outcome, **cols})
    return frame, pd.Series(theta, index=names), beta
