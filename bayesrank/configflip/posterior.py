"""Posterior flip probabilities: a hierarchical PyMC model of correctness by player, axis levels and
their interactions (see ``models/configflip.md``).

Latent ability of player m in configuration c (levels ``l_a(c)`` of each axis a)::

    eta[m, c] = mu + alpha[m] + sum_a beta_a[l_a(c)] + sum_a gamma_a[m, l_a(c)] + delta[m, c]

- per-item data:  y[m, c, i] ~ Bernoulli(logit^-1(eta[m, c] + u[i])),  u[i] item difficulty shared by
  every model and configuration (the fixed item subset);
- counts only:    k[m, c] ~ Binomial(n[m, c], logit^-1(eta[m, c])).

Main effects (alpha, beta) and player x level interactions (gamma) are zero-sum normals with fixed
scales; the residual cell effects (delta) are non-centred with a half-normal scale; item effects are
centred with a half-normal scale. Because ``u`` is
shared and logit^-1 is monotone, player A beats B on the item population in configuration c iff ``eta[A, c] > eta[B, c]``, so
``P(A > B | c) = P(eta[A, c] > eta[B, c] | data)``; each posterior draw of ``eta`` induces a rho_flip per
pair and an ordering per configuration, which gives the posterior of rho_flip and of the set of
reachable orderings *without* the item-sampling noise that inflates the raw rho_flip.

The frequentist twin (``method="mle"``) is the no-pooling answer: cell proportions with binomial
standard errors, ``P(A > B | c) = Phi((p_A - p_B) / sqrt(v_A + v_B))``, and draws from that normal
approximation for the rho_flip/ordering summaries.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesrank.errors import InputError
from bayesrank.outputs import stop_if_interrupted
from bayesrank.protocol import Diagnostics, Result

from .grid import MODEL, N_CORRECT, N_ITEMS, EvalGrid, config_label
from .metrics import ordering_label


def resolve_sampler(name: str) -> str:
    """``"auto"`` -> ``"nutpie"`` when importable, else ``"pymc"``; other names are checked."""
    if name not in ("auto", "nutpie", "pymc"):
        raise InputError(f"nuts_sampler must be 'auto', 'nutpie' or 'pymc', got {name!r}")
    if name in ("auto", "nutpie"):
        try:
            import nutpie  # noqa: F401
        except ImportError:
            if name == "nutpie":
                raise InputError("nuts_sampler='nutpie' but nutpie is not installed (pip install nutpie)") from None
            return "pymc"
        return "nutpie"
    return name


def nutpie_backend() -> str:
    """nutpie's JAX backend when JAX is installed (compiles in seconds; measured faster per gradient on
    the dense item cube), else numba."""
    import importlib.util

    return "jax" if importlib.util.find_spec("jax") is not None else "numba"


@dataclass
class FlipPosterior:
    """Hierarchical flip model for ONE benchmark of ``grid``."""

    grid: EvalGrid
    benchmark: str | None = None
    interactions: bool = True          # player x axis-level effects gamma_a[m, l]
    cell_effects: bool = True          # residual player x configuration effects delta[m, c]
    use_items: bool | None = None      # per-item Bernoulli with item effects (default: when items exist)
    prior_scale: float = 1.0
    dense_items: bool | None = None    # per-item likelihood as a dense cube (default: when fully crossed)
    scale_prior: str = "gamma"         # hierarchical scales: "gamma" (boundary-avoiding) or "halfnormal"
    noncentred: bool = True            # hierarchical blocks (gamma, delta) as sigma * z

    def __post_init__(self):
        g = self.grid
        if self.benchmark is None:
            if len(g.benchmarks) != 1:
                raise InputError(f"grid has benchmarks {g.benchmarks}: pass benchmark=...")
            self.benchmark = g.benchmarks[0]
        self.grid = g.benchmark(self.benchmark)
        if self.use_items is None:
            self.use_items = self.grid.items is not None
        if self.use_items and self.grid.items is None:
            raise InputError("use_items=True but the grid has no per-item data")
        if self.use_items and not self.grid.items["correct"].isin([0.0, 1.0]).all():
            raise InputError("per-item correctness is not binary (partial credit?): the Bernoulli item model "
                             "needs 0/1; use use_items=False for the binomial-count model")
        if not self.use_items and N_ITEMS not in self.grid.data.columns:
            raise InputError("the posterior model needs item counts: build the grid with n_items=... (or from "
                             "per-item data); lm-eval stderr gives n via readers.n_from_stderr")
        conf = self.grid.configurations()
        if len(conf) < 2:
            raise InputError(f"benchmark {self.benchmark!r} has a single configuration: nothing can flip")
        self.configs = list(conf["config"])
        self.models = self.grid.models
        self.levels = {a: list(pd.unique(conf[a])) for a in self.grid.axes}
        self.level_index = {a: np.array([self.levels[a].index(v) for v in conf[a]]) for a in self.grid.axes}

    # ------------------------------------------------------------------ data
    def _cell_index(self, df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        labels = [config_label(r, self.grid.axes) for r in df[list(self.grid.axes)].itertuples(index=False)]
        c = pd.Index(self.configs).get_indexer(labels)
        m = pd.Index(self.models).get_indexer(df[MODEL])
        return m, c

    def observed(self) -> pd.DataFrame:
        d = self.grid.data
        m, c = self._cell_index(d)
        return pd.DataFrame({"m": m, "c": c, "n": d[N_ITEMS].to_numpy(), "k": d[N_CORRECT].to_numpy(),
                             "p": d["score"].to_numpy()})

    # ------------------------------------------------------------------ model
    def build(self):
        import pymc as pm
        import pytensor.tensor as pt

        axes = self.grid.axes
        coords = {"player": self.models, "config": self.configs}
        for a in axes:
            coords[f"{a}_level"] = [str(v) for v in self.levels[a]]
        s = self.prior_scale

        def shrunk(name, sigma, dims):
            """Non-centred hierarchical effect sigma * z, z ~ ZeroSumNormal(1) over every dim (centred
            ZeroSumNormal(sigma) when ``noncentred=False``)."""
            if not self.noncentred:
                return pm.ZeroSumNormal(name, sigma, dims=dims, n_zerosum_axes=len(dims))
            z = pm.ZeroSumNormal(f"{name}_z", 1.0, dims=dims, n_zerosum_axes=len(dims))
            return pm.Deterministic(name, sigma * z, dims=dims)

        def scale_prior(name, mean):
            """Scale of a hierarchical block: HalfNormal, or (``scale_prior="gamma"``) the boundary-avoiding
            Gamma(2, 2/mean) of Chung et al. (2013): mode mean/2, density 0 at 0."""
            if self.scale_prior == "gamma":
                return pm.Gamma(name, alpha=2.0, beta=2.0 / mean)
            return pm.HalfNormal(name, 2.0 * mean)

        with pm.Model(coords=coords) as model:
            mu = pm.Normal("mu", 0.0, 1.5)
            # main effects: zero-sum normals with fixed scales, centred (three players or 2-4 levels cannot
            # inform a hierarchical scale; the data identify these effects strongly)
            alpha = pm.ZeroSumNormal("alpha", 1.5 * s, dims="player")
            eta = mu + alpha[:, None]
            for a in axes:
                li = self.level_index[a]
                beta = pm.ZeroSumNormal(f"beta_{a}", 1.0 * s, dims=f"{a}_level")
                eta = eta + beta[li][None, :]
                if self.interactions:
                    if "sigma_interaction" not in model.named_vars:   # ONE scale shared by every axis
                        scale_prior("sigma_interaction", 0.25 * s)
                    gamma = shrunk(f"gamma_{a}", model["sigma_interaction"], ("player", f"{a}_level"))
                    eta = eta + gamma[:, li]
            # interactions (gamma above) and residual player x configuration effects (delta): hierarchical
            # scales shrink them unless the data support them (item noise is not read as reversals);
            # non-centred. Measured choices (models/configflip.md): ONE interaction scale for all axes
            # (per-axis half-normal scales gave divergences for two-level axes at spec scale) and
            # boundary-avoiding Gamma(2, .) scale priors (half-normals mixed slowly near zero).
            if self.cell_effects:
                sd = scale_prior("sigma_cell", 0.1 * s)
                eta = eta + shrunk("delta", sd, ("player", "config"))
            eta = pm.Deterministic("eta", eta, dims=("player", "config"))
            if self.use_items:
                it = self.grid.items
                m, c = self._cell_index(it)
                codes, uniq = pd.factorize(it["item"])
                model.add_coord("item", [str(u) for u in uniq])
                su = pm.HalfNormal("sigma_item", 1.5)
                # item difficulties: each is informed by every (player, configuration) cell, so centred
                u = pm.ZeroSumNormal("u", su, dims="item")
                y = it["correct"].to_numpy().astype(int)
                n_m, n_c, n_i = len(self.models), len(self.configs), len(uniq)
                complete = len(it) == n_m * n_c * n_i
                if self.dense_items and not complete:
                    raise InputError("dense_items=True needs every item scored in every (player, configuration) cell")
                if complete and self.dense_items is not False:
                    # fully crossed (every item in every cell): with l = eta[m, c] + u[i] the Bernoulli
                    # log-likelihood sum y*l - softplus(l) needs only the sufficient statistics
                    # k[m, c] = sum_i y and s[i] = sum_{m,c} y, plus ONE softplus over the dense cube
                    cube = np.zeros((n_m, n_c, n_i))
                    cube[m, c, codes] = y
                    k_cell, s_item = cube.sum(axis=2), cube.sum(axis=(0, 1))
                    pm.Potential("y_loglik", pt.sum(k_cell * eta) + pt.sum(s_item * u)
                                 - pt.sum(pt.softplus(eta[:, :, None] + u[None, None, :])))
                else:
                    pm.Bernoulli("y", logit_p=eta[m, c] + u[codes], observed=y)
            else:
                obs = self.observed()
                pm.Binomial("k", n=obs["n"].to_numpy(), logit_p=eta[obs["m"].to_numpy(), obs["c"].to_numpy()],
                            observed=obs["k"].to_numpy())
        return model

    def diagnostic_vars(self) -> list[str]:
        """Variables whose R-hat/ESS are checked: eta (what every flip probability is computed from) and
        the hyper-parameters."""
        names = ["eta", "mu"] + (["sigma_cell"] if self.cell_effects else [])
        names += ["sigma_interaction"] if self.interactions else []
        names += ["sigma_item"] if self.use_items else []
        return names

    def fit(self, method: str = "nuts", draws: int = 1000, tune: int = 1000, chains: int = 2, cores: int = 2,
            random_seed: int = 0, target_accept: float | None = None, nuts_sampler: str = "auto",
            progressbar: bool = False) -> FlipResult:
        """``method="nuts"``: hierarchical posterior; ``"mle"``: no-pooling normal approximation.

        ``nuts_sampler``: ``"nutpie"`` (default via ``"auto"`` when installed; JAX backend when JAX is
        installed, else numba) or ``"pymc"``. ``target_accept`` default 0.9. 1000 tuning steps and
        1000 draws per chain by default: with 500 tuning steps the hierarchical scales mixed slowly
        (R-hat 1.013-1.025, bulk ESS 100-150 on the simulated grids of the tests and the benchmark). R-hat, ESS and divergences are reported in ``result.diagnostics`` (never switched off)."""
        from bayesrank.protocol import Diagnostics

        if method == "mle":
            return self._fit_mle(draws * chains, random_seed)
        if method != "nuts":
            raise InputError(f"method must be 'nuts' or 'mle', got {method!r}")
        sampler = resolve_sampler(nuts_sampler)
        target_accept = 0.9 if target_accept is None else target_accept
        model = self.build()
        if sampler == "pymc":
            import pymc as pm

            from bayesrank._multiprocessing import pymc_mp_ctx

            with model:
                # nuts_sampler="pymc" explicitly: PyMC 6 switches to nutpie by itself when it is installed
                idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=cores, random_seed=random_seed,
                                  target_accept=target_accept, progressbar=progressbar, nuts_sampler="pymc",
                                  mp_ctx=pymc_mp_ctx(),
                                  compute_convergence_checks=False)  # computed below, the package's one way
        else:
            import nutpie

            backend = nutpie_backend()
            compiled = nutpie.compile_pymc_model(model, backend=backend, gradient_backend=backend)
            idata = nutpie.sample(compiled, draws=draws, tune=tune, chains=chains, cores=max(cores, 1),
                                  seed=random_seed, target_accept=target_accept, progress_bar=progressbar)
            sampler = f"nutpie-{backend}"
        stop_if_interrupted()  # a sampler that returns the draws it has on Ctrl-C: no shorter chain reported
        diag = Diagnostics.sampler(f"NUTS ({sampler})", idata, var_names=self.diagnostic_vars())
        eta = idata["posterior"]["eta"].stack(sample=("chain", "draw")).transpose("sample", "player", "config")
        return FlipResult(self, eta.to_numpy(), method="nuts", idata=idata, diagnostics=diag)

    def _fit_mle(self, n_draws: int, seed: int) -> FlipResult:
        from bayesrank.protocol import Diagnostics

        obs = self.observed()
        p = (obs["k"] + 0.5) / (obs["n"] + 1.0)  # continuity-corrected so all-correct cells have v > 0
        se = np.sqrt(p * (1 - p) / obs["n"])
        mean = np.full((len(self.models), len(self.configs)), np.nan)
        sd = np.full_like(mean, np.nan)
        mean[obs["m"], obs["c"]] = obs["p"]
        sd[obs["m"], obs["c"]] = se
        rng = np.random.default_rng(seed)
        draws = mean[None] + sd[None] * rng.standard_normal((n_draws, *mean.shape))
        return FlipResult(self, draws, method="mle", mle=(mean, sd),
                          diagnostics=Diagnostics.exact("no-pooling normal approximation (closed form)"))


@dataclass(repr=False)  # the short repr of bayesrank.protocol.Result
class FlipResult(Result):
    """Draws of the latent cell abilities (``eta``: sample x player x config) and their summaries."""

    spec: FlipPosterior
    eta: np.ndarray
    method: str
    idata: object = None
    mle: tuple | None = None
    diagnostics: Diagnostics | None = None
    level: float = 0.95               # claims_reversal: P(A > B | c) >= level somewhere, <= 1 - level elsewhere

    schema = "configflip_posterior"

    # ------------------------------------------------------------------ protocol
    def table(self) -> pd.DataFrame:
        """Per player pair: posterior of rho_flip and whether a reversal is claimed (:meth:`pair_summary`)."""
        return self.pair_summary()

    def summary(self) -> str:
        head = (f"flip posterior ({self.method}) for benchmark {self.spec.benchmark}: {len(self.spec.models)} players x "
                f"{len(self.spec.configs)} configurations" + (", per-item Bernoulli with item effects"
                                                              if self.spec.use_items and self.method == "nuts" else ""))
        return "\n".join([head, self.pair_summary().to_string(index=False), self.diagnostics.line()])

    def to_dict(self, envelope: bool = True) -> dict:
        d = {"benchmark": self.spec.benchmark, "method": self.method, "use_items": bool(self.spec.use_items),
             "players": list(self.spec.models), "configs": list(self.spec.configs),
             "pairs": self.pair_summary(), "p_greater": self.p_greater(), "orderings": self.orderings()}
        return {**self._envelope(), **d} if envelope else {"diagnostics": self.diagnostics.to_dict(), **d}

    def plot(self, ax=None, **kwargs):
        """P(A > B | c) for every pair (rows) and configuration (columns)."""
        from .plots import flip_heatmap

        return flip_heatmap(self.spec.grid, self.spec.benchmark, self.p_greater(), ax=ax).figure

    def p_greater(self) -> pd.DataFrame:
        """P(A > B | c) for every pair and configuration, with the observed score difference."""
        s = self.spec
        obs = s.grid.wide(s.benchmark).reindex(index=s.configs, columns=s.models)
        rows = []
        for (ia, a), (ib, b) in itertools.combinations(enumerate(s.models), 2):
            if self.mle is not None:
                from scipy import stats

                mean, sd = self.mle
                with np.errstate(invalid="ignore"):
                    pg = stats.norm.cdf((mean[ia] - mean[ib]) / np.sqrt(sd[ia] ** 2 + sd[ib] ** 2))
            else:
                pg = (self.eta[:, ia, :] > self.eta[:, ib, :]).mean(axis=0)
            for k, c in enumerate(s.configs):
                rows.append({"player_a": a, "player_b": b, "config": c, "p_a_greater": float(pg[k]),
                             "observed_diff": float(obs.loc[c, a] - obs.loc[c, b])})
        return pd.DataFrame(rows)

    def rho_flip_draws(self) -> dict[tuple[str, str], np.ndarray]:
        """Per pair, rho_flip computed in every draw over the configurations where both were observed."""
        s = self.spec
        obs = s.grid.wide(s.benchmark).reindex(index=s.configs, columns=s.models).notna().to_numpy()
        out = {}
        for (ia, a), (ib, b) in itertools.combinations(enumerate(s.models), 2):
            both = obs[:, ia] & obs[:, ib]
            d = self.eta[:, ia, both] - self.eta[:, ib, both]
            npos, nneg = (d > 0).sum(axis=1), (d < 0).sum(axis=1)
            out[(a, b)] = np.minimum(npos, nneg) / max(both.sum(), 1)
        return out

    def pair_summary(self, level: float | None = None) -> pd.DataFrame:
        """Per pair: posterior mean/sd/interval of rho_flip, P(rho_flip > 0), and whether the model
        *claims* a reversal: some configuration with P(A>B|c) >= level and another with <= 1 - level."""
        level = self.level if level is None else level
        pg = self.p_greater()
        rows = []
        for (a, b), r in self.rho_flip_draws().items():
            p = pg[(pg["player_a"] == a) & (pg["player_b"] == b)]["p_a_greater"].to_numpy()
            lo, hi = np.quantile(r, [0.03, 0.97])
            n_a, n_b = int((p >= level).sum()), int((p <= 1 - level).sum())
            rows.append({"player_a": a, "player_b": b, "rho_flip_mean": float(r.mean()), "rho_flip_sd": float(r.std()),
                         "rho_flip_lo94": float(lo), "rho_flip_hi94": float(hi), "p_rho_flip_positive": float((r > 0).mean()),
                         "n_configs_a_credibly_better": n_a, "n_configs_b_credibly_better": n_b,
                         "claims_reversal": bool(n_a > 0 and n_b > 0)})
        return pd.DataFrame(rows)

    def orderings(self) -> pd.DataFrame:
        """Posterior over orderings: P(ordering is reached by some configuration) and expected count."""
        s = self.spec
        obs = s.grid.wide(s.benchmark).reindex(index=s.configs, columns=s.models).notna().all(axis=1).to_numpy()
        eta = self.eta[:, :, obs]
        counts: dict[str, np.ndarray] = {}
        n = eta.shape[0]
        for t in range(n):
            labs = [ordering_label(eta[t, :, k], s.models) for k in range(eta.shape[2])]
            for lab, cnt in zip(*np.unique(labs, return_counts=True)):
                counts.setdefault(lab, np.zeros(n))[t] = cnt
        rows = [{"ordering": k, "p_reachable": float((v > 0).mean()), "expected_count": float(v.mean())}
                for k, v in counts.items()]
        return pd.DataFrame(rows).sort_values("expected_count", ascending=False).reset_index(drop=True)

    def p_flip_summary(self) -> dict[tuple[str, str], dict]:
        """Compact per-pair summary used in the CLI JSON (``p_flip``)."""
        out = {}
        for r in self.pair_summary().to_dict(orient="records"):
            out[(r["player_a"], r["player_b"])] = {
                "method": self.method, "rho_flip_mean": r["rho_flip_mean"],
                "rho_flip_interval94": [r["rho_flip_lo94"], r["rho_flip_hi94"]],
                "p_rho_flip_positive": r["p_rho_flip_positive"], "claims_reversal": r["claims_reversal"]}
        return out
