"""Benchmark leaderboards from per-item results: harness-log readers (Inspect ``.eval``, lm-eval samples,
HELM runs, Every Eval Ever, SWE-bench lists, long and wide tables), the validated models × items
matrix, paired frequentist answers, the item-response (Rasch) model in PyMC with its NumPy twin, and
exact re-grade / item-drop perturbations.

Names are imported lazily."""

from bayesrank._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "ItemScores": "data", "read_items": "readers", "detect_format": "readers",
    "mean_covariance": "frequentist", "model_table": "frequentist", "pair_stats": "frequentist",
    "rank_sets": "frequentist", "overturn": "perturb", "lose_significance": "perturb",
    "fit_laplace": "irt", "fit_nuts": "irt", "build_rasch_model": "irt", "build_full_model": "irt",
})
