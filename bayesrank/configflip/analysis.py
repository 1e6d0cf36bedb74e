"""One call for a whole grid: per benchmark, pairwise flips (rho_flip, Property 1), tau_R, reachable
orderings and the Type-II ANOVA attribution, optionally with posterior flip probabilities.

Benchmarks with fewer than two configurations or models in the range are excluded *and reported*
(``excluded``); incomplete configurations are reported per benchmark.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import pandas as pd

from bayesrank.errors import ExclusionLog, InputError

from .anova import anova_type2, attribution_summary
from .grid import MODEL, SCORE, EvalGrid
from .metrics import pairwise_flips, reachable_orderings, tau_r
from .ranges import apply_range


@dataclass
class BenchmarkResult:
    benchmark: str
    pairs: pd.DataFrame
    tau: dict
    orderings: pd.DataFrame
    orderings_info: dict
    anova: pd.DataFrame | None
    attribution: dict | None
    posterior: object = None

    def to_dict(self) -> dict:
        pairs = self.pairs.copy()
        post = self.posterior.p_flip_summary() if self.posterior is not None else {}
        pairs["p_flip"] = [post.get((a, b)) for a, b in zip(pairs["model_a"], pairs["model_b"])]
        out = {
            "pairs": pairs[["model_a", "model_b", "n_plus", "n_minus", "n_ties", "n_configs", "rho_flip",
                            "strict_order_free", "witness_a_wins", "witness_b_wins", "p_flip"]],
            "tau_R": self.tau["tau_R"], "tau_R_detail": {k: v for k, v in self.tau.items() if k != "tau_R"},
            "orderings": self.orderings[["ordering", "count"]],
            "orderings_info": self.orderings_info,
            "anova": None if self.anova is None else
            self.anova[["term", "sum_sq", "df", "share", "partial_eta_sq", "F", "p"]],
            "attribution": self.attribution,
        }
        if self.posterior is not None:
            out["posterior_orderings"] = self.posterior.orderings()
        return out


@dataclass
class GridAnalysis:
    range_spec: str
    results: dict[str, BenchmarkResult]
    missing_cells: pd.DataFrame
    excluded: ExclusionLog = field(default_factory=ExclusionLog)

    def to_dict(self) -> dict:
        return {"range": self.range_spec or "full",
                "benchmarks": {b: r.to_dict() for b, r in self.results.items()},
                "missing_cells": {"count": int(len(self.missing_cells)), "cells": self.missing_cells.head(200)},
                "excluded": self.excluded.to_dict() | {"detail": self.excluded.examples}}


def analyze(grid: EvalGrid, range_spec: str | None = None, *, tol: float = 0.0, anova_order: int | None = None,
            anova_blocks: tuple[str, ...] = (), posterior: str | None = None, posterior_kwargs: dict | None = None,
            ) -> GridAnalysis:
    """Metrics for every benchmark of ``grid`` restricted to ``range_spec``.

    ``posterior``: None (skip), ``"mle"`` (no-pooling twin) or ``"nuts"`` (hierarchical PyMC model).
    ``anova_blocks``: extra columns of ``grid.data`` entering the ANOVA additively (e.g. a task column
    when several tasks of a family form one benchmark).
    """
    g = apply_range(grid, range_spec)
    log = ExclusionLog()
    results = {}
    for b in g.benchmarks:
        conf = g.configurations(b)
        n_models = g.data.loc[g.data["benchmark"] == b, MODEL].nunique()
        if len(conf) < 2:
            log.add("benchmark with a single configuration in range", 1, [b])
            continue
        if n_models < 2:
            log.add("benchmark with a single model", 1, [b])
            continue
        pairs = pairwise_flips(g, b, tol)
        tau = tau_r(g, b, tol)
        orderings, oinfo = reachable_orderings(g, b, tol)
        anova = attribution = None
        d = g.data[g.data["benchmark"] == b]
        factors = [MODEL] + [a for a in g.axes if d[a].nunique() > 1]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                anova = anova_type2(d, SCORE, factors, max_order=anova_order, blocks=anova_blocks)
            attribution = attribution_summary(anova)
        except InputError as err:
            log.add(f"ANOVA not computed ({err})", 1, [b])
        post = None
        if posterior:
            from .posterior import FlipPosterior

            post = FlipPosterior(g, benchmark=b).fit(method=posterior, **(posterior_kwargs or {}))
        results[b] = BenchmarkResult(b, pairs, tau, orderings, oinfo, anova, attribution, post)
    if not results:
        raise InputError(f"no benchmark has two or more configurations and models in range "
                         f"{range_spec or 'full'!r}: {log.report()}")
    missing = g.missing_cells()
    return GridAnalysis(range_spec or "full", results, missing, log)
