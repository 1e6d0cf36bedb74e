"""Posterior of the calibration gap from ONE paired model of both readouts of every item.

Generative story (``models/calibration.md``). In each cell (a group of items, e.g. one model ×
dataset × protocol setting), item i carries two confidences, verbal ``v_i`` and token ``t_i``,
and ONE correctness ``y_i``:

    (v_i, t_i) ~ F                      F = the cell's item population (Bayesian bootstrap:
                                        Dirichlet(1, …, 1) weights on the observed items)
    y_i | v_i, t_i ~ Bernoulli(π_i),    logit π_i = α + f_v(x_{v,i}) + f_t(x_{t,i}),
                                        x = logit(clip(c, 1e-4, 1 − 1e-4))

``f_s`` is piecewise linear in x with knots at the distinct values of x (when at most
``n_knots``, e.g. a verbal scale 0.5/0.6/…/1.0: one free value per level), otherwise at its
``n_knots`` quantiles AND at the equal-width ECE bin edges 0.1, …, 0.9 inside the data range (so
the curve can change between any two bins, e.g. the jump at t = 0.5 of BoolQ prompt 4);
``f_s(κ_0) = 0``; slope ``b_{s,k}`` on segment k of width ``w_k`` (in logit units):

    α ~ Normal((κ_{v,0} + κ_{t,0}) / 2, 2.5)
    b_{s,k} = 1/2 + σ_k z_{s,k},  z ~ Normal(0, 1),  σ_k = 1.5 · max(w_k, 1) / w_k

(centred on "both readouts calibrated and equally informative": logit π = x_v/2 + x_t/2; the
change of f over a segment has prior sd 1.5·max(w_k, 1), so a narrow segment may still carry a
jump of a few logits).
No monotonicity constraint (an anti-calibrated verbal scale is fitted as it is). Each y_i enters
the likelihood once; the two readouts of an item stay paired.

Gap. For every posterior draw (α, b) and Bayesian-bootstrap weight vector w, with p_i = π_i:

    g = T_E(F_w, p; verbal) − T_E(F_w, p; token)

where T_E is the formula of the plug-in estimator E (``ece``, ``ece_em``, ``ks``, ``smece``,
``kde``) applied to the weighted items with labels replaced by p_i (:mod:`.functionals`).
With w = 1 and p = y it *is* the plug-in estimate, so the posterior and the plug-in (with its
paired bootstrap) estimate the same population functional. Both signals use the same (w, p)
draw, so the posterior of g carries the pairing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesrank.errors import InputError

from .estimators import validate_pair
from .functionals import EXPENSIVE, FUNCTIONALS

SIGNALS = ("verbal", "token")
_CLIP = 1e-4
SLOPE_PRIOR = (0.5, 1.5)  # slope mean; sd of the change of f over a segment of width <= 1 (x1.5 per logit beyond)
ECE_EDGES = np.linspace(0.1, 0.9, 9)
ALPHA_SD = 2.5
MAX_EXPENSIVE_DRAWS = 400


def _logit(c):
    c = np.clip(np.asarray(c, float), _CLIP, 1 - _CLIP)
    return np.log(c / (1 - c))


def _knots(x: np.ndarray, n_knots: int) -> np.ndarray:
    u = np.unique(x)
    if u.size <= n_knots:
        return u
    edges = _logit(ECE_EDGES)
    inner = edges[(edges > u[0]) & (edges < u[-1])]
    return np.unique(np.concatenate([np.quantile(x, np.linspace(0, 1, n_knots)), inner]))


def slope_scale(widths: np.ndarray) -> np.ndarray:
    """Prior sd of each segment's slope: the change of f over the segment has sd 1.5·max(w, 1)."""
    w = np.asarray(widths, float)
    return SLOPE_PRIOR[1] * np.maximum(w, 1.0) / w


@dataclass
class PairedCell:
    """One cell's items (exact confidences) and the knots of its two curves."""

    name: str
    verbal: np.ndarray
    token: np.ndarray
    correct: np.ndarray
    knots: dict

    @property
    def n(self) -> int:
        return int(self.correct.size)

    def confidence(self, signal: str) -> np.ndarray:
        return self.verbal if signal == "verbal" else self.token


@dataclass
class _Layout:
    """Rows (distinct (cell, v, t)) and how the linear predictor of each row is assembled:
    ``η = α[cell] + Σ_s (cum[g_s] − cum[s0_s] + b[g_s]·dx_s)``, ``cum`` = cumulative b·width."""

    cell: np.ndarray
    g: np.ndarray  # (2, rows) global segment holding x (pad index for a constant signal)
    s0: np.ndarray  # (2, rows) first segment of the row's curve
    dx: np.ndarray  # (2, rows) x − κ_g clipped to [0, width_g]
    widths: np.ndarray  # (n_seg,)
    seg_curve: list  # (cell, signal) of every segment
    trials: np.ndarray
    successes: np.ndarray
    item_row: dict  # cell name -> row index of every item


def _layout(cells: list[PairedCell]) -> _Layout:
    widths, seg_curve, start = [], [], 0
    parts = []
    item_row, offset = {}, 0
    for ci, cell in enumerate(cells):
        xv, xt = _logit(cell.verbal), _logit(cell.token)
        rows, inv = np.unique(np.column_stack([xv, xt]), axis=0, return_inverse=True)
        inv = inv.ravel()
        item_row[cell.name] = offset + inv
        offset += rows.shape[0]
        g_s, s0_s, dx_s = [], [], []
        for si, sig in enumerate(SIGNALS):
            kn = cell.knots[sig]
            ns = max(kn.size - 1, 0)
            x = rows[:, si]
            if ns == 0:
                g_s.append(np.full(x.size, -1))
                s0_s.append(np.full(x.size, -1))
                dx_s.append(np.zeros(x.size))
                continue
            loc = np.clip(np.searchsorted(kn, x, side="right") - 1, 0, ns - 1)
            w = np.diff(kn)
            g_s.append(start + loc)
            s0_s.append(np.full(x.size, start))
            dx_s.append(np.clip(x - kn[loc], 0.0, w[loc]))
            widths.extend(w)
            seg_curve.extend([(cell.name, sig)] * ns)
            start += ns
        trials = np.bincount(inv, minlength=rows.shape[0]).astype(float)
        succ = np.bincount(inv, weights=cell.correct, minlength=rows.shape[0])
        parts.append((np.full(rows.shape[0], ci), np.vstack(g_s), np.vstack(s0_s), np.vstack(dx_s), trials, succ))
    pad = start  # index of a zero-width, zero-slope pad segment
    cell_idx = np.concatenate([p[0] for p in parts])
    g = np.concatenate([p[1] for p in parts], axis=1)
    s0 = np.concatenate([p[2] for p in parts], axis=1)
    g[g < 0], s0[s0 < 0] = pad, pad
    return _Layout(cell_idx, g, s0, np.concatenate([p[3] for p in parts], axis=1), np.asarray(widths, float),
                   seg_curve, np.concatenate([p[4] for p in parts]), np.concatenate([p[5] for p in parts]), item_row)


def _padded(lay: _Layout, rows: int | None) -> _Layout:
    """``lay`` with rows appended up to ``rows``, each with zero trials and zero successes (cell 0, the
    zero-width pad segment): a Binomial(0, p) row adds exactly 0 to the log density and its
    gradient, so the posterior is unchanged while the data keep one shape across simulations."""
    if rows is None:
        return lay
    k = rows - lay.trials.size
    if k < 0:
        raise ValueError(f"cannot pad {lay.trials.size} rows to {rows}")
    pad = lay.widths.size
    two = np.full((2, k), pad)
    return _Layout(np.concatenate([lay.cell, np.zeros(k, lay.cell.dtype)]), np.concatenate([lay.g, two], axis=1),
                   np.concatenate([lay.s0, two], axis=1), np.concatenate([lay.dx, np.zeros((2, k))], axis=1),
                   lay.widths, lay.seg_curve, np.concatenate([lay.trials, np.zeros(k)]),
                   np.concatenate([lay.successes, np.zeros(k)]), lay.item_row)


def _eta(alpha, slope, lay: _Layout, xp=np):
    """Linear predictor of every row for ``alpha`` (cells) and ``slope`` (segments); numpy draws
    (leading sample axis) or pytensor tensors (``xp=None``)."""
    if xp is np:
        zero = np.zeros(slope.shape[:-1] + (1,))
        b = np.concatenate([slope, zero], axis=-1)
        cum = np.concatenate([zero, np.cumsum(slope * lay.widths, axis=-1)], axis=-1)  # index pad = total
        eta = alpha[..., lay.cell]
        for s in range(2):
            g, s0 = lay.g[s], lay.s0[s]
            eta = eta + cum[..., g] - cum[..., s0] + b[..., g] * lay.dx[s]
        return eta
    import pytensor.tensor as pt

    b = pt.concatenate([slope, pt.zeros(1)])
    cum = pt.concatenate([pt.zeros(1), pt.cumsum(slope * lay.widths)])
    eta = alpha[lay.cell]
    for s in range(2):
        eta = eta + cum[lay.g[s]] - cum[lay.s0[s]] + b[lay.g[s]] * lay.dx[s]
    return eta


def _parse_cells(cells: dict[str, tuple], n_knots: int) -> list[PairedCell]:
    parsed = []
    for name, (v, t, y) in cells.items():
        v, y = validate_pair(v, y, name=f"verbal confidence [{name}]")
        t, _ = validate_pair(t, y, name=f"token confidence [{name}]")
        knots = {"verbal": _knots(_logit(v), n_knots), "token": _knots(_logit(t), n_knots)}
        parsed.append(PairedCell(str(name), v, t, y, knots))
    if not parsed:
        raise InputError("no cells to fit")
    return parsed


def build_paired_model(cells: dict[str, tuple], n_knots: int = 6, data_containers: bool = False,
                       pad_rows: int | None = None):
    """PyMC model for ``cells = {name: (verbal, token, correct)}``; returns (model, cells, layout).
    ``pad_rows``: the data padded to this many rows with empty ones (:func:`_padded`; the same
    posterior), so that simulations whose data have fewer distinct rows reuse one compiled model."""
    import pymc as pm

    parsed = _parse_cells(cells, n_knots)
    lay = _padded(_layout(parsed), pad_rows)
    alpha_mu = np.array([(c.knots["verbal"][0] + c.knots["token"][0]) / 2 for c in parsed])
    n_seg = lay.widths.size
    coords = {"cell": [c.name for c in parsed], "segment": [f"{c}|{s}|{k}" for k, (c, s) in enumerate(lay.seg_curve)],
              "row": np.arange(lay.trials.size)}
    with pm.Model(coords=coords) as model:
        if data_containers:  # swap data of the same shapes without recompiling (simulation studies)
            lay_t = _Layout(*(pm.Data(f"layout_{k}", getattr(lay, k)) for k in _DATA_FIELDS), lay.seg_curve,
                            pm.Data("layout_trials", lay.trials), None, lay.item_row)
            alpha_mu = pm.Data("alpha_mu", alpha_mu)
            observed = pm.Data("layout_successes", lay.successes)
        else:
            lay_t, observed = lay, lay.successes
        alpha = pm.Normal("alpha", mu=alpha_mu, sigma=ALPHA_SD, dims="cell")
        if n_seg:
            z = pm.Normal("slope_z", 0.0, 1.0, dims="segment")  # non-centred
            scale = pm.Data("slope_scale", slope_scale(lay.widths)) if data_containers else slope_scale(lay.widths)
            slope = pm.Deterministic("slope", SLOPE_PRIOR[0] + scale * z, dims="segment")
        else:
            import pytensor.tensor as pt

            slope = pt.zeros(0)
        eta = _eta(alpha, slope, lay_t, xp=None)
        pm.Binomial("correct", n=lay_t.trials, logit_p=eta, observed=observed, dims="row")
    return model, parsed, lay


_DATA_FIELDS = ("cell", "g", "s0", "dx", "widths")


def layout_data(cells: dict[str, tuple], n_knots: int = 6,
                pad_rows: int | None = None) -> tuple[dict, list[PairedCell], _Layout]:
    """The data-container values of :func:`build_paired_model` (``data_containers=True``, the same
    ``pad_rows``) for new cells of the same shapes, for ``nutpie``'s ``with_data``; the layout
    returned is the unpadded one."""
    parsed = _parse_cells(cells, n_knots)
    lay = _layout(parsed)
    padded = _padded(lay, pad_rows)
    data = {f"layout_{k}": getattr(padded, k) for k in _DATA_FIELDS}
    data.update(layout_trials=padded.trials, layout_successes=padded.successes, slope_scale=slope_scale(lay.widths),
                alpha_mu=np.array([(c.knots["verbal"][0] + c.knots["token"][0]) / 2 for c in parsed]))
    return data, parsed, lay


def sample_model(model, *, draws=1000, tune=1000, chains=2, seed=0, nuts_sampler="auto", target_accept=0.9,
                 progressbar=False):
    """NUTS with ``chains`` chains on one core; ``nuts_sampler``: ``pymc``, ``nutpie`` or ``auto``
    (nutpie when installed). Returns the posterior DataTree."""
    import pymc as pm

    if nuts_sampler == "auto":
        try:
            import nutpie  # noqa: F401

            nuts_sampler = "nutpie"
        except ImportError:
            nuts_sampler = "pymc"
    with model:  # nutpie: low-rank mass matrix adaptation (the knot slopes are correlated)
        kw = {"nuts": {"adaptation": "low_rank"}} if nuts_sampler == "nutpie" else {"target_accept": target_accept}
        trace = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed, progressbar=progressbar,
                          compute_convergence_checks=False, nuts_sampler=nuts_sampler, **kw)
    from bayesrank.outputs import stop_if_interrupted

    stop_if_interrupted()  # PyMC returns the draws it has on Ctrl-C: never report a shorter chain
    return trace, nuts_sampler


@dataclass
class GapPosterior:
    """The fitted paired model: DataTree, cells, and the gap functionals of its draws."""

    idata: object
    cells: list[PairedCell]
    layout: _Layout
    level: float = 0.95
    seed: int = 0
    item_weights: str = "bayesian_bootstrap"
    sampler: str = "pymc"
    model: object = None
    max_expensive_draws: int = MAX_EXPENSIVE_DRAWS
    _cache: dict = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ draws
    @property
    def cell_names(self) -> list[str]:
        return [c.name for c in self.cells]

    def cell(self, name: str) -> PairedCell:
        for c in self.cells:
            if c.name == name:
                return c
        raise InputError(f"no cell {name!r}; cells: {', '.join(self.cell_names)}")

    def _params(self):
        post = self.idata["posterior"]
        alpha = np.asarray(post["alpha"]).reshape(-1, len(self.cells))
        if "slope" in post:
            slope = np.asarray(post["slope"]).reshape(alpha.shape[0], -1)
        else:
            slope = np.zeros((alpha.shape[0], 0))
        return alpha, slope

    def probability_draws(self, cell: str) -> np.ndarray:
        """Draws × items: p_i = P(y_i = 1 | v_i, t_i) for every item of ``cell``."""
        key = ("p", cell)
        if key not in self._cache:
            alpha, slope = self._params()
            eta = _eta(alpha, slope, self.layout)[:, self.layout.item_row[cell]]
            self._cache[key] = 1.0 / (1.0 + np.exp(-eta))
        return self._cache[key]

    def weight_draws(self, cell: str) -> np.ndarray:
        """Draws × items: Bayesian-bootstrap weights (Dirichlet(1,…,1) × n), or ones when
        ``item_weights="observed"`` (the functional of the observed items only)."""
        key = ("w", cell)
        if key not in self._cache:
            d = self.probability_draws(cell).shape[0]
            n = self.cell(cell).n
            if self.item_weights == "observed":
                w = np.ones((d, n))
            else:
                rng = np.random.default_rng([self.seed, self.cell_names.index(cell)])
                w = rng.standard_exponential((d, n))
                w *= n / w.sum(axis=1, keepdims=True)
            self._cache[key] = w
        return self._cache[key]

    def functional_draws(self, cell: str, signal: str, estimator: str) -> np.ndarray:
        """Draws of the estimator's functional for one signal (:mod:`.functionals`); the
        expensive ones (smece, kde) on at most ``MAX_EXPENSIVE_DRAWS`` evenly thinned draws,
        the same draws for both signals (``max_expensive_draws``)."""
        if estimator not in FUNCTIONALS:
            raise InputError(f"no posterior functional for {estimator!r}; expected one of {', '.join(FUNCTIONALS)}")
        key = ("f", cell, signal, estimator)
        if key not in self._cache:
            p, w = self.probability_draws(cell), self.weight_draws(cell)
            idx = self.draw_index(cell, estimator)
            self._cache[key] = FUNCTIONALS[estimator](self.cell(cell).confidence(signal), p[idx], w[idx])
        return self._cache[key]

    def draw_index(self, cell: str, estimator: str) -> np.ndarray:
        d = self.probability_draws(cell).shape[0]
        if estimator in EXPENSIVE and d > self.max_expensive_draws:
            return np.unique(np.linspace(0, d - 1, self.max_expensive_draws).round().astype(int))
        return np.arange(d)

    def gap_draws(self, cell: str, estimator: str) -> np.ndarray:
        return self.functional_draws(cell, "verbal", estimator) - self.functional_draws(cell, "token", estimator)

    # ------------------------------------------------------------------ summaries
    def gap_summary(self, estimators=("ece", "kde", "ks", "smece")) -> pd.DataFrame:
        """Per cell and estimator: posterior means of T(verbal), T(token), and of g with its
        equal-tailed interval at ``level`` and P(g < 0)."""
        a = (1 - self.level) / 2
        rows = []
        for cell in self.cell_names:
            for est in estimators:
                dv = self.functional_draws(cell, "verbal", est)
                dt = self.functional_draws(cell, "token", est)
                g = dv - dt
                rows.append(dict(cell=cell, estimator=est, functional=f"{est} on (c, P(correct), item weights)",
                                 verbal_mean=float(dv.mean()), token_mean=float(dt.mean()), posterior_mean=float(g.mean()),
                                 posterior_lower=float(np.quantile(g, a)), posterior_upper=float(np.quantile(g, 1 - a)),
                                 p_gap_negative=float(np.mean(g < 0)), n_draws=int(g.size)))
        return pd.DataFrame(rows)

    @property
    def diagnostics(self):
        from bayesrank.protocol import Diagnostics

        names = ["alpha"] + (["slope_z"] if "slope_z" in self.idata["posterior"] else [])
        return Diagnostics.sampler(f"NUTS ({self.sampler}), paired calibration model", self.idata, var_names=names)

    def reliability(self, cell: str, signal: str, n_bins: int = 10, seed: int = 0, band: float = 0.9) -> pd.DataFrame:
        """Per equal-width bin of ``signal``: observed accuracy, the model's expected accuracy
        (posterior mean and ``band`` interval of mean p_i over the bin's items) and the ``band``
        interval of the replicated accuracy (y_rep ~ Bernoulli(p), the posterior predictive check)."""
        cl = self.cell(cell)
        c = cl.confidence(signal)
        p = self.probability_draws(cell)
        rng = np.random.default_rng(seed)
        yrep = rng.uniform(size=p.shape) < p
        ids = np.searchsorted(np.linspace(0, 1, n_bins + 1)[1:-1], c)
        lo_q, hi_q = (1 - band) / 2, 1 - (1 - band) / 2
        rows = []
        for b in range(n_bins):
            m = ids == b
            nb = int(m.sum())
            if nb == 0:
                continue
            exp_acc = p[:, m].mean(axis=1)
            rep = yrep[:, m].mean(axis=1)
            rows.append(dict(bin=b, n=nb, confidence=float(c[m].mean()), observed=float(cl.correct[m].mean()),
                             expected_mean=float(exp_acc.mean()), expected_lo=float(np.quantile(exp_acc, lo_q)),
                             expected_hi=float(np.quantile(exp_acc, hi_q)), rep_lo=float(np.quantile(rep, lo_q)),
                             rep_hi=float(np.quantile(rep, hi_q))))
        return pd.DataFrame(rows)

    def ppc_summary(self, n_bins: int = 10, band: float = 0.9) -> pd.DataFrame:
        """Per cell and signal: bins whose observed accuracy lies outside the ``band`` posterior predictive interval."""
        rows = []
        for cell in self.cell_names:
            for sig in SIGNALS:
                rel = self.reliability(cell, sig, n_bins=n_bins, band=band)
                out = (rel["observed"] < rel["rep_lo"]) | (rel["observed"] > rel["rep_hi"])
                rows.append(dict(cell=cell, signal=sig, bins=len(rel), bins_outside=int(out.sum()),
                                 items_in_bins_outside=int(rel.loc[out, "n"].sum())))
        return pd.DataFrame(rows)


def fit_gap_posterior(
    cells: dict[str, tuple],
    *,
    n_knots: int = 6,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    seed: int = 0,
    level: float = 0.95,
    item_weights: str = "bayesian_bootstrap",
    nuts_sampler: str = "auto",
    target_accept: float = 0.9,
    progressbar: bool = False,
) -> GapPosterior:
    """Fit the paired model by NUTS (explicit ``seed``) and return the :class:`GapPosterior`."""
    if item_weights not in ("bayesian_bootstrap", "observed"):
        raise InputError(f"item_weights {item_weights!r}; expected 'bayesian_bootstrap' or 'observed'")
    model, parsed, lay = build_paired_model(cells, n_knots=n_knots)
    idata, used = sample_model(model, draws=draws, tune=tune, chains=chains, seed=seed, nuts_sampler=nuts_sampler,
                               target_accept=target_accept, progressbar=progressbar)
    return GapPosterior(idata, parsed, lay, level=level, seed=seed, item_weights=item_weights, sampler=used, model=model)
