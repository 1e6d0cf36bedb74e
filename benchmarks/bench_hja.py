"""HJA benchmark: K = 10 judges, N = 50 items, 100,000 comparisons (simulated, known truth).

Prints, side by side, wall time and held-out log-loss per comparison for
- HJA constrained MLE (alternating proximal + re-anchoring) with Fisher CIs,
- JA-Ranking (HJA rank 0) and pooled Bradley–Terry (bayesrank.bt),
- crowd-kit's NoisyBradleyTerry (outside reference; per-worker skill and position bias),
- optionally (``--nuts``) the HJA posterior by NUTS on the same data (2 chains on 2 cores) for each
  configuration in ``--samplers`` (default: nutpie with the JAX backend = the package default; nutpie with
  numba (the previous default); nutpie-JAX with a pinned radial nuisance (m = 100, a reparameterisation
  that was tried); PyMC's NUTS),
  side by side: wall time, CPU time, mean leapfrog steps per draw, max R-hat, min bulk/tail ESS,
  divergences, bulk ESS per second and whether the package's convergence rule is met.

Run: ``python benchmarks/bench_hja.py [--nuts] [--draws 1000] [--samplers nutpie-jax:1,pymc:1]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from scipy.special import expit, logit

import bayesrank.bt  # noqa: F401  (imports PyMC: keep module import time out of the timings)
from bayesrank.hja.baselines import ja_proba, ja_ranking, pooled_bt, pooled_bt_proba
from bayesrank.hja.model import HJA, pair_prediction_scores
from bayesrank.hja.simulate import sample_counts, simulate_truth


def noisy_bt_rows(counts) -> pd.DataFrame:
    """One row per comparison (crowd-kit format: worker, left, right, label); item i on the left."""
    reps = counts.n.astype(int)
    left = np.repeat(counts.items[counts.i], reps)
    right = np.repeat(counts.items[counts.j], reps)
    worker = np.repeat(counts.judges[counts.k], reps)
    wins = np.concatenate([np.arange(n) < y for n, y in zip(reps, counts.y.astype(int))])
    label = np.where(wins, left, right)
    return pd.DataFrame({"worker": worker, "left": left, "right": right, "label": label})


def noisy_bt_proba(model, counts) -> np.ndarray:
    """P(left = item i wins) = σ(skill)σ(s_i − s_j) + (1 − σ(skill))σ(bias) (crowd-kit's likelihood)."""
    s = logit(model.scores_.reindex(counts.items).to_numpy())
    g = logit(model.skills_.reindex(counts.judges).to_numpy())[counts.k]
    q = logit(model.biases_.reindex(counts.judges).to_numpy())[counts.k]
    return expit(g) * expit(s[counts.i] - s[counts.j]) + (1 - expit(g)) * expit(q)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nuts", action="store_true", help="also time PyMC NUTS (2 chains, 2 cores)")
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--samplers", default="nutpie-jax:1,nutpie-numba:1,nutpie-jax:100,pymc:1",
                    help="comma-separated SAMPLER[-BACKEND]:M (nutpie-jax, nutpie-numba or pymc; M = radial "
                         "concentration of the Gram–Schmidt nuisance, 1 = package default)")
    ap.add_argument("--rank", type=int, default=2)
    ap.add_argument("--no-crowdkit", action="store_true")
    args = ap.parse_args()

    K, N, r = 10, 50, args.rank
    truth, _ = simulate_truth(n_judges=K, n_items=N, rank=r, heterogeneity=3.0, n_noisy=2, seed=0)
    train = sample_counts(truth, 10_000, seed=1)  # 100,000 comparisons
    test = sample_counts(truth, 2_000, seed=2)  # 20,000 held-out comparisons
    print(f"K={K} judges, N={N} items, {train.total:,.0f} training comparisons in {train.n_rows:,} (judge, pair) cells; "
          f"truth rank {r}, 2 noisy judges")
    rows = []

    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = HJA(train, rank=r).fit(n_starts=3)
    t_hja = time.perf_counter() - t
    ll, acc = pair_prediction_scores(fit.predict_proba(test), test)
    rows.append({"method": f"HJA MLE rank {r} (3 starts) + Fisher CIs", "seconds": t_hja, "heldout_logloss": ll,
                 "accuracy": acc, "max_abs_mu_error": np.abs(fit.params.mu - truth.mu).max()})

    t = time.perf_counter()
    ja = ja_ranking(train)
    t_ja = time.perf_counter() - t
    ll, acc = pair_prediction_scores(ja_proba(ja, test), test)
    rows.append({"method": "JA-Ranking (HJA rank 0)", "seconds": t_ja, "heldout_logloss": ll, "accuracy": acc,
                 "max_abs_mu_error": np.abs(ja.mu - truth.mu).max()})

    t = time.perf_counter()
    theta = pooled_bt(train)
    t_bt = time.perf_counter() - t
    ll, acc = pair_prediction_scores(pooled_bt_proba(theta, test), test)
    rows.append({"method": "pooled BT (bayesrank.bt Newton)", "seconds": t_bt, "heldout_logloss": ll,
                 "accuracy": acc, "max_abs_mu_error": np.abs(theta - truth.mu).max()})

    t_ck = np.nan
    if not args.no_crowdkit:
        try:
            from crowdkit.aggregation import NoisyBradleyTerry
        except ImportError:
            print("crowd-kit not installed: skipping NoisyBT")
        else:
            data = noisy_bt_rows(train)
            t = time.perf_counter()
            nbt = NoisyBradleyTerry(n_iter=100, random_state=0).fit(data)
            t_ck = time.perf_counter() - t
            ll, acc = pair_prediction_scores(noisy_bt_proba(nbt, test), test)
            s = logit(nbt.scores_.reindex(train.items).to_numpy())
            rows.append({"method": "crowd-kit NoisyBradleyTerry (100 L-BFGS its)", "seconds": t_ck,
                         "heldout_logloss": ll, "accuracy": acc,
                         "max_abs_mu_error": np.abs(s - s.mean() - truth.mu).max()})

    if args.nuts:
        import resource

        for spec in args.samplers.split(","):
            sampler, _, m = spec.partition(":")
            sampler, _, backend = sampler.partition("-")
            m = float(m or 1)
            ch0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            ru0, t = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                post = HJA(train, rank=r).fit("nuts", draws=args.draws, tune=args.draws, chains=2, cores=2, seed=1,
                                              sampler=sampler, backend=backend or None, radial_concentration=m,
                                              log_likelihood=False)
            t_nuts = time.perf_counter() - t
            ru1 = resource.getrusage(resource.RUSAGE_SELF)
            cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
            if sampler == "pymc":  # chains run in child processes
                ch1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu += (ch1.ru_utime - ch0.ru_utime) + (ch1.ru_stime - ch0.ru_stime)
            d = post.diagnostics
            steps = float(post.idata["sample_stats"]["n_steps"].mean()) if "n_steps" in post.idata["sample_stats"] \
                else float(post.idata["sample_stats"]["tree_size"].mean())
            ll, acc = pair_prediction_scores(post.predict_proba(test), test)
            rows.append({"method": f"NUTS {post.info['sampler']}, radial m={m:g}, 2x{args.draws} (+{args.draws} tune)",
                         "seconds": t_nuts, "heldout_logloss": ll, "accuracy": acc,
                         "max_abs_mu_error": np.abs(post.params.mu - truth.mu).max(), "cpu_seconds": cpu,
                         "steps_per_draw": steps, "rhat_max": d.rhat_max, "ess_bulk_min": d.ess_bulk_min,
                         "ess_tail_min": d.ess_tail_min, "divergences": d.divergences,
                         "ess_bulk_per_s": d.ess_bulk_min / t_nuts, "converged": d.converged})

    table = pd.DataFrame(rows)
    table["time_ratio_vs_HJA_MLE"] = table["seconds"] / t_hja
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))


if __name__ == "__main__":
    main()
