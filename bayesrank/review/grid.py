"""Evaluation grids: "A beats B on benchmark X" across the configurations of the grid.

For a claim ``A>B@X`` with per-configuration score differences ``d_c = s_A,c − s_B,c`` over the C
configurations where both were scored (``bayesrank.configflip``):

* **frequentist**: the configurations are a sample of reasonable ways to run the benchmark; the
  claim is that A's mean score over them exceeds B's: paired t-test of ``d_c`` (estimate = mean
  ``d``; C ≥ 3 needed), one-sided for a claim named in advance (``--claim A>B@X``: interval
  ``[mean − t_{level}·se, ∞)``, p = P(T > t)), two-sided for the default claims (best vs second
  best, read off the data: t interval, directional p-value ``min(1, 2·P(T > t))``);
* **Bayesian**: from the flip posterior's draws of the cell abilities η (hierarchical PyMC model,
  or its no-pooling normal twin with ``fast``), P(mean_c (η_A,c − η_B,c) > 0) against the
  threshold of the claim's level (``level`` one-sided, ``(1 + level)/2`` two-sided); the share of
  draws in which A is ahead in *every* configuration is shown beside it;
* **perturbation**: a change of configuration. ``budget`` = the number of configurations in which
  B scores at least as high as A (observed, so ``verified``), ``fraction`` = that share of the C
  configurations, the actions = the witness configurations (as ``bayesrank configflip``).

Verdict: ``unsupported`` when the frequentist or the Bayesian answer does not support the claim;
``fragile`` when it is supported but at least one configuration reverses or ties it; else
``supported``. (The comparison-count threshold ``--fragile-below`` does not apply to grids.)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.errors import InputError
from bayesrank.review.answer import ClaimAnswer
from bayesrank.review.report import ReviewReport, Section

LM_EVAL_RENAMES = {"task": "benchmark", "value": "score"}


def grid_rule(level: float) -> str:
    from bayesrank.review.verdict import ONE_SIDED, TWO_SIDED, probability_threshold

    return (f"grid claims A>B@X: supported when the paired t-test of A's minus B's score over the configurations "
            f"rejects at the {level:.0%} level in A's favour (one-sided for a claim named in advance, two-sided for "
            f"the default best-vs-second claims read off the data) AND the posterior probability that A's mean over "
            f"configurations is higher reaches the same level ({probability_threshold(level, ONE_SIDED):.3g} "
            f"one-sided, {probability_threshold(level, TWO_SIDED):.3g} two-sided) AND no configuration reverses or "
            f"ties it; fragile: supported, but some configuration reverses or ties it; not converged: the flip "
            f"posterior failed its convergence checks; unsupported: otherwise.")


def load_grid(path, *, axes=None, metric=None, models=None, benchmarks=None, columns=None, encoding=None):
    """A tidy grid (model, benchmark, score + configuration axes), a harness results file or folder,
    or the bundled lm-eval long table (``task``/``value`` columns are benchmark/score). ``columns``
    (``model``, ``item``, ``score``, ``benchmark``) names the file's columns for those roles."""
    import warnings

    from bayesrank.configflip.grid import EvalGrid
    from bayesrank.configflip.readers import items_from_stderr, map_grid_columns, read_any, read_csv, select
    from bayesrank.data.frames import is_frame
    from bayesrank.review.reproducibility import where

    rows = map_grid_columns(read_csv(path) if is_frame(path) else read_any(path, encoding=encoding), columns)
    if {"item", "correct", "model"} <= set(rows.columns) and "score" not in rows.columns:
        return _item_grid(rows, path, axes, models, benchmarks)
    rows = rows.rename(columns={k: v for k, v in LM_EVAL_RENAMES.items() if k in rows.columns and v not in rows.columns})
    if "metric" in rows.columns:
        rows = rows[~rows["metric"].astype(str).str.endswith("_stderr")]
    missing = {"model", "benchmark", "score"} - set(rows.columns)
    if missing:
        raise InputError(f"{where(path)}: a grid needs columns model, benchmark, score; missing {sorted(missing)}")
    rows = select(rows, metric=metric, models=models, benchmarks=benchmarks)
    if "n_items" not in rows.columns and "stderr" in rows.columns:
        rows = rows.assign(n_items=items_from_stderr(rows))
    if axes is None:
        axes = [c for c in ("template", "decoding", "num_fewshot", "fewshot", "metric", "scoring", "harness")
                if c in rows.columns and rows[c].nunique() > 1]
        if not axes:
            raise InputError(f"{where(path)}: no configuration axis varies; pass --axes")
    n = "n_items" if "n_items" in rows.columns and rows["n_items"].notna().all() else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grid = EvalGrid.from_scores(rows.reset_index(drop=True), axes=list(axes), n_items=n)
    return grid, rows, [str(w.message) for w in caught]


def _item_grid(rows, path, axes, models, benchmarks):
    """Per-item correctness (model, benchmark, item, correct + axes): a grid that keeps its items, so
    the claims also get paired per-item tests."""
    from bayesrank.configflip.grid import EvalGrid

    if "benchmark" not in rows.columns:
        rows = rows.assign(benchmark="benchmark")
    if models:
        rows = rows[rows["model"].isin(models)]
    if benchmarks:
        rows = rows[rows["benchmark"].isin(benchmarks)]
    if axes is None:
        fixed = {"model", "benchmark", "item", "correct"}
        axes = [c for c in rows.columns if c not in fixed and rows[c].nunique() > 1]
        if not axes:
            from bayesrank.review.reproducibility import where

            raise InputError(f"{where(path)}: no configuration axis varies in the per-item data; pass --axes")
    grid = EvalGrid.from_items(rows.reset_index(drop=True), axes=list(axes))
    return grid, rows, []


def _pair_differences(grid, benchmark, a, b) -> pd.Series:
    w = grid.wide(benchmark)
    for p in (a, b):
        if p not in w.columns:
            raise InputError(f"claim {a}>{b}@{benchmark}: {p!r} has no score on {benchmark}; "
                             f"players: {sorted(map(str, w.columns))}")
    d = (w[a] - w[b]).dropna()
    return d


def frequentist_grid(d: pd.Series, level: float, sided: str = "two-sided") -> dict:
    from scipy import stats

    from bayesrank.review.verdict import ONE_SIDED

    c = len(d)
    if c < 3:
        return {"estimate": float(d.mean()) if c else None, "lower": None, "upper": None, "p_value": None,
                "unit": "score difference", "supported": False, "sided": sided,
                "interval": "paired t over configurations (needs ≥ 3)",
                "n_configs": c}
    se = float(d.std(ddof=1) / np.sqrt(c))
    est = float(d.mean())
    tstat = est / se if se > 0 else np.sign(est) * np.inf
    one = sided == ONE_SIDED
    q = float(stats.t.ppf(level if one else 0.5 + level / 2, c - 1))
    tail = float(stats.t.sf(tstat, c - 1))
    p = tail if one else min(1.0, 2 * tail)
    lower, upper = est - q * se, (None if one else est + q * se)
    return {"estimate": est, "lower": lower, "upper": upper, "p_value": p, "unit": "score difference",
            "supported": bool(lower > 0), "sided": sided, "interval": f"paired t over {c} configurations",
            "n_configs": c}


def bayesian_grid(flip, a: str, b: str, configs) -> dict:
    """P(mean_c (η_A − η_B) > 0) and P(η_A > η_B in every configuration) from the flip posterior's draws."""
    s = flip.spec
    ia, ib = s.models.index(a), s.models.index(b)
    cols = [s.configs.index(c) for c in configs]
    diff = flip.eta[:, ia, :][:, cols] - flip.eta[:, ib, :][:, cols]
    return {"probability": float((diff.mean(axis=1) > 0).mean()), "method": f"flip posterior ({flip.method})",
            "p_ahead_in_every_configuration": float((diff > 0).all(axis=1).mean()), "n_draws": int(diff.shape[0])}


def answers_claims(answers):
    return [a.claim for a in answers]


def review_grid(path, *, claims, level: float, fragile_below: float, fast: bool, seed: int, command=None,
                progress=None, axes=None, metric=None, models=None, benchmarks=None, draws: int | None = None,
                reading: dict | None = None) -> ReviewReport:
    from bayesrank.configflip.analysis import analyze
    from bayesrank.configflip.posterior import FlipPosterior
    from bayesrank.review.claims import Claim, parse_claim
    from bayesrank.review.reproducibility import appendix

    say = progress or (lambda *a: None)
    say("reading the grid")
    reading = dict(reading or {})
    if reading.get("path_pattern"):
        raise InputError("--path-pattern reads pairwise comparisons from a folder of files; grids read every "
                         "harness file of a folder")
    grid, rows, warns = load_grid(path, axes=axes, metric=metric, models=models, benchmarks=benchmarks,
                                  columns=reading.get("columns"), encoding=reading.get("encoding"))
    say("flip metrics and ANOVA")
    res = analyze(grid)
    if claims:
        parsed = [parse_claim(c, "grid", players=grid.models, benchmarks=res.results) for c in claims]
        expanded = []
        for c in parsed:
            for bench in ([c.benchmark] if c.benchmark else list(res.results)):
                expanded.append(Claim(f"{c.a}>{c.b}@{bench}", "pair", a=c.a, b=c.b, benchmark=bench,
                                      selected=c.selected))
        parsed = expanded
    else:  # best vs second best by mean score on each benchmark
        parsed = []
        for bench in list(res.results)[:10]:
            means = grid.wide(bench).mean(axis=0).sort_values(ascending=False)
            a, b = str(means.index[0]), str(means.index[1])
            parsed.append(Claim(f"{a}>{b}@{bench}", "pair", a=a, b=b, benchmark=bench, selected=True))
    posteriors, parts = {}, {"configflip": res.diagnostics}
    for bench in dict.fromkeys(c.benchmark for c in parsed):
        say(f"flip posterior: {bench}")
        fp = FlipPosterior(grid, benchmark=bench)
        kw = {} if draws is None else {"draws": draws, "tune": draws}  # default: the flip posterior's own (1000 + 1000)
        posteriors[bench] = fp.fit(method="mle" if fast else "nuts", random_seed=seed, **kw)
        if not fast:
            parts[f"flip posterior {bench}"] = posteriors[bench].diagnostics
    from bayesrank.review.joint import joint_statement
    from bayesrank.review.pairwise import disagreement
    from bayesrank.review.verdict import probability_threshold

    answers = []
    for c in parsed:
        d = _pair_differences(grid, c.benchmark, c.a, c.b)
        freq = frequentist_grid(d, level, c.sided)
        bay = bayesian_grid(posteriors[c.benchmark], c.a, c.b, list(d.index))
        bay["threshold"] = probability_threshold(level, c.sided)
        bay["converged"] = bool(fast or posteriors[c.benchmark].diagnostics.converged)
        reversed_in = d[d <= 0]
        rel = {"what": "configurations in which both players were scored", "n": float(len(d)), "unit": "configurations"}
        frac = float(len(reversed_in) / len(d)) if len(d) else None
        pert = {"configuration": {
            "broken": bool(len(reversed_in) > 0), "budget": int(len(reversed_in)), "fraction": frac,
            "fraction_of_all": frac, "relative_to": rel, "searched_to": float(len(d)), "verified": True,
            "reason": f"{len(reversed_in)} of {len(d)} configurations reverse or tie the claim (observed scores)",
            "actions": [{"config": str(cfg), "difference": float(v)} for cfg, v in reversed_in.items()]}}
        if not freq["supported"]:
            v = "unsupported"
        elif not bay["converged"]:
            v = "not converged"
        elif bay["probability"] < bay["threshold"]:
            v = "unsupported"
        elif len(reversed_in):
            v = "fragile"
        else:
            v = "supported"
        notes = []
        note = disagreement(freq, bay)
        if note:
            notes.append(note)
        answers.append(ClaimAnswer(c, freq, bay, pert, v, level, notes, relative_to=rel))
    # evidence
    paired = None
    if grid.items is not None:
        from bayesrank.configflip.paired import paired_tests

        say("paired per-item tests")
        texts = list(dict.fromkeys(f"{c.a}>{c.b}" for c in answers_claims(answers)))
        paired = paired_tests(grid, texts, benchmarks=list(dict.fromkeys(c.claim.benchmark for c in answers)),
                              level=level, seed=seed)
        per = paired.claims().set_index(["claim", "benchmark"])
        for ans in answers:
            key = (f"{ans.claim.a}>{ans.claim.b}", ans.claim.benchmark)
            if key in per.index:
                r = per.loc[key]
                ans.extra["paired_tests"] = {"n_configs": int(r["n_configs"]), "a_better": int(r["a_better"]),
                                             "b_better": int(r["b_better"]), "min_p_holm": float(r["min_p_holm"])}
                ans.notes.append(f"paired per-item tests (Holm across configurations): A significantly better in "
                                 f"{int(r['a_better'])}, B in {int(r['b_better'])} of {int(r['n_configs'])} configurations")
    table = res.table()
    secs = [Section("flips", "Pairwise flips across configurations",
                    text=[f"{len(res.results)} benchmark(s); configuration axes: {', '.join(grid.axes)}. "
                          "rho_flip = min(N+, N−)/C, the share of configurations on the minority side; "
                          "strict_order_free = no configuration reverses the pair (Property 1)."],
                    tables=[("pairs per benchmark", table)], data={"pairs": table.to_dict(orient="records")})]
    tau = pd.DataFrame([{"benchmark": b, "tau_R": r.tau["tau_R"], "orderings_reached": r.orderings_info["n_reachable"],
                         "possible_strict_orderings": r.orderings_info["n_possible_strict"]}
                        for b, r in res.results.items()])
    secs.append(Section("orderings", "Rank stability: τ_R and reachable orderings",
                        text=["τ_R = mean Kendall τ-b between the orderings of every two configurations."],
                        tables=[("τ_R per benchmark", tau)], data={"tau": tau.to_dict(orient="records")}))
    anova = res.anova_table()
    secs.append(Section("anova", "What moves the scores: Type-II ANOVA shares",
                        tables=[("ANOVA (share of the total sum of squares)", anova)],
                        figures=[("ANOVA shares per benchmark", lambda ax: res.plot(ax=ax, kind="anova"), (7, 3.5))]
                        if len(anova) else [],
                        data={"anova": anova.to_dict(orient="records")}))
    post_rows = []
    for bench, flip in posteriors.items():
        for r in flip.pair_summary().to_dict(orient="records"):
            post_rows.append({"benchmark": bench, **r})
    post = pd.DataFrame(post_rows)
    secs.append(Section("flip_posterior", "Posterior flip probabilities",
                        text=[f"{'No-pooling normal twin' if fast else 'Hierarchical PyMC model'} per benchmark with "
                              "a claim; claims_reversal = some configuration credibly favours each player."],
                        tables=[("flip posterior per pair", post)], data={"pairs": post.to_dict(orient="records")}))
    if paired is not None:
        secs.append(Section("paired", "Paired per-item tests per configuration",
                            text=[f"Exact McNemar on discordant items (or paired Wald / bootstrap), Holm-adjusted across "
                                  f"configurations, with the minimum detectable effect at power {paired.power}."],
                            tables=[("per claim", paired.claims()), ("per configuration", paired.table())],
                            data={"claims": paired.claims().to_dict(orient="records"),
                                  "tests": paired.table().to_dict(orient="records")}))
        parts["paired tests"] = paired.diagnostics
    notes = [f"grid reader: {w}" for w in warns]
    rep = appendix(path, len(rows), res.excluded.to_dict(), seed, command)
    if res.excluded.total:
        notes = [f"excluded: {res.excluded.report()}", *notes]
    from bayesrank.review.reproducibility import data_name

    title = f"Review of {data_name(path)}: {len(answers)} claims on {len(res.results)} benchmark(s)"
    return ReviewReport(kind="grid", title=title, level=level, fragile_below=fragile_below, claims=answers,
                        sections=secs, reproducibility=rep, parts=parts, notes=notes, custom_rule=grid_rule(level),
                        joint=joint_statement(answers, level))
