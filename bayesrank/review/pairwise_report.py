"""Pairwise and judge data: read, fit every method, answer every claim, assemble the report."""

from __future__ import annotations

from pathlib import Path

from bayesrank.review.claims import default_claims, parse_claim
from bayesrank.review.report import ReviewReport


def review_pairwise(path, *, kind: str, claims, level: float, fragile_below: float, fast: bool, seed: int,
                    budget, format: str, exclude_invalid: bool, judge_col=None, command=None, progress=None,
                    draws: int | None = None, chains: int = 4, nuts: bool = True, style: str | None = None,
                    style_transform: str = "normalized_diff", style_standardize: str = "center_scale",
                    reading: dict | None = None, ridge: float = 0.0, tune: int | None = None,
                    rank="auto", all_ranks: bool = False, cluster: str | None = None,
                    position_effect: bool = False, scale: str = "logit") -> ReviewReport:
    """``path``: a file or folder (read with ``reading``: columns, outcome_map, judge_cols, encoding,
    path_pattern), a DataFrame or Comparisons. The data are read once; every fit, audit and the
    style-controlled twin use the same validated comparisons. ``ridge`` penalises the frequentist
    fits and the audits' refits (finite scores when a player never won or never lost); ``draws``,
    ``tune``, ``chains``: NUTS; ``rank``: the HJA consensus's residual rank (judges data);
    ``cluster``, ``position_effect``: terms of the Bradley–Terry model every fit uses; ``scale``: the
    display scale of scores, contrasts and intervals (logit or Elo points, :mod:`bayesrank.review.scale`)."""
    from bayesrank.data import comparison_graph, read_comparisons
    from bayesrank.influence.state import BTState
    from bayesrank.review import scale as shown
    from bayesrank.review.fits import NUTS_DRAWS, fit_all
    from bayesrank.review.joint import joint_statement
    from bayesrank.review.leaderboard import sections
    from bayesrank.review.pairwise import answer_claims
    from bayesrank.review.reproducibility import appendix

    say = progress or (lambda *a: None)
    say("reading data")
    comps = read_comparisons(path, format=format, judge=judge_col, on_invalid="exclude" if exclude_invalid else "raise",
                             **(reading or {}))
    if kind == "judges" and "judge" not in comps.frame:
        from bayesrank.errors import InputError

        raise InputError("--kind judges needs a judge column: pass --judge-col COL (or --columns judge=COL, or "
                         "--judge-cols COL,COL,... for one outcome column per judge)")
    counts = comps.aggregate()
    graph = comparison_graph(counts)
    penalty, apart = None, None
    if not graph.finite_mle and not ridge:
        from bayesrank.errors import NoFiniteEstimateError

        if cluster or position_effect or style or counts.fractional:
            raise NoFiniteEstimateError("no finite maximum-likelihood estimate: " + graph.advice())
        if graph.n_components > 1:
            comps, apart = largest_component(comps, graph)
            counts = comps.aggregate()
            graph = comparison_graph(counts)
        penalty = None if graph.finite_mle else "firth"
    fits = fit_all(comps, level=level, seed=seed, fast=fast, nuts=nuts, draws=draws or NUTS_DRAWS, chains=chains,
                   progress=say, ridge=ridge, tune=tune, cluster=cluster, position_effect=position_effect,
                   penalty=penalty)
    default = fits["default"]
    ranking = [str(p) for p in default.table()["player"]]
    parsed = [parse_claim(c, "pairwise", players=default.players) for c in claims] if claims else default_claims(ranking)
    if cluster or position_effect:  # the model's own rows: clusters (fractions count them), the position effect
        from bayesrank.influence.api import load_state

        state, _ = load_state(comps, ridge=ridge, cluster=cluster, position_effect=position_effect)
    else:
        state = BTState.fit(counts, ties=default.ties if default.ties in ("half", "drop") else "half", ridge=ridge,
                        penalty=penalty)
    answers = answer_claims(parsed, fits, state, level=level, seed=seed, fragile_below=fragile_below,
                            budget=budget, progress=lambda label, n, total: say(label))
    from bayesrank.cli_args import in_flags

    say("leaderboard: simultaneous rank confidence sets")
    secs, table, ranks = sections(fits, comps, level, seed, in_flags("review", graph.advice()),
                                  all_ranks=all_ranks, scale=scale)
    parts = {name: f.diagnostics for name, f in fits.items()}
    from bayesrank.review.clusters import proposal_note, propose

    proposals = propose(comps.frame, used=cluster)
    notes = [proposal_note(p, used=cluster) for p in proposals]
    if ridge:
        notes.append(f"the frequentist fits and the audits' refits are ridge-penalised (--ridge {ridge:g}: "
                     f"({ridge:g}/2)·Σθ² subtracted from the log-likelihood), so scores shrink towards 0 and their "
                     "intervals are those of the penalised fit")
    if apart:
        notes.append(apart)
    if penalty:
        notes.append(firth_note(graph, default))
    data_sec = next(s for s in secs if s.key == "data")
    data_sec.text += notes
    data_sec.data["cluster_proposals"] = proposals
    if cluster or position_effect:
        what = " and ".join(x for x in (f"clusters of {cluster}" if cluster else "",
                                         "the position effect" if position_effect else "") if x)
        notes.append(f"The frequentist and Bayesian answers account for {what}; the perturbation answers audit the "
                     "same model's point estimate (row-level audit: drop, flip and add comparisons"
                     + (", each witness measured by the clusters it touches, against the claim's effective "
                        "clusters; and drop whole clusters" if cluster else "") + ").")
    if kind == "judges":
        from bayesrank.review.judges import judge_sections

        say("judges: HJA consensus and per-judge fits")
        jsecs, jparts, jnotes = judge_sections(comps, parsed, answers, default, level=level, seed=seed, fast=fast,
                                               rank=rank, cluster=cluster, position_effect=position_effect)
        for sec in jsecs:
            if sec.key == "judges":
                shown.section(sec, scale, "Consensus and pooled scores and their intervals (γ is unitless, residual "
                              "norms stay on the logit scale)", tables=("consensus (HJA) beside pooled Bradley–Terry",),
                              data=("consensus",))
        secs = jsecs + secs
        parts.update(jparts)
        notes += jnotes
    if style:
        from bayesrank.review.style import style_claims

        sanswers, ssecs, sparts = style_claims(comps, parsed, default.players, default.score, style=style, level=level,
                                               fragile_below=fragile_below, fast=fast, seed=seed, budget=budget,
                                               progress=say, transform=style_transform,
                                               standardize=style_standardize, cluster=cluster,
                                               position_effect=position_effect)
        answers = [x for pair in zip(answers, sanswers) for x in pair]  # each claim beside its style-controlled twin
        for sec in ssecs:
            shown.section(sec, scale, "Style coefficients (per unit of each feature difference), scores and intervals",
                          tables=("style coefficients β", "leaderboard under style control"),
                          data=("style", "leaderboard"))
        secs = ssecs + secs
        parts.update(sparts)
    for a in answers:  # the tests, probabilities and audits are on the logit scale: only what is shown changes
        a.frequentist = shown.answer(a.frequentist, scale)
    joint = joint_statement(answers, level)
    leaderboard = table[["player", "score", "lower", "upper", "rank", "rank_lower", "rank_upper"]]
    rep = appendix(path if isinstance(path, Path) else None, len(comps), comps.excluded.to_dict(), seed, command,
                   n_comparisons=comps.n_comparisons, frame=None if isinstance(path, Path) else comps.frame)
    notes = list(comps.notes) + notes
    if comps.excluded.total:
        notes.insert(len(comps.notes), f"excluded: {comps.excluded.report()}")
    from bayesrank.review.reproducibility import data_name

    name = data_name(path)
    title = f"Review of {name}: {len(answers)} claims about {len(default.players)} players"
    return ReviewReport(kind=kind, title=title, level=level, fragile_below=fragile_below, claims=answers, sections=secs,
                        reproducibility=rep, parts=parts, leaderboard=leaderboard, notes=notes, joint=joint,
                        results={"fits": fits, "ranks": ranks, "comparisons": comps})


def firth_note(graph, default) -> str:
    """What the review did when the MLE is infinite, and why (the report's note)."""
    who = []
    for label, names in (("never lost", graph.never_lost), ("never won", graph.never_won)):
        if names:
            shown = ", ".join(map(str, names[:5])) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            who.append(f"{len(names)} {'player' if len(names) == 1 else 'players'} {label} ({shown})")
    left_out = default.settings.get("bootstrap_left_out")
    return ("no finite maximum-likelihood estimate: " + "; ".join(who) + ". The frequentist answers therefore use "
            "Firth's bias-reduced fit (the log-likelihood plus ½ log det of the Fisher information, finite in a "
            "connected comparison graph): each claim's test is its penalised likelihood-ratio test with a profile "
            "penalised-likelihood interval; the leaderboard's intervals are Wald at Firth's estimate; the audits "
            "refit Firth's estimate on every perturbed table. The Bayesian answers use the prior as always. "
            "--ridge R replaces Firth by an L2 penalty."
            + (" The bootstrap is left out: its resamples have no Firth estimate (" + left_out + ")."
               if left_out else ""))


def largest_component(comps, graph):
    """The comparisons of the largest connected group of players, the others excluded and counted
    (scores are not comparable across groups never compared with each other), and the note."""
    comp = graph.component_of
    sizes = comp.value_counts()
    main = sizes.index[0]
    others = sorted(str(p) for p in comp.index[comp.to_numpy() != main])
    outside = (comp.loc[comps.frame["model_a"].astype(object)].to_numpy() != main)
    reason = "not connected to the largest group of players"
    shown = ", ".join(others[:8]) + (f" and {len(others) - 8} more" if len(others) > 8 else "")
    note = (f"the comparison graph has {len(sizes)} groups of players never compared with each other: the review "
            f"is of the largest ({int(sizes.iloc[0])} players); the {int(outside.sum())} comparisons among the "
            f"other {len(others)} ({shown}) are excluded and counted as '{reason}' (their scores are not comparable "
            "with the rest; review them separately)")
    return comps.exclude(outside, reason), note
