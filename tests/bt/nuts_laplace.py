"""NUTS against the Laplace twin with the right Monte Carlo errors (shared by
tests/bt/test_pymc_references.py and examples/bt_nuts_laplace_false_alarm.py).

For each player the posterior mean is compared with the mode and the posterior SD with the
Laplace SD, each standardised by its *own* Monte Carlo standard error from ArviZ:
``mcse(method="mean")`` for the mean and ``mcse(method="sd")`` for the SD (the SD's MCSE uses
the effective sample size of the squared deviations, which is smaller than the bulk ESS of the
mean for these posteriors — dividing by the mean's ESS made the old SD check fire on correct runs).
"""

import numpy as np

#: bounds on max |z| over the K = 129 arena players. Means: z is N(0, 1) to within its sampling
#: error (20 seeds: SD 1.02, share |z| > 3 = 0.0027), so P(any of 129 ≥ 5) ≈ 1e-4. SDs: the SD's
#: MCSE is itself noisy, so z has heavier tails (share |z| > 3 = 0.0074, a t with ≈ 19 df): the
#: bound 5.5 keeps P(any of 129 ≥ 5.5) ≈ 0.35% under that t (1e-5 under N(0, 1)).
#: examples/bt_nuts_laplace_false_alarm.py records both over seeds 0..19.
Z_BOUND_MEAN = 5.0
Z_BOUND_SD = 5.5
#: bound on |median(sd_nuts / sd_laplace − 1)|: the median of 129 relative SD errors each of SD ≈ 1/24
MEDIAN_REL_BOUND = 0.03


def nuts_laplace_z(dt, mode: np.ndarray, sd_laplace: np.ndarray) -> dict:
    """Standardised differences NUTS − Laplace for means (vs the mode) and SDs, per player."""
    import arviz as az

    th = dt.posterior["theta"].transpose("chain", "draw", "player")
    k = th.sizes["player"]
    x = th.values.reshape(-1, k)
    mcse_mean = np.asarray(az.mcse(dt, var_names=["theta"], method="mean")["theta"])
    mcse_sd = np.asarray(az.mcse(dt, var_names=["theta"], method="sd")["theta"])
    sd = x.std(axis=0, ddof=1)
    return {
        "z_mean": (x.mean(axis=0) - mode) / mcse_mean,
        "z_sd": (sd - sd_laplace) / mcse_sd,
        "rel_sd": sd / sd_laplace - 1,
        "ess_bulk_min": float(np.asarray(az.ess(dt, var_names=["theta"], method="bulk")["theta"]).min()),
        "divergences": int(np.asarray(dt.sample_stats["diverging"]).sum()),
        "max_abs_sum": float(np.abs(x.sum(axis=1)).max()),
    }


def alarms(z: dict) -> dict:
    """Which of the three checks would fire for one run."""
    return {
        "mean": bool(np.abs(z["z_mean"]).max() >= Z_BOUND_MEAN),
        "sd": bool(np.abs(z["z_sd"]).max() >= Z_BOUND_SD),
        "median_rel_sd": bool(abs(np.median(z["rel_sd"])) >= MEDIAN_REL_BOUND),
    }
