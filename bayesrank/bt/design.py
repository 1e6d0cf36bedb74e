"""Where more comparisons settle a Bradley–Terry claim: the design that makes the claim's contrasts
significant with a target power, if the fitted scores were true.

**Information.** A comparison of i and j carries Fisher information ``w_ij = p_ij(1 − p_ij)``
(``p_ij = σ(θ_i − θ_j)`` at the fitted scores) about ``θ_i − θ_j``; a tie scored as half a win
(``ties="half"``) has the same Hessian weight, a dropped tie (``ties="drop"``) none, so a new
comparison of the pair carries ``(1 − τ_ij) w_ij`` there (τ_ij: the pair's tie share, else the
data's). The information of a design with ``n_ij`` comparisons per pair is the weighted Laplacian
``L = Σ n_ij w_ij (e_i − e_j)(e_i − e_j)ᵀ``; grounded at the player of largest degree (θ_g = 0, a
gauge as good as sum-to-zero for contrasts) it is positive definite on a connected graph, and
``Var(c'θ̂) = c'L_g⁻¹c`` for a contrast c (dense Cholesky up to :data:`DENSE_MAX` players, sparse LU
above). Where the review's covariance is not the model's (the sandwich with ties, clusters),
each contrast's variance is scaled by ``ρ_j = reported var / model var`` on the data in hand.

**Power** (:class:`Power`) of the claim's intersection–union test — every contrast
``γ̂_j / sd_j > z`` — if the fitted contrasts γ were true: ``P(∀j: Z_j > z − γ_j / sd_j)`` with
``Z ~ N(0, R)``, R the contrasts' correlation at the design, by Monte Carlo over fixed normals
(:data:`N_NORMALS`, one seed: a smooth, reproducible function of the design). Every outcome of
the design (old pairs and new) is drawn from the model: the design's power, as a sample size
formula states it.

**Plan** (:func:`plan`): the smallest number of added comparisons, and their pairs, with power ≥
the target. Contrasts with ``γ/sd − z ≥ 7`` are dropped (certain already). For a total N the
shares π over candidate pairs maximise ``Σ_j log Φ(γ_j / sd_j(π) − z)`` by Frank–Wolfe (the
gradient in π_e is ``Σ_j φ/Φ(s_j)·γ_j ρ_j^{1/2} N w_e (c_j'L⁻¹u_e)² / (2 V_j^{3/2})``, u_e = e_a − e_b);
the design is also re-optimised on the pairs with shares of at least :data:`PRUNE` (kept unless
the full design needs :data:`PRUNED_SLACK` times fewer comparisons), counts rounded by largest remainder, and N found by
doubling and integer bisection on the Monte Carlo power (the searches on the first
:data:`COARSE_NORMALS` normals, the final total bisected again on all of them); shares and N are re-optimised until N
settles. The comparators: the same bisection for uniform allocation over the claim's own pairs and
for allocation in proportion to the existing pair counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

DENSE_MAX = 600  # players: dense Cholesky up to this size, sparse LU above
N_NORMALS = 20_000
COARSE_NORMALS = 2_000  # the searches' Monte Carlo; the final total is bisected again on all N_NORMALS
NEGLIGIBLE = 6.0  # z − γ/sd below −6: the contrast fails with probability Φ(−6) ≈ 1e-9
CERTAIN = 7.0  # γ/sd − z at or above this: the contrast is significant with probability 1 − 1e-12
PRUNE = 0.005  # shares below this are dropped before rounding
PRUNED_SLACK = 1.05  # the pruned design is kept unless the unpruned one needs 5% fewer comparisons
CAP = 10**9  # more added comparisons than this: not settleable
FW_ITER = 100
ALL_PAIRS_MAX = 20_000  # candidate pairs: every pair of players up to this many pairs


def _expit(x):
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=float)))


class Design:
    """Unordered pair counts and per-comparison Fisher weights at the fitted scores (module
    docstring). ``players`` (K,), ``theta`` (K,) scores; ``i``, ``j``, ``n`` the existing
    comparisons per pair (repeats summed); ``ties``: ``"half"`` (binary model included) or
    ``"drop"``; ``tie_share`` per pair (drop: the share of the pair's comparisons that were ties)."""

    def __init__(self, players, theta, i, j, n, ties: str = "half", tie_share=None):
        self.players = np.asarray(players, dtype=object)
        self.theta = np.asarray(theta, dtype=float)
        k = len(self.players)
        i, j, n = np.asarray(i, np.int64), np.asarray(j, np.int64), np.asarray(n, float)
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        key = lo * k + hi
        uk, inv = np.unique(key, return_inverse=True)
        self.i, self.j = (uk // k).astype(np.int64), (uk % k).astype(np.int64)
        self.n = np.bincount(inv, weights=n, minlength=len(uk))
        if ties not in ("half", "drop"):
            raise ValueError(f"design for ties={ties!r}: only the half-win (and binary) and drop-ties models")
        self.ties = ties
        ts = np.zeros(len(n)) if tie_share is None else np.asarray(tie_share, float)
        tied = np.bincount(inv, weights=ts * n, minlength=len(uk))
        self.tie_share = np.where(self.n > 0, tied / np.where(self.n > 0, self.n, 1.0), 0.0)
        total = float(self.n.sum())
        self.overall_tie_share = float(tied.sum() / total) if total > 0 else 0.0
        self.k = k
        deg = np.bincount(self.i, weights=self.n * self.weight(self.i, self.j), minlength=k) + np.bincount(
            self.j, weights=self.n * self.weight(self.i, self.j), minlength=k)
        self.ground = int(np.argmax(deg))
        self._index = {int(a) * k + int(b): e for e, (a, b) in enumerate(zip(self.i, self.j))}

    @classmethod
    def from_fit(cls, fit) -> Design:
        """The design of a Bradley–Terry fit (``LeaderboardFit``): its pair rows and scores."""
        rows = fit.counts
        c = np.asarray(rows.counts, float)
        w = rows.weight if getattr(rows, "_weight", None) is not None else 1.0
        tot = c.sum(axis=1) * w
        share = np.where(tot > 0, c[:, 2] * w / np.where(tot > 0, tot, 1.0), 0.0)
        ties = "drop" if fit.ties == "drop" else "half"
        return cls(fit.players, fit.score, rows.i, rows.j, tot, ties=ties, tie_share=share)

    # ------------------------------------------------------------------ weights
    def weight(self, a, b) -> np.ndarray:
        """Fisher information per comparison about θ_a − θ_b, ``p(1 − p)``."""
        p = _expit(self.theta[np.asarray(a)] - self.theta[np.asarray(b)])
        return p * (1.0 - p)

    def new_weight(self, a, b) -> np.ndarray:
        """Information per NEW comparison of (a, b): ``w`` (half/binary), ``(1 − τ) w`` (drop ties)."""
        a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
        w = self.weight(a, b)
        if self.ties != "drop":
            return w
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        tau = np.array([self.tie_share[self._index[int(x) * self.k + int(y)]]
                        if int(x) * self.k + int(y) in self._index else self.overall_tie_share
                        for x, y in zip(lo, hi)])
        return (1.0 - tau) * w

    def existing_information(self) -> np.ndarray:
        """Per existing pair: ``n w`` (drop ties: the decisive comparisons only)."""
        n = self.n * (1.0 - self.tie_share) if self.ties == "drop" else self.n
        return n * self.weight(self.i, self.j)

    # ------------------------------------------------------------------ information and solves
    def information(self, a=(), b=(), info=()):
        """The grounded Laplacian of the existing design plus pairs (a, b) with information ``info``."""
        ii = np.concatenate([self.i, np.asarray(a, np.int64)])
        jj = np.concatenate([self.j, np.asarray(b, np.int64)])
        ww = np.concatenate([self.existing_information(), np.asarray(info, float)])
        return _grounded_laplacian(ii, jj, ww, self.k, self.ground)

    def contrast_matrix(self, pairs) -> np.ndarray:
        """(K − 1, m) columns e_a − e_b in the grounded coordinates."""
        keep = np.delete(np.arange(self.k), self.ground)
        pos = -np.ones(self.k, dtype=np.int64)
        pos[keep] = np.arange(self.k - 1)
        c = np.zeros((self.k - 1, len(pairs)))
        for col, (a, b) in enumerate(pairs):
            if pos[a] >= 0:
                c[pos[a], col] += 1.0
            if pos[b] >= 0:
                c[pos[b], col] -= 1.0
        return c

    def solver(self, m):
        """A function x ↦ M⁻¹x for the grounded information M (dense Cholesky / sparse LU)."""
        return _solver(m, self.k - 1)

    def contrast_cov(self, pairs, a=(), b=(), info=()) -> np.ndarray:
        """Model covariance of the contrasts ``θ_a − θ_b`` of ``pairs`` at the design plus additions."""
        c = self.contrast_matrix(pairs)
        y = self.solver(self.information(a, b, info))(c)
        return c.T @ y

    def grounded_index(self) -> np.ndarray:
        """Player → row of the grounded coordinates (−1 for the ground)."""
        pos = -np.ones(self.k, dtype=np.int64)
        keep = np.delete(np.arange(self.k), self.ground)
        pos[keep] = np.arange(self.k - 1)
        return pos


def _grounded_laplacian(i, j, w, k: int, ground: int):
    keep = np.delete(np.arange(k), ground)
    pos = -np.ones(k, dtype=np.int64)
    pos[keep] = np.arange(k - 1)
    if k - 1 <= DENSE_MAX:
        lap = np.zeros((k, k))
        np.add.at(lap, (i, j), -w)
        np.add.at(lap, (j, i), -w)
        d = np.bincount(i, weights=w, minlength=k) + np.bincount(j, weights=w, minlength=k)
        lap[np.arange(k), np.arange(k)] += d
        return lap[np.ix_(keep, keep)]
    from scipy import sparse

    d = np.bincount(i, weights=w, minlength=k) + np.bincount(j, weights=w, minlength=k)
    rows = np.concatenate([i, j, np.arange(k)])
    cols = np.concatenate([j, i, np.arange(k)])
    vals = np.concatenate([-w, -w, d])
    ok = (pos[rows] >= 0) & (pos[cols] >= 0)
    return sparse.csc_matrix((vals[ok], (pos[rows[ok]], pos[cols[ok]])), shape=(k - 1, k - 1))


def _solver(m, size: int):
    if isinstance(m, np.ndarray):
        from scipy.linalg import cho_factor, cho_solve

        f = cho_factor(m, lower=True, check_finite=False)
        return lambda x: cho_solve(f, x, check_finite=False)
    from scipy.sparse.linalg import splu

    lu = splu(m.tocsc())
    return lambda x: lu.solve(np.asarray(x, dtype=float))


# ---------------------------------------------------------------------------------- power
class Power:
    """Power of the intersection–union test of ``pairs`` (every ``θ_a − θ_b`` significant at critical
    value ``z``) on a design, if the contrasts ``gamma`` were true; ``rho`` scales each contrast's
    model variance to the reported one. Monte Carlo over :data:`N_NORMALS` fixed normals."""

    def __init__(self, design: Design, pairs, gamma, z: float, rho=None, seed: int = 0, n_normals: int = N_NORMALS):
        self.design = design
        self.pairs = [(int(a), int(b)) for a, b in pairs]
        self.gamma = np.asarray(gamma, float)
        self.z = float(z)
        self.rho = np.ones(len(self.pairs)) if rho is None else np.asarray(rho, float)
        self.normals = np.random.default_rng([seed, 2026]).standard_normal((n_normals, len(self.pairs)))

    def covariance(self, a=(), b=(), n=()) -> np.ndarray:
        """The contrasts' (ρ-scaled) covariance with ``n`` comparisons added to pairs (a, b)."""
        d = self.design
        info = np.asarray(n, float) * d.new_weight(a, b) if len(a) else ()
        v = d.contrast_cov(self.pairs, a, b, info)
        s = np.sqrt(self.rho)
        return v * np.outer(s, s)

    def coarse(self, n_normals: int = COARSE_NORMALS) -> Power:
        """The same power on the first ``n_normals`` of the normals (the plan's searches)."""
        out = Power.__new__(Power)
        out.__dict__.update(self.__dict__)
        out.normals = self.normals[:n_normals]
        return out

    def from_cov(self, v: np.ndarray) -> float:
        """Power at the contrasts' covariance ``v``; contrasts with ``z − γ/sd < −`` :data:`NEGLIGIBLE`
        (failing with probability < 1e-9 each) are left out of the Monte Carlo."""
        from scipy.special import ndtr

        sd = np.sqrt(np.clip(np.diag(v), 1e-300, None))
        shift = self.z - self.gamma / sd
        keep = np.flatnonzero(shift > -NEGLIGIBLE)
        if len(keep) == 0:
            return 1.0
        if len(keep) == 1:
            return float(ndtr(-shift[keep[0]]))
        sub = v[np.ix_(keep, keep)] / np.outer(sd[keep], sd[keep])
        vals, vecs = np.linalg.eigh((sub + sub.T) / 2)
        root = vecs * np.sqrt(np.clip(vals, 0.0, None))
        zz = self.normals[:, keep] @ root.T
        return float(np.mean(np.all(zz > shift[keep], axis=1)))

    def __call__(self, a=(), b=(), n=()) -> float:
        return self.from_cov(self.covariance(a, b, n))


# ---------------------------------------------------------------------------------- plan
@dataclass
class Plan:
    """The smallest design found: ``additional`` comparisons in ``allocation`` (player a, player b,
    count), its ``power``; ``power_now`` (the data in hand), the comparators' totals (None: above the
    cap), ``settleable`` and ``why`` when not."""

    additional: int | None
    allocation: list = field(default_factory=list)
    power: float | None = None
    power_now: float | None = None
    uniform_additional: int | None = None
    proportional_additional: int | None = None
    settleable: bool = True
    why: str = ""
    n_contrasts: int = 0
    n_candidates: int = 0


def largest_remainder(total: int, shares: np.ndarray) -> np.ndarray:
    """Integer counts summing to ``total`` in proportion to ``shares`` (Hamilton's method)."""
    shares = np.asarray(shares, float)
    q = total * shares / shares.sum()
    base = np.floor(q).astype(np.int64)
    left = int(total - base.sum())
    if left > 0:
        order = np.argsort(-(q - base), kind="stable")
        base[order[:left]] += 1
    return base


def smallest_total(power_at, target: float, cap: int = CAP, start: int = 1) -> int | None:
    """Smallest integer N ≥ 1 with ``power_at(N) ≥ target`` (power increasing in N): doubling up
    (or halving down) from ``start``, then bisection; None above ``cap``."""
    hi = max(1, int(start))
    if power_at(hi) >= target:
        lo = hi // 2
        while lo >= 1 and power_at(lo) >= target:
            hi, lo = lo, lo // 2
    else:
        while power_at(hi) < target:
            hi *= 2
            if hi > 2 * cap:
                return None
        lo = hi // 2  # power_at(lo) < target
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if power_at(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi if hi <= cap else None


def _frank_wolfe(power: Power, ca, cb, total: float, start: np.ndarray, iters: int = FW_ITER) -> np.ndarray:
    """Shares over candidate pairs (ca, cb) maximising Σ log Φ(γ_j/sd_j − z) at ``total`` added
    comparisons: pairwise Frank–Wolfe (mass moves from the support's worst pair to the best pair,
    exact line search), which converges linearly on the simplex."""
    from scipy.optimize import minimize_scalar
    from scipy.special import log_ndtr

    d = power.design
    unit = d.new_weight(ca, cb)
    pos = d.grounded_index()
    c = d.contrast_matrix(power.pairs)
    pi = np.asarray(start, float).copy()
    pi /= pi.sum()
    srho = np.sqrt(power.rho)
    ia, ib = np.where(pos[ca] >= 0, pos[ca], -1), np.where(pos[cb] >= 0, pos[cb], -1)

    base = d.information()
    dense = isinstance(base, np.ndarray)

    def information(p):
        if not dense:
            return d.information(ca, cb, total * p * unit)
        m = base.copy()
        e = np.flatnonzero(p > 0)
        _add_pairs(m, ia[e], ib[e], total * p[e] * unit[e])
        return m

    def objective(p, m=None):
        m = information(p) if m is None else m
        y = d.solver(m)(c)  # (K−1, m)
        v = np.einsum("ij,ij->j", c, y)
        s = power.gamma / (srho * np.sqrt(v)) - power.z
        return y, v, s, float(np.sum(log_ndtr(s)))

    f_old = -np.inf
    for _ in range(iters):
        y, v, s, f = objective(pi)
        ypad = np.vstack([y, np.zeros((1, y.shape[1]))])  # the ground's row: 0
        q = ypad[ia] - ypad[ib]
        mills = np.exp(-0.5 * s**2 - log_ndtr(s)) / np.sqrt(2 * np.pi)
        lam = mills * power.gamma / (2 * srho * v**1.5)
        grad = total * unit * (q**2 @ lam)
        best = int(np.argmax(grad))
        support = np.flatnonzero(pi > 0)
        worst = int(support[np.argmin(grad[support])])
        if best == worst or grad[best] - grad[worst] <= 1e-12 * max(abs(grad[best]), 1e-300):
            break
        room = pi[worst]
        here = information(pi) if dense else None

        def neg(t, best=best, worst=worst, here=here):
            if dense:
                m = here.copy()
                _add_pairs(m, ia[[best, worst]], ib[[best, worst]],
                           total * t * np.array([unit[best], -unit[worst]]))
                return -objective(None, m)[3]
            p = pi.copy()
            p[best] += t
            p[worst] -= t
            return -objective(p)[3]

        r = minimize_scalar(neg, bounds=(0.0, room), method="bounded", options={"xatol": 1e-3 * room + 1e-12})
        t = room if neg(room) <= r.fun else float(r.x)
        if -neg(t) <= f + 1e-13:
            break
        pi[best] += t
        pi[worst] -= t
        pi[pi < 1e-12] = 0.0
        if f - f_old < 1e-11 * abs(f) and _ > 50:
            break
        f_old = f
    return pi


def _add_pairs(m: np.ndarray, ia, ib, w) -> None:
    """Add ``w (e_a − e_b)(e_a − e_b)ᵀ`` to a dense grounded Laplacian (index −1: the ground)."""
    ia, ib, w = np.asarray(ia), np.asarray(ib), np.asarray(w, float)
    a_ok, b_ok = ia >= 0, ib >= 0
    np.add.at(m, (ia[a_ok], ia[a_ok]), w[a_ok])
    np.add.at(m, (ib[b_ok], ib[b_ok]), w[b_ok])
    both = a_ok & b_ok
    np.add.at(m, (ia[both], ib[both]), -w[both])
    np.add.at(m, (ib[both], ia[both]), -w[both])


def _candidates(design: Design, pairs) -> tuple[np.ndarray, np.ndarray]:
    """Candidate pairs for added comparisons: every pair of players when there are at most
    :data:`ALL_PAIRS_MAX`; else every pair among the players of the contrasts (or the contrasts' own
    pairs when those are too many too)."""
    k = design.k
    if k * (k - 1) // 2 <= ALL_PAIRS_MAX:
        players = np.arange(k)
    else:
        players = np.unique(np.array(pairs).ravel())
        if len(players) * (len(players) - 1) // 2 > ALL_PAIRS_MAX:
            u = sorted({(min(a, b), max(a, b)) for a, b in pairs})
            return np.array([p[0] for p in u]), np.array([p[1] for p in u])
    ia, ib = np.triu_indices(len(players), 1)
    return players[ia].astype(np.int64), players[ib].astype(np.int64)


def plan(design: Design, pairs, gamma, z: float, rho=None, target: float = 0.8, seed: int = 0,
         cap: int = CAP) -> Plan:
    """The smallest allocation of added comparisons reaching ``target`` power (module docstring).
    ``pairs``: the claim's contrasts (a, b) for θ_a − θ_b > 0; ``gamma``: their fitted values (all
    > 0); ``z``: the claim's critical value; ``rho``: reported / model variance per contrast."""
    pairs = [(int(a), int(b)) for a, b in pairs]
    gamma = np.asarray(gamma, float)
    rho = np.ones(len(pairs)) if rho is None else np.asarray(rho, float)
    if not np.all(gamma > 0):
        return Plan(None, settleable=False, why="the claim is false (or tied) at the estimate")
    v0 = design.contrast_cov(pairs) * np.outer(np.sqrt(rho), np.sqrt(rho))
    margin = gamma / np.sqrt(np.diag(v0)) - z
    live = margin < CERTAIN
    full = Power(design, pairs, gamma, z, rho, seed)
    now = full.from_cov(v0)
    if not live.any():
        return Plan(0, [], now, now, 0, 0, n_contrasts=0)
    pairs_l = [p for p, ok in zip(pairs, live) if ok]
    pw = Power(design, pairs_l, gamma[live], z, rho[live], seed)
    now_l = pw.from_cov(v0[np.ix_(live, live)])
    if now_l >= target:
        return Plan(0, [], now_l, now_l, 0, 0, n_contrasts=int(live.sum()))
    ca, cb = _candidates(design, pairs_l)
    fine, pw = pw, pw.coarse()

    def counts_power(a, b, shares, power=None):
        memo: dict = {}
        power = power or pw

        def at(total):
            if total not in memo:
                memo[total] = power(a, b, largest_remainder(total, shares))
            return memo[total]
        return at

    # comparators: uniform over the claim's own pairs; in proportion to the existing pair counts
    own = sorted({(min(a, b), max(a, b)) for a, b in pairs_l})
    oa, ob = np.array([p[0] for p in own]), np.array([p[1] for p in own])
    uniform = smallest_total(counts_power(oa, ob, np.ones(len(own))), target, cap)
    proportional = smallest_total(counts_power(design.i, design.j, design.n), target, cap)
    if uniform is not None:
        uniform = smallest_total(counts_power(oa, ob, np.ones(len(own)), fine), target, cap, start=uniform)
    if proportional is not None:
        proportional = smallest_total(counts_power(design.i, design.j, design.n, fine), target, cap,
                                      start=proportional)
    # the optimum: Frank–Wolfe on the shares at N, N by bisection at those shares, until N settles
    index = {(int(a), int(b)): e for e, (a, b) in enumerate(zip(ca, cb))}
    start = np.zeros(len(ca))
    for p in own:
        start[index[p]] = 1.0
    total = uniform if uniform is not None else (proportional or cap)
    shares, best = start, None
    for _ in range(3):
        shares = _frank_wolfe(pw, ca, cb, float(total), shares)
        # as optimised, and pruned (shares < PRUNE dropped, re-optimised on the pairs kept): the smaller total
        keep = np.flatnonzero(shares >= PRUNE)
        pruned = np.zeros(len(ca))
        pruned[keep] = _frank_wolfe(pw, ca[keep], cb[keep], float(total), shares[keep])
        found = None
        for sh, slack in ((pruned, 1.0), (shares, 1.0 / PRUNED_SLACK)):  # the pruned design unless ≥ 5% larger
            need = smallest_total(counts_power(ca, cb, sh), target, cap, start=total)
            if need is not None and (found is None or need * slack < found[0]):
                found = (need, sh)
        if found is None:
            break
        if best is None or found[0] < best[0]:
            best = found
        if abs(found[0] - total) <= max(1, 0.02 * total):
            break
        total = found[0]
    if best is None:
        return Plan(None, settleable=False, why=f"more than {cap:,} added comparisons would be needed",
                    power_now=now, uniform_additional=uniform, proportional_additional=proportional,
                    n_contrasts=int(live.sum()), n_candidates=len(ca))
    need, kept = best
    need = smallest_total(counts_power(ca, cb, kept, fine), target, cap, start=need)
    if need is None:
        return Plan(None, settleable=False, why=f"more than {cap:,} added comparisons would be needed",
                    power_now=now, uniform_additional=uniform, proportional_additional=proportional)
    n = largest_remainder(need, kept)
    used = np.flatnonzero(n > 0)
    order = used[np.argsort(-n[used], kind="stable")]
    alloc = [(int(ca[e]), int(cb[e]), int(n[e])) for e in order]
    achieved = full(ca[order], cb[order], n[order])
    return Plan(int(need), alloc, achieved, now, uniform, proportional, n_contrasts=int(live.sum()),
                n_candidates=len(ca))


def c_optimal_variance(design: Design, a: int, b: int, total: float, ca, cb, shares) -> float:
    """``Var(θ_a − θ_b)`` with ``total`` comparisons added in ``shares`` over pairs (ca, cb)."""
    info = total * np.asarray(shares, float) * design.new_weight(ca, cb)
    return float(design.contrast_cov([(a, b)], ca, cb, info)[0, 0])
