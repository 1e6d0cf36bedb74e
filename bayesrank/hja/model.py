"""The HJA estimator: one object, ``fit(method="mle"|"laplace"|"nuts")``, labelled results.

``HJA(data, judge_col=..., rank=1|"auto").fit()`` returns :class:`HJAFit` with the consensus table
(player, score, se, lower, upper, rank, rank_ci, rank_ub), the judge table (γ_k with CI, residual norm ‖U_k‖, influence
flag), contrasts ``μ_i − μ_j``, judge deviations and pairwise probabilities ``p_kij`` with CIs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import norm

from bayesrank.errors import InputError
from bayesrank.hja.anchor import HJAParams, constraint_violations, sign_anchors
from bayesrank.hja.data import JudgePairCounts, from_comparisons, validate
from bayesrank.hja.fisher import deviation_gradient, manifold_covariance, probability_gradient, slices
from bayesrank.hja.mle import fit_constrained_mle, linear_predictor
from bayesrank.protocol import Diagnostics, Result
from bayesrank.report import to_jsonable

METHODS = ("mle", "laplace", "nuts")


def as_counts(data, judge_col: str | None = None, **read_options) -> JudgePairCounts:
    """Accept :class:`JudgePairCounts`, :class:`bayesrank.data.Comparisons`, a path, a bundled name or a
    DataFrame (``read_options``: ``columns``, ``outcome_map``, ``judge_cols`` of ``read_comparisons``)."""
    if isinstance(data, JudgePairCounts):
        return data
    from bayesrank.data import Comparisons, read_comparisons

    if not isinstance(data, Comparisons):
        data = read_comparisons(data, judge=judge_col, **{k: v for k, v in read_options.items() if v is not None})
    return from_comparisons(data)


def significance_ranks(est: np.ndarray, cov: np.ndarray, z: float, lower=None, upper=None) -> tuple:
    """``rank`` (by point score), ``rank_ci`` (1 + #players significantly ahead by the pairwise contrast
    test ``θ_b − θ_a > z·sd(θ_b − θ_a)``, correlation included) and ``rank_ub`` (LMArena: 1 + #players whose
    lower bound exceeds this player's upper bound) — the package's one definition (:mod:`bayesrank.bt.result`,
    docs/glossary.md)."""
    from bayesrank.bt.result import point_rank, rank_ci, rank_ub

    level = float(2 * norm.cdf(z) - 1)
    est = np.asarray(est, float)
    return (point_rank(est), rank_ci(est, cov, level),
            rank_ub(lower, upper) if lower is not None else None)


@dataclass(repr=False)  # the short repr of bayesrank.protocol.Result
class HJAFit(Result):
    """A fitted HJA model (a :class:`bayesrank.protocol.Result`, schema ``hja``).

    ``cov`` is the covariance of θ = (μ, γ, vec V, vec U) (None for NUTS); ``draws`` (NUTS only) holds
    identified, sign-aligned posterior draws of γ, μ, U, V. ``information`` names the covariance:
    ``"fisher"`` (expected information, the MLE default), ``"observed"``, or ``"laplace"`` (inverse
    Hessian of the log posterior = observed information plus the prior's curvature).
    """

    schema: ClassVar[str] = "hja"

    counts: JudgePairCounts
    params: HJAParams
    method: str
    diagnostics: Diagnostics
    loss: float
    cov: np.ndarray | None = None
    draws: dict | None = None
    idata: object = None
    level: float = 0.95
    information: str | None = None
    info: dict = field(default_factory=dict)
    model_check: dict | None = None
    model: object = field(default=None, repr=False)

    # ---------------------------------------------------------------- basics
    @property
    def converged(self) -> bool:
        return bool(self.diagnostics.converged)

    @property
    def rank(self) -> int:
        return self.params.rank

    @property
    def players(self):
        return self.counts.items

    items = players

    @property
    def judges(self):
        return self.counts.judges

    @property
    def z(self) -> float:
        return float(norm.ppf(0.5 + self.level / 2))

    @property
    def interval_kind(self) -> str:
        """``Wald (expected information)``, ``Wald (observed information)``, ``Laplace`` or
        ``equal-tailed credible`` (NUTS)."""
        if self.draws is not None:
            return "equal-tailed credible"
        if self.method == "laplace":
            return "Laplace"
        return f"Wald ({'expected' if self.information == 'fisher' else 'observed'} information)"

    SIGNIFICANCE_RULE: ClassVar[str] = ("b is significantly ahead of a when μ_b − μ_a > z·sd(μ_b − μ_a), z the two-sided "
                                        "normal quantile of level, sd from the fit's covariance (NUTS: posterior "
                                        "covariance); rank_ci = 1 + #players significantly ahead; rank_ub = LMArena's "
                                        "marginal-overlap rule")

    def _sl(self):
        return slices(self.counts.n_judges, self.counts.n_items, self.rank)

    def _interval(self, est, grad=None, draws=None):
        """Wald interval (delta method with ``grad``) or posterior quantiles (``draws``, shape (S, m))."""
        if draws is not None:
            a = (1 - self.level) / 2
            return (draws.mean(0), draws.std(0, ddof=1), np.quantile(draws, a, axis=0),
                    np.quantile(draws, 1 - a, axis=0))
        var = np.einsum("mp,pq,mq->m", grad, self.cov, grad)
        se = np.sqrt(np.maximum(var, 0))
        return est, se, est - self.z * se, est + self.z * se

    def mu_covariance(self) -> np.ndarray:
        """Covariance of the consensus scores μ (N × N): Fisher/Laplace block or posterior covariance."""
        if self.draws is not None:
            return np.atleast_2d(np.cov(self.draws["mu"], rowvar=False))
        sl = self._sl()["mu"]
        return self.cov[sl, sl]

    # ---------------------------------------------------------------- tables
    def table(self) -> pd.DataFrame:
        """Consensus table: player, score (μ, sum-to-zero logit scale), se, lower, upper, rank, rank_ci,
        rank_ub (docs/glossary.md), sorted by rank."""
        mu = self.params.mu
        if self.draws is not None:
            est, se, lo, hi = self._interval(None, draws=self.draws["mu"])
        else:
            G = np.zeros((len(mu), self.cov.shape[0]))
            G[np.arange(len(mu)), self._sl()["mu"].start + np.arange(len(mu))] = 1
            est, se, lo, hi = self._interval(mu, G)
        rank, rank_ci, rank_ub = significance_ranks(est, self.mu_covariance(), self.z, lo, hi)
        df = pd.DataFrame({"player": self.players, "score": est, "se": se, "lower": lo, "upper": hi, "rank": rank,
                           "rank_ci": rank_ci, "rank_ub": rank_ub})
        return df.sort_values(["rank", "player"], kind="stable").reset_index(drop=True)

    def consensus(self) -> pd.DataFrame:
        """The consensus table (same as :meth:`table`)."""
        return self.table()

    def judge_table(self, flag_ratio: float = 1.5) -> pd.DataFrame:
        """γ_k with CI, residual norm ‖U_k·‖ and the high-influence flag.

        flagged: above-average sensitivity (γ_k > 1) AND residual norm above ``flag_ratio`` × the
        median residual norm across judges — a judge that both weighs heavily on the consensus and
        deviates systematically from it.
        """
        g = self.params.gamma
        K = len(g)
        if self.draws is not None:
            est, se, lo, hi = self._interval(None, draws=self.draws["gamma"])
            res = np.linalg.norm(self.draws["U"], axis=-1).mean(0) if self.rank else np.zeros(K)
        else:
            G = np.zeros((K, self.cov.shape[0]))
            G[np.arange(K), self._sl()["gamma"].start + np.arange(K)] = 1
            est, se, lo, hi = self._interval(g, G)
            res = np.linalg.norm(self.params.U, axis=1) if self.rank else np.zeros(K)
        med = np.median(res)
        flagged = (est > 1.0) & (res > flag_ratio * med) & (res > 0)
        return pd.DataFrame({"judge": self.judges, "gamma": est, "se": se, "lower": lo, "upper": hi,
                             "residual_norm": res, "flagged": flagged,
                             "n_comparisons": self.counts.per_judge().to_numpy()})

    def contrast(self, player_a, player_b) -> pd.Series:
        """``μ_a − μ_b`` with SE, interval and the two-sided Wald p-value (NUTS: posterior sd, equal-tailed
        interval, and ``prob_positive`` = posterior P(μ_a > μ_b))."""
        a, b = self._index(player_a), self._index(player_b)
        out = {}
        if self.draws is not None:
            d = self.draws["mu"][:, a] - self.draws["mu"][:, b]
            est, se, lo, hi = self._interval(None, draws=d[:, None])
            out["prob_positive"] = float((d > 0).mean())
        else:
            G = np.zeros((1, self.cov.shape[0]))
            G[0, a] += 1
            G[0, b] -= 1
            est, se, lo, hi = self._interval(np.array([self.params.mu[a] - self.params.mu[b]]), G)
        est, se = float(np.ravel(est)[0]), float(np.ravel(se)[0])
        p = float(2 * norm.sf(abs(est) / se)) if se > 0 else float("nan")
        return pd.Series({"estimate": est, "se": se, "lower": float(np.ravel(lo)[0]), "upper": float(np.ravel(hi)[0]),
                          "p_value": p, **out})

    def deviations(self) -> pd.DataFrame:
        """Judge deviations ``D_ki = S_ki − μ_i = (γ_k − 1)μ_i + U_k·V_i·`` with intervals (long table)."""
        K, N = self.counts.n_judges, self.counts.n_items
        D = self.params.scores - self.params.mu[None, :]
        if self.draws is not None:
            Sd = np.einsum("sk,si->ski", self.draws["gamma"], self.draws["mu"]) + np.einsum(
                "skc,sic->ski", self.draws["U"], self.draws["V"])
            Dd = (Sd - self.draws["mu"][:, None, :]).reshape(len(Sd), K * N)
            est, se, lo, hi = self._interval(None, draws=Dd)
        else:
            est, se, lo, hi = self._interval(D.ravel(), deviation_gradient(self.params))
        kk, ii = np.meshgrid(np.arange(K), np.arange(N), indexing="ij")
        return pd.DataFrame({"judge": self.judges[kk.ravel()], "player": self.players[ii.ravel()],
                             "deviation": est, "se": se, "lower": lo, "upper": hi})

    def probability(self, judge, player_a, player_b) -> pd.Series:
        """``p_kab = P(judge k prefers a over b)`` with a delta-method (logit-scale) interval."""
        k = int(np.flatnonzero(self.judges == judge)[0]) if judge in set(self.judges) else None
        if k is None:
            raise InputError(f"unknown judge {judge!r}; judges are {list(self.judges)}")
        a, b = self._index(player_a), self._index(player_b)
        if self.draws is not None:
            Sd = self.draws["gamma"][:, k, None] * self.draws["mu"] + np.einsum(
                "sc,sic->si", self.draws["U"][:, k], self.draws["V"])
            pd_ = expit(Sd[:, a] - Sd[:, b])
            est, se, lo, hi = self._interval(None, draws=pd_[:, None])
            return pd.Series({"p": float(est[0]), "se": float(se[0]), "lower": float(lo[0]), "upper": float(hi[0])})
        prob, grad = probability_gradient(self.params, [k], [a], [b])
        # interval on the logit scale, mapped back (stays inside (0, 1))
        eta = np.log(prob / (1 - prob))
        g_eta = grad / (prob * (1 - prob))[:, None]
        se_eta = float(np.sqrt(g_eta @ self.cov @ g_eta.T)[0, 0])
        se_p = float(np.sqrt(grad @ self.cov @ grad.T)[0, 0])
        return pd.Series({"p": float(prob[0]), "se": se_p, "lower": float(expit(eta[0] - self.z * se_eta)),
                          "upper": float(expit(eta[0] + self.z * se_eta))})

    def _index(self, name) -> int:
        if isinstance(name, (int, np.integer)):
            return int(name)
        hit = np.flatnonzero(self.players == name)
        if not len(hit):
            raise InputError(f"unknown player {name!r}")
        return int(hit[0])

    # ---------------------------------------------------------------- prediction
    def predict_proba(self, counts: JudgePairCounts) -> np.ndarray:
        """P(player i beats player j) for every row of ``counts`` (same judges/players order)."""
        return expit(linear_predictor(counts, self.params))

    def constraint_check(self) -> dict:
        p = self.params
        return constraint_violations(p.gamma, p.mu, p.U, p.V, sign_anchors(p.V) if self.rank else None)

    def beside_pooled_bt(self, bt_fit=None) -> pd.DataFrame:
        """The consensus beside pooled Bradley–Terry (all judges pooled into one score vector).

        ``bt_fit``: a :class:`bayesrank.bt.LeaderboardFit` on the same comparisons; default: the pooled
        half-win MLE with Fisher intervals (``BradleyTerry(counts.pooled()).fit("mle")``, the same
        likelihood as HJA with one judge) at this fit's level. Columns ``player``, ``consensus_*`` and
        ``pooled_bt_*`` (score, lower, upper, rank, rank_ci) and ``rank_shift`` = pooled BT rank −
        consensus rank (positive: pooling ranks the player lower)."""
        if bt_fit is None:
            from bayesrank.bt.api import BradleyTerry

            bt_fit = BradleyTerry(self.counts.pooled(), level=self.level).fit("mle")
        cols = ["player", "score", "lower", "upper", "rank", "rank_ci"]
        hja = self.table()[cols].set_axis(["player"] + [f"consensus_{c}" for c in cols[1:]], axis=1)
        bt = bt_fit.table()[cols].set_axis(["player"] + [f"pooled_bt_{c}" for c in cols[1:]], axis=1)
        out = hja.assign(player=hja.player.astype(str)).merge(bt, on="player", how="left", validate="one_to_one")
        out["rank_shift"] = out["pooled_bt_rank"] - out["consensus_rank"]
        return out

    # ---------------------------------------------------------------- protocol views
    def summary(self) -> str:
        c = self.counts
        lines = [f"HJA rank {self.rank} ({self.method}; intervals: {self.interval_kind}, level {self.level:g})",
                 f"{c.total:g} comparisons, {c.n_judges} judges, {c.n_items} players; {c.excluded.report()}",
                 self.diagnostics.line(), "", "consensus:"]
        with pd.option_context("display.width", 160, "display.max_columns", 20):
            lines.append(self.table().to_string(index=False, float_format=lambda v: f"{v:.3f}"))
            lines += ["", "judges:", self.judge_table().to_string(index=False, float_format=lambda v: f"{v:.3f}")]
        if self.model_check:
            ppc = self.model_check.get("ppc")
            if ppc is not None:
                lines += ["", "posterior predictive check per judge (Pearson X², p = P(X²_rep ≥ X²_obs)):",
                          pd.DataFrame(ppc).to_string(index=False, float_format=lambda v: f"{v:.3f}")]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        cons = self.table()
        jt = self.judge_table()
        d = {**self._envelope(), "method": self.method, "rank": int(self.rank), "level": float(self.level),
             "interval": self.interval_kind, "information": self.information,
             "significance_rule": self.SIGNIFICANCE_RULE, "scale": "logit, sum-to-zero",
             "neg_loglik": float(self.loss), "n_comparisons": float(self.counts.total),
             "n_judges": int(self.counts.n_judges), "n_players": int(self.counts.n_items),
             "consensus": cons[["player", "score", "se", "lower", "upper", "rank", "rank_ci", "rank_ub"]],
             "judges": jt[["judge", "gamma", "se", "lower", "upper", "residual_norm", "flagged", "n_comparisons"]],
             "singular_values": self.params.singular_values, "excluded": self.counts.excluded.to_dict(),
             "n_excluded": int(self.counts.excluded.total), "excluded_by_reason": dict(self.counts.excluded.counts)}
        if "starts" in self.info:
            d["starts"] = {"losses": list(self.info["starts"]), "disagree": bool(self.info["starts_disagree"]),
                           "max_score_gap": float(self.info["max_score_gap_between_starts"])}
        if self.info.get("rank_selection") is not None:
            d["rank_selection"] = self.info["rank_selection"]
        if self.info.get("rank_fallback"):
            d["rank_fallback"] = self.info["rank_fallback"]
        if self.model_check:
            d["model_check"] = self.model_check
        return to_jsonable(d)

    def plot(self, ax=None, **kwargs):
        """Judges in the (γ_k, ‖U_k‖) plane with γ intervals; flagged judges in red."""
        from bayesrank.hja.diagnostics import plot_judges

        return plot_judges(self, kwargs.get("path"), ax=ax)


def held_out_loss(params: HJAParams, test: JudgePairCounts) -> tuple[float, float]:
    """(mean log-loss per held-out comparison, accuracy of the majority call) on ``test`` counts."""
    eta = linear_predictor(test, params)
    return pair_prediction_scores(expit(eta), test)


def pair_prediction_scores(prob: np.ndarray, test: JudgePairCounts) -> tuple[float, float]:
    """(mean log-loss, accuracy) per held-out comparison; NaN when ``test`` holds no comparisons."""
    if test.total <= 0:
        return float("nan"), float("nan")
    prob = np.clip(prob, 1e-12, 1 - 1e-12)
    ll = -(test.y * np.log(prob) + (test.n - test.y) * np.log1p(-prob)).sum() / max(test.total, 1e-300)
    # accuracy: each held-out comparison scored 1 if the predicted side won (a tie counts half)
    acc = (np.where(prob >= 0.5, test.y, test.n - test.y)).sum() / max(test.total, 1e-300)
    return float(ll), float(acc)


def select_rank(counts: JudgePairCounts, max_rank: int = 3, n_splits: int = 3, test_frac: float = 0.2,
                seed: int = 0) -> pd.DataFrame:
    """Held-out log-likelihood for r = 0..max_rank (random thinning splits of the comparisons).

    Rule: the chosen rank is the r with the smallest mean held-out log-loss per comparison; a larger r
    must beat every smaller one by more than one standard error of the paired split-wise difference,
    otherwise the smaller r is kept (parsimony).
    """
    from bayesrank.hja.data import thin_split

    K, N = counts.n_judges, counts.n_items
    max_rank = int(min(max_rank, K - 1, N - 2))
    losses = np.full((max_rank + 1, n_splits), np.nan)
    for s in range(n_splits):
        train, test = thin_split(counts, test_frac, seed + s)
        for r in range(max_rank + 1):
            try:
                res = fit_constrained_mle(train, r, n_starts=1, seed=seed, warn=False)
            except InputError:
                continue
            losses[r, s] = held_out_loss(res.best.params, test)[0]
    mean = np.nanmean(losses, axis=1)
    chosen = 0
    for r in range(1, max_rank + 1):
        diff = losses[chosen] - losses[r]  # positive = r better
        se = diff.std(ddof=1) / np.sqrt(n_splits) if n_splits > 1 else 0.0
        if np.isfinite(diff.mean()) and diff.mean() > max(se, 1e-12):
            chosen = r
    return pd.DataFrame({"rank": np.arange(max_rank + 1), "heldout_logloss": mean,
                         "chosen": np.arange(max_rank + 1) == chosen})


class HJA:
    """Heterogeneous judge-aware ranking ``logit p_kij = γ_k(μ_i − μ_j) + U_k·(V_i· − V_j·)ᵀ``.

    ``data``: Comparisons with a judge column, a path/DataFrame (read with ``judge_col``) or
    :class:`JudgePairCounts`. ``rank``: int or ``"auto"`` (:func:`select_rank`).
    """

    def __init__(self, data, judge_col: str | None = None, rank: int | str = 1, min_per_judge: float = 20.0,
                 max_rank: int = 3, level: float = 0.95, seed: int = 0, *, columns=None, outcome_map=None,
                 judge_cols=None):
        self.counts = as_counts(data, judge_col, columns=columns, outcome_map=outcome_map, judge_cols=judge_cols)
        self.seed = seed
        self.level = level
        self.rank_selection = None
        self.rank_fallback = None  # with rank="auto": why a smaller rank than the chosen one was fitted
        if rank == "auto":
            validate(self.counts, 0, min_per_judge)
            self.rank_selection = select_rank(self.counts, max_rank=max_rank, seed=seed)
            rank = int(self.rank_selection.loc[self.rank_selection.chosen, "rank"].iloc[0])
        self.rank = int(rank)
        validate(self.counts, self.rank, min_per_judge)

    def fit_mle(self, n_starts: int = 3, information: str = "fisher", **kw) -> HJAFit:
        """Constrained MLE at ``self.rank`` (see :meth:`_fit_mle`). With ``rank="auto"`` a chosen rank
        that the data do not identify (singular information, :class:`NotIdentifiedError`) falls back
        to the next smaller rank, down to 0; the selection table records it (``identified``)."""
        from bayesrank.hja.fisher import NotIdentifiedError

        while True:
            try:
                fit = self._fit_mle(n_starts, information, **kw)
            except NotIdentifiedError as err:
                if self.rank_selection is None or self.rank == 0:
                    raise
                self._not_identified(err)
                continue
            if self.rank_selection is not None:
                self._identified_column()
                self.rank_selection.loc[self.rank_selection["rank"] == self.rank, "identified"] = True
                fit.info["rank_selection"] = self.rank_selection
                if self.rank_fallback:
                    fit.info["rank_fallback"] = self.rank_fallback
            return fit

    def _identified_column(self) -> None:
        if "identified" not in self.rank_selection:  # None: not tried
            self.rank_selection["identified"] = pd.Series([None] * len(self.rank_selection), dtype=object)

    def _not_identified(self, err) -> None:
        self._identified_column()
        tab = self.rank_selection
        tab.loc[tab["rank"] == self.rank, "identified"] = False
        tab["chosen"] = tab["rank"] == self.rank - 1
        why = str(err).split(" — ")[0].removeprefix(f"HJA of rank {self.rank} is not identified: ")
        note = f"rank {self.rank} (chosen by held-out fit) is not identified on these data: {why}; rank {self.rank - 1} used"
        self.rank_fallback = f"{self.rank_fallback}; {note}" if self.rank_fallback else note
        self.rank -= 1

    def _fit_mle(self, n_starts: int = 3, information: str = "fisher", **kw) -> HJAFit:
        """Constrained MLE (alternating proximal + re-anchoring, Newton polish on the manifold) with Wald
        intervals from the ``information`` matrix on the constraint manifold.

        Default ``information="fisher"`` (expected information ``Jᵀ diag(n p(1−p)) J``): it is positive
        semi-definite by construction (Gauss–Newton), does not depend on the residuals ``y − n p`` of a
        non-convex bilinear fit, and its intervals cover at the nominal rate in the simulation study
        (models/hja.md). ``"observed"`` adds the residual-weighted curvature of the bilinear predictor;
        it is what the Laplace approximation of the PyMC model reproduces in the flat-prior limit.
        """
        if information not in ("fisher", "observed"):
            raise InputError(f"information must be 'fisher' or 'observed', got {information!r}")
        res = fit_constrained_mle(self.counts, self.rank, n_starts=n_starts, seed=self.seed, **kw)
        b = res.best
        cov = manifold_covariance(self.counts, b.params, information)
        info = {"iterations": b.iterations, "starts": [r.loss for r in res.starts],
                "starts_converged": [r.converged for r in res.starts], "max_score_gap_between_starts": res.max_score_gap,
                "starts_disagree": res.disagree, "newton_iterations": res.newton_iterations}
        if self.rank_selection is not None:
            info["rank_selection"] = self.rank_selection
        status = (f"alternating {'converged' if b.converged else 'stopped'} after {b.iterations} sweeps; "
                  f"manifold Newton {'converged' if res.newton_converged else 'did not converge'} "
                  f"in {res.newton_iterations} steps")
        diag = Diagnostics.optimizer("HJA constrained MLE", b.converged or res.newton_converged, res.gradient_norm,
                                     iterations=b.iterations + res.newton_iterations, status=status,
                                     starts_disagree=bool(res.disagree))
        return HJAFit(self.counts, b.params, "mle", diag, b.loss, cov=cov, level=self.level,
                      information=information, info=info)

    def fit(self, method: str = "mle", **kw) -> HJAFit:
        if method == "mle":
            return self.fit_mle(**kw)
        if method == "laplace":
            from bayesrank.hja.pymc_model import fit_laplace

            return fit_laplace(self, **kw)
        if method == "nuts":
            from bayesrank.hja.pymc_model import fit_nuts

            return fit_nuts(self, **kw)
        raise InputError(f"method must be one of {METHODS}, got {method!r}")
