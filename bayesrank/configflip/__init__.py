"""Spec 03: configuration-conditional rank instability.

Grids (``EvalGrid``), readers for harness outputs, ranges, rho_flip / Property 1 / tau_R / reachable
orderings, the spec's Type-II ANOVA attribution, GRID cards, posterior flip probabilities
(``posterior.FlipPosterior``) and paired per-item tests of ``A>B`` claims (``paired.paired_tests``).

Names are imported lazily (``bayesrank configflip --help`` must not load pandas, SciPy or PyMC).
"""

from bayesrank._lazy import lazy_exports

_EXPORTS = {
    "EvalGrid": "grid", "analyze": "analysis", "GridAnalysis": "analysis", "anova_type2": "anova",
    "attribution_summary": "anova", "attribution_analyses": "attribution", "build_card": "card",
    "render_markdown": "card", "validate_card": "card", "write_card": "card", "pairwise_flips": "metrics",
    "reachable_orderings": "metrics", "tau_r": "metrics", "scoring_path_sensitivity": "metrics",
    "cross_harness_differences": "metrics", "apply_range": "ranges", "parse_range": "ranges",
    "FlipPosterior": "posterior", "FlipResult": "posterior", "paired_tests": "paired", "PairedTests": "paired",
}

# PEP 562: names (and dir()) without importing a submodule until one is used
__getattr__, __dir__, __all__ = lazy_exports(__name__, dict(sorted(_EXPORTS.items())))
