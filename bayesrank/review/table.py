"""Claims read from a published results table (``--kind table``): accuracy and n per model and
benchmark, or arena-style scores with intervals — the pairing of the models' answers unknown.

Claims: ``top1`` (on each benchmark, or ``top1@BENCH``), ``topk:K[@BENCH]``, ``A>B`` (on every
benchmark where both appear) and ``A>B@BENCH``; each needs contrasts ``acc_a − acc_b > 0`` (top1: the
leader against every other model; topk: every member against every non-member). Pre-specified
claims (``--claim A>B``) are one-sided, data-selected ones (top1, topk, the defaults) two-sided.

**Accuracy tables** (two models on the same n items, :mod:`bayesrank.stats.margins`):

* **frequentist**: the exact McNemar p-value over every pairing the margins allow —
  ``p_value_bounds = [p at the smallest discordance |x_A − x_B|, p at the largest]`` (the minimum and
  maximum over the whole admissible range); the unpaired two-proportion test beside it
  (``p_value_unpaired``); ``discordance_to_significance``. A claim with several contrasts takes, for
  each bound, the largest p over its contrasts (intersection–union). When the models of a benchmark
  were scored on different n the items are not the same: the unpaired test is the answer (a note).
* **Bayesian**: P(claim) integrated over the pairing with the prior of
  :mod:`bayesrank.stats.discordance` (fitted to real paired per-item results, stated on the page),
  and at each extreme discordance. With several contrasts, whose joint pairing the table does not
  give either, P(all) is bounded below by ``1 − Σ(1 − P_j)`` (Fréchet): that bound is the answer.
* **perturbation**: re-grades, exact from the counts: the gap ``x_A − x_B`` overturns the estimate (a
  tie is not A > B; the smallest gap over the claim's contrasts), and the smallest number that makes
  the claim lose significance at the upper bound and at the lower bound
  (:func:`bayesrank.stats.margins.regrades_to_lose`); fractions of n.

**Score tables** (``score`` with ``lower``/``upper`` or ``stderr``): the contrast's z-test over
every covariance, SE in ``[|se_A − se_B|, se_A + se_B]``; the Bayesian answer is the normal posterior
of the contrast (flat prior) at the least favourable SE, with the value at the other bound beside it
(no real paired data informs the covariance of published scores); not audited by perturbation.

**Verdict** (:func:`table_verdict`): ``unsupported`` when not significant even at the lower bound;
``undetermined by the table`` when significant at the lower bound only; then as elsewhere —
``unsupported`` when P(claim) is below its threshold, ``fragile`` when fewer re-grades than
``fragile_below`` of n overturn it, else ``supported``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from bayesrank.errors import InputError
from bayesrank.review.answer import ClaimAnswer
from bayesrank.review.claims import Claim, default_claims, parse_claim
from bayesrank.review.report import ReviewReport, Section
from bayesrank.review.verdict import ONE_SIDED, UNDETERMINED, probability_threshold

SE_RATIO = (0.8, 1.25)  # a published SE outside this ratio to √(p(1 − p)/n) is noted
POWER = 0.8
MAX_BENCHMARKS = 10


def table_rule(level: float, fragile_below: float) -> str:
    return (f"table claims: the pairing of two models' answers is unknown, so each contrast is tested at every "
            f"pairing the published margins allow (exact McNemar; for score tables the z-test at every covariance). "
            f"supported: significant at α = {1 - level:g} at the UPPER bound of the p-value (the least favourable "
            f"pairing; intersection–union over the claim's contrasts; one-sided for a pre-specified A>B, two-sided "
            f"for data-selected claims) AND the posterior probability integrated over the pairing (prior fitted to "
            f"real paired per-item results) reaches {level:g} (one-sided) or {0.5 + level / 2:g} (two-sided) AND "
            f"re-grading fewer than {fragile_below:.2%} of the items cannot overturn it. {UNDETERMINED}: significant "
            f"at the lower bound only (some pairings the table allows make it significant, others do not). "
            f"unsupported: not significant even at the lower bound, or P(claim) below its threshold. fragile: "
            f"supported, but fewer re-grades than that overturn it. Models scored on different n: the unpaired "
            f"two-proportion test decides.")


def table_verdict(significant_low: bool, significant_high: bool, probability: float | None, threshold: float,
                  overturn_fraction: float | None, fragile_below: float) -> str:
    """The table rule (module docstring); ``significant_low`` / ``significant_high``: at the lower
    / upper bound of the p-value."""
    if not significant_low:
        return "unsupported"
    if not significant_high:
        return UNDETERMINED
    if probability is not None and not probability >= threshold:
        return "unsupported"
    if overturn_fraction is not None and overturn_fraction < fragile_below:
        return "fragile"
    return "supported"


# ---------------------------------------------------------------------------------- contrasts
def accuracy_contrast(ra, rb, level: float, sided: str, prior=None) -> dict:
    """Everything the table says about acc_a − acc_b > 0 for two rows (correct, n[, stderr])."""
    from bayesrank.stats.discordance import claim_probability
    from bayesrank.stats.margins import mcnemar_bounds, regrades_to_lose, two_proportion_p, z_p_value

    xa, xb, na, nb = int(ra["correct"]), int(rb["correct"]), int(ra["n"]), int(rb["n"])
    out = {"a": str(ra["model"]), "b": str(rb["model"]), "correct_a": xa, "correct_b": xb, "n_a": na, "n_b": nb,
           "estimate": xa / na - xb / nb, "paired": na == nb,
           "p_value_unpaired": two_proportion_p(xa, na, xb, nb, sided)}
    if "stderr" in ra and pd.notna(ra.get("stderr")) and pd.notna(rb.get("stderr")):
        out["p_value_published_se"] = z_p_value(out["estimate"], math.hypot(ra["stderr"], rb["stderr"]), sided)
    if na == nb:
        n = na
        mb = mcnemar_bounds(xa, xb, n, level, sided)
        out.update(mb)
        out.update(claim_probability(xa, xb, n, prior))
        out["regrades_to_lose"] = regrades_to_lose(xa, xb, n, level, sided)
        # the paired Wald interval of the difference at the largest discordance (the widest)
        b, c = mb["b_c_at_bounds"][1]
        out["se_at_largest_discordance"] = math.sqrt(max((b + c) / n - ((b - c) / n) ** 2, 0.0) / n)
    else:
        from scipy import integrate, stats

        fa, fb = stats.beta(xa + 0.5, na - xa + 0.5), stats.beta(xb + 0.5, nb - xb + 0.5)
        prob = integrate.quad(lambda p: fa.pdf(p) * fb.cdf(p), 0, 1, limit=200, points=[xa / na, xb / nb])[0]
        out.update(p_value_bounds=None, probability=float(min(max(prob, 0.0), 1.0)),
                   probability_at_discordance_bounds=None, discordance_to_significance=None,
                   regrades_to_lose={"gap": None, "low": None, "high": None},
                   se_at_largest_discordance=math.sqrt(xa / na * (1 - xa / na) / na + xb / nb * (1 - xb / nb) / nb))
    return out


def score_contrast(ra, rb, level: float, sided: str) -> dict:
    from scipy.special import ndtr

    from bayesrank.stats.margins import z_bounds

    est = float(ra["score"] - rb["score"])
    zb = z_bounds(est, float(ra["se"]), float(rb["se"]), level, sided)
    lo, hi = zb["se_bounds"]
    prob = [float(ndtr(est / s)) if s > 0 else float(est > 0) for s in (lo, hi)]
    return {"a": str(ra["model"]), "b": str(rb["model"]), "estimate": est, "paired": True, **zb,
            "probability": prob[1], "probability_at_se_bounds": prob}


def _settle(c: dict, level: float, sided: str) -> dict:
    """Additional items, drawn like the existing ones, for power 80% at the largest discordance if the
    table's estimates were true (normal approximation of McNemar's test: per item d ∈ {−1, 0, 1} with
    mean γ = g/n and E d² = δ = D_max/n; N = ((z_α√δ + z_β√(δ − γ²))/γ)²)."""
    from statistics import NormalDist

    if not c.get("paired") or "discordance_bounds" not in c:
        return {"settleable": False, "why": "the models were scored on different items (or the table gives scores, "
                                            "not items): no pairing to add items to"}
    n = c["n_a"]
    gam = (c["correct_a"] - c["correct_b"]) / n
    if gam <= 0:
        return {"settleable": False, "why": "the claim is false (or tied) at the table's estimate"}
    dlt = c["discordance_bounds"][1] / n
    za = NormalDist().inv_cdf(level if sided == ONE_SIDED else 0.5 + level / 2)
    zb = NormalDist().inv_cdf(POWER)
    need = ((za * math.sqrt(dlt) + zb * math.sqrt(max(dlt - gam**2, 0.0))) / gam) ** 2
    return {"additional": int(max(0, math.ceil(need) - n)), "unit": "items", "power": POWER,
            "bound": "largest discordance", "discordance_rate": dlt, "difference": gam}


def _claim_answer(claim: Claim, rows: pd.DataFrame, layout: str, level: float, fragile_below: float, prior) -> ClaimAnswer:
    from bayesrank.review.pairwise import claim_contrasts

    players = rows["model"].to_numpy(dtype=object)
    value = rows["accuracy" if layout == "accuracy" else "score"].to_numpy(dtype=float)
    sided = claim.sided
    alpha = 1 - level
    pairs = claim_contrasts(claim, players, value)
    if layout == "accuracy":
        cs = [accuracy_contrast(rows.iloc[a], rows.iloc[b], level, sided, prior) for a, b in pairs]
    else:
        cs = [score_contrast(rows.iloc[a], rows.iloc[b], level, sided) for a, b in pairs]
    paired = all(c["paired"] for c in cs)
    notes = []
    holds = all(c["estimate"] > 0 for c in cs)
    p_unpaired = max(c["p_value_unpaired"] for c in cs) if layout == "accuracy" else None
    if paired:
        lows = [c["p_value_bounds"][0] for c in cs]
        highs = [c["p_value_bounds"][1] for c in cs]
        w = int(np.argmax(highs))
        bounds = [max(lows), max(highs)]
    else:
        notes.append("the models of this benchmark were scored on different numbers of items, so not on the same "
                     "items: the unpaired two-proportion test (and independent posteriors) answer the claim")
        w = int(np.argmax([c["p_value_unpaired"] for c in cs]))
        bounds = None
    bc = cs[w]
    p_decide = bounds[1] if paired else p_unpaired
    sig_low = bool(holds and (bounds[0] if paired else p_unpaired) < alpha)
    sig_high = bool(holds and p_decide < alpha)
    z = float(__import__("statistics").NormalDist().inv_cdf(level if sided == ONE_SIDED else 0.5 + level / 2))
    se = bc["se_at_largest_discordance"] if layout == "accuracy" else bc["se_bounds"][1]
    lower = bc["estimate"] - z * se
    upper = None if sided == ONE_SIDED else bc["estimate"] + z * se
    if layout == "accuracy":
        test = "exact McNemar over the admissible pairings" if paired else "unpaired two-proportion z-test"
        unit = "accuracy difference"
    else:
        test = "z-test over the admissible covariances"
        unit = "score difference"
    freq = {"estimate": bc["estimate"], "lower": lower, "upper": upper, "p_value": p_decide,
            "supported": sig_high, "supported_at_lower_bound": sig_low, "p_value_bounds": bounds,
            "test": test, "unit": unit, "sided": sided, "contrast": f"{bc['a']} − {bc['b']}", "n_contrasts": len(cs),
            "interval": ("Wald interval of the paired difference at the largest discordance" if paired and
                         layout == "accuracy" else "Wald interval at the largest contrast SE" if layout == "score"
                         else "Wald interval of the unpaired difference")}
    if layout == "accuracy":
        freq["p_value_unpaired"] = p_unpaired
        if paired:
            freq["discordance_bounds"] = bc["discordance_bounds"]
            freq["discordance_to_significance"] = bc["discordance_to_significance"]
            freq["monotone"] = all(c["monotone"] for c in cs)
        if all("p_value_published_se" in c for c in cs):
            freq["p_value_published_se"] = max(c["p_value_published_se"] for c in cs)
    else:
        freq["se_bounds"] = bc["se_bounds"]
        freq["p_value_independent"] = max(c["p_value_independent"] for c in cs)
        freq["se_to_significance"] = bc["se_to_significance"]
    threshold = probability_threshold(level, sided)
    probs = np.array([c["probability"] for c in cs])
    joint = float(max(0.0, 1.0 - np.sum(1.0 - probs)))
    if layout == "accuracy" and paired:
        at = np.array([c["probability_at_discordance_bounds"] for c in cs])
        pb = [float(max(0.0, 1 - np.sum(1 - at[:, 0]))), float(max(0.0, 1 - np.sum(1 - at[:, 1])))]
        method = "posterior over the pairing (real-data prior)"
    elif layout == "accuracy":
        pb = None
        method = "independent Jeffreys Beta posteriors (different items)"
    else:
        at = np.array([c["probability_at_se_bounds"] for c in cs])
        pb = [float(max(0.0, 1 - np.sum(1 - at[:, 0]))), float(max(0.0, 1 - np.sum(1 - at[:, 1])))]
        method = "normal posterior of the contrast (flat prior) at the largest contrast SE"
    bay = {"probability": joint, "method": method + ("; Fréchet bound over contrasts"
                                                      if len(cs) > 1 else ""),
           "threshold": threshold, "probability_bounds": pb}
    n_items = int(rows["n"].max()) if layout == "accuracy" else None
    relative = {"what": "items of the benchmark", "n": float(n_items)} if n_items else None
    if layout != "accuracy":
        pert = {"regrade": _entry(None, None, [], "not audited: a score table has no items to re-grade")}
        sigp = None
    elif not holds:
        pert = {"regrade": _entry(None, None, [], "the claim is false at the table's estimate (some contrast ≤ 0)")}
        sigp = {"regrade": _entry(None, None, [], "not significant: no significance to lose")}
    else:
        gaps = [c["correct_a"] - c["correct_b"] for c in cs]
        k = int(np.argmin(gaps))
        gap = gaps[k]
        pert = {"regrade": _entry(gap, gap / n_items, [{"kind": "regrade", "contrast": f"{cs[k]['a']} − {cs[k]['b']}",
                                                         "count": gap}],
                                  f"re-grading {gap} item(s) ({gap / n_items:.2%} of {n_items:,}) makes "
                                  f"{cs[k]['b']} tie {cs[k]['a']} (the correct-count gap; a tie does not hold the claim)",
                                  relative, what=f"re-grading {gap} items")}
        if sig_low and paired:
            lows = [c["regrades_to_lose"]["low"] for c in cs]
            highs = [c["regrades_to_lose"]["high"] for c in cs]
            lo = min(v for v in lows if v is not None)
            hi = min((v for v in highs if v is not None), default=None)
            freq["regrades_to_lose_significance"] = {"upper_bound": hi, "lower_bound": lo,
                                                     "upper_bound_fraction": None if hi is None else hi / n_items,
                                                     "lower_bound_fraction": lo / n_items}
            what = (f"re-grading {hi} items at the largest discordance, {lo} at the smallest" if hi is not None
                    else f"re-grading {lo} items at the smallest discordance (not significant at the largest)")
            budget = hi if hi is not None else lo
            sigp = {"regrade": _entry(budget, budget / n_items, [{"kind": "regrade", "count": budget}],
                                      f"the smallest number of re-grades after which the claim is not significant: "
                                      f"{what} (exact from the counts)", relative, what=what)}
        else:
            sigp = {"regrade": _entry(None, None, [], "not significant: no significance to lose")}
    v = table_verdict(sig_low, sig_high, bay["probability"], threshold,
                      pert["regrade"]["fraction"] if pert["regrade"]["broken"] else None, fragile_below)
    if paired and layout == "accuracy" and sig_high != (bay["probability"] >= threshold) and sig_low:
        notes.append("the frequentist bound and the Bayesian answer over the pairing disagree")
    extra = {"contrasts": [_contrast_record(c) for c in cs],
             "to_settle": None if v == "supported" else
             (_settle(bc, level, sided) if layout == "accuracy" else
              {"settleable": False, "why": "a score table gives no items: the comparisons behind its scores are "
                                           "not in the table"})}
    if relative:
        extra["relative_to"] = relative
    return TableAnswer(claim, freq, bay, pert, v, level, notes, extra=extra, significance_perturbation=sigp)


class TableAnswer(ClaimAnswer):
    """A table claim's answer: its reason states the p-value's bounds over the pairings."""

    @property
    def reason(self) -> str:
        from bayesrank.review.numbers import p_value

        parts = super().reason.split("; ")
        f = self.frequentist
        b = f.get("p_value_bounds")
        if b is not None:
            over = "pairings the table allows" if f.get("unit") == "accuracy difference" else "covariances"
            where = ("at every one" if f["supported"] else "at some, not all" if f["supported_at_lower_bound"]
                     else "at none")
            parts[0] = f"{f['sided']} p from {p_value(b[0])} to {p_value(b[1])} over the {over}: significant {where}"
        return "; ".join(parts)


def _entry(budget, fraction, actions, reason, relative=None, what=None) -> dict:
    e = {"broken": None if budget is None else True, "budget": budget, "fraction": fraction,
         "verified": budget is not None, "actions": actions, "reason": reason, "exact": budget is not None}
    if relative:
        e["relative_to"] = relative
    if what:
        e["what"] = what
    return e


def _contrast_record(c: dict) -> dict:
    keep = ("a", "b", "estimate", "paired", "correct_a", "correct_b", "n_a", "n_b", "p_value_bounds",
            "discordance_bounds", "discordance_to_significance", "monotone", "p_value_unpaired",
            "p_value_published_se", "probability", "probability_at_discordance_bounds", "prior_discordance_interval",
            "regrades_to_lose", "se_bounds", "p_value_independent", "probability_at_se_bounds")
    return {k: c[k] for k in keep if k in c}


# ---------------------------------------------------------------------------------- claims
def parse_table_claims(claims, table) -> list[Claim]:
    """``--claim`` strings → claims on benchmarks: ``X@BENCH`` on that one, otherwise on every
    benchmark where the models it names appear; no claims: the defaults on each benchmark."""
    benches = table.benchmarks
    out = []
    if not claims:
        for bench in benches[:MAX_BENCHMARKS]:
            rows = table.rows(bench)
            value = rows["accuracy" if table.layout == "accuracy" else "score"].to_numpy(float)
            if len(rows) < 2:
                continue
            ranking = [str(rows["model"].iloc[i]) for i in np.argsort(-value, kind="stable")]
            for c in default_claims(ranking):
                out.append(Claim(f"{c.text}@{bench}" if len(benches) > 1 else c.text, c.kind, k=c.k, a=c.a, b=c.b,
                                 benchmark=bench, selected=c.selected))
        return out
    for text in claims:
        body, _, bench = str(text).strip().partition("@")
        if bench and bench not in benches:
            raise InputError(f"claim {text!r}: unknown benchmark {bench!r}; benchmarks: {benches}")
        for b in [bench] if bench else benches:
            models = table.rows(b)["model"].to_numpy(dtype=object)
            try:
                c = parse_claim(body, "items", players=models)
            except InputError:
                if bench or len(benches) == 1:
                    raise
                continue  # a pair claim about models absent from this benchmark
            if c.kind == "order":
                raise InputError(f"claim {text!r}: the order claim is not answered from a table; use top1, topk:K "
                                 f"or A>B")
            if len(models) < 2:
                raise InputError(f"claim {text!r}: benchmark {b!r} lists one model")
            out.append(Claim(f"{body}@{b}" if len(benches) > 1 else body, c.kind, k=c.k, a=c.a, b=c.b, benchmark=b,
                             selected=c.selected))
    if not out:
        raise InputError(f"claims {claims}: no benchmark lists the models they name")
    return out


def check_models(table) -> None:
    """A claim compares models: some benchmark must list two."""
    sizes = table.frame.groupby("benchmark", sort=False)["model"].nunique()
    if not (sizes >= 2).any():
        raise InputError(f"the table lists one model per benchmark ({', '.join(f'{b}: {m}' for b, m in sizes.items())}); "
                         "a claim compares at least two")


# ---------------------------------------------------------------------------------- report
def _se_check(table) -> tuple[pd.DataFrame | None, list[str]]:
    """Published SEs against √(p(1 − p)/n): the ratio per row, and a note for rows outside SE_RATIO."""
    f = table.frame
    if table.layout != "accuracy" or "stderr" not in f or f["stderr"].isna().all():
        return None, []
    p = f["accuracy"]
    binom = np.sqrt(p * (1 - p) / f["n"])
    ratio = f["stderr"] / binom.where(binom > 0)
    out = f[["model", "benchmark", "accuracy", "n", "stderr"]].assign(binomial_se=binom, ratio=ratio)
    bad = out[(out["ratio"] < SE_RATIO[0]) | (out["ratio"] > SE_RATIO[1])]
    notes = []
    if len(bad):
        r = bad.iloc[0]
        notes.append(f"{len(bad)} published standard error(s) are far from √(p(1 − p)/n) (ratio outside "
                     f"{SE_RATIO[0]}–{SE_RATIO[1]}; e.g. {r['model']} on {r['benchmark']}: {r['stderr']:.4g} vs "
                     f"{r['binomial_se']:.4g}): such an SE usually means clustered or resampled items, or another n")
    return out, notes


def review_table(path, *, claims, level: float, fragile_below: float, fast: bool = False, seed: int = 0,
                 command=None, progress=None, reading: dict | None = None, interval_level: float = 0.95,
                 models=None, benchmarks=None) -> ReviewReport:
    from bayesrank.data.results_table import read_results_table
    from bayesrank.errors import ExclusionLog
    from bayesrank.review.joint import joint_statement
    from bayesrank.review.reproducibility import appendix
    from bayesrank.stats.discordance import DiscordancePrior

    say = progress or (lambda *a: None)
    reading = dict(reading or {})
    say("reading the results table")
    table = read_results_table(path, columns=reading.get("columns"), interval_level=interval_level,
                               encoding=reading.get("encoding"))
    if models:
        table.frame = table.frame[table.frame["model"].isin(models)].reset_index(drop=True)
    if benchmarks:
        table.frame = table.frame[table.frame["benchmark"].isin(benchmarks)].reset_index(drop=True)
    if table.frame.empty:
        raise InputError("--models / --benchmarks leave no rows of the table")
    notes = list(table.notes)
    check_models(table)
    parsed = parse_table_claims(claims, table)
    prior = DiscordancePrior()
    answers = []
    for c in parsed:
        say(f"claim {c.text}")
        ans = _claim_answer(c, table.rows(c.benchmark), table.layout, level, fragile_below, prior)
        ans.statement = _statement(c, table.rows(c.benchmark), table.layout)
        answers.append(ans)
    se_table, se_notes = _se_check(table)
    notes += se_notes
    shown = table.frame.copy()
    secs = [Section("table", "The published table",
                    text=[f"{len(shown)} rows: {shown['model'].nunique()} models on {len(table.benchmarks)} benchmark(s) "
                          f"({table.layout} table)."],
                    tables=[("as read", shown)],
                    data={"layout": table.layout, "n_rows": int(len(shown)), "benchmarks": table.benchmarks})]
    if table.layout == "accuracy":
        secs.append(Section("pairing", "What the table does not say: the pairing",
                            text=["Two models' correct counts on the same n items fix their 2×2 table up to the "
                                  "number of items they disagree on, between |x_A − x_B| and the largest count of the "
                                  "same parity the margins allow. The exact McNemar test is computed at every such "
                                  "pairing: p_value_bounds are its smallest and largest values"
                                  + (" (attained at the extreme discordances: the p-value grows with the "
                                     "discordance for every contrast here)." if all(
                                         c.frequentist.get("monotone", True) for c in answers) else "."),
                                  "The Bayesian answer integrates over the pairing with a " + prior.text()
                                  + ". Given the completed table the paired difference has the Jeffreys Dirichlet "
                                    "posterior, P(A > B | table) = P(Beta(b + ½, c + ½) > ½)."],
                            data={"prior": {"family": "gamma-poisson", "shape": prior.shape, "scale": prior.scale,
                                            "r_mean": prior.r_mean, "r_interval_90": list(prior.r_interval(0.9)),
                                            "text": prior.text()}}))
    rows = [{"claim": a.claim.text, **{k: v for k, v in c.items() if not isinstance(v, (list, dict))},
             **({"p_low": c["p_value_bounds"][0], "p_high": c["p_value_bounds"][1]} if c.get("p_value_bounds") else {}),
             **({"D_min": c["discordance_bounds"][0], "D_max": c["discordance_bounds"][1]}
                if c.get("discordance_bounds") else {})}
            for a in answers for c in a.extra["contrasts"]]
    secs.append(Section("contrasts", "Contrasts per claim", tables=[("every contrast the claims need", pd.DataFrame(rows))],
                        data={"n_contrasts": len(rows)}))
    if se_table is not None:
        secs.append(Section("published_se", "Published standard errors",
                            text=[f"Each published SE against the binomial √(p(1 − p)/n); a ratio outside "
                                  f"{SE_RATIO[0]}–{SE_RATIO[1]} is noted."],
                            tables=[("published SE / binomial SE", se_table)], data={}))
    rep = appendix(path, table.n_rows, ExclusionLog().to_dict(), seed, command)
    from bayesrank.review.reproducibility import data_name

    title = (f"Review of {data_name(path)}: {len(answers)} claims from a published {table.layout} table "
             f"({table.frame['model'].nunique()} models, {len(table.benchmarks)} benchmark(s))")
    return ReviewReport(kind="table", title=title, level=level, fragile_below=fragile_below, claims=answers,
                        sections=secs, reproducibility=rep, notes=notes, custom_rule=table_rule(level, fragile_below),
                        results={"table": table, "prior": prior}, joint=joint_statement(answers, level))


def _statement(claim: Claim, rows: pd.DataFrame, layout: str) -> str | None:
    value = rows["accuracy" if layout == "accuracy" else "score"].to_numpy(float)
    ranking = [str(rows["model"].iloc[i]) for i in np.argsort(-value, kind="stable")]
    from bayesrank.review.claims import statement

    s = statement(claim, ranking)
    return None if s is None else f"{s} on {claim.benchmark}"
