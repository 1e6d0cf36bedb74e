"""Feature differences of pair rows (style control): which columns, which transform, which scaling.

A feature is a pair of numeric columns ``(a_col, b_col)``: the value of the first-listed and of
the second-listed side of each comparison (e.g. the lengths of the two responses). Its row value
is, by default (LMArena's style control, arena-rank's contextual Bradley–Terry example), the
*normalised difference* ``(x_a − x_b)/(x_a + x_b)`` (0 when ``x_a + x_b = 0``), then
*standardised* over the comparisons (mean 0, SD 1, frequency-weighted; ``standardize=
"center_scale"``). Centring adds the constant ``−β·mean/sd`` to every row's logit, i.e. an
implicit position effect tied to β (LMArena's choice); ``standardize="scale"`` divides by the root
mean square only and keeps features antisymmetric (swapping a and b negates the row); ``"none"``
keeps the raw difference. ``transform="diff"`` uses ``x_a − x_b``.

Each feature's ``transform`` record (columns, transform, standardisation, mean, SD) travels with
the rows, so a fit says how its coefficients were defined.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from bayesrank.errors import InputError

TRANSFORMS = ("normalized_diff", "diff")
STANDARDIZE = ("center_scale", "scale", "none")


class CentredReferenceWarning(UserWarning):
    """Centred features on data where one player is in every comparison (:func:`warn_if_centred_reference`)."""


def parse_style(spec) -> list[tuple[str, str]]:
    """``"A_COL:B_COL[,A_COL:B_COL...]"`` (or a list of pairs) → ``[(a_col, b_col), ...]``."""
    if spec is None:
        return []
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


def style_feature(xa: np.ndarray, xb: np.ndarray, transform: str = "normalized_diff") -> np.ndarray:
    """Raw difference of one feature: ``(x_a − x_b)/(x_a + x_b)`` (0 where the sum is 0) or ``x_a − x_b``."""
    if transform == "diff":
        return xa - xb
    tot = xa + xb
    return np.divide(xa - xb, tot, out=np.zeros_like(tot), where=tot != 0)


def numeric_column(frame: pd.DataFrame, col: str) -> np.ndarray:
    """Column ``col`` as floats; errors name the rows' places in the input (file lines when the
    frame came from a file: :func:`bayesrank.data.comparisons.describe_rows`)."""
    from bayesrank.data.comparisons import describe_rows

    if col not in frame.columns:
        raise InputError(f"--style: no column {col!r}; the data have columns {list(frame.columns)}")
    v = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(v)
    if bad.any():
        raise InputError(f"{describe_rows(frame, np.flatnonzero(bad))}: column {col!r} has a missing or "
                         f"non-numeric style value ({int(bad.sum())} rows); expected finite numbers")
    return v


def check_options(transform: str, standardize: str) -> None:
    if transform not in TRANSFORMS:
        raise InputError(f"transform must be one of {TRANSFORMS}, got {transform!r}")
    if standardize not in STANDARDIZE:
        raise InputError(f"standardize must be one of {STANDARDIZE}, got {standardize!r}")


def feature_matrix(frame: pd.DataFrame, style, freq: np.ndarray, transform: str = "normalized_diff",
                   standardize: str = "center_scale"):
    """(X (N, p), names, transform records) of the style column pairs (module docstring); ``freq``
    are the rows' frequency weights (standardisation is over comparisons). The normalised difference
    needs values >= 0 (counts, lengths): a negative value is an error naming its place."""
    from bayesrank.data.comparisons import describe_rows

    check_options(transform, standardize)
    cols, names, info = [], [], {}
    for a_col, b_col in parse_style(style):
        xa, xb = numeric_column(frame, a_col), numeric_column(frame, b_col)
        if transform == "normalized_diff":
            for col, x in ((a_col, xa), (b_col, xb)):
                if (x < 0).any():
                    raise InputError(f"{describe_rows(frame, np.flatnonzero(x < 0))}: column {col!r} "
                                     f"has negative style values ({int((x < 0).sum())} rows); the normalised difference "
                                     "(x_a − x_b)/(x_a + x_b) needs values >= 0 (counts, lengths): pass "
                                     "--style-transform diff for signed features")
        raw = style_feature(xa, xb, transform)
        used = raw[np.asarray(freq) > 0] if len(raw) else raw
        if len(used) and np.ptp(used) == 0:
            what = "(x_a − x_b)/(x_a + x_b)" if transform == "normalized_diff" else "x_a − x_b"
            raise InputError(f"--style {a_col}:{b_col}: the feature has no variation ({what} = {used[0]:g} in every "
                             f"comparison), so its coefficient cannot be estimated; expected columns whose "
                             "difference varies between comparisons: drop this pair from --style")
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
    _check_independent(X, names, info, np.asarray(freq) > 0)
    return X, names, info


def _check_independent(X: np.ndarray, names: list[str], info: dict, used: np.ndarray) -> None:
    """Every feature must vary independently of the earlier ones: a feature that is a linear
    combination of others (the same pair twice, a copy under another name) is bad input naming it."""
    if X.shape[1] < 2:
        return
    Z = X[used]
    Z = Z - Z.mean(axis=0)
    for q in range(1, Z.shape[1]):
        earlier = Z[:, :q]
        coef, *_ = np.linalg.lstsq(earlier, Z[:, q], rcond=None)
        resid = Z[:, q] - earlier @ coef
        if np.linalg.norm(resid) <= 1e-9 * max(np.linalg.norm(Z[:, q]), 1e-300):
            rec = info[names[q]]
            others = [f"{info[n]['a_col']}:{info[n]['b_col']}" for n, c in zip(names[:q], coef) if abs(c) > 1e-9]
            raise InputError(f"--style {rec['a_col']}:{rec['b_col']}: the feature is a linear combination of "
                             f"{', '.join(others)} in every comparison, so their coefficients cannot be "
                             "told apart; expected features that vary independently: drop one of them from --style")


def cluster_codes(frame: pd.DataFrame, cluster: str | None):
    """(integer codes 0..G−1 by first appearance, the label of each code) of the cluster column, or
    (None, None); a row without a label is an error naming its place."""
    if cluster is None:
        return None, None
    if cluster not in frame.columns:
        raise InputError(f"--cluster: no column {cluster!r}; the data have columns {list(frame.columns)}")
    missing = frame[cluster].isna().to_numpy()
    if missing.any():
        from bayesrank.data.comparisons import describe_rows

        raise InputError(f"{describe_rows(frame, np.flatnonzero(missing))}: column {cluster!r} has no "
                         f"cluster label ({int(missing.sum())} rows)")
    codes, labels = pd.factorize(frame[cluster])
    return codes.astype(np.int64), np.asarray(labels, dtype=object)


def equal_style(features, transform: dict) -> np.ndarray:
    """(p,) the model's feature values of a comparison between players of equal style: each
    feature's raw difference 0 (both transforms give 0 when x_a = x_b) put through its
    standardisation, ``(0 − mean)/sd`` (0 for a feature without a transform record)."""
    out = np.zeros(len(features))
    for q, name in enumerate(features):
        rec = transform.get(name) or {}
        out[q] = -float(rec.get("mean", 0.0)) / float(rec.get("sd", 1.0))
    return out


def warn_if_centred_reference(rows, standardize: str) -> None:
    """Centring adds ``−β·mean/sd`` to every comparison's logit; when one player takes part in every
    comparison (AlpacaEval's reference) that constant moves only that player's score against all the
    others, so the style-adjusted ranking depends on the centring. Warn and name the fix."""
    if standardize != "center_scale" or not rows.n_features:
        return
    k = rows.n_players
    every = np.bincount(rows.i, minlength=k) + np.bincount(rows.j, minlength=k) == rows.n_rows
    if k > 2 and every.any():
        import warnings

        ref = str(rows.players[np.flatnonzero(every)[0]])
        warnings.warn(f"every battle involves {ref!r}: centring the style features (standardize='center_scale') "
                      f"acts as a position effect tied to beta and shifts only {ref!r} against the others; use "
                      f"standardize='scale' (--style-standardize scale) for such data", CentredReferenceWarning,
                      stacklevel=3)
