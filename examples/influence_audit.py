"""Full perturbation audit of the bundled real leaderboards, one table like spec 00's.

Run:  python examples/influence_audit.py            (writes out/influence_audit/*.csv|json|png)

Per dataset: verified greedy actions needed to change the top-1 (drop, flip, add all_outcomes,
add all_pairs, add all_outcomes_weighted), R_top1 / R_tau / R_CI (fraction of comparisons), the
CI-aware / point budget ratio for drops, and the largest player-removal displacement and top-10
change (exact refits). The spec's headline figures are printed beside ours where comparable.

Where our data differ from the spec's: there is no Arena-55k battle file here — the Chatbot Arena
data are aggregated pair counts (1.67M votes to 2024-08-14, 129 models), so "3 flips / 5 drops of
55k" is not reproducible literally; MT-Bench is not bundled; ATP/WTA have no finite MLE as a whole
and are restricted to their finite-MLE core (excluded matches reported).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from bayesrank.data import finite_core, read_comparisons
from bayesrank.datasets import path
from bayesrank.influence.cli import single_blas_thread
from bayesrank.influence.greedy import greedy_audit
from bayesrank.influence.objectives import CIObjective, SmoothTau, TopK
from bayesrank.influence.players import degree_relation, player_removal
from bayesrank.influence.plots import plot_budget_curves, plot_player_removal
from bayesrank.influence.state import BTState
from bayesrank.report import console, write_json

DATASETS = {
    "Chatbot Arena (counts)": ("arena/chatbotarena_20240814.json", None),
    "LLMFAO crowd": ("llmfao/crowd-comparisons.csv", None),
    "LLMFAO GPT-4 judge": ("llmfao/gpt4-crowd-comparisons.csv", None),
    "ATP 2024 (finite core)": ("tennis/atp_matches_2024.csv", 1),
    "WTA 2024 (finite core)": ("tennis/wta_matches_2024.csv", 1),
    "NBA 2023-24": ("sports/nba_games_2023_24_tidy.csv", None),
}
TOP1_ACTIONS = ("drop", "flip", "add", "add_pairs", "add_sampled", "add_weighted")
SPEC = {  # headline figures of spec 00 (seed 000), comparable rows only
    "top1_flip": "3 (Arena-55k)", "top1_drop": "5 (Arena-55k)", "R_top1_drop": "< 1%",
    "ci_aware_ratio": "~13x (mean)", "max_displaced": "up to 28", "max_top10_changes": "up to 6",
}


def audit_dataset(name, file, min_matches, out):
    comps = read_comparisons(path(file))
    if min_matches is not None:
        comps = finite_core(comps, min_matches=min_matches)
    st = BTState.fit(comps.aggregate())
    n = st.n_matches
    row = {"dataset": name, "players": st.n_players, "comparisons": n, "excluded_rows": comps.excluded.total}
    curves = {}
    for kind in TOP1_ACTIONS:
        r = greedy_audit(st, TopK(st, 1), kind, budget=int(np.ceil(0.05 * n)))
        row[f"top1_{kind}"] = r.budget if r.verified else None
        curves[kind] = r
    ci_aware = greedy_audit(st, TopK(st, 1, ci_aware=True), "drop", budget=int(np.ceil(0.2 * n)))
    row["top1_drop_ci_aware"] = ci_aware.budget if ci_aware.verified else None
    row["ci_aware_ratio"] = (row["top1_drop_ci_aware"] / row["top1_drop"]
                             if row["top1_drop_ci_aware"] and row["top1_drop"] else None)
    for kind in ("drop", "flip"):
        r = greedy_audit(st, SmoothTau(st), kind, budget=int(np.ceil(0.02 * n)), max_steps=150)
        row[f"R_tau_{kind}"] = r.fraction if r.verified else None
        r = greedy_audit(st, CIObjective(st, None, "inflate", 1.5), kind, budget=int(np.ceil(0.05 * n)), max_steps=150)
        row[f"R_CI_{kind}"] = r.fraction if r.verified else None
        row[f"R_top1_{kind}"] = row[f"top1_{kind}"] / n if row[f"top1_{kind}"] else None
    table = player_removal(st)
    best = table.sort_values("displaced", ascending=False).iloc[0]
    row.update(max_displaced=best["displaced"], max_displaced_player=best["player"],
               max_top10_changes=table["top10_changes"].max(),
               no_finite_mle_after_removal=int((~table["finite_mle"]).sum()),
               **degree_relation(table))
    slug = "".join(ch if ch.isalnum() else "_" for ch in name).strip("_").lower()
    table.to_csv(out / f"player_removal_{slug}.csv", index=False)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    plot_budget_curves(curves, axes[0])
    plot_player_removal(table, axes[1])
    axes[0].set_title(f"{name}: top-1 gap vs actions")
    fig.tight_layout()
    fig.savefig(out / f"audit_{slug}.png", dpi=100)
    plt.close(fig)
    return row, curves


def baselines(name, file):
    """Targeted promotion of the 5th-ranked player to #1 and CI reduction of the leader:
    influence audit vs omni-rigging-style, random and active-sampling baselines."""
    from bayesrank.influence.baselines import active_sampling, random_audit, rigging_audit

    st = BTState.fit(read_comparisons(path(file)).aggregate())
    target = str(st.players[st.ranking()[4]])
    obj = TopK(st, 1, target=target, goal="promote")
    row = {"dataset": name, "target": target}
    for kind in ("add", "flip"):
        r = greedy_audit(st, obj, kind)
        row[f"influence_{kind}"] = r.budget if r.verified else None
    cap = 20 * max(row["influence_add"] or 1, 1)
    for variant in ("target_only", "bt_diff"):
        runs = [rigging_audit(st, obj, budget=cap, variant=variant, seed=s)["budget"] for s in range(3)]
        row[f"rigging_{variant}"] = "/".join("-" if b is None else str(b) for b in runs)
    runs = [random_audit(st, obj, "flip", budget=cap, seed=s)["budget"] for s in range(3)]
    row["random_flip"] = "/".join("-" if b is None else str(b) for b in runs)
    leader = str(st.players[st.ranking()[0]])
    ci = CIObjective(st, leader, mode="reduce", ratio=0.8)
    r = greedy_audit(st, ci, "add_weighted", budget=int(np.ceil(0.5 * st.n_matches)))
    row["ci_reduce_influence_budget"] = r.budget
    if r.budget:
        act = active_sampling(st, leader, budget=r.budget)
        row["active_sampling_var_ratio_same_budget"] = float(act["variance"].iloc[-1] / ci.v0)
    return row


def main():
    out = Path("out/influence_audit")
    out.mkdir(parents=True, exist_ok=True)
    con = console()
    rows, details = [], {}
    with single_blas_thread():
        for name, (file, mm) in DATASETS.items():
            t0 = time.perf_counter()
            row, curves = audit_dataset(name, file, mm, out)
            row["seconds"] = time.perf_counter() - t0
            rows.append(row)
            details[name] = {"row": row, "top1_audits": {k: r.to_dict() for k, r in curves.items()}}
            con.print(f"{name}: done in {row['seconds']:.1f}s")
    df = pd.DataFrame(rows)
    df.to_csv(out / "audit_table.csv", index=False)
    write_json({"table": df, "spec_headlines": SPEC, "details": details}, out / "audit.json")
    show = df[["dataset", "players", "comparisons", "top1_drop", "top1_flip", "top1_add", "top1_add_pairs", "top1_add_sampled",
               "top1_add_weighted", "R_top1_drop", "R_top1_flip", "R_tau_drop", "R_tau_flip", "R_CI_drop", "R_CI_flip",
               "ci_aware_ratio", "max_displaced", "max_top10_changes", "spearman_degree_vs_displaced"]].copy()
    def fmt(col, v):
        if v is None or (isinstance(v, float) and not np.isfinite(v)):
            return "-"
        if col.startswith("R_"):
            return f"{100 * v:.3g}%"
        if isinstance(v, (float, np.floating)):
            return f"{v:.3g}" if col in ("ci_aware_ratio", "spearman_degree_vs_displaced") else f"{v:.0f}"
        return str(v)

    cells = {r["dataset"]: [fmt(c, r[c]) for c in show.columns[1:]] for r in show.to_dict(orient="records")}
    cells["spec 00 headline"] = [SPEC.get(c, "") for c in show.columns[1:]]
    pretty = pd.DataFrame(cells, index=show.columns[1:])
    pretty.index.name = "quantity (budget = matches)"
    con.width = max(con.width, 200)
    con.print("perturbation audit; R = fraction of comparisons; - = not broken within budget "
              "(top-1: 5% of N, CI-aware: 20%, tau/CI: 2%/5%)")
    con.print(pretty.to_string())
    with single_blas_thread():
        base = pd.DataFrame([baselines("NBA 2023-24", "sports/nba_games_2023_24_tidy.csv"),
                             baselines("LLMFAO crowd", "llmfao/crowd-comparisons.csv")])
    base.to_csv(out / "baselines.csv", index=False)
    con.print("targeted promotion of the 5th-ranked player to #1 (matches/votes; 3 seeds for baselines) and "
              "CI reduction of the leader's variance to 0.8x (influence add_weighted vs active sampling):")
    con.print(base.T.to_string())
    con.print(f"wrote {out}/audit_table.csv, audit.json and figures")


if __name__ == "__main__":
    main()
