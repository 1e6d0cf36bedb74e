"""Does AlpacaEval 2's #1 survive length control, and how fragile is it there?

Same data and model as examples/style_alpaca_eval.py (weighted GPT-4-Turbo judge, fractional
outcomes, length difference scaled not centred). For the plain and the length-controlled
Bradley–Terry fit, a greedy influence-ranked audit flips, drops or adds battles (carrying their
length covariate) until the top-1 (and the top-3 set) changes; every budget is verified by a
cold-start exact refit. The CI-aware top-1 audit counts a change only when another model is
*significantly* ahead of the #1 (pairwise contrast, Fisher covariance of the refit). The same
actions then attack the whole order (Kendall τ to the model's own order falls to ≤ 0.9) and the
width of the intervals (the #1's variance ×1.5, ``ci-player``; the sum of all variances ×1.5,
``ci-trace``; CI steps are filled up to 0.2% of the battles per refit).

Run: python examples/style_alpaca_audit.py
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd

from bayesrank.influence.greedy import greedy_audit
from bayesrank.influence.state import BTState

_spec = importlib.util.spec_from_file_location("style_alpaca_eval", Path(__file__).with_name("style_alpaca_eval.py"))
style_alpaca_eval = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(style_alpaca_eval)


def main(kinds=("flip", "drop", "add"), ks=(1, 3), ci_aware_kinds=("flip",), objectives=("tau", "ci-player", "ci-trace"),
         objective_kinds=("flip", "drop")) -> dict:
    data, _ = style_alpaca_eval.load("normalized_diff")
    models = {"plain BT": BTState.fit(data.without_features()), "length-controlled BT": BTState.fit(data)}
    for name, st in models.items():
        top = [str(p) for p in st.players[st.ranking()[:3]]]
        print(f"{name}: top-3 {top}")
    rows, audits = [], {}
    for name, st in models.items():
        for k in ks:
            for kind in kinds:
                res = greedy_audit(st, "top1" if k == 1 else f"topk:{k}", kind, model=name)
                audits[(name, k, kind)] = res
                rows.append(_row(name, kind, res))
        for kind in ci_aware_kinds:  # a change counts only when an outsider is significantly ahead
            res = greedy_audit(st, "top1", kind, model=name, ci_aware=True)
            audits[(name, "1+ci", kind)] = res
            rows.append(_row(name, kind, res))
        for spec in objectives:  # the order and the interval widths ("ci-player": the model's #1)
            spec = f"ci-player:{st.players[st.ranking()[0]]}" if spec == "ci-player" else spec
            for kind in objective_kinds:
                res = greedy_audit(st, spec, kind, model=name, fill_steps=spec.startswith("ci"))
                audits[(name, spec, kind)] = res
                rows.append(_row(name, kind, res))
    table = pd.DataFrame(rows)
    print(f"{data.n_comparisons:g} battles; budget = battles acted on until the property breaks "
          "(greedy, so an upper bound on the minimum), verified by a cold-start refit")
    print(table.to_string(index=False, formatters={"fraction": lambda v: f"{v:.4%}", "seconds": lambda v: f"{v:.1f}"}))
    return {"table": table, "audits": audits, "models": models}


def _row(name, kind, res) -> dict:
    return {"model": name, "objective": res.objective, "action": kind, "budget": res.budget, "fraction": res.fraction,
            "verified": res.verified, "seconds": res.seconds,
            "after": (", ".join(res.final_top[:3]) if res.broken else "(not broken)")}


if __name__ == "__main__":
    main()
