"""One call for a whole grid: per benchmark, pairwise flips (rho_flip, Property 1), tau_R, reachable
orderings and the spec's Type-II ANOVA attribution (:mod:`.attribution`), optionally with posterior
flip probabilities and paired per-item tests of ``A>B`` claims. The result, :class:`GridAnalysis`, is a
:class:`bayesrank.protocol.Result` (schema ``configflip``).

Benchmarks with fewer than two configurations or players in the range are excluded *and reported*
(``excluded``); incomplete configurations are reported per benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from bayesrank.errors import ExclusionLog, InputError
from bayesrank.protocol import Diagnostics, Result

from .attribution import AnovaAnalysis, attribution_analyses
from .grid import BENCHMARK, MODEL, EvalGrid
from .metrics import pairwise_flips, reachable_orderings, tau_r
from .ranges import apply_range

PAIR_COLUMNS = ["player_a", "player_b", "n_plus", "n_minus", "n_ties", "n_configs", "rho_flip", "strict_order_free",
                "witness_a_wins", "witness_b_wins"]


@dataclass
class BenchmarkResult:
    """Everything computed for one benchmark (plain data; :class:`GridAnalysis` is the protocol object)."""

    benchmark: str
    pairs: pd.DataFrame
    tau: dict
    orderings: pd.DataFrame
    orderings_info: dict
    anovas: list[AnovaAnalysis]
    design: dict
    posterior: object = None          # a FlipResult when a posterior was fitted

    @property
    def anova(self) -> pd.DataFrame | None:
        """The first execution (spec-design) ANOVA table, or None."""
        main = [a for a in self.anovas if a.role == "execution"]
        return main[0].table if main else None

    @property
    def attribution(self) -> dict | None:
        main = [a for a in self.anovas if a.role == "execution"]
        return main[0].attribution if main else None

    def pairs_table(self) -> pd.DataFrame:
        """Pairs with the posterior summary columns when a posterior was fitted."""
        pairs = self.pairs[PAIR_COLUMNS].copy()
        if self.posterior is not None:
            ps = self.posterior.pair_summary()
            keep = ["player_a", "player_b", "rho_flip_mean", "rho_flip_lo94", "rho_flip_hi94", "p_rho_flip_positive",
                    "claims_reversal"]
            pairs = pairs.merge(ps[keep], on=["player_a", "player_b"], how="left")
        return pairs

    def to_dict(self) -> dict:
        pairs = self.pairs[PAIR_COLUMNS].copy()
        post = self.posterior.p_flip_summary() if self.posterior is not None else {}
        pairs["p_flip"] = [post.get((a, b)) for a, b in zip(pairs["player_a"], pairs["player_b"])]
        out = {
            "pairs": pairs,
            "tau_R": self.tau["tau_R"], "tau_R_detail": {k: v for k, v in self.tau.items() if k != "tau_R"},
            "orderings": self.orderings[["ordering", "count", "share", "example_config"]],
            "orderings_info": self.orderings_info,
            "anova_design": self.design,
            "anova": [a.to_dict() for a in self.anovas],
            "posterior": None if self.posterior is None else self.posterior.to_dict(envelope=False),
        }
        return out


@dataclass(repr=False)  # the short repr of bayesrank.protocol.Result
class GridAnalysis(Result):
    """Per-benchmark flip metrics, ANOVA attribution, and (optionally) flip posteriors and paired tests."""

    range_spec: str
    results: dict[str, BenchmarkResult]
    missing_cells: pd.DataFrame
    excluded: ExclusionLog = field(default_factory=ExclusionLog)
    paired: object = None             # a PairedTests result for the requested claims
    pooled_anova: AnovaAnalysis | None = None

    schema = "configflip"

    # ------------------------------------------------------------------ protocol
    @property
    def diagnostics(self) -> Diagnostics:
        """Exact for metrics/ANOVA/paired tests; the sampler's diagnostics of every fitted posterior."""
        parts = {f"{b}: metrics+ANOVA": Diagnostics.exact("counting + Type-II ANOVA") for b in self.results}
        for b, r in self.results.items():
            if r.posterior is not None:
                parts[f"{b}: flip posterior"] = r.posterior.diagnostics
        if self.paired is not None:
            parts["paired tests"] = self.paired.diagnostics
        return Diagnostics.combine("configflip", parts)

    def table(self) -> pd.DataFrame:
        """One row per (benchmark, player pair): flip counts, rho_flip, Property 1, witnesses (+ posterior)."""
        frames = [r.pairs_table().assign(**{BENCHMARK: b}) for b, r in self.results.items()]
        t = pd.concat(frames, ignore_index=True)
        return t[[BENCHMARK, *[c for c in t.columns if c != BENCHMARK]]]

    def anova_table(self) -> pd.DataFrame:
        """Every ANOVA of every benchmark, one row per term (analysis name, role and residual meaning)."""
        rows = []
        for b, r in self.results.items():
            for a in r.anovas:
                rows.append(a.table.assign(benchmark=b, analysis=a.name, role=a.role))
        if not rows:
            return pd.DataFrame(columns=["benchmark", "analysis", "role", "term", "sum_sq", "df", "share",
                                         "partial_eta_sq", "F", "p"])
        t = pd.concat(rows, ignore_index=True)
        return t[["benchmark", "analysis", "role", "term", "sum_sq", "df", "share", "partial_eta_sq", "F", "p"]]

    def claim_evidence(self, a: str, b: str, benchmark: str) -> dict:
        """Everything the analysis says about the claim "a beats b on benchmark": the flip counts oriented
        as a vs b (n_a_wins, n_b_wins, ties, rho_flip, Property 1, witness configurations), the posterior
        flip summary and P(a > b | c) per configuration when a posterior was fitted, and the paired
        per-item tests of the claim when they were run (``claims=[f"{a}>{b}"]``)."""
        if benchmark not in self.results:
            raise InputError(f"no benchmark {benchmark!r} in the analysis; benchmarks: {list(self.results)}")
        r = self.results[benchmark]
        p = r.pairs
        row = p[(p["player_a"] == a) & (p["player_b"] == b)]
        flipped = row.empty
        if flipped:
            row = p[(p["player_a"] == b) & (p["player_b"] == a)]
        if row.empty:
            raise InputError(f"claim {a}>{b}: no such player pair on {benchmark!r}; players: "
                             f"{sorted(set(p['player_a']) | set(p['player_b']))}")
        x = row.iloc[0]
        out = {"claim": f"{a}>{b}", "benchmark": benchmark, "player_a": a, "player_b": b,
               "n_a_wins": int(x["n_minus"] if flipped else x["n_plus"]),
               "n_b_wins": int(x["n_plus"] if flipped else x["n_minus"]), "n_ties": int(x["n_ties"]),
               "n_configs": int(x["n_configs"]), "rho_flip": float(x["rho_flip"]),
               "strict_order_free": bool(x["strict_order_free"]),
               "witness_a_wins": x["witness_b_wins"] if flipped else x["witness_a_wins"],
               "witness_b_wins": x["witness_a_wins"] if flipped else x["witness_b_wins"],
               "posterior": None, "p_a_greater": None, "paired": None}
        if r.posterior is not None:
            key = (b, a) if flipped else (a, b)
            out["posterior"] = r.posterior.p_flip_summary()[key]
            pg = r.posterior.p_greater()
            pg = pg[(pg["player_a"] == key[0]) & (pg["player_b"] == key[1])]
            probs = 1 - pg["p_a_greater"] if flipped else pg["p_a_greater"]
            out["p_a_greater"] = dict(zip(pg["config"], probs.astype(float)))
        if self.paired is not None:
            t = self.paired.table()
            t = t[(t["claim"] == f"{a}>{b}") & (t["benchmark"] == benchmark)]
            if len(t):
                c = self.paired.claims()
                out["paired"] = {"summary": c[(c["claim"] == f"{a}>{b}") & (c["benchmark"] == benchmark)]
                                 .iloc[0].to_dict(), "tests": t.to_dict(orient="records")}
        return out

    def summary(self) -> str:
        lines = [f"configflip: range {self.range_spec}, {len(self.results)} benchmark(s)"]
        for b, r in self.results.items():
            lines.append(f"\n{b}: tau_R = {r.tau['tau_R']:.3f}; {r.orderings_info['n_reachable']} ordering(s) reached "
                         f"of {r.orderings_info['n_possible_strict']} strict")
            lines.append(r.pairs_table().to_string(index=False))
            for a in r.anovas:
                lines.append(f"  {a.shares_line()}; residual = {a.residual_holds}")
        if self.paired is not None:
            lines += ["", self.paired.summary()]
        if self.excluded.total:
            lines.append(f"excluded: {self.excluded.report()}")
        if len(self.missing_cells):
            lines.append(f"missing cells (not imputed): {len(self.missing_cells)}")
        lines.append(self.diagnostics.line())
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {**self._envelope(), "range": self.range_spec or "full",
                "benchmarks": {b: r.to_dict() for b, r in self.results.items()},
                "pooled_anova": None if self.pooled_anova is None else self.pooled_anova.to_dict(),
                "paired": None if self.paired is None else self.paired.to_dict(envelope=False),
                "missing_cells": {"count": int(len(self.missing_cells)),
                                  "cells": self.missing_cells.rename(columns={MODEL: "player"}).head(200)},
                "excluded": self.excluded.to_dict() | {"detail": self.excluded.examples},
                "n_excluded": int(self.excluded.total), "excluded_by_reason": dict(self.excluded.counts)}

    def plot(self, ax=None, benchmark: str | None = None, kind: str = "flips", **kwargs):
        """``kind="flips"`` (pairwise verdict, or P(A > B | c) with a posterior, per configuration),
        ``"orderings"`` or ``"anova"`` (shares of every benchmark's execution ANOVA)."""
        from . import plots

        if kind == "anova":
            tables = {b: r.anova for b, r in self.results.items() if r.anova is not None}
            return plots.anova_shares(tables, ax=ax).figure
        b = benchmark or next(iter(self.results))
        if b not in self.results:
            raise InputError(f"no benchmark {b!r} in the analysis; benchmarks: {list(self.results)}")
        r = self.results[b]
        if kind == "orderings":
            return plots.ordering_frequencies(r.orderings, title=f"{b}: orderings", ax=ax).figure
        if kind != "flips":
            raise InputError(f"plot kind must be 'flips', 'orderings' or 'anova', got {kind!r}")
        grid = self._grid
        return plots.flip_heatmap(grid, b, r.posterior.p_greater() if r.posterior is not None else None, ax=ax).figure

    _grid: EvalGrid | None = field(default=None, repr=False)


def analyze(grid: EvalGrid, range_spec: str | None = None, *, tol: float = 0.0, anova_order: int | None = None,
            anova_blocks: tuple[str, ...] = (), execution_axes: list[str] | None = None, posterior: str | None = None,
            posterior_kwargs: dict | None = None, claims: list[str] | None = None, paired_kwargs: dict | None = None,
            pooled_anova: bool = False, level: float = 0.95) -> GridAnalysis:
    """Metrics for every benchmark of ``grid`` restricted to ``range_spec``.

    ``posterior``: None (skip), ``"mle"`` (no-pooling twin) or ``"nuts"`` (hierarchical PyMC model).
    ``execution_axes``: the ANOVA's execution axes (default: recognised by name, see :mod:`.attribution`).
    ``anova_blocks``: extra columns of ``grid.data`` entering the ANOVAs additively.
    ``claims``: ``["A>B", ...]`` — paired per-item tests (:mod:`.paired`) of each claim in every
    configuration of every benchmark where both players were scored (needs per-item data).
    ``pooled_anova``: also one execution ANOVA over all benchmarks with the benchmark as a block.
    ``level``: a posterior claims a reversal when P(A > B | c) >= level somewhere and <= 1 - level
    elsewhere; the paired tests' significance level is 1 - level.
    """
    g = apply_range(grid, range_spec)
    log = ExclusionLog()
    results = {}
    for b in g.benchmarks:
        conf = g.configurations(b)
        d = g.data[g.data[BENCHMARK] == b]
        if len(conf) < 2:
            log.add("benchmark with a single configuration in range", 1, [b])
            continue
        if d[MODEL].nunique() < 2:
            log.add("benchmark with a single player", 1, [b])
            continue
        pairs = pairwise_flips(g, b, tol)
        tau = tau_r(g, b, tol)
        orderings, oinfo = reachable_orderings(g, b, tol)
        anovas, design = attribution_analyses(d, g.axes, execution_axes=execution_axes, max_order=anova_order,
                                              blocks=tuple(anova_blocks))
        for nc in design["not_computed"]:
            log.add(f"ANOVA {nc['name']} not computed ({nc['reason']})", 1, [b])
        post = None
        if posterior:
            from .posterior import FlipPosterior

            post = FlipPosterior(g, benchmark=b).fit(method=posterior, **(posterior_kwargs or {}))
            post.level = level
        results[b] = BenchmarkResult(b, pairs, tau, orderings, oinfo, anovas, design, post)
    if not results:
        raise InputError(f"no benchmark has two or more configurations and players in range "
                         f"{range_spec or 'full'!r}: {log.report()}")
    pooled = None
    if pooled_anova:
        from .attribution import run_anova, spec_design

        d = g.data[g.data[BENCHMARK].isin(list(results))]
        exe, other, _ = spec_design(d, g.axes, execution_axes)
        pooled = run_anova(d, [MODEL, *exe], name="pooled", role="execution",
                           blocks=[BENCHMARK, *other, *anova_blocks], max_order=anova_order)
    paired = None
    if claims:
        from .paired import paired_tests

        paired = paired_tests(g, claims, benchmarks=list(results), level=level, **(paired_kwargs or {}))
    return GridAnalysis(range_spec or "full", results, g.missing_cells(), log, paired, pooled, _grid=g)
