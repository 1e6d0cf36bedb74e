"""HJA on the bundled real multi-judge panels: LLMFAO (crowd / GPT-3.5 / GPT-4) and AlpacaEval annotators.

Prints and writes under ``out/hja/``: consensus and judge tables, held-out pair prediction (HJA vs
JA-Ranking vs pooled BT, overall and on near-tie pairs), rank stability with 1–3 injected noisy judges,
family self-preference of the OpenAI judges, and the (γ, residual) judge plot.

Run: ``python examples/hja_panels.py``
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from bayesrank import datasets
from bayesrank.hja import HJA, from_comparisons
from bayesrank.hja.datasets import load_alpaca_eval, load_llmfao
from bayesrank.hja.diagnostics import affinity, plot_judges
from bayesrank.hja.evaluation import held_out_prediction, rank_stability
from bayesrank.report import write_json

OUT = Path("out/hja")
pd.set_option("display.width", 200)
pd.set_option("display.max_columns", 20)


def llmfao() -> None:
    print("=" * 30, "LLMFAO: crowd (pooled) / GPT-3.5 / GPT-4 on the same 2,139 pairs", "=" * 30)
    comps = load_llmfao()
    counts = from_comparisons(comps)
    hja = HJA(counts, rank="auto", seed=0)
    print("rank selection (held-out log-loss per comparison):\n", hja.rank_selection.to_string(index=False))
    fit = hja.fit()
    print(f"\nchosen rank {fit.rank}; converged {fit.converged}; starts {fit.info['starts']}")
    print("\nconsensus (top 10):\n", fit.consensus().head(10).to_string(index=False))
    print("\njudge table:\n", fit.judge_table().to_string(index=False))
    orgs = pd.read_json(datasets.path("llmfao/models.jsonl"), lines=True).set_index("name")["org"].to_dict()
    judge_family = {"gpt3": "OpenAI", "gpt4": "OpenAI"}
    aff = pd.concat([affinity(fit, orgs, judge_family, part) for part in ("residual", "deviation")])
    print("\nfamily self-preference (OpenAI judges on OpenAI models, vs consensus; residual = beyond γ):\n",
          aff.to_string(index=False))
    print("\nheld-out prediction (20% of prompt ids held out):")
    for r in sorted({0, 1, fit.rank}):
        print(held_out_prediction(comps, rank=r, group_col="id", seed=0).to_string(index=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        print("\nrank stability (Kendall τ of the consensus) with injected coin-flip judges:\n",
              rank_stability(counts, rank=fit.rank, noise_scale=0.0).to_string())
        print("\n...with weakly opinionated synthetic judges (own random scores, sd 0.3):\n",
              rank_stability(counts, rank=fit.rank, noise_scale=0.3).to_string())
    plot_judges(fit, OUT / "llmfao_judges.png")
    write_json(fit.to_dict() | {"affinity": aff}, OUT / "llmfao.json")


def alpaca() -> None:
    print("\n" + "=" * 30, "AlpacaEval: three GPT-4-turbo annotators (bundled derived subset)", "=" * 30)
    comps = load_alpaca_eval()
    print(comps)
    try:
        HJA(comps, rank=1)
    except ValueError as err:
        print("rank 1:", err)
    fit = HJA(comps, rank=0).fit()
    print("\nconsensus:\n", fit.consensus().to_string(index=False))
    print("\njudge table:\n", fit.judge_table().to_string(index=False))
    print("\nheld-out prediction (20% of instructions held out):\n",
          held_out_prediction(comps, rank=0, group_col="instruction_idx", seed=0).to_string(index=False))
    write_json(fit.to_dict(), OUT / "alpaca_eval.json")


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    llmfao()
    alpaca()
    print(f"\noutputs written under {OUT}/")
