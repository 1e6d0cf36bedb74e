"""The log posterior of the Bradley–Terry PyMC model (:func:`bayesrank.bt.pymc_model.build_bt_model`)
and its gradient, written by hand for NUTS (:func:`bayesrank.stats.nuts.sample_logp`).

Coordinates are the PyMC model's value variables, in its order: ``z`` (K−1, the ZeroSumNormal's
``theta_zerosum__``) [, ``α``] [, ``β`` (F)] [, ``λ = log ν``]. θ = B z with PyMC's
``ZeroSumTransform`` (an isometry onto Σθ = 0: ``s = Σz``, ``θ_q = z_q − s/(√K + K)`` for q < K−1,
``θ_{K−1} = −s/√K``), so the prior adds ``−‖z‖²/(2σ²)`` and no Jacobian. Per row r with linear
predictor ``d_r = θ_i − θ_j [+ α] [+ X_r β]`` and counts ``c = v·(w_i, w_j, t)``:

* half / drop (binary): ``w log σ(d) + (n − w) log σ(−d)`` with ``(w, n)`` the tie model's effective
  wins and comparisons (fractional counts allowed), ``∂/∂d = w − n σ(d)``;
* Davidson: ``c_0 d/2 − c_1 d/2 + c_2 λ − N log(e^{d/2} + e^{−d/2} + e^λ)``, ``∂/∂d = (c_0 − c_1)/2 −
  N (p_0 − p_1)/2``, ``∂/∂λ = c_2 − N p_2``;

plus ``−α²/(2σ_β²)``, ``−‖β‖²/(2σ_β²)``, ``−λ²/(2σ_λ²)``. The value equals PyMC's log-density up to
an additive constant and the gradient equals PyMC's (tests/bt/test_density.py checks both against
the compiled PyMC model). One numba kernel (``nogil``, cached on disk) evaluates both in one pass
over the rows, so NUTS chains run in parallel threads and no PyTensor graph is compiled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from numba import cfunc, njit, types

from bayesrank.bt.likelihood import tie_model
from bayesrank.data.rows import PairRows

#: ``data`` layout: a header of HEADER floats (length, K, R, F, has α, Davidson, 1/σ², 1/σ_β², 1/σ_λ²),
#: then i, j, c_0, c_1, c_2 (R each) and X (R × F, row-major). One array, so the compiled kernels
#: are independent of the data set (cached on disk once) and nutpie passes it by pointer.
HEADER = 9


@njit(nogil=True, cache=True)
def theta_of(x, k, theta):
    """θ = B z into ``theta`` (PyMC's ZeroSumTransform backward map)."""
    m = k - 1
    s = 0.0
    for q in range(m):
        s += x[q]
    sq = np.sqrt(k)
    c = 1.0 / (sq + k)
    for q in range(m):
        theta[q] = x[q] - c * s
    theta[m] = -s / sq


@njit(nogil=True, cache=True)
def unpack(data):
    """(K, R, F, has α, Davidson, i, j, c_0, c_1, c_2, X) of the packed ``data`` (views)."""
    n_rows = int(data[2])
    nf = int(data[3])
    o = HEADER
    return (int(data[1]), n_rows, nf, data[4] > 0, data[5] > 0, data[o : o + n_rows], data[o + n_rows : o + 2 * n_rows],
            data[o + 2 * n_rows : o + 3 * n_rows], data[o + 3 * n_rows : o + 4 * n_rows],
            data[o + 4 * n_rows : o + 5 * n_rows], data[o + 5 * n_rows : o + (5 + nf) * n_rows])


@njit(nogil=True, cache=True)
def core(x, grad, data):
    """log p(x) (returned) and ∇ log p(x) (into ``grad``) of the model packed in ``data``."""
    k, n_rows, nf, has_alpha, davidson, i, j, c0, c1, c2, X = unpack(data)
    inv_s2, inv_b2, inv_l2 = data[6], data[7], data[8]
    m = k - 1
    theta = np.empty(k)
    theta_of(x, k, theta)
    sq = np.sqrt(k)
    c = 1.0 / (sq + k)
    off = m
    alpha = 0.0
    if has_alpha:
        alpha = x[off]
        off += 1
    boff = off
    off += nf
    lam = x[off] if davidson else 0.0
    for q in range(grad.shape[0]):
        grad[q] = 0.0
    gtheta = np.zeros(k)
    logp = 0.0
    for q in range(m):
        logp -= 0.5 * inv_s2 * x[q] * x[q]
    ga = 0.0
    gl = 0.0
    for r in range(n_rows):
        a = int(i[r])
        b = int(j[r])
        d = theta[a] - theta[b] + alpha
        for f in range(nf):
            d += X[r * nf + f] * x[boff + f]
        if davidson:
            # logits (d/2, −d/2, λ): two exponentials and one log per row
            h = 0.5 * d
            ah = abs(h)
            n = c0[r] + c1[r] + c2[r]
            if ah >= lam:
                e_small = np.exp(-2.0 * ah)
                e_tie = np.exp(lam - ah)
                z = 1.0 + e_small + e_tie
                lse = ah + np.log(z)
                diff = (1.0 - e_small) / z  # (p_win − p_loss) for the side with d/2 = |h|
            else:
                e_hi = np.exp(ah - lam)
                e_lo = np.exp(-ah - lam)
                z = e_hi + e_lo + 1.0
                e_tie = 1.0
                lse = lam + np.log(z)
                diff = (e_hi - e_lo) / z
            if h < 0:
                diff = -diff
            logp += (c0[r] - c1[r]) * h + c2[r] * lam - n * lse
            dd = 0.5 * (c0[r] - c1[r]) - 0.5 * n * diff
            gl += c2[r] - n * e_tie / z
        else:
            w = c0[r]
            n = c1[r]
            if d > 0:
                e = np.exp(-d)
                sp = d + np.log1p(e)  # softplus(d)
                sig = 1.0 / (1.0 + e)
            else:
                e = np.exp(d)
                sp = np.log1p(e)
                sig = e / (1.0 + e)
            logp += -w * (sp - d) - (n - w) * sp  # softplus(−d) = softplus(d) − d
            dd = w - n * sig
        gtheta[a] += dd
        gtheta[b] -= dd
        ga += dd
        for f in range(nf):
            grad[boff + f] += dd * X[r * nf + f]
    tot = 0.0
    for q in range(m):
        tot += gtheta[q]
    for q in range(m):
        grad[q] = gtheta[q] - c * tot - gtheta[m] / sq - inv_s2 * x[q]
    if has_alpha:
        logp -= 0.5 * inv_b2 * alpha * alpha
        grad[m] = ga - inv_b2 * alpha
    for f in range(nf):
        beta = x[boff + f]
        logp -= 0.5 * inv_b2 * beta * beta
        grad[boff + f] -= inv_b2 * beta
    if davidson:
        logp -= 0.5 * inv_l2 * lam * lam
        grad[off] = gl - inv_l2 * lam
    return logp


@njit(nogil=True, cache=True)
def loglik_rows(params, data, const, out):
    """``out`` (S, R) ← the log-likelihood of every row of ``data`` at draws φ = (θ, α, β, λ) (S, P),
    the same per-row terms as :func:`core` (``const``: the Multinomial coefficient per row, Davidson)."""
    k, n_rows, nf, has_alpha, davidson, i, j, c0, c1, c2, X = unpack(data)
    boff = k + (1 if has_alpha else 0)
    for s in range(params.shape[0]):
        p = params[s]
        alpha = p[k] if has_alpha else 0.0
        lam = p[boff + nf] if davidson else 0.0
        for r in range(n_rows):
            d = p[int(i[r])] - p[int(j[r])] + alpha
            for f in range(nf):
                d += X[r * nf + f] * p[boff + f]
            if davidson:
                ah = abs(0.5 * d)
                if ah >= lam:
                    lse = ah + np.log(1.0 + np.exp(-2.0 * ah) + np.exp(lam - ah))
                else:
                    lse = lam + np.log(np.exp(ah - lam) + np.exp(-ah - lam) + 1.0)
                out[s, r] = (c0[r] - c1[r]) * 0.5 * d + c2[r] * lam - (c0[r] + c1[r] + c2[r]) * lse + const[r]
            else:
                sp = d + np.log1p(np.exp(-d)) if d > 0 else np.log1p(np.exp(d))  # softplus(d)
                out[s, r] = c0[r] * d - c1[r] * sp  # w log σ(d) + (n − w) log σ(−d)


sig_logp = types.int64(types.uint64, types.CPointer(types.double), types.CPointer(types.double),
                       types.CPointer(types.double), types.voidptr)


@cfunc(sig_logp, cache=True)
def logp_c(dim, x_, out_, logp_, data_):
    head = numba.carray(data_, (1,), np.float64)
    data = numba.carray(data_, (int(head[0]),), np.float64)
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (dim,))
    lp = core(x, out, data)
    logp_[0] = lp
    for q in range(dim):
        if not np.isfinite(out[q]):
            return 3
    if not np.isfinite(lp):
        return 4
    return 0


sig_expand = types.int64(types.uint64, types.uint64, types.CPointer(types.double), types.CPointer(types.double),
                         types.voidptr)


@cfunc(sig_expand, cache=True)
def expand_c(dim, n_expanded, x_, out_, data_):
    head = numba.carray(data_, (HEADER,), np.float64)
    k = int(head[1])
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_expanded,))
    theta_of(x, k, out[:k])
    for q in range(k - 1, dim):  # α, β, λ as they are
        out[q + 1] = x[q]
    return 0


def _kernels():
    """(core, logp cfunc, expand cfunc): module-level, so numba's on-disk cache is hit in every
    later process (closures were recompiled each time: ~2 s of CPU)."""
    return core, logp_c, expand_c


def zerosum_theta(z: np.ndarray) -> np.ndarray:
    """θ = B z, PyMC's ZeroSumTransform backward map (last axis: K−1 → K)."""
    z = np.asarray(z, dtype=float)
    k = z.shape[-1] + 1
    s = z.sum(axis=-1, keepdims=True)
    return np.concatenate([z - s / (np.sqrt(k) + k), -s / np.sqrt(k)], axis=-1)


@dataclass
class BTDensity:
    """The model's log posterior on ``rows`` as ``logp_grad(x) -> (log p, ∇ log p)`` and the map
    ``expand(x)`` to the stored variables (``theta``, ``alpha``, ``beta``, ``log_nu``)."""

    rows: PairRows
    ties: str
    prior_sigma: float
    tie_prior_sigma: float
    beta_sigma: float
    position: bool

    def __post_init__(self):
        from bayesrank.errors import InputError

        tm = tie_model(self.ties)
        r = self.rows
        if tm.n_extra and r.fractional:
            raise InputError("ties='davidson' models whole outcomes; these rows split outcomes in shares: use ties='half'")
        if self.position and not r.ordered:
            raise InputError("a position effect needs ordered rows (build them with position_effect=True)")
        self.davidson = bool(tm.n_extra)
        c = r.weighted_counts()
        if self.davidson:
            keep = np.ones(r.n_rows, dtype=bool)
            cols = (c[:, 0], c[:, 1], c[:, 2])
        else:
            wi, wj = tm.effective(c)
            keep = (wi + wj) > 0
            cols = (wi, wi + wj, np.zeros_like(wi))
        self.keep = keep
        self.i = np.ascontiguousarray(r.i[keep], dtype=np.int64)
        self.j = np.ascontiguousarray(r.j[keep], dtype=np.int64)
        self.c0, self.c1, self.c2 = (np.ascontiguousarray(a[keep], dtype=float) for a in cols)
        X = r.X if r.n_features else np.zeros((r.n_rows, 0))
        self.X = np.ascontiguousarray(np.asarray(X, dtype=float)[keep])
        self.k = int(r.n_players)
        self.n_features = int(r.n_features)
        self.features = list(r.features) if r.n_features else []
        self.ndim = self.k - 1 + int(self.position) + self.n_features + int(self.davidson)
        n = len(self.i)
        head = [0.0, self.k, n, self.n_features, float(self.position), float(self.davidson),
                1.0 / self.prior_sigma**2, 1.0 / self.beta_sigma**2, 1.0 / self.tie_prior_sigma**2]
        self.data = np.concatenate([head, self.i, self.j, self.c0, self.c1, self.c2, self.X.ravel()]).astype(float)
        self.data[0] = len(self.data)

    # ------------------------------------------------------------------ density
    def logp_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(log p(x), ∇ log p(x)) up to an additive constant."""
        grad = np.empty(self.ndim)
        return float(_kernels()[0](np.asarray(x, dtype=float), grad, self.data)), grad

    def compiled(self):
        """The density as nutpie calls it without Python (:class:`bayesrank.stats.nuts.CFuncDensity`)."""
        from bayesrank.stats.nuts import CFuncDensity

        _, logp_c, expand_c = _kernels()
        return CFuncDensity(logp_c.address, expand_c.address, self.data, owner=(logp_c, expand_c))

    def shapes(self) -> dict[str, tuple]:
        out = {"theta": (self.k,)}
        if self.position:
            out["alpha"] = ()
        if self.n_features:
            out["beta"] = (self.n_features,)
        if self.davidson:
            out["log_nu"] = ()
        return out

    def expand(self, x: np.ndarray) -> dict:
        x = np.asarray(x, dtype=float)
        m = self.k - 1
        out = {"theta": zerosum_theta(x[:m])}
        o = m
        if self.position:
            out["alpha"] = np.asarray(x[o])
            o += 1
        if self.n_features:
            out["beta"] = x[o : o + self.n_features].copy()
            o += self.n_features
        if self.davidson:
            out["log_nu"] = np.asarray(x[o])
        return out

    def coords(self) -> tuple[dict, dict]:
        coords = {"player": [str(p) for p in self.rows.players]}
        dims = {"theta": ("player",)}
        if self.n_features:
            coords["feature"] = self.features
            dims["beta"] = ("feature",)
        return coords, dims

    # ------------------------------------------------------------------ draws
    def linear_predictor(self, params: np.ndarray) -> np.ndarray:
        """(S, R_kept) d of every kept row for draws φ = (θ, α, β, λ) (S, P)."""
        k = self.k
        d = params[:, self.i] - params[:, self.j]
        o = k
        if self.position:
            d = d + params[:, o : o + 1]
            o += 1
        if self.n_features:
            d = d + params[:, o : o + self.n_features] @ self.X.T
        return d

    def pointwise_loglik(self, params: np.ndarray) -> np.ndarray:
        """(S, R_kept) log-likelihood of each kept row (PyMC's: the Binomial kernel without its
        coefficient, the Multinomial with it) — the PSIS-LOO input (one pass of :func:`loglik_rows`)."""
        params = np.ascontiguousarray(params, dtype=float)
        const = np.zeros(len(self.i))
        if self.davidson:
            from scipy.special import gammaln

            const = gammaln(self.c0 + self.c1 + self.c2 + 1) - gammaln(self.c0 + 1) - gammaln(self.c1 + 1) \
                - gammaln(self.c2 + 1)
        out = np.empty((params.shape[0], len(self.i)))
        loglik_rows(params, self.data, const, out)
        return out

    def replicate(self, params: np.ndarray, rng) -> np.ndarray:
        """(S, R_kept) replicated win shares (a tie half a win): Binomial(round(n), σ(d)) / n for
        binary ties, Multinomial(N, softmax(d/2, −d/2, λ)) for Davidson (as PyMC's predictive)."""
        d = self.linear_predictor(params)
        if self.davidson:
            lam = params[:, -1:]
            logits = np.stack([0.5 * d, -0.5 * d, np.broadcast_to(lam, d.shape)], axis=-1)
            p = np.exp(logits - logits.max(axis=-1, keepdims=True))
            p /= p.sum(axis=-1, keepdims=True)
            n = np.broadcast_to(np.round(self.c0 + self.c1 + self.c2).astype(np.int64), d.shape)
            x0 = rng.binomial(n, p[..., 0])
            rest = n - x0
            x1 = rng.binomial(rest, np.clip(p[..., 1] / np.clip(1.0 - p[..., 0], 1e-300, None), 0.0, 1.0))
            x2 = rest - x1
            return (x0 + 0.5 * x2) / np.where(n > 0, n, 1)
        n = self.c1
        rep = rng.binomial(np.broadcast_to(np.round(n).astype(np.int64), d.shape), 1.0 / (1.0 + np.exp(-d)))
        return rep / n

    def observed_share(self) -> np.ndarray:
        """(R_kept,) observed win share of player i (a tie half a win)."""
        if self.davidson:
            return (self.c0 + 0.5 * self.c2) / (self.c0 + self.c1 + self.c2)
        return self.c0 / self.c1


def sample(dens: BTDensity, *, draws: int, tune: int, chains: int, seed: int, target_accept: float | None = None,
           progress=None):
    """NUTS draws of ``dens`` (nutpie through :func:`bayesrank.stats.nuts.sample_logp`) as an ArviZ
    ``DataTree``; chains start at U(−1, 1) jitter around 0, as PyMC's default initialisation."""
    from bayesrank.stats.nuts import sample_logp

    coords, dims = dens.coords()
    return sample_logp(dens.compiled(), dens.ndim, dens.expand, dens.shapes(),
                       init=lambda s: np.random.default_rng(s).uniform(-1.0, 1.0, dens.ndim),
                       draws=draws, tune=tune, chains=chains, seed=seed,
                       target_accept=0.8 if target_accept is None else target_accept,
                       coords=coords, dims=dims, progress=progress, label="NUTS")


#: draws the predictive check and PSIS-LOO use: every t-th draw of each chain, at most this many in all
#: (1,000 replicates give the check's 95% ranges and PSIS's tail fits; the replicates' binomial
#: draws cost linearly in the draws, ArviZ's PSIS-LOO on the arena's 3,460 pairs 3.8 s of CPU at
#: 1,000 draws and 4.7 s at 2,000)
CHECK_DRAWS = 1000


def thinned(params: np.ndarray, chains: int, at_most: int = CHECK_DRAWS) -> np.ndarray:
    """(chains · ⌈draws/t⌉, P): every t-th draw of each chain (chains stacked), t = ⌈S / at_most⌉."""
    s = params.shape[0] // chains
    t = max(1, -(-params.shape[0] // at_most))
    return params.reshape(chains, s, -1)[:, ::t].reshape(-1, params.shape[1])


def _observed_rows(dens: BTDensity) -> np.ndarray:
    tot = dens.c0 + dens.c1 + dens.c2 if dens.davidson else dens.c1
    return tot > 0


def predictive_check(dens: BTDensity, params: np.ndarray, chains: int, seed: int = 0) -> dict:
    """Observed vs replicated win shares per row with comparisons (as
    :func:`bayesrank.bt.pymc_model.posterior_predictive_check`, on :func:`thinned` draws; the replicates
    of each half of the draws from its own generator spawned from ``seed``): per-row
    tail probabilities and the share of rows whose observed share lies outside the central 95%
    replicated interval (≈ 5% if the model fits)."""
    from concurrent.futures import ThreadPoolExecutor

    keep = _observed_rows(dens)
    draws = thinned(params, chains)
    # two halves of the draws, each with its own generator spawned from ``seed`` (the same numbers on
    # any machine), drawn in two threads: the binomial draws release the GIL
    halves = np.array_split(np.arange(len(draws)), 2)
    streams = np.random.default_rng(seed).spawn(2)
    with ThreadPoolExecutor(max_workers=2) as pool:
        parts = list(pool.map(lambda half, rng: dens.replicate(draws[half], rng)[:, keep], halves, streams))
    rep = np.concatenate(parts)
    obs = dens.observed_share()[keep]
    from bayesrank.bt.pymc_model import predictive_summary

    return predictive_summary(obs, rep)


def with_log_likelihood(dt, dens: BTDensity, params: np.ndarray, chains: int):
    """``dt`` with a ``log_likelihood`` group of every draw (one entry per row with comparisons),
    as PyMC's ``compute_log_likelihood`` adds it."""
    import xarray as xr

    ll = dens.pointwise_loglik(params)[:, _observed_rows(dens)]
    name = "outcomes" if dens.davidson else "wins"
    ds = xr.Dataset({name: (("chain", "draw", "row"), ll.reshape(chains, -1, ll.shape[1]))})
    out = dt.copy()
    out["log_likelihood"] = xr.DataTree(ds)
    return out


def thinned_tree(dt):
    """``posterior`` and ``log_likelihood`` at every t-th draw of each chain, at most
    :data:`CHECK_DRAWS` draws in all: PSIS-LOO's input."""
    import xarray as xr

    post = dt["posterior"].to_dataset()
    t = max(1, -(-int(post.sizes["chain"] * post.sizes["draw"]) // CHECK_DRAWS))
    pick = {"draw": slice(None, None, t)}
    return xr.DataTree.from_dict({"posterior": post.isel(pick),
                                  "log_likelihood": dt["log_likelihood"].to_dataset().isel(pick)})
