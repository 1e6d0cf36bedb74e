"""Validated pairwise comparisons, readers for real formats, and sufficient statistics."""

from bayesrank.data.aggregate import (
    GraphReport,
    PairCounts,
    aggregate,
    comparison_graph,
    finite_core,
    split_components,
)
from bayesrank.data.comparisons import OUTCOMES, Comparisons
from bayesrank.data.readers import FORMATS, detect_format, read_comparisons

__all__ = [
    "OUTCOMES", "Comparisons", "PairCounts", "GraphReport", "aggregate", "comparison_graph",
    "split_components", "finite_core", "read_comparisons", "detect_format", "FORMATS",
]
