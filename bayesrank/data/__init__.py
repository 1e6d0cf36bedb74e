"""Validated pairwise comparisons, readers for real formats, and the one data type of every
Bradley–Terry fit: :class:`PairRows` (pair counts are its zero-feature case, ``PairCounts``).

Names are imported lazily (PEP 562); ``bayesrank.data.streaming`` aggregates files larger than
memory to the same pair counts."""

from bayesrank._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "OUTCOMES": "comparisons", "Comparisons": "comparisons",
    "PairRows": "rows", "PairCounts": "rows", "share_rows": "rows", "pair_rows": "aggregate",
    "GraphReport": "aggregate", "aggregate": "aggregate", "parse_style": "features",
    "comparison_graph": "aggregate", "split_components": "aggregate", "finite_core": "aggregate",
    "read_comparisons": "readers", "detect_format": "readers", "FORMATS": "readers",
    "aggregate_files": "streaming",
})
