"""Statistics several rooms share: paired per-item tests (exact McNemar, paired t, cluster-robust
standard errors, Wilson/Jeffreys intervals, Holm, intersection–union) and simultaneous rank
confidence sets with tie groups (the csranks construction), each from estimates and covariances,
whatever model produced them.

Names are imported lazily (``bayesrank.stats.paired``, ``bayesrank.stats.ranksets``)."""

from bayesrank._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "mcnemar_exact": "paired", "paired_comparison": "paired", "wilson_interval": "paired",
    "jeffreys_interval": "paired", "cluster_se": "paired", "holm": "paired", "intersection_union": "paired",
    "rank_confidence_sets": "ranksets", "RankSets": "ranksets", "tie_groups": "ranksets",
    "contrast_sd": "ranksets", "adjust_pvalues": "ranksets",
})
