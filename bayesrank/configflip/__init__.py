"""Spec 03: configuration-conditional rank instability.

Grids (``EvalGrid``), readers for harness outputs, ranges, rho_flip / Property 1 / tau_R / reachable
orderings, Type-II ANOVA attribution, GRID cards, and posterior flip probabilities
(``bayesrank.configflip.posterior.FlipPosterior``, which loads PyMC). Names load lazily (PEP 562).
"""

from bayesrank._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "EvalGrid": "grid", "analyze": "analysis",
    "anova_type2": "anova", "attribution_summary": "anova",
    "build_card": "card", "render_markdown": "card", "validate_card": "card", "write_card": "card",
    "pairwise_flips": "metrics", "reachable_orderings": "metrics", "tau_r": "metrics",
    "scoring_path_sensitivity": "metrics", "cross_harness_differences": "metrics",
    "apply_range": "ranges", "parse_range": "ranges",
})
