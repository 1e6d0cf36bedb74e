"""The signed calibration gap ``g = E(c_verb) − E(c_tok)`` on paired items, per group and estimator,
with bootstrap CIs, the posterior from :mod:`.posterior`, and the protocol card of each result."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from bayesrank.errors import InputError, ProtocolWarning

from .bootstrap import bootstrap_estimator, bootstrap_gap
from .estimators import CALIBRATION_ERRORS, SCORES
from .protocol import PROTOCOL_COLUMNS, ProtocolCard, card_from_levels
from .records import ConfidenceRecords

DEFAULT_ESTIMATORS = ("ece", "kde", "ks", "smece")
DEFAULT_SCORES = ("brier", "nll", "auroc")


@dataclass
class GapResult:
    """One gap: its estimator, bootstrap CI, optional posterior and its protocol card."""

    group: dict
    estimator: str
    n: int
    verbal: dict
    token: dict
    gap: float
    gap_ci: tuple[float, float]
    card: ProtocolCard
    posterior: dict | None = None

    def to_dict(self) -> dict:
        d = {
            "estimator": self.estimator,
            "n": self.n,
            "verbal": self.verbal,
            "token": self.token,
            "gap": {"estimate": self.gap, "bootstrap_ci": list(self.gap_ci)},
            "protocol_card": self.card.to_dict(),
        }
        if self.posterior:
            d["gap"].update(
                posterior_mean=self.posterior["post_mean"],
                posterior_interval=[self.posterior["post_lo"], self.posterior["post_hi"]],
                posterior_functional=self.posterior["functional"],
            )
            d["p_gap_negative"] = self.posterior["p_gap_negative"]
        else:
            d["p_gap_negative"] = None
        return d


def calibration_gap(
    verbal, token, correct, estimator: str = "ece", *, card: ProtocolCard | None = None,
    n_boot: int = 1000, level: float = 0.95, seed: int = 0, strict: bool = False, group: dict | None = None,
) -> GapResult:
    """``g = E(verbal) − E(token)`` (negative: verbal better calibrated) with a paired bootstrap CI.

    ``card`` is the protocol card; fields left unspecified trigger a :class:`ProtocolWarning`
    (``strict=True``: :class:`~bayesrank.calibration.protocol.ProtocolIncompleteError`)."""
    if estimator not in CALIBRATION_ERRORS:
        raise InputError(f"unknown calibration estimator {estimator!r}; expected one of {', '.join(CALIBRATION_ERRORS)}")
    card = card or ProtocolCard(estimator=estimator)
    if card.estimator != estimator:
        card = replace(card, estimator=estimator)
    card.check(strict=strict, where=", ".join(f"{k}={v}" for k, v in (group or {}).items()))
    bv, bt, bg = bootstrap_gap(estimator, verbal, token, correct, n_boot=n_boot, level=level, seed=seed)
    return GapResult(group or {}, estimator, int(np.size(correct)), bv.to_dict(), bt.to_dict(), bg.estimate, (bg.lo, bg.hi), card)


@dataclass
class CalibrationReport:
    """Everything one analysis produced: per-signal estimates, gaps with cards, posterior, exclusions."""

    by: list[str]
    signals: pd.DataFrame
    gaps: pd.DataFrame
    results: list[GapResult]
    exclusions: dict
    posterior: object | None = None
    reliability: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        groups: dict[str, dict] = {}
        for r in self.results:
            key = "|".join(str(v) for v in r.group.values()) or "all"
            g = groups.setdefault(key, {"group": r.group, "n": r.n, "estimators": {}, "scores": {}})
            g["estimators"][r.estimator] = r.to_dict()
        for _, row in self.signals[self.signals["estimator"].isin(list(SCORES))].iterrows():
            key = "|".join(str(row[b]) for b in self.by) or "all"
            groups[key]["scores"].setdefault(row["estimator"], {})[row["signal"]] = {
                "estimate": row["value"], "ci": [row["lo"], row["hi"]]}
        for key, g in groups.items():
            first = next(iter(g["estimators"].values()))
            g["gap"] = {k: v["gap"] for k, v in g["estimators"].items()}
            g["p_gap_negative"] = {k: v["p_gap_negative"] for k, v in g["estimators"].items()}
            g["protocol_card"] = {k: v for k, v in first["protocol_card"].items() if k != "estimator"}
            g["protocol_card"]["estimators"] = list(g["estimators"])
        out = {"by": self.by, "groups": groups, "exclusions": self.exclusions}
        if self.posterior is not None:
            out["posterior_diagnostics"] = self.posterior.diagnostics()
        return out

    def table(self) -> pd.DataFrame:
        """One row per (group, estimator): gap, bootstrap CI, posterior interval, P(g<0), card."""
        return self.gaps

    def __str__(self) -> str:
        cols = [*self.by, "estimator", "verbal", "token", "gap", "gap_lo", "gap_hi", "post_mean", "post_lo", "post_hi", "p_gap_negative"]
        cols = [c for c in cols if c in self.gaps.columns]
        return self.gaps[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}")


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
    """Gap per group × estimator (paired bootstrap CI), per-signal scores, and (``posterior=True``)
    the monotone-curve posterior of every gap, all with protocol cards.

    Groups with fewer than ``min_items`` paired items are reported as excluded (never silently)."""
    by = [b for b in (by or []) if b]
    for e in estimators:
        if e not in CALIBRATION_ERRORS:
            raise InputError(f"unknown estimator {e!r}; expected among {', '.join(CALIBRATION_ERRORS)}")
    for s in scores:
        if s not in SCORES:
            raise InputError(f"unknown score {s!r}; expected among {', '.join(SCORES)}")
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
    exclusions = records.exclusions.to_dict()
    if excluded_groups:
        exclusions["groups_too_small"] = excluded_groups
        warnings.warn(f"groups with fewer than {min_items} paired items excluded: {excluded_groups}", UserWarning, stacklevel=2)

    # protocol cards (checked once per group, before any heavy work, so strict fails fast)
    cards = {}
    for name, gdict, g in groups:
        levels = {col: g[col].unique() for col in PROTOCOL_COLUMNS if col in g.columns}
        cards[name] = card_from_levels(levels, ",".join(estimators))
        cards[name].check(strict=strict, where=name)

    post = None
    post_table = pd.DataFrame()
    if posterior:
        from .posterior import fit_gap_posterior

        cells = {name: (g["verbal"].to_numpy(), g["token"].to_numpy(), g["correct"].to_numpy()) for name, _, g in groups}
        post = fit_gap_posterior(cells, seed=seed, level=level, **(posterior_kwargs or {}))
        post_table = post.gap_summary(estimators)

    sig_rows, gap_rows, results = [], [], []
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
                    if len(row):
                        res.posterior = row.iloc[0].to_dict()
                results.append(res)
                for sig in ("verbal", "token"):
                    d = getattr(res, sig)
                    sig_rows.append({**gdict, "signal": sig, "estimator": est, "value": d["estimate"], "lo": d["ci"][0], "hi": d["ci"][1], "n": res.n})
                gap_rows.append({
                    **gdict, "estimator": est, "n": res.n, "verbal": res.verbal["estimate"], "token": res.token["estimate"],
                    "gap": res.gap, "gap_lo": res.gap_ci[0], "gap_hi": res.gap_ci[1],
                    "post_mean": (res.posterior or {}).get("post_mean", np.nan),
                    "post_lo": (res.posterior or {}).get("post_lo", np.nan),
                    "post_hi": (res.posterior or {}).get("post_hi", np.nan),
                    "p_gap_negative": (res.posterior or {}).get("p_gap_negative", np.nan),
                    **{f"card_{k}": val for k, val in card.to_dict().items() if k not in ("complete",)},
                })
            for si, sc in enumerate(scores):
                for sig, arr in (("verbal", v), ("token", t)):
                    b = bootstrap_estimator(sc, arr, y, n_boot=n_boot, level=level, seed=seed + 1000 * gi + 100 + si)
                    sig_rows.append({**gdict, "signal": sig, "estimator": sc, "value": b.estimate, "lo": b.lo, "hi": b.hi, "n": len(y)})
    return CalibrationReport(by, pd.DataFrame(sig_rows), pd.DataFrame(gap_rows), results, exclusions, post)
