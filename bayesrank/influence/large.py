"""Audits of large boards (thousands of players, a sparse comparison graph) without a dense ``H⁻¹``.

A state of such a board (:attr:`BTState.large <bayesrank.influence.state.BTState.large>`) keeps one
sparse factorisation of its Hessian (:mod:`bayesrank.bt.sparse`); every quantity an audit step
needs is a few solves with it:

- **exact refits** by the chord iteration ``θ ← θ − H₀⁻¹∇L'(θ)`` with the current state's factor (a
  step changes a handful of comparisons among hundreds of thousands: a few sweeps), Newton from
  the start given for the cold-start verification;
- **candidate scores** of the margin claims (top-k, pair; point and significance modes): the
  first-order change of the claim's near-binding contrasts ``u`` (``m G · uᵀH⁻¹x``, one solve per
  contrast: the :data:`NEAR` smallest margins) screens every candidate, and the best
  :data:`REFINE` are scored exactly as the dense path does — the one-step Newton
  ``θ + s·H⁻¹x``, ``s = −mG/(1 + mC·xᵀH⁻¹x)`` (one solve per candidate), the claim's criterion at
  that point over all its contrasts — the others get +inf (not chosen in this step; a drop's
  leverage correction can only enlarge a screened score by ``1/(1 − mC a)``, ~1.02 on such boards);
  in the significance mode the variance term is the linear one-step formula (the dense path refines
  the best 32 at a Hessian rebuilt per candidate, ``O(K³)`` each);
- **the significance criterion** ``min_u (θ_a − θ_b − z·sd_u)`` over the claim's contrasts: the sd of
  the contrasts that can bind, by solves — those whose margin, with the reference fit's sd inflated by
  √2 (a perturbation within an audit's budget cannot halve the information), is below the smallest
  exact margin; the reference sds come from one dense ``H⁻¹`` of the unperturbed board.

Actions on a large board add copies of observed comparisons by default (``add_space="observed"``:
new games between players who have met; the all-pairs space has K(K−1)/2 cells, 4.5 million at
3,000 players). Objectives other than the untargeted margins (τ, CI, targeted top-k) use the dense
``H⁻¹`` of each state, formed on demand.
"""

from __future__ import annotations

import numpy as np

from bayesrank.errors import InputError

#: near-binding contrasts whose first-order change screens the candidates
NEAR = 32
#: screened candidates scored by the exact one-step Newton
REFINE = 256
#: sd inflation a perturbation within budget is assumed not to exceed (variance ×2)
SD_INFLATION = np.sqrt(2.0)


# ------------------------------------------------------------------------------- refits
def refit_large(state, counts, x0, cold: bool = False):
    """Exact refit of ``counts`` (same rows) on a large board: chord with ``state``'s factor from θ̂
    (Newton when it does not settle), or Newton from ``x0`` (``cold``: the verification refit)."""
    from bayesrank.bt import sparse
    from bayesrank.bt.mle import diverged
    from bayesrank.data.aggregate import comparison_graph
    from bayesrank.influence.state import BTState, _edges

    c = state.counts
    k = state.n_players
    table = counts.counts
    if state.ridge == 0 and not np.all(_edges(c, table, state.ties) >= _edges(c, c.counts, state.ties)):
        if not comparison_graph(counts, ties=state.ties).finite_mle:
            return state._failed(counts)
    w = counts.weighted_counts()
    factor = None
    if cold:
        res = sparse.newton(c.i, c.j, k, w, state.ties, ridge=state.ridge, start=np.asarray(x0)[:k], tol=1e-11)
        theta, ok, factor = res.theta, res.converged, res.factor
    else:
        th, ok = sparse.chord(c.i, c.j, k, w[None], state.ties, state.factor, state.theta, ridge=state.ridge,
                              tol=1e-11)
        theta, ok = th[0], bool(ok[0])
        if not ok:
            res = sparse.newton(c.i, c.j, k, w, state.ties, ridge=state.ridge, start=state.theta, tol=1e-11)
            theta, ok, factor = res.theta, res.converged, res.factor
    if not ok or not np.all(np.isfinite(theta)) or diverged(theta[None], k, 0)[0]:
        return state._failed(counts)
    new = BTState(counts, state.ties, state.ridge, theta, None, None, penalty=state.penalty, add_rows=state.add_rows)
    if factor is not None:
        new._cache["factor"] = factor
    return new


# ------------------------------------------------------------------------------- contrasts
def supported(objective) -> bool:
    """The objectives scored here: untargeted top-k and pair margins (point and significance modes)."""
    from bayesrank.influence.objectives import PairMargin, TopK

    if isinstance(objective, TopK):
        return objective.target is None and objective.mode in ("point", "significance")
    return isinstance(objective, PairMargin) and objective.mode in ("point", "significance")


def all_contrasts(objective) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) of every contrast θ_a − θ_b > 0 the claim needs."""
    from bayesrank.influence.objectives import TopK

    if isinstance(objective, TopK):
        a, b = np.meshgrid(objective._ins, objective._outs, indexing="ij")
        return a.ravel(), b.ravel()
    return np.array([objective.a]), np.array([objective.b])


def unit_vectors(k: int, a, b) -> np.ndarray:
    u = np.zeros((k, len(a)))
    n = np.arange(len(a))
    u[a, n] += 1.0
    u[b, n] -= 1.0
    return u


def reference_sd(objective, state) -> np.ndarray:
    """sd of every claim contrast on the unperturbed board (one dense H⁻¹ there, cached on the objective)."""
    sd = getattr(objective, "_large_sd0", None)
    if sd is None:
        from bayesrank.influence.objectives import _pair_sd

        a, b = all_contrasts(objective)
        sd = objective._large_sd0 = _pair_sd(state.hinv, a, b)
    return sd


def meat_weights(state) -> np.ndarray:
    """Per row ``Σ_o v² C_o (p − y_o)²``: the sandwich meat ``B = Σ_r b_r x_r x_rᵀ`` of a binary model."""
    c = state.counts
    from bayesrank.influence.state import per_match_derivatives

    s = per_match_derivatives(state.theta[c.i] - state.theta[c.j], state.ties, which=0)
    return (c.counts * s**2).sum(axis=1) * c.weight**2


def contrast_sd(state, a, b, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(sd, H⁻¹u columns) of the contrasts (a, b) on ``state``: Fisher ``sqrt(uᵀH⁻¹u)`` or sandwich
    ``sqrt(wᵀBw)``, ``w = H⁻¹u``."""
    c = state.counts
    w = state.solve(unit_vectors(state.n_players, a, b))
    n = np.arange(len(a))
    if kind == "fisher":
        v = w[a, n] - w[b, n]
    else:
        v = meat_weights(state) @ (w[c.i] - w[c.j]) ** 2
    return np.sqrt(np.maximum(v, 0.0)), w


def significance_margins(objective, state, theta=None, rank_one=None):
    """(value, a, b) of the significance criterion ``min_u (uᵀθ − z·sd_u)`` on ``state`` (module
    docstring), at ``theta`` (default θ̂) and, with ``rank_one = (h, coef)``, with the predicted
    covariance ``H⁻¹ − coef·h hᵀ`` (Fisher)."""
    theta = state.theta if theta is None else theta
    kind = state.covariance_kind(objective.covariance)
    z = objective.level_z
    a, b = all_contrasts(objective)
    gap = theta[a] - theta[b]
    bound = gap - z * SD_INFLATION * reference_sd(objective, state)
    order = np.argsort(bound, kind="stable")
    chosen = np.zeros(len(a), bool)
    chosen[order[:min(16, len(a))]] = True
    cache = state._cache.setdefault("large_sd", {})
    while True:
        idx = np.flatnonzero(chosen)
        need = [q for q in idx if (kind, int(a[q]), int(b[q])) not in cache]
        if need:
            sd, w = contrast_sd(state, a[need], b[need], kind)
            for n, q in enumerate(need):
                cache[(kind, int(a[q]), int(b[q]))] = (sd[n], w[:, n])
        sd = np.array([cache[(kind, int(a[q]), int(b[q]))][0] for q in idx])
        if rank_one is not None:
            h, coef = rank_one
            var = sd**2 - coef * (h[a[idx]] - h[b[idx]]) ** 2
            sd = np.sqrt(np.maximum(var, 0.0))
        m = gap[idx] - z * sd
        best = float(m.min())
        more = ~chosen & (bound < best)
        if not more.any():
            q = idx[int(np.argmin(m))]
            return best, int(a[q]), int(b[q])
        chosen |= more


def contrast_column(state, a: int, b: int) -> np.ndarray:
    """``H⁻¹(e_a − e_b)`` on ``state`` (cached)."""
    cache = state._cache.setdefault("large_w", {})
    key = (int(a), int(b))
    if key not in cache:
        cache[key] = state.solve(unit_vectors(state.n_players, [a], [b]))[:, 0]
    return cache[key]


def near_contrasts(objective, state) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, margin) of the :data:`NEAR` contrasts with the smallest point margins (significance mode:
    the binding contrast first)."""
    a, b = all_contrasts(objective)
    gap = state.theta[a] - state.theta[b]
    order = np.argsort(gap, kind="stable")[:NEAR]
    a, b, gap = a[order], b[order], gap[order]
    if objective.significance:
        _, sa, sb = significance_margins(objective, state)
        keep = ~((a == sa) & (b == sb))
        a, b = np.concatenate([[sa], a[keep]]), np.concatenate([[sb], b[keep]])
        gap = state.theta[a] - state.theta[b]
    return a, b, gap


# ------------------------------------------------------------------------------- predictions
def delta(objective, state, cand, m=1.0, order: str = "1sN") -> np.ndarray:
    """Predicted change of a margin objective's driver for ``m`` applications of each candidate
    (module docstring: screened by first order on the near-binding contrasts, the best
    :data:`REFINE` by the one-step Newton)."""
    m = np.broadcast_to(np.asarray(m, dtype=float), (len(cand),))
    g, c = cand.gc(state)
    a, b, gap = near_contrasts(objective, state)
    w = np.stack([contrast_column(state, x, y) for x, y in zip(a, b)], axis=1)  # (K, U)
    d_first = -(m * g)[:, None] * (w[cand.i] - w[cand.j])  # (n, U) first-order change of each contrast
    if objective.significance:  # the binding contrast (first) carries the dense path's prediction
        f0 = objective.value_at(state)
        screen = d_first[:, 0]
    else:
        f0 = float(objective.values(state.theta[:, None])[0])
        screen = (gap[None, :] + d_first).min(axis=1) - f0
    if order == "first":
        return screen
    out = np.full(len(cand), np.inf)
    best = np.argsort(screen, kind="stable")[:REFINE]
    best = best[np.isfinite(screen[best])]
    if not len(best):
        return out
    hx = state.hx(cand.i[best], cand.j[best])  # (K, N)
    n = np.arange(len(best))
    lev = hx[cand.i[best], n] - hx[cand.j[best], n]
    mb, gb, cb = m[best], g[best], c[best]
    den = 1.0 + mb * cb * lev
    s = -mb * gb / den
    if not objective.significance:
        out[best] = objective.values(state.theta[:, None] + s[None, :] * hx) - f0
        return out
    za, zb = int(a[0]), int(b[0])
    wz = w[:, 0]
    v0 = float(wz[za] - wz[zb])
    point = s * (wz[cand.i[best]] - wz[cand.j[best]])
    hq = state.solve(state.third_derivative_vector(wz))
    xz = wz[cand.i[best]] - wz[cand.j[best]]
    xhq = hq[cand.i[best]] - hq[cand.j[best]]
    dv = (-mb * cb * xz**2 + mb * gb * xhq) / den
    kind = state.covariance_kind(objective.covariance)
    rho = 1.0
    if kind != "fisher":
        sd_s, _ = contrast_sd(state, np.array([za]), np.array([zb]), kind)
        rho = float(sd_s[0] / np.sqrt(v0))
    out[best] = point + objective.z * rho * (np.sqrt(np.maximum(v0 + dv, 0.0)) - np.sqrt(v0))
    return out


class RankOne:
    """The predicted covariance ``H⁻¹ − coef·h hᵀ`` of one candidate (Sherman–Morrison), kept as its
    vector: a large board never forms it."""

    def __init__(self, h: np.ndarray, coef: float):
        self.h, self.coef = h, float(coef)


def predicted_hinv(state, cand, idx: int, m: float) -> RankOne:
    _, (c,) = cand.take([idx]).gc(state)
    h = state.hx(cand.i[idx], cand.j[idx])
    a = float(h[cand.i[idx]] - h[cand.j[idx]])
    return RankOne(h, m * c / (1 + m * c * a))


def check_large(objective, state) -> None:
    if not supported(objective):
        raise InputError("internal: the large-board audit scores untargeted top-k and pair margins only")
