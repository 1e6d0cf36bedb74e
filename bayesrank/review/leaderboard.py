"""The pairwise report's evidence sections: leaderboard with intervals and rank ranges, the rank
spread and pairwise-probability figures, the method-agreement table with NUTS diagnostics."""

from __future__ import annotations

import pandas as pd

from bayesrank.review.report import Section

TOP_FIGURE = 30
TOP_HEATMAP = 12


def leaderboard_table(fits: dict, level: float, seed: int):
    """The default fit's table (player, score, lower, upper, rank, rank_ci, rank_ub, n_matches) with the
    rank analysis of ``bayesrank.bt.ranks``: simultaneous rank confidence sets (rank_lower, rank_upper),
    the posterior's rank ranges and P(#1) from the Bayesian fit's draws."""
    from bayesrank.bt.ranks import analyze_ranks

    default = fits["default"]
    bayes = fits.get("claims") or fits.get("nuts") or fits.get("laplace")
    k = len(default.players)
    draws = None
    if bayes is not None and bayes.draws is not None and list(map(str, bayes.players)) == list(map(str, default.players)):
        draws = bayes.draws[:, :k]
    ranks = analyze_ranks(default, level=level, seed=seed, draws=draws, marginal=False,  # the page shows the simultaneous sets
                          pairs_ahead=False)  # and no pairwise P(ahead)
    rt = ranks.table(tiers=False).set_index("player")  # no tiers: no K(K−1)/2-row pairwise table
    table = default.table()
    for col in ("rank_lower", "rank_upper", "draws_rank_lower", "draws_rank_upper", "p_top1"):
        table[col] = rt.loc[table["player"], col].to_numpy()
    source = f"{len(draws):,} {bayes.method} draws" if draws is not None else ranks.draws_source
    return table, ranks, source


def agreement_table(fits: dict) -> pd.DataFrame:
    """Each method against MLE/default: max score and interval-width differences and Kendall τ."""
    from bayesrank.bt import compare

    order = [k for k in ("default", "fisher", "sandwich", "bootstrap", "map", "laplace", "nuts") if k in fits]
    agreement = compare(*(fits[k] for k in order)).attrs["agreement"]
    rows = []
    for key, (_name, v) in zip(order, agreement.items()):
        rows.append({"method": key, "ties": fits[key].ties, "interval": fits[key].interval, **v,
                     "converged": fits[key].diagnostics.converged})
    return pd.DataFrame(rows)


def shown_leaderboard(table: pd.DataFrame, all_ranks: bool = False) -> pd.DataFrame:
    """The leaderboard as the page shows it: by default one rank set, the simultaneous one
    (``rank set`` = rank_lower–rank_upper); ``all_ranks`` keeps every rank column."""
    if all_ranks:
        return table
    out = table[["player", "score", "lower", "upper", "rank"]].copy()
    out["rank set"] = [f"{int(a)}–{int(b)}" if a != b else f"{int(a)}"
                       for a, b in zip(table["rank_lower"], table["rank_upper"])]
    out["n_matches"] = table["n_matches"]
    return out


def sections(fits: dict, comps, level: float, seed: int, graph_advice: str,
             all_ranks: bool = False, scale: str = "logit") -> tuple[list[Section], pd.DataFrame]:
    """The leaderboard, method-agreement and data sections, scores and score differences on ``scale``
    (:mod:`bayesrank.review.scale`); also the leaderboard table (on ``scale``) and the rank analysis."""
    default = fits["default"]
    from bayesrank.bt.ranks import plot_pairwise
    from bayesrank.review import scale as shown

    table, ranks, source = leaderboard_table(fits, level, seed)
    table = shown.frame(table, scale)
    top = list(table["player"].head(TOP_HEATMAP))
    rank_set = ranks.methods()["rank_lower/rank_upper"]
    if all_ranks:
        ranks_text = (f"rank = position by score; rank_ci = 1 + players significantly ahead (pairwise contrast); "
                      f"rank_ub = LMArena's marginal-overlap rule; [rank_lower, rank_upper] = {rank_set}; "
                      f"draws_rank_lower/upper and p_top1 from {source}.")
    else:
        ranks_text = (f"rank = position by score; rank set = {rank_set}. The other rank columns (rank_ci, rank_ub, "
                      f"the posterior's rank ranges and P(#1) from {source}) are in the JSON, and on this page with "
                      f"--all-ranks.")
    lb = Section("leaderboard", "Leaderboard",
                 text=[f"{len(table)} players; scores in {shown.SCORE_SCALE[scale]} with {default.interval} "
                       f"{level:.0%} intervals (ties: {default.ties}). " + ranks_text],
                 tables=[("leaderboard (top 60)", shown_leaderboard(table, all_ranks))],
                 figures=[(f"rank spread of the top {TOP_FIGURE}: point rank, simultaneous {level:.0%} rank set, "
                           f"range over {source}", lambda ax: ranks.plot(ax=ax, top=TOP_FIGURE),
                           (7, 1.0 + 0.22 * min(TOP_FIGURE, len(table)))),
                          (f"pairwise P(row beats column) for the top {len(top)}",
                           lambda ax: plot_pairwise(default, players=top, level=level, ax=ax),
                           (1.0 + 0.5 * len(top), 0.8 + 0.45 * len(top)))],
                 data={"interval": default.interval, "rank_methods": ranks.methods(), "model": default.model_description(),
                       "scale": scale, "unit": shown.UNITS[scale]})
    if default.position is not None:
        f = shown.factor(scale)
        p = {k: f * v if k in ("coef", "lower", "upper") else v for k, v in default.position.items()}
        lb.data["position"] = p
        lb.text.append(f"Position effect α ({'logit' if scale == 'logit' else shown.UNITS[scale]} added for the side "
                       f"listed first, model_a): {p['coef']:.3f} "
                       f"[{p['lower']:.3f}, {p['upper']:.3f}] ({default.interval} {level:.0%}); the scores and every "
                       "claim below are controlled for it.")
    if default.settings.get("cluster"):
        lb.text.append(f"Intervals and tests are cluster-robust: {default.settings['n_clusters']:,} clusters of "
                       f"{default.settings['cluster']} (comparisons within a cluster are dependent).")
    agr = shown.frame(agreement_table(fits), scale)  # score differences on the scale; Kendall τ as is
    text = ["Each method's scores and interval widths against the default MLE fit (all players)."]
    if agr["ties"].nunique() > 1:
        text.append("The tie models differ (half-wins for the frequentist fits, Davidson for the Bayesian ones when "
                    "the data have ties): Davidson θ is on the decisive-odds scale, larger in magnitude than half-win "
                    "θ, so compare these methods by Kendall τ and by the claims' probabilities, not by raw θ.")
    claims_post = fits.get("claims")
    if claims_post is not None and claims_post is not fits.get("nuts") and claims_post is not fits.get("laplace"):
        if "cluster-robust" in claims_post.method and "half-win" not in claims_post.method:
            text.append(f"The claims' Bayesian answers use the posterior above with its spread rescaled to the "
                        f"cluster-robust covariance ({claims_post.method}): the likelihood treats the comparisons "
                        f"of one cluster as independent, so its posterior is too narrow.")
        else:
            target = "cluster-robust sandwich" if "cluster-robust" in claims_post.method else "sandwich"
            text.append(f"The claims' Bayesian answers use the half-win posterior ({claims_post.method}): the "
                        f"estimand of the leaderboard, the frequentist answer and the audits, its spread rescaled to "
                        f"the {target} covariance (the half-win likelihood misstates the variance of a tie"
                        + ("; the comparisons of one cluster are dependent" if target != "sandwich" else "")
                        + "); the Davidson posterior above is reported beside each claim as another tie model.")
    if scale != "logit":
        text.append(f"Score and interval-width differences in {shown.UNITS[scale]}.")
    data = {"agreement": agr.to_dict(orient="records"), "scale": scale}
    nuts = fits.get("nuts")
    if nuts is not None:
        d = nuts.diagnostics
        text.append(f"NUTS: {d.line()}.")
        ppc, loo = d.extra.get("ppc", {}), d.extra.get("loo", {})
        if ppc:
            text.append(f"Posterior predictive check: {ppc['share_outside_95']:.1%} of the {ppc['n_pairs']:,} pairs "
                        f"outside their 95% replicated win-rate interval (about 5% or fewer if the model fits).")
        if loo:
            text.append(f"PSIS-LOO (leave one pair out): elpd {loo['elpd']:,.1f} (SE {loo['se']:.1f}), p_loo "
                        f"{loo['p_loo']:.1f}; max Pareto k {loo['pareto_k_max']:.2f}, {loo['n_pareto_k_gt_0.7']} pair(s) "
                        f"above 0.7 (PSIS unreliable there).")
        data["nuts_diagnostics"] = d.to_dict()
    methods = Section("methods", "How the fit methods agree", text=text, tables=[("method agreement", agr)], data=data)
    counts = default.counts
    ties = float(counts.ties.sum()) if hasattr(counts, "ties") else float("nan")
    data_section = Section("data", "Data", text=[
        f"{default.n_comparisons:,.0f} comparisons among {len(default.players)} players in {counts.n_pairs:,} pairs; "
        f"{ties / max(default.n_comparisons, 1):.1%} ties; {default.n_excluded} rows excluded.",
        f"Comparison graph: {graph_advice}"], data={"n_comparisons": default.n_comparisons,
                                                    "n_players": len(default.players), "n_pairs": counts.n_pairs})
    return [lb, methods, data_section], table, ranks
