"""Spec 03: configuration-conditional rank instability.

Grids (``EvalGrid``), readers for harness outputs, ranges, rho_flip / Property 1 / tau_R / reachable
orderings, Type-II ANOVA attribution, GRID cards, and posterior flip probabilities
(``bayesrank.configflip.posterior.FlipPosterior``, imported lazily because it loads PyMC).
"""

from .analysis import analyze
from .anova import anova_type2, attribution_summary
from .card import build_card, render_markdown, validate_card, write_card
from .grid import EvalGrid
from .metrics import (cross_harness_differences, pairwise_flips, reachable_orderings, scoring_path_sensitivity,
                      tau_r)
from .ranges import apply_range, parse_range

__all__ = ["EvalGrid", "analyze", "anova_type2", "attribution_summary", "build_card", "render_markdown",
           "validate_card", "write_card", "pairwise_flips", "reachable_orderings", "tau_r",
           "scoring_path_sensitivity", "cross_harness_differences", "apply_range", "parse_range"]
