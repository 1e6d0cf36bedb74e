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


def judge_sections(comps, claims, answers, pooled, *, level: float, seed: int, fast: bool, rank=1):
    """(sections, diagnostics parts, notes) for data with a judge column; ``pooled`` is the report's
    default Bradley–Terry fit on all comparisons (the claims' reference)."""
    from bayesrank.bt import BradleyTerry
    from bayesrank.data import comparison_graph
    from bayesrank.errors import InputError
    from bayesrank.hja.model import HJA

    from bayesrank.review.verdict import critical_z

    ref_players, ref_theta = pooled.players, pooled.score
    notes = []
    try:
        hja = HJA(comps, rank=rank, min_per_judge=MIN_PER_JUDGE, seed=seed)
        hfit = hja.fit("mle")
    except InputError as err:
        notes.append(f"HJA not fitted: {err}")
        hfit = None
    sections, parts = [], {}
    if hfit is not None:
        parts["hja"] = hfit.diagnostics
        both = hfit.beside_pooled_bt()  # the HJA module's own comparison (same comparisons, pooled BT)
        from scipy.stats import kendalltau

        tau = kendalltau(both["consensus_score"], both["pooled_bt_score"]).statistic
        jt = hfit.judge_table()
        sections.append(Section(
            "judges", "Judges: HJA consensus and judge effects",
            text=[f"HJA (rank {hfit.rank}, {hfit.method}) on {hfit.counts.total:g} comparisons by "
                  f"{hfit.counts.n_judges} judges; judges with fewer than {MIN_PER_JUDGE:g} comparisons are excluded "
                  f"({hfit.counts.excluded.report()}). Kendall τ between the consensus and the pooled BT order: {tau:.3f}.",
                  "γ = a judge's sensitivity to the consensus (1 = average); residual norm = its systematic deviation; "
                  "flagged = γ > 1 and residual above 1.5× the median (weighs heavily and deviates). "
                  "rank_shift = pooled BT rank − consensus rank (positive: pooling ranks the player lower)."],
            tables=[("consensus (HJA) beside pooled Bradley–Terry", both), ("judges", jt)],
            figures=[("judges: sensitivity γ against residual norm", lambda ax: hfit.plot(ax=ax), (6, 4))],
            data={"kendall_tau_consensus_vs_pooled": float(tau), "consensus": both.to_dict(orient="records"),
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
            fit = BradleyTerry(sub, level=level).fit("mle")
            status = {a.claim.text: claim_under_fit(a.claim, fit, ref_players, ref_theta, critical_z(level, a.claim.sided))
                      for a in answers}
        rows.append({"judge": str(judge), "n_comparisons": int(n), **status})
    if hfit is not None:
        rows.append({"judge": "HJA consensus", "n_comparisons": int(hfit.counts.total),
                     **{a.claim.text: claim_under_consensus(a.claim, hfit, ref_players, ref_theta,
                                                   critical_z(level, a.claim.sided)) for a in answers}})
    per = pd.DataFrame(rows)
    sections.append(Section(
        "claims_by_judge", "Each claim under each judge alone and under the consensus",
        text=["'holds' = the point estimate supports the claim; 'significant' = every contrast it needs is "
              "significant by the pairwise-contrast rule at the report's level."],
        tables=[("claims by judge", per)], data={"claims_by_judge": per.to_dict(orient="records")}))
    return sections, parts, notes
