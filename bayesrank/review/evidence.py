"""The evidence that informs a claim, and the range an audit must search (``relative_to``).

A perturbation's size means something only against the evidence it acts on. Dividing by *all*
comparisons (as Broderick, Giordano & Meager's approximate maximum influence perturbation and
Huang et al.'s "dropping a handful of preferences" do: there every observation informs the one
parameter of interest) makes the fraction a measure of the leaderboard's size on a leaderboard,
where a claim rests on a few players' games: comparisons among unrelated players change the
denominator, not the claim. Here the denominator is the claim's own evidence:

**Effective number of comparisons informing the binding contrast** ``A − B`` (the contrast the
claim's test rests on, :func:`bayesrank.review.pairwise.binding`)::

    v_n = c_n · (x_nᵀ H⁻¹ (e_A − e_B))²          n_eff = (Σ_n v_n)² / Σ_n v_n²

with ``x_n = e_i − e_j`` the design of comparison n, ``c_n`` its Fisher curvature at θ̂
(σ(d)σ(−d) for a decided comparison or a half-win tie) and ``H`` the Fisher information, so that
``Σ_n v_n = (e_A − e_B)ᵀ H⁻¹ (e_A − e_B)`` is the Fisher variance of θ̂_A − θ̂_B and ``v_n`` the
expected squared influence of comparison n on it: n_eff is the inverse Simpson index of the
comparisons' shares of that variance. ``m`` comparisons sharing it equally give n_eff = m; a
comparison without influence on the contrast adds nothing, exactly (games among players joined
to the rest only through one player leave ``x_nᵀ H⁻¹ (e_A − e_B) = 0``); many comparisons of tiny
influence add little (unlike a Kish count of |influence|, which they inflate). With clusters the
units are clusters, ``v_g = Σ_{n∈g} v_n``. The order claim uses ``H⁻¹∇τ_s`` (the audit's smooth
Kendall τ) for ``H⁻¹(e_A − e_B)``.

**The searched range.** The default audit budget of a claim is ``ceil(max(5%, fragile_below) ·
n_eff)`` comparisons per action (step cap 2% of n_eff, no linear early stop), so that "no
witness below the threshold" is a statement about a range the greedy audit searched. A smaller
``--budget`` that finds nothing leaves the claim ``not searched``.
"""

from __future__ import annotations

import math

import numpy as np

DEFAULT_BUDGET_FRACTION = 0.05
STEP_FRACTION = 0.02


def effective_count(v, weight=None) -> float:
    """``(Σ w v)² / Σ w v²`` for units with variance shares ``v`` carried ``weight`` times each
    (aggregated cells: ``weight`` = comparisons of the cell)."""
    v = np.asarray(v, dtype=float)
    w = np.ones_like(v) if weight is None else np.asarray(weight, dtype=float)
    num = float((w * v).sum()) ** 2
    den = float((w * v * v).sum())
    return num / den if den > 0 else 0.0


def tau_gradient(theta: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """∇ of the audit's smooth Kendall τ, ``τ_s(θ) = mean_{a<b} sign(r_a − r_b) tanh((θ_a − θ_b)/T)``
    (``T`` = the median gap between neighbours of the reference ``r``; as
    :class:`bayesrank.influence.objectives.SmoothTau`)."""
    theta = np.asarray(theta, dtype=float)
    ref = np.asarray(reference, dtype=float)
    k = len(theta)
    temp = float(np.median(np.diff(np.sort(ref))))
    if not temp > 0:
        temp = float(np.std(ref)) or 1.0
    t = np.tanh((theta[:, None] - theta[None, :]) / temp)
    w = np.sign(ref[:, None] - ref[None, :]) * (1 - t**2) / temp
    return 2 * w.sum(axis=1) / (k * (k - 1))


def unit_shares(state, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(v, w, cluster)``: per unit of the state's data — an aggregated pair cell of a
    :class:`~bayesrank.influence.state.BTState`, a battle row of a style
    :class:`~bayesrank.influence.covariates.state.StyleState` — the per-comparison share
    ``v = c (xᵀu)²``, the comparisons ``w`` it stands for and its cluster code (None: no clusters)."""
    data = getattr(state, "data", None)
    if data is not None and hasattr(state, "per_battle"):  # row level (comparison rows), with covariates
        freq = data.total
        rows = np.flatnonzero(freq > 0)
        xu = state.x_dot(rows, u)
        _, _, curv = state.per_battle(rows)
        cluster = None if getattr(data, "cluster", None) is None else np.asarray(data.cluster)[rows]
        return curv * xu**2, freq[rows], cluster
    c = state.counts
    _, curv, _ = state.derivatives(c.i, c.j)
    xu = u[c.i] - u[c.j]
    return curv[:, 0] * xu**2, state.effective_weight(), None


def evidence_of(state, u: np.ndarray) -> tuple[float, str]:
    """(effective count, unit) of the direction ``u = H⁻¹g``: comparisons, or clusters when the
    data carry them (``v_g = Σ_{n∈g} w_n v_n``)."""
    v, w, cluster = unit_shares(state, u)
    if cluster is None:
        return effective_count(v, w), "comparisons"
    vg = np.bincount(np.asarray(cluster, dtype=np.int64), weights=w * v)
    return effective_count(vg[vg > 0]), "clusters"


def relative_to(state, claim, pairs, binding_index: int | None, reference=None) -> dict:
    """``{what, n, unit}``: the effective number of comparisons (or clusters) informing the claim's
    binding contrast ``pairs[binding_index]`` (the order claim: the smooth Kendall τ to the
    ``reference`` order, default the state's own θ̂)."""
    players = state.players
    k = len(players)
    g = np.zeros(len(state.hinv))
    if claim.kind == "order":
        theta = np.asarray(state.theta, dtype=float)
        g[:k] = tau_gradient(theta, theta if reference is None else reference)
        what = "the smooth Kendall τ to the reported order"
    else:
        a, b = pairs[binding_index]
        g[a], g[b] = 1.0, -1.0
        what = f"the binding contrast {players[a]} − {players[b]}"
    n, unit = evidence_of(state, state.hinv @ g)
    return {"what": f"effective {unit} informing {what}", "n": n, "unit": unit}


def audit_budget(n_eff: float, fragile_below: float, budget: int | None) -> int:
    """The per-action budget of a claim's audits: the user's ``budget`` or ``ceil(max(5%,
    fragile_below) · n_eff)`` (at least 1)."""
    if budget is not None:
        return int(budget)
    return max(1, math.ceil(max(DEFAULT_BUDGET_FRACTION, fragile_below) * n_eff - 1e-9))


def step_cap(n_eff: float) -> int:
    """The most comparisons one greedy step acts on: 2% of the claim's evidence (at least 1)."""
    return max(1, math.ceil(STEP_FRACTION * n_eff - 1e-9))


COMPLETE_REASONS = ("broken", "not broken within budget", "no remaining action moves", "no candidate actions left",
                    "no remaining capacity")


def searched_to(entry: dict) -> float | None:
    """How far the greedy audit searched: its ``budget_limit`` when it broke the claim, ran to its
    budget or had no action left that moves the claim towards a break; the comparisons it had
    acted on when it stopped otherwise (step limit, a linear early stop); None when not audited."""
    if entry.get("broken") is None:
        return None
    if entry.get("broken") or any(str(entry.get("reason", "")).startswith(r) for r in COMPLETE_REASONS):
        return float(entry.get("budget_limit") or 0)
    curve = entry.get("curve") or []
    return float(curve[-1]["budget"]) if curve else 0.0


def annotate(entry: dict, rel: dict, n_all: float) -> dict:
    """Add ``relative_to``, ``fraction = budget / relative_to.n``, ``fraction_of_all = budget / N``
    and ``searched_to`` to one perturbation entry (in place; returned)."""
    n = rel["n"]
    budget = entry.get("budget")
    entry["relative_to"] = dict(rel)
    entry["fraction"] = None if budget is None or not n > 0 else float(budget) / n
    entry["fraction_of_all"] = None if budget is None else float(budget) / n_all
    entry["searched_to"] = searched_to(entry)
    return entry


def covers(entries: dict, threshold_count: float) -> bool:
    """Whether every audited action searched up to ``threshold_count`` (= fragile_below · n_eff)."""
    reached = [searched_to(e) for e in entries.values()]
    return all(r is not None and r >= threshold_count - 1e-9 for r in reached) and bool(reached)
