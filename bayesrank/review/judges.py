"""The judges section: the HJA consensus beside the pooled Bradley–Terry fit, the judge table, and
whether each claim holds under each judge alone and under the consensus.

A claim *holds* under a fit when its point margin is positive and is *significant* when every
contrast it needs is significant by the pairwise-contrast rule (as in the pairwise section):
per judge from a Bradley–Terry MLE on that judge's comparisons (``bayesrank.bt``), under the
consensus from the HJA fit's contrasts ``μ_a − μ_b`` (``bayesrank.hja``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.review.pairwise import claim_contrasts, contrast_table
from bayesrank.review.report import Section

MIN_PER_JUDGE = 20.0


def _status(holds: bool, significant: bool) -> str:
    return "holds, significant" if holds and significant else "holds" if holds else "does not hold"


def claim_under_fit(claim, fit, reference_players, reference_theta, z: float) -> str:
    """Status of a ranking claim under a BT fit whose players may be a subset of the reference."""
    if claim.kind == "order":
        return "n/a"
    needed = claim_contrasts(claim, reference_players, reference_theta)
    names = {str(p): i for i, p in enumerate(fit.players)}
    try:
        pairs = [(names[str(reference_players[a])], names[str(reference_players[b])]) for a, b in needed]
    except KeyError:
        return "not judged"
    t = contrast_table(fit, pairs, z, claim.sided)
    return _status(bool((t["estimate"] > 0).all()), bool((t["lower"] > 0).all()))


def claim_under_consensus(claim, hja_fit, reference_players, reference_theta, z: float) -> str:
    """Status of a ranking claim under the HJA consensus: contrasts μ_a − μ_b > z·se (``z`` of the
    claim's sidedness)."""
    if claim.kind == "order":
        return "n/a"
    holds, significant = True, True
    for a, b in claim_contrasts(claim, reference_players, reference_theta):
        c = hja_fit.contrast(str(reference_players[a]), str(reference_players[b]))
        holds &= c["estimate"] > 0
        significant &= c["estimate"] > z * c["se"]
    return _status(bool(holds), bool(significant))


def consensus_fit(comps, *, level: float, seed: int, rank="auto"):
    """(HJA fit or None, the sentence that states the rank choice or the failure, its diagnostics).

    With ``rank="auto"`` (the default) the rank is chosen by the data (held-out log-likelihood, falling
    back to a smaller rank where the chosen one is not identified); an integer ``rank`` is used as given. When no HJA can be fitted the diagnostics
    say so (not converged) with the cause and what to do about it."""
    import warnings

    from bayesrank.errors import InputError
    from bayesrank.hja.data import from_comparisons, items_seen_by_one_judge
    from bayesrank.hja.model import HJA
    from bayesrank.protocol import Diagnostics

    hja = None
    try:
        hja = HJA(comps, rank=rank, min_per_judge=MIN_PER_JUDGE, level=level, seed=seed)
        with warnings.catch_warnings():  # the selection's thinned refits may disagree between starts
            warnings.filterwarnings("ignore", message="HJA starts disagree")
            hfit = hja.fit("mle")
    except InputError as err:
        cause = str(err).split("; drop them")[0].split(" — use a smaller rank")[0]
        single = items_seen_by_one_judge(from_comparisons(comps))
        remedy = ("pool the judges with few comparisons into one judge (one value of the judge column) or drop "
                  "their rows" if "too few comparisons" in cause else
                  "have every judge compare the players it scores with the others, or review the judges separately"
                  if single else "review each judge's comparisons separately")
        text = (f"HJA consensus not fitted: {cause}. Remedy: {remedy}. The pooled Bradley–Terry answers above "
                "use every comparison; each judge's own fit is in the table below.")
        diag = Diagnostics(kind="optimizer", method="HJA consensus", converged=False, messages=(text,),
                           optimizer_status="not fitted")
        return None, text, diag
    sel = hja.rank_selection
    if sel is None:
        return hfit, f"HJA rank {hfit.rank} (as given with --rank).", hfit.diagnostics
    tried = ", ".join(f"{int(r)}: {v:.4f}" for r, v in zip(sel["rank"], sel["heldout_logloss"]) if np.isfinite(v))
    text = (f"HJA rank {hfit.rank} chosen by the data: held-out log-loss per comparison by rank ({tried}); a larger "
            "rank is kept only when it beats every smaller one by more than one standard error.")
    if hja.rank_fallback:
        text += f" Fallback: {hja.rank_fallback}."
    return hfit, text, hfit.diagnostics


def judge_sections(comps, claims, answers, pooled, *, level: float, seed: int, fast: bool, rank="auto",
                   cluster: str | None = None, position_effect: bool = False):
    """(sections, diagnostics parts, notes) for data with a judge column; ``pooled`` is the report's
    default Bradley–Terry fit on all comparisons (the claims' reference). Each judge's own fit uses the
    report's model terms (``cluster``: cluster-robust intervals; ``position_effect``); the HJA consensus
    has neither, and a note says so when they were asked for."""
    from bayesrank.bt import BradleyTerry
    from bayesrank.data import comparison_graph
    from bayesrank.review.verdict import critical_z

    ref_players, ref_theta = pooled.players, pooled.score
    notes = []
    hfit, rank_text, hdiag = consensus_fit(comps, level=level, seed=seed, rank=rank)  # a failure is in the diagnostics
    sections, parts = [], {"hja": hdiag}
    if hfit is not None:
        both = hfit.beside_pooled_bt()  # the HJA module's own comparison (same comparisons, pooled BT)
        from bayesrank.stats.kendall import kendall_tau_b

        tau = kendall_tau_b(both["consensus_score"], both["pooled_bt_score"])
        jt = hfit.judge_table()
        selection = hfit.info.get("rank_selection")
        sections.append(Section(
            "judges", "Judges: HJA consensus and judge effects",
            text=[rank_text,
                  f"HJA (rank {hfit.rank}, {hfit.method}) on {hfit.counts.total:,.0f} comparisons by "
                  f"{hfit.counts.n_judges} judges; judges with fewer than {MIN_PER_JUDGE:g} comparisons are excluded "
                  f"({hfit.counts.excluded.report()}). Kendall τ between the consensus and the pooled BT order: {tau:.3f}.",
                  "γ = a judge's sensitivity to the consensus (1 = average); residual norm = its systematic deviation; "
                  "flagged = γ > 1 and residual above 1.5× the median (weighs heavily and deviates). "
                  "rank_shift = pooled BT rank − consensus rank (positive: pooling ranks the player lower)."],
            tables=[("consensus (HJA) beside pooled Bradley–Terry", both), ("judges", jt)]
            + ([("HJA rank selection (held-out log-loss per comparison)", selection)] if selection is not None else []),
            figures=[("judges: sensitivity γ against residual norm", lambda ax: hfit.plot(ax=ax), (6, 4))],
            data={"rank": int(hfit.rank), "rank_choice": rank_text,
                  "rank_selection": None if selection is None else selection.to_dict(orient="records"),
                  "kendall_tau_consensus_vs_pooled": float(tau), "consensus": both.to_dict(orient="records"),
                  "judges": jt.to_dict(orient="records")}))
    # each claim under each judge alone and under the consensus
    frame = comps.frame
    rows = []
    judges = pd.Series(frame["judge"]).value_counts()
    for judge, n in judges.items():
        sub = comps.subset(np.asarray(frame["judge"] == judge))
        counts = sub.aggregate()
        if n < MIN_PER_JUDGE or not comparison_graph(counts).finite_mle:
            status = {a.claim.text: "no finite MLE" if n >= MIN_PER_JUDGE else f"< {MIN_PER_JUDGE:g} comparisons"
                      for a in answers}
        else:
            fit = BradleyTerry(sub, level=level, cluster=cluster, position_effect=position_effect).fit("mle")
            status = {a.claim.text: claim_under_fit(a.claim, fit, ref_players, ref_theta, critical_z(level, a.claim.sided))
                      for a in answers}
        rows.append({"judge": str(judge), "n_comparisons": int(n), **status})
    if hfit is not None:
        rows.append({"judge": "HJA consensus", "n_comparisons": int(hfit.counts.total),
                     **{a.claim.text: claim_under_consensus(a.claim, hfit, ref_players, ref_theta,
                                                   critical_z(level, a.claim.sided)) for a in answers}})
    per = pd.DataFrame(rows)
    terms = " and ".join(x for x in (f"clusters of {cluster}" if cluster else "",
                                     "the position effect" if position_effect else "") if x)
    if terms and hfit is not None:
        notes.append(f"The HJA consensus has no model of {terms}: its intervals treat the comparisons as independent "
                     "and its 'significant' statements may overstate; the pooled answers and each judge's own fit "
                     f"account for {terms}.")
    sections.append(Section(
        "claims_by_judge", "Each claim under each judge alone and under the consensus",
        text=["'holds' = the point estimate supports the claim; 'significant' = every contrast it needs is "
              "significant by the pairwise-contrast rule at the report's level"
              + (f" (each judge's fit with {terms}; the consensus without)." if terms else ".")],
        tables=[("claims by judge", per)], data={"claims_by_judge": per.to_dict(orient="records")}))
    return sections, parts, notes
