"""The signed calibration gap ``g = CE(c_verb) − CE(c_tok)`` on paired items, per group and
estimator: plug-in estimate, paired bootstrap interval, the paired-model posterior of the SAME
functional (:mod:`.posterior`), and the protocol card of every result, in one
:class:`CalibrationReport` (a :class:`bayesrank.protocol.Result`, schema ``calibration``)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from bayesrank.errors import InputError, ProtocolWarning
from bayesrank.protocol import Diagnostics, Result

from .bootstrap import BOOTSTRAP_WORLD_TRUTH, bootstrap_estimator, bootstrap_gap
from .estimators import CALIBRATION_ERRORS, SCORES
from .protocol import PROTOCOL_COLUMNS, ProtocolCard, card_from_levels
from .records import ConfidenceRecords

DEFAULT_ESTIMATORS = ("ece", "kde", "ks", "smece")
DEFAULT_SCORES = ("brier", "nll", "auroc")
BOOTSTRAP_INTERVAL = "paired percentile bootstrap (items resampled with both readouts)"
DEBIASED_BOOTSTRAP_INTERVAL = ("paired recentred percentile bootstrap (items resampled with both readouts; percentile "
                               "interval shifted by the debiasing correction: replicates' errors measured from the "
                               "un-debiased plug-in, the bootstrap world's truth)")


@dataclass
class GapResult:
    """One gap: its estimator, bootstrap interval, optional posterior and its protocol card."""

    group: dict
    estimator: str
    n: int
    verbal: dict
    token: dict
    gap: float
    gap_ci: tuple[float, float]
    card: ProtocolCard
    posterior: dict | None = None
    n_boot: int = 0
    n_failed: int = 0

    @property
    def cell(self) -> str:
        return "|".join(str(v) for v in self.group.values()) or "all"

    def to_dict(self) -> dict:
        post = None
        if self.posterior:
            post = {"functional": self.posterior["functional"], "verbal_mean": self.posterior["verbal_mean"],
                    "token_mean": self.posterior["token_mean"], "mean": self.posterior["posterior_mean"],
                    "lower": self.posterior["posterior_lower"], "upper": self.posterior["posterior_upper"],
                    "p_gap_negative": self.posterior["p_gap_negative"], "n_draws": int(self.posterior["n_draws"])}
        return {
            "group": {k: str(v) for k, v in self.group.items()}, "cell": self.cell, "estimator": self.estimator,
            "n": self.n,
            "verbal": {"estimate": self.verbal["estimate"], "lower": self.verbal["ci"][0], "upper": self.verbal["ci"][1]},
            "token": {"estimate": self.token["estimate"], "lower": self.token["ci"][0], "upper": self.token["ci"][1]},
            "gap": {"estimate": self.gap, "lower": self.gap_ci[0], "upper": self.gap_ci[1],
                    "interval": DEBIASED_BOOTSTRAP_INTERVAL if self.estimator in BOOTSTRAP_WORLD_TRUTH else BOOTSTRAP_INTERVAL,
                    "n_boot": self.n_boot, "n_failed": self.n_failed},
            "posterior": post,
            "protocol_card": {**self.card.to_dict(), "missing": self.card.missing},
        }


def calibration_gap(
    verbal, token, correct, estimator: str = "ece", *, card: ProtocolCard | None = None,
    n_boot: int = 1000, level: float = 0.95, seed: int = 0, strict: bool = False, group: dict | None = None,
) -> GapResult:
    """``g = E(verbal) − E(token)`` (negative: verbal better calibrated) with a paired bootstrap interval.

    ``card`` is the protocol card; fields left unspecified trigger a :class:`ProtocolWarning`
    (``strict=True``: :class:`~bayesrank.calibration.protocol.ProtocolIncompleteError`)."""
    if estimator not in CALIBRATION_ERRORS:
        raise InputError(f"unknown calibration estimator {estimator!r}; expected one of {', '.join(CALIBRATION_ERRORS)}")
    card = card or ProtocolCard(estimator=estimator)
    if card.estimator != estimator:
        card = replace(card, estimator=estimator)
    card.check(strict=strict, where=", ".join(f"{k}={v}" for k, v in (group or {}).items()))
    bv, bt, bg = bootstrap_gap(estimator, verbal, token, correct, n_boot=n_boot, level=level, seed=seed)
    return GapResult(group or {}, estimator, int(np.size(correct)), bv.to_dict(), bt.to_dict(), bg.estimate, (bg.lo, bg.hi),
                     card, n_boot=int(n_boot), n_failed=int((~np.isfinite(bg.draws)).sum()))


@dataclass(repr=False)  # the short repr of bayesrank.protocol.Result
class CalibrationReport(Result):
    """Everything one analysis produced (the ``calibration`` result of the protocol).

    ``table()`` is the gap table (one row per group × estimator: plug-in verbal/token/gap, paired
    bootstrap interval, posterior mean and interval of the same functional, P(g < 0), protocol-card
    status); ``signals`` holds per-signal estimates and the secondary scores; ``cards()`` the
    protocol cards with missing fields; ``plot()`` the reliability diagrams; ``diagnostics``
    combines the exact plug-in, the bootstrap and the posterior sampler."""

    schema = "calibration"

    by: list[str]
    signals: pd.DataFrame = field(repr=False)
    gaps: pd.DataFrame = field(repr=False)
    results: list[GapResult] = field(repr=False)
    exclusions: dict
    posterior: object | None = field(default=None, repr=False)
    records: ConfidenceRecords | None = field(default=None, repr=False)
    level: float = 0.95
    seed: int = 0
    estimators: tuple = DEFAULT_ESTIMATORS
    scores: tuple = DEFAULT_SCORES
    score_failed: int = 0
    score_boots: int = 0
    _diag: Diagnostics | None = field(default=None, repr=False)

    # ------------------------------------------------------------------ protocol
    def table(self) -> pd.DataFrame:
        """The gap table (columns named as in docs/glossary.md: ``*_lower``/``*_upper`` at ``level``)."""
        return self.gaps.copy()

    def cards(self) -> pd.DataFrame:
        """One protocol card per group (estimator listed separately), missing fields flagged."""
        rows, seen = [], set()
        for r in self.results:
            if r.cell in seen:
                continue
            seen.add(r.cell)
            d = r.card.to_dict()
            d.pop("estimator")
            missing = [m for m in r.card.missing if m != "estimator"]
            rows.append({**r.group, **d, "complete": not missing, "missing": ", ".join(missing)})
        return pd.DataFrame(rows)

    def summary(self) -> str:
        cols = [*self.by, "estimator", "n", "verbal", "token", "gap", "gap_lower", "gap_upper", "posterior_mean",
                "posterior_lower", "posterior_upper", "p_gap_negative", "protocol_complete"]
        tab = self.gaps[[c for c in cols if c in self.gaps.columns]]
        lines = [f"calibration gap g = CE(verbal) - CE(token) (negative: verbal better calibrated); "
                 f"{self.level:.0%} paired bootstrap interval"
                 + ("; posterior of the same functional (paired model)" if self.posterior is not None else ""),
                 tab.to_string(index=False, float_format=lambda v: f"{v:.3f}")]
        incomplete = self.cards()
        incomplete = incomplete[~incomplete["complete"]] if len(incomplete) else incomplete
        for _, row in incomplete.iterrows():
            name = "|".join(str(row[b]) for b in self.by) or "all"
            lines.append(f"protocol card incomplete for {name}: {row['missing']} unspecified")
        lines.append(self.diagnostics.line())
        return "\n".join(lines)

    @property
    def diagnostics(self) -> Diagnostics:
        if self._diag is None:
            self._diag = _combined_diagnostics(self)
        return self._diag

    def shift_summary(self) -> pd.DataFrame:
        """Mean absolute shift of the plug-in g along every grouping column that varies and along
        the estimator (:func:`.shift.protocol_shift`); empty when nothing varies."""
        from .shift import protocol_shift

        axes = [b for b in self.by if self.gaps[b].nunique() > 1] + (["estimator"] if self.gaps["estimator"].nunique() > 1 else [])
        if not axes:
            return pd.DataFrame()
        return protocol_shift(self.gaps[[*self.by, "estimator", "gap"]], axes, columns=[*self.by, "estimator"])[1]

    def to_dict(self) -> dict:
        scores = self.signals[self.signals["estimator"].isin(list(SCORES))]
        out = {
            **self._envelope(),
            "level": self.level,
            "seed": self.seed,
            "by": list(self.by),
            "n_items": int(sum(r.n for r in self.results if r.estimator == self.results[0].estimator)),
            "estimators": list(self.estimators),
            "scores": list(self.scores),
            "exclusions": self.exclusions,
            "n_excluded": int(self.exclusions.get("total", 0)),
            "excluded_by_reason": dict(self.exclusions.get("by_reason", {})),
            "gaps": [r.to_dict() for r in self.results],
            "secondary_scores": [
                {"group": {b: str(row[b]) for b in self.by}, "signal": row["signal"], "score": row["estimator"],
                 "estimate": row["value"], "lower": row["lo"], "upper": row["hi"], "n": int(row["n"])}
                for _, row in scores.iterrows()],
            "protocol_cards": [
                {"group": {b: str(row[b]) for b in self.by}, **{k: row[k] for k in PROTOCOL_FIELDS},
                 "complete": bool(row["complete"]), "missing": [m for m in row["missing"].split(", ") if m]}
                for _, row in self.cards().iterrows()],
            "shift_summary": self.shift_summary(),
            "posterior": None,
        }
        if self.posterior is not None:
            p = self.posterior
            out["posterior"] = {
                "model": "paired: logit P(correct | v, t) = alpha + f_v(logit v) + f_t(logit t), piecewise linear",
                "item_weights": p.item_weights, "sampler": p.sampler,
                "chains": int(p.idata["posterior"].sizes["chain"]), "draws": int(p.idata["posterior"].sizes["draw"]),
                "posterior_predictive_check": p.ppc_summary()}
        return out

    def plot(self, ax=None, group: str | None = None, n_bins: int = 10, **kwargs):
        """Reliability diagrams (verbal | token) of every group — or of ``group`` (its cell name,
        e.g. ``"prompt1"``) — with the paired posterior's expected accuracy per bin and its
        posterior predictive band when a posterior was fitted. Returns the Figure."""
        from .plots import reliability_diagrams

        if self.records is None:
            raise InputError("this report was built without its records; nothing to plot")
        groups = [(("|".join(map(str, k)) or "all"), g) for k, g in self.records.groups(self.by)]
        kept = {r.cell for r in self.results}
        groups = [(name, g) for name, g in groups if name in kept and (group is None or name == group)]
        if not groups:
            raise InputError(f"no group {group!r}; groups: {', '.join(sorted(kept))}")
        if ax is None:
            import matplotlib.pyplot as plt

            fig, axes = plt.subplots(len(groups), 2, figsize=(9, 4.0 * len(groups)), sharey=True, squeeze=False)
        else:
            axes = np.atleast_2d(np.asarray(ax, dtype=object))
            fig = axes.flat[0].figure
        for row, (name, g) in zip(axes, groups):
            reliability_diagrams(g["verbal"], g["token"], g["correct"], title=name, posterior=self.posterior, cell=name,
                                 n_bins=n_bins, ax=row)
        return fig

    def plot_gaps(self, ax=None):
        """Forest plot of g per group and estimator: bootstrap (plug-in) and posterior intervals."""
        from .plots import gap_forest

        return gap_forest(self.gaps, label_cols=[*self.by, "estimator"], ax=ax)


PROTOCOL_FIELDS = ("elicitation_source", "scored_answer", "readout", "conditioning_context")


def _combined_diagnostics(rep: CalibrationReport) -> Diagnostics:
    """Composite: plug-in estimators (exact), the paired bootstrap (resampling: non-finite replicates
    counted and excluded from the percentile interval) and, when fitted, the posterior (NUTS R-hat,
    ESS, divergences)."""
    n_boot = sum(r.n_boot for r in rep.results) + rep.score_boots
    n_failed = sum(r.n_failed for r in rep.results) + rep.score_failed
    plug_in = Diagnostics.exact("plug-in estimators")
    parts = {"plug-in": plug_in,
             "bootstrap": Diagnostics.resampling("paired bootstrap", plug_in, n_boot, n_failed,
                                                 "non-finite replicates excluded from the percentile interval")}
    if rep.posterior is not None:
        parts["posterior"] = rep.posterior.diagnostics
    return Diagnostics.combine("calibration", parts)


def analyze(
    records: ConfidenceRecords,
    *,
    by=("model", "dataset"),
    estimators=DEFAULT_ESTIMATORS,
    scores=DEFAULT_SCORES,
    n_boot: int = 500,
    level: float = 0.95,
    seed: int = 0,
    posterior: bool = True,
    posterior_kwargs: dict | None = None,
    strict: bool = False,
    min_items: int = 2,
) -> CalibrationReport:
    """Gap per group × estimator (paired bootstrap interval), per-signal scores, and
    (``posterior=True``) the paired-model posterior of every gap's functional, with protocol cards.

    ``by`` columns must be in the data (:class:`InputError` otherwise). Groups with fewer than
    ``min_items`` paired items are reported as excluded (never silently)."""
    by = [b for b in (by or []) if b]
    estimators, scores = tuple(estimators), tuple(scores)
    for e in estimators:
        if e not in CALIBRATION_ERRORS:
            raise InputError(f"unknown estimator {e!r}; expected among {', '.join(CALIBRATION_ERRORS)}")
    for s in scores:
        if s not in SCORES:
            raise InputError(f"unknown score {s!r}; expected among {', '.join(SCORES)}")
    if not 0 < level < 1:
        raise InputError(f"--level {level}; expected a number strictly between 0 and 1")
    if len(records) == 0:
        raise InputError(f"no paired items left to analyse ({records.exclusions.report()})")
    excluded_groups = {}
    groups = []
    for key, g in records.groups(by):
        name = "|".join(map(str, key)) or "all"
        if len(g) < min_items:
            excluded_groups[name] = len(g)
            continue
        groups.append((name, dict(zip(by, key)), g))
    if not groups:
        raise InputError(f"every group has fewer than {min_items} paired items: {excluded_groups}")
    exclusions = {**records.exclusions.to_dict(), "groups_too_small": excluded_groups}
    if excluded_groups:
        warnings.warn(f"groups with fewer than {min_items} paired items excluded: {excluded_groups}", UserWarning, stacklevel=2)

    # protocol cards (checked once per group, before any heavy work, so strict fails fast)
    cards = {}
    for name, _gdict, g in groups:
        levels = {col: g[col].unique() for col in PROTOCOL_COLUMNS if col in g.columns}
        cards[name] = card_from_levels(levels, ",".join(estimators))
        cards[name].check(strict=strict, where=name)

    post = None
    post_table = pd.DataFrame()
    if posterior:
        from .posterior import fit_gap_posterior

        cells = {name: (g["verbal"].to_numpy(), g["token"].to_numpy(), g["correct"].to_numpy()) for name, _, g in groups}
        from .functionals import FUNCTIONALS

        post = fit_gap_posterior(cells, seed=seed, level=level, **(posterior_kwargs or {}))
        with_functional = [e for e in estimators if e in FUNCTIONALS]  # ece2_debiased: bootstrap only (docs)
        post_table = post.gap_summary(with_functional) if with_functional else pd.DataFrame()

    sig_rows, gap_rows, results = [], [], []
    score_failed = score_boots = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ProtocolWarning)  # already reported once per group above
        for gi, (name, gdict, g) in enumerate(groups):
            v, t, y = g["verbal"].to_numpy(), g["token"].to_numpy(), g["correct"].to_numpy()
            base = cards[name]
            for ei, est in enumerate(estimators):
                card = ProtocolCard(base.elicitation_source, base.scored_answer, base.readout, base.conditioning_context, est)
                res = calibration_gap(v, t, y, est, card=card, n_boot=n_boot, level=level, seed=seed + 1000 * gi + ei, group=gdict)
                if not post_table.empty:
                    row = post_table[(post_table["cell"] == name) & (post_table["estimator"] == est)]
                    res.posterior = row.iloc[0].to_dict() if len(row) else None
                results.append(res)
                for sig in ("verbal", "token"):
                    d = getattr(res, sig)
                    sig_rows.append({**gdict, "signal": sig, "estimator": est, "value": d["estimate"], "lo": d["ci"][0], "hi": d["ci"][1], "n": res.n})
                p = res.posterior or {}
                missing = [m for m in card.missing if m != "estimator"]
                gap_rows.append({
                    **gdict, "estimator": est, "n": res.n, "verbal": res.verbal["estimate"], "token": res.token["estimate"],
                    "gap": res.gap, "gap_lower": res.gap_ci[0], "gap_upper": res.gap_ci[1],
                    "posterior_mean": p.get("posterior_mean", np.nan), "posterior_lower": p.get("posterior_lower", np.nan),
                    "posterior_upper": p.get("posterior_upper", np.nan), "p_gap_negative": p.get("p_gap_negative", np.nan),
                    "protocol_complete": not missing, "protocol_missing": ", ".join(missing),
                    **{f"card_{k}": val for k, val in card.to_dict().items() if k not in ("complete", "estimator")},
                })
            for si, sc in enumerate(scores):
                for sig, arr in (("verbal", v), ("token", t)):
                    b = bootstrap_estimator(sc, arr, y, n_boot=n_boot, level=level, seed=seed + 1000 * gi + 100 + si)
                    score_failed += int((~np.isfinite(b.draws)).sum()) if np.isfinite(b.estimate) else 0
                    score_boots += n_boot
                    sig_rows.append({**gdict, "signal": sig, "estimator": sc, "value": b.estimate, "lo": b.lo, "hi": b.hi, "n": len(y)})
    return CalibrationReport(by, pd.DataFrame(sig_rows), pd.DataFrame(gap_rows), results, exclusions, post, records,
                             level=level, seed=seed, estimators=estimators, scores=scores, score_failed=score_failed,
                             score_boots=score_boots)
