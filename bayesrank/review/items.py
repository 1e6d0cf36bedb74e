"""Benchmark leaderboards from per-item results: each claim answered three ways from the models × items
matrix (``bayesrank.items``).

Ranking claims need contrasts of mean scores ``ȳ_a − ȳ_b > 0`` on the shared items (``A>B``: one;
``top1``: the leader by mean score against every other model; ``topk:K``: every member against every
non-member; as for pairwise data):

* **frequentist**: the paired test of each contrast — exact McNemar for 0/1 scores, paired t for
  fractional scores, cluster-robust Wald when clustered — and the claim's intersection–union
  p-value, the largest of its contrasts' p-values (the binding contrast, whose estimate and interval
  are shown). Data-selected claims (``top1``, ``topk``, the default adjacent pairs) are tested
  two-sided, a pre-specified ``--claim A>B`` one-sided; supported when p < 1 − level.
* **Bayesian**: the share of posterior draws of the item-response (Rasch) model in which every
  contrast θ_a − θ_b > 0 (NUTS on the collapsed model; its Laplace approximation with ``fast``).
  The threshold matches the test: P ≥ level for a one-sided claim, P ≥ 1 − (1 − level)/2 for a
  two-sided one.
* **to settle it** (``to_settle``, :func:`bayesrank.review.settle.items_to_settle`): for a claim not
  supported, the items to add, drawn like the existing ones (a bootstrap of the item rows), for its
  own test to support it with 80% power; not planned for clustered items.
* **perturbation**: the exact smallest number of re-grades (``flip``: one model's score on one item
  changed) and of item drops (``drop``: an item removed for every model) that overturn the claim
  (some contrast ȳ_a ≤ ȳ_b), verified by recomputation; whole clusters when clustered. For a
  significant claim, also the smallest number that removes its significance: exact for exact McNemar
  (0/1 scores); for the paired t and the cluster-robust Wald test a verified witness with a lower
  bound from a relaxation, exact when they meet (:mod:`bayesrank.items.significance`).
  Fractions are of the claim's own evidence (``relative_to``): the effective number of items
  (clusters) informing its binding contrast — the inverse Simpson index ``(Σv)²/Σv²`` of the units'
  shares ``v_i = (d_i − d̄)²`` of the contrast's paired variance, the per-item form of the review's
  definition for comparisons (≈ the discordant items for 0/1 scores); ``fraction_of_all`` is of all
  the benchmark's items.

``order`` (the reported order holds, Kendall τ > 0.9): frequentist lower bound τ ≥ 1 − 2u/P from the
simultaneous rank confidence sets (u pairs not significantly ordered as reported, of P); Bayesian
P(τ > 0.9) over the posterior draws; not audited.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.errors import InputError
from bayesrank.review.answer import ClaimAnswer
from bayesrank.review.claims import TAU_THRESHOLD, Claim, default_claims, parse_claim
from bayesrank.review.report import ReviewReport, Section
from bayesrank.review.verdict import ONE_SIDED, TWO_SIDED, probability_threshold, verdict

ACTIONS = ("flip", "drop")
TOP_HEATMAP = 12
#: the most models a review of per-item results takes: its M × M matrices (paired covariance, rank-set
#: contrasts, the Laplace Hessian and covariance) peak at ~180 bytes × M² (4.6 GB measured at 5,000
#: models × 20,000 items, docs/scale.md); the items add one byte per model and item
MAX_MODELS = 5000


def check_size(n_models: int, source) -> None:
    """One-line :class:`InputError` above :data:`MAX_MODELS` models, naming the option that fits."""
    if n_models > MAX_MODELS:
        raise InputError(f"{source}: {n_models:,} models is above the {MAX_MODELS:,} a per-item review takes (its "
                         f"M × M matrices need ~{180 * n_models**2 / 1e9:.0f} GB at this size); review at most "
                         f"{MAX_MODELS:,} of them with --models NAME,NAME,...")


def _precheck_wide(path, format: str, model, item, score, models, cluster=None) -> None:
    """Before reading: a wide table file's header names its models (one column each)."""
    from pathlib import Path

    from bayesrank.items.readers import _columns, is_long

    if models or format not in ("auto", "wide") or not isinstance(path, (str, Path)) or not Path(path).is_file():
        return
    cols = _columns(Path(path))
    if cols and not is_long(cols, model or "model", item or "item", score):
        check_size(len(cols) - 1 - (cluster in cols), path)


def items_rule(level: float, fragile_below: float) -> str:
    alpha = 1 - level
    return (f"per-item claims: supported when the paired test (exact McNemar for 0/1 scores, paired t for fractional, "
            f"cluster-robust Wald when clustered) rejects at α = {alpha:g} for every contrast the claim needs "
            f"(intersection–union: p = the largest contrast p-value; two-sided for data-selected claims — top1, topk, "
            f"the default adjacent pairs — one-sided for a pre-specified A>B) AND the item-response model's posterior "
            f"probability of the claim is at least {level:g} (one-sided) or {1 - alpha / 2:g} (two-sided) AND no "
            f"re-grade or item drop of fewer than {fragile_below:.2%} of the claim's evidence "
            f"overturns it — the fraction is of the claim's own evidence: the effective number of items (clusters) "
            f"informing its binding contrast, the inverse Simpson index of their shares of its paired variance (≈ the "
            f"discordant items for 0/1 scores). The smallest overturning re-grades and drops are exact minima (a sort "
            f"of the per-item contributions), each verified by recomputing the scores, so the whole range is searched. "
            f"not converged: the NUTS posterior failed its convergence checks, also after a re-run with more tuning "
            f"(above {_nuts_max_models():,} models, where NUTS is not run: the Laplace approximation failed its PSIS "
            f"check). "
            f"fragile: "
            f"supported, but such a perturbation exists. unsupported: the frequentist or the Bayesian answer does "
            f"not support it.")


def _nuts_max_models() -> int:
    from bayesrank.items.irt import NUTS_MAX_MODELS

    return NUTS_MAX_MODELS


def _not_audited(reason: str) -> dict:
    return {a: {"broken": None, "budget": None, "fraction": None, "verified": False, "actions": [], "reason": reason}
            for a in ACTIONS}


def _smallest_fraction(pert: dict) -> float | None:
    fr = [p["fraction"] for p in pert.values() if p.get("broken") and p.get("verified")]
    return min(fr) if fr else None


def _relative(entry: dict, relative: dict) -> dict:
    """The entry's fraction against the claim's own evidence (``relative_to``, shared by the claim's
    entries) and of all the benchmark's items or clusters (``fraction_of_all``), as the review's
    :func:`bayesrank.review.evidence.annotate` writes them; the minima are exact, so every unit was
    searched (``searched_to`` = all of them)."""
    from bayesrank.review.evidence import annotate

    e = annotate(dict(entry), relative, float(entry["budget_limit"]))
    e["searched_to"] = float(entry["budget_limit"])
    return e


def _claim_answer(claim: Claim, data, cov, bayes, rs, level: float, fragile_below: float, converged: bool = True,
                  seed: int = 0):
    from bayesrank.items.frequentist import effective_units, order_tau_bound, pair_stats
    from bayesrank.items.perturb import lose_significance, overturn
    from bayesrank.review.pairwise import claim_contrasts, margins, order_holds

    means = data.means()
    players = np.asarray([str(m) for m in data.models], dtype=object)
    alpha = 1 - level
    notes = []
    if claim.kind == "order":
        bound, u, p = order_tau_bound(rs.significant, means)
        freq = {"estimate": None, "lower": bound, "upper": 1.0, "p_value": None, "supported": bool(bound > TAU_THRESHOLD),
                "interval": f"Kendall τ lower bound 1 − 2u/P from the simultaneous {level:.0%} rank sets",
                "contrast": f"Kendall τ > {TAU_THRESHOLD}", "n_contrasts": p, "pairs_not_separated": u,
                "sided": "two-sided"}
        hold = order_holds(bayes.draws, means)
        threshold = probability_threshold(level, TWO_SIDED)  # read off the data
        bay = {"probability": float(hold.mean()), "method": f"{bayes.method} ({_model_name(bayes)})", "n_draws": int(len(hold)),
               "threshold": threshold}
        pert = _not_audited("not audited: the order claim has no mean-score contrast to overturn")
        sig = None
    else:
        pairs = claim_contrasts(claim, players, means)
        a = np.array([x[0] for x in pairs])
        b = np.array([x[1] for x in pairs])
        sided = claim.sided  # one-sided when named in advance (--claim A>B), two-sided when read off the data
        t = pair_stats(data, a, b, level, cov)
        pcol = "p_one_sided" if sided == ONE_SIDED else "p_two_sided"
        w = int(np.argmax(t[pcol].to_numpy()))
        p_iu = float(t[pcol].iloc[w])
        holds = bool((t["estimate"] > 0).all())
        freq = {"estimate": float(t["estimate"].iloc[w]), "lower": float(t["lower"].iloc[w]),
                "upper": float(t["upper"].iloc[w]), "p_value": p_iu, "supported": bool(holds and p_iu < alpha),
                "interval": f"{t['test'].iloc[0]} ({sided} p; Wald interval of the paired difference)"
                            if t["test"].iloc[0] == "exact McNemar" else f"{t['test'].iloc[0]} ({sided} p)",
                "contrast": f"{players[t['a'].iloc[w]]} − {players[t['b'].iloc[w]]}", "n_contrasts": len(pairs),
                "test": str(t["test"].iloc[0]), "sided": sided}
        if "n10" in t:
            freq["discordant"] = {"n10": int(t["n10"].iloc[w]), "n01": int(t["n01"].iloc[w])}
        threshold = probability_threshold(level, sided)
        hold = margins(bayes.draws, pairs) > 0
        bay = {"probability": float(hold.mean()), "method": f"{bayes.method} ({_model_name(bayes)})", "n_draws": int(len(hold)),
               "threshold": threshold}
        n_eff, what = effective_units(data, int(t["a"].iloc[w]), int(t["b"].iloc[w]))
        relative = {"what": what, "n": n_eff}
        if not holds:
            pert = _not_audited("the claim is false at the point estimate (some contrast ≤ 0)")
        else:
            pert = {action: _relative(overturn(data, pairs, action), relative) for action in ACTIONS}
        if not freq["supported"]:
            sig = _not_audited("not significant: no significance to lose")
        elif data.binary and data.clusters is None:
            sig = {action: _relative(lose_significance(data, pairs, action, alpha,
                                                       "one" if sided == ONE_SIDED else "two"), relative)
                   for action in ACTIONS}
        else:  # paired t (fractional scores) or cluster-robust Wald (clusters)
            from bayesrank.items.significance import lose_significance_studentized

            sig = {action: _relative(lose_significance_studentized(
                data, pairs, action, alpha, "one" if sided == ONE_SIDED else "two", p_values=t[pcol].to_numpy()),
                relative) for action in ACTIONS}
    v = verdict(freq["supported"], bay["probability"], threshold, _smallest_fraction(pert), fragile_below,
                converged=converged)
    if not converged:
        notes.append("the item-response posterior failed its convergence checks (also after a re-run with more "
                     "tuning): no verdict is issued on it")
    elif freq["supported"] != (bay["probability"] >= threshold):
        notes.append("the frequentist and the Bayesian answers disagree")
    extra = {} if claim.kind == "order" else {"relative_to": relative}
    extra["to_settle"] = None if v == "supported" else _to_settle(claim, data, None if claim.kind == "order" else pairs,
                                                                  level, seed)
    return ClaimAnswer(claim, freq, bay, pert, v, threshold, notes, significance_perturbation=sig, extra=extra)


def _to_settle(claim: Claim, data, pairs, level: float, seed: int) -> dict:
    """What would settle the claim (:func:`bayesrank.review.settle.items_to_settle`); clustered items
    are not planned for (new items would come in new clusters of unknown size)."""
    from bayesrank.review.settle import items_to_settle, not_settleable

    if claim.kind == "order":
        return not_settleable("the order claim's test is a bound from the simultaneous rank sets: no contrast to "
                              "plan items for")
    if data.clusters is not None:
        return not_settleable("clustered items: new items would come in new clusters of unknown size; not planned")
    return items_to_settle(claim, data.scores, pairs, level, seed=seed, binary=bool(data.binary))


def _heatmap(draws, players, order, ax):
    top = order[:TOP_HEATMAP]
    d = draws[:, top]
    p = (d[:, :, None] > d[:, None, :]).mean(axis=0)
    n = len(top)
    np.fill_diagonal(p, np.nan)
    im = ax.imshow(p, cmap="RdBu_r", vmin=0, vmax=1)
    names = [str(players[i]) for i in top]
    ax.set_xticks(range(n), names, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(n), names, fontsize=7)
    for i in range(n):
        for j in range(n):
            if i != j:
                ax.text(j, i, f"{p[i, j]:.2f}", ha="center", va="center", fontsize=5)
    ax.set_title("posterior P(θ_row > θ_column) (item-response model)", fontsize=9)
    ax.figure.colorbar(im, ax=ax, fraction=0.04)


def _rank_plot(table: pd.DataFrame, level: float, ax, top: int = 30):
    t = table.head(top)
    y = np.arange(len(t))
    ax.hlines(y, t["rank_lower"] - 0.3, t["rank_upper"] + 0.3, color="tab:blue", lw=5, alpha=0.35,
              label=f"simultaneous {level:.0%} rank set")
    ax.plot(t["rank"], y, "o", color="black", ms=4, label="rank by mean score")
    ax.set_yticks(y, t["player"], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("rank (1 = best)")
    ax.legend(fontsize=7, loc="lower right")


def _model_name(fit) -> str:
    return "2PL" if (fit.extra or {}).get("model") == "2pl" else "Rasch"


def review_items(path, *, claims, level: float, fragile_below: float, fast: bool, seed: int, command=None,
                 progress=None, format: str = "auto", cluster: str | None = None, benchmarks=None, metric=None,
                 models=None, exclude_invalid: bool = False, draws: int | None = None, tune: int | None = None, chains: int = 4,
                 columns=None, twopl: bool = False) -> ReviewReport:
    from bayesrank.items import irt
    from bayesrank.items.frequentist import mean_covariance, model_table, rank_sets
    from bayesrank.items.readers import read_items
    from bayesrank.review.reproducibility import appendix

    say = progress or (lambda *a: None)
    say("reading per-item results")
    if benchmarks is not None and len(benchmarks) != 1:
        raise InputError(f"--benchmarks: per-item results are reviewed one benchmark at a time (got {benchmarks})")
    from bayesrank.data.columns import GRID_KEYS, parse_columns

    names = parse_columns(columns, keys=GRID_KEYS)  # --columns model=,item=,score=,benchmark=
    if "benchmark" in names and not benchmarks:
        raise InputError("--columns benchmark=COL: per-item results are reviewed one benchmark at a time; "
                         "choose it with --benchmarks NAME")
    _precheck_wide(path, format, names.get("model"), names.get("item"), names.get("score"), models, cluster)
    data, reader_notes = read_items(path, format=format, cluster=cluster, metric=metric,
                                    **{k: names[k] for k in ("model", "item", "score") if k in names},
                                    benchmark=benchmarks[0] if benchmarks else None,
                                    on_invalid="exclude" if exclude_invalid else "raise")
    if models:
        data = data.subset(models)
    check_size(data.n_models, path)
    players = np.asarray([str(m) for m in data.models], dtype=object)
    means = data.means()
    order = np.argsort(-means, kind="stable")
    ranking = [str(players[i]) for i in order]
    if claims:
        parsed = [parse_claim(c, "items", players=players) for c in claims]
    else:
        parsed = default_claims(ranking)
    say("paired covariance, rank sets")
    cov = mean_covariance(data)
    table = model_table(data, level)
    rs, groups = rank_sets(data, level, seed)
    stats = irt.sufficient(data)
    if twopl:
        from bayesrank.items import twopl as twopl_model

        stats = twopl_model.sufficient(data)
        say("item-response model (2PL): Laplace")
        laplace = twopl_model.fit_laplace(data, seed=seed, stats=stats)
        if not fast:
            twopl_model.check_size(twopl_model.nuts_grid(stats, laplace))
    else:
        say("item-response model: Laplace")
        laplace = irt.fit_laplace(stats, seed=seed)
    if fast:
        bayes = laplace
    elif not twopl and data.n_models > irt.NUTS_MAX_MODELS:
        say(f"item-response model: Laplace with a PSIS check (NUTS is not run above {irt.NUTS_MAX_MODELS:,} models)")
        bayes = irt.fit_laplace_psis(stats, seed=seed, laplace=laplace)
    else:
        from bayesrank.review.fits import RETRY_TARGET_ACCEPT, RETRY_TUNE_FACTOR

        draws = irt.DRAWS if draws is None else draws
        tune = irt.TUNE if tune is None else tune
        say("item-response model: NUTS")
        nuts = dict(stats=stats, laplace=laplace, seed=seed, draws=draws, chains=chains, progress=say, twopl=twopl)
        bayes = irt.fit_nuts(data, tune=tune, **nuts)
        if not bayes.diagnostics.converged:  # the review's rule: one re-run with more tuning
            say("NUTS did not converge: re-running with more tuning")
            first = bayes.diagnostics.line()
            retune = RETRY_TUNE_FACTOR * max(tune, draws)
            bayes = irt.fit_nuts(data, tune=retune, target_accept=RETRY_TARGET_ACCEPT, **nuts)
            bayes.extra = {**(bayes.extra or {}), "rerun": {"first_run": first, "tune": retune,
                                                            "target_accept": RETRY_TARGET_ACCEPT}}
    answers = []
    for _n, claim in enumerate(parsed):
        say(f"claim {claim.text}")
        answers.append(_claim_answer(claim, data, cov, bayes, rs, level, fragile_below,
                                     converged=bool(bayes.diagnostics.converged), seed=seed))
    # leaderboard
    lb = table.copy()
    lb["rank"] = 1 + (means[None, :] > means[:, None]).sum(axis=1)
    lb["rank_lower"], lb["rank_upper"] = rs.rank_lower, rs.rank_upper
    lb["tie_group"] = groups.loc[lb["player"]].to_numpy()
    lb["theta"] = bayes.score
    # rank 1 in a draw = no model strictly ahead = at the draw's maximum (O(S·M), not S·M² comparisons)
    lb["p_top1"] = (bayes.draws == bayes.draws.max(axis=1, keepdims=True)).mean(axis=0)
    lb = lb.iloc[order].reset_index(drop=True)
    cols = ["player", "score", "lower", "upper", "rank", "rank_lower", "rank_upper", "tie_group", "theta", "p_top1",
            "n_items"] + [c for c in ("wilson_lower", "wilson_upper", "jeffreys_lower", "jeffreys_upper") if c in lb]
    lb = lb[cols]
    n_groups = int(groups.max())
    unit = f"{data.n_clusters} clusters ({data.cluster_name})" if data.clusters is not None else f"{data.n_items:,} items"
    secs = [Section("items_leaderboard", "Items leaderboard",
                    text=[f"{data.n_models} models on {data.n_items:,} items"
                          + (f" of {data.benchmark}" if data.benchmark else "")
                          + f"; mean score with {table.attrs['interval']} {level:.0%} intervals; rank = position by "
                            f"mean score; [rank_lower, rank_upper] = {rs.method}, from the paired covariance of the "
                            f"means over {unit}; tie groups: a new group starts at the first model the group's "
                            f"leader is simultaneously significantly ahead of ({n_groups} group(s)); theta and p_top1 "
                            f"from the item-response model ({bayes.method})."],
                    tables=[("items leaderboard", lb)],
                    figures=[(f"rank spread: mean-score rank and simultaneous {level:.0%} rank set",
                              lambda ax: _rank_plot(lb, level, ax), (7, 1.0 + 0.22 * min(30, len(lb)))),
                             (f"pairwise P(θ_row > θ_column) for the top {min(TOP_HEATMAP, len(lb))}",
                              lambda ax: _heatmap(bayes.draws, players, order, ax),
                              (1.5 + 0.5 * min(TOP_HEATMAP, len(lb)), 1.0 + 0.45 * min(TOP_HEATMAP, len(lb))))],
                    data={"interval": table.attrs["interval"], "rank_sets": rs.method, "n_tie_groups": n_groups,
                          "tie_groups": {str(k): int(v) for k, v in groups.items()}})]
    if twopl:
        text = [f"2PL model logit P(m solves i) = a_i(θ_m − b_i), b_i ~ N(μ, σ), log a_i ~ N(0, "
                f"{twopl_model.TAU_A}²) on ±{twopl_model.U_RANGE:g} SDs, both item parameters integrated out "
                f"(collapsed likelihood over {len(stats.group_count)} response patterns); {bayes.method}: "
                f"{bayes.diagnostics.line()}. μ = {np.mean(bayes.mu):.3g}, σ = {np.mean(bayes.sigma):.3g}. "
                "θ has no fixed scale apart from the priors (a_i and θ trade off); its order and the claims' "
                "probabilities do not depend on it. "
                "Validation: on a small benchmark its posterior equals that of the full 2PL model with every "
                "a_i and b_i sampled; its calibration (SBC) is shown on 3 models × 30 items, and on 4 models only "
                "narrowly (docs/items.md)."]
    else:
        text = [f"Rasch model logit P(m solves i) = θ_m − b_i, b_i ~ N(μ, σ), item difficulties integrated out "
                f"(collapsed likelihood over {len(stats.group_count)} item groups); {bayes.method}: "
                f"{bayes.diagnostics.line()}. μ = {np.mean(bayes.mu):.3g}, σ = {np.mean(bayes.sigma):.3g}."]
        if "psis" in (bayes.extra or {}):
            text.append(f"NUTS is not run above {irt.NUTS_MAX_MODELS:,} models (at 2,000 models × 10,000 items it "
                        f"did not finish in 15 minutes: docs/scale.md); the Laplace approximation stands in, corrected by Pareto-smoothed "
                        f"importance sampling and checked by it: {bayes.extra['psis'].line()}"
                        " (the draws are resampled with the PSIS weights; above the threshold the Laplace answer is "
                        "not trusted and the review is not converged).")
    model_data = {"model": "2pl" if twopl else "rasch", "twopl": bool(twopl), "method": bayes.method,
                  "diagnostics": bayes.diagnostics.to_dict(),
                  "mu_mean": float(np.mean(bayes.mu)), "sigma_mean": float(np.mean(bayes.sigma))}
    if data.binary:
        model = twopl_model if twopl else irt
        grid = model.nuts_grid(stats, laplace)  # the coarser grid when every draw's σ is within its range
        grid = grid if float(np.max(bayes.sigma)) <= grid.sigma_max else stats
        ppc = irt.ppc_item_totals(bayes, data, n_draws=20 if fast else 100, seed=seed, stats=grid,
                                  law=model.total_distribution)
        text.append(f"Posterior predictive check of item totals (how many models solve an item): "
                    f"{ppc['share_outside_95']:.1%} of the {ppc['n_totals']} totals outside their 95% replicated range; "
                    f"χ² posterior predictive p = {ppc['p_value_chi2']:.3g}.")
        model_data["ppc"] = ppc
    loo = (bayes.extra or {}).get("loo")
    if not fast and not loo and "psis" in (bayes.extra or {}):
        text.append("PSIS-LOO not computed for the Laplace + PSIS fit (its resampled draws repeat); "
                    "bayesrank.items.irt.loo_items computes it from NUTS draws.")
    elif not fast and not loo:
        text.append(f"PSIS-LOO not computed: {data.n_items:,} items is above {irt.LOO_MAX_ITEMS:,} (ArviZ's Pareto "
                    "smoothing costs ~1 ms of CPU per item); bayesrank.items.irt.loo_items computes it.")
    if loo:
        text.append(f"PSIS-LOO (leave one item out, {'both item parameters' if twopl else 'difficulty'} integrated out): elpd {loo['elpd']:,.1f} (SE "
                    f"{loo['se']:.1f}), p_loo {loo['p_loo']:.1f}; max Pareto k {loo['pareto_k_max']:.2f}, "
                    f"{loo['n_pareto_k_gt_0.7']} item(s) above 0.7.")
        model_data["loo"] = loo
    if data.binary is False and data.successes is None:
        text.append("Fractional scores: the model uses the Bernoulli kernel with the score in place of the outcome "
                    "(a quasi-likelihood); the order of θ is that of the expected scores, its spread is not calibrated "
                    "for such data.")
    secs.append(Section("items_model", "Item-response model", text=text, data=model_data))
    secs.append(Section("data", "Data", text=[
        f"{data.n_rows:,} rows read; {data.n_models} models × {data.n_items:,} items"
        + (f" in {data.n_clusters} clusters of column {data.cluster_name!r}" if data.clusters is not None else "")
        + ("; 0/1 scores" if data.binary else "; fractional scores")
        + f"; {data.exclusions.report()}.", *reader_notes],
        data={"n_models": data.n_models, "n_items": data.n_items, "n_clusters": data.n_clusters,
              "binary": data.binary, "repeated": data.repeated}))
    parts = {f"item-response {bayes.method}": bayes.diagnostics}
    rep = appendix(path, data.n_rows, data.exclusions.to_dict(), seed, command)
    from bayesrank.review.reproducibility import data_name

    title = (f"Review of {data_name(path)}: {len(answers)} claims about {data.n_models} models on {data.n_items:,} items"
             + (f" of {data.benchmark}" if data.benchmark else ""))
    leaderboard = lb[["player", "score", "lower", "upper", "rank", "rank_lower", "rank_upper"]]
    from bayesrank.review.joint import joint_statement

    return ReviewReport(kind="items", title=title, level=level, fragile_below=fragile_below, claims=answers,
                        sections=secs, reproducibility=rep, parts=parts, leaderboard=leaderboard,
                        notes=list(reader_notes), custom_rule=items_rule(level, fragile_below),
                        results={"items": data, "irt": bayes, "rank_sets": rs}, joint=joint_statement(answers, level))
