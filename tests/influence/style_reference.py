"""Independent references for audits of the style-controlled BT: replay a logged audit on the
battles and refit them with statsmodels' logistic GLM (player 0 as reference, ±1 player columns
and the style features, frequency weights)."""

import numpy as np

from bayesrank.influence.covariates import apply
from bayesrank.influence.covariates.state import Candidates


def replay(data, actions):
    """Re-apply a logged audit's actions (a DataFrame or a list of records; row indices refer to
    the data at each step: added rows go to the end)."""
    records = actions.to_dict(orient="records") if hasattr(actions, "to_dict") else list(actions)
    for act in records:
        y_new = act.get("y_new", np.nan)
        c = Candidates(act["kind"], np.array([int(act["row"])]), np.array([np.nan if y_new is None else y_new]),
                       np.array([np.inf]), np.zeros(1), np.zeros(1))
        data = apply(data, c, 0, float(act["count"]))
    return data


def glm(data, cov_type: str = "nonrobust"):
    """statsmodels' refit of the battles: (θ on Σθ = 0, its covariance: Fisher, or ``cov_type="HC0"``
    — the sandwich, = the style fit's with one battle per row)."""
    import statsmodels.api as sm

    k = data.n_players
    keep = data.freq > 0
    z = np.zeros((data.n_rows, k))
    z[np.arange(data.n_rows), data.i] += 1
    z[np.arange(data.n_rows), data.j] -= 1
    res = sm.GLM(data.y[keep], np.column_stack([z[keep, 1:], data.X[keep]]), family=sm.families.Binomial(),
                 freq_weights=data.freq[keep]).fit(tol=1e-13, cov_type=cov_type)
    a = np.eye(k) - 1.0 / k
    theta = a @ np.concatenate([[0.0], res.params[: k - 1]])
    c = np.zeros((k, k))
    c[1:, 1:] = np.asarray(res.cov_params())[: k - 1, : k - 1]
    return theta, a @ c @ a


def weakest_significance_margin(data, pairs, z: float = 1.959963984540054, cov_type: str = "nonrobust") -> float:
    """min over the claim's contrasts (a, b) of θ_a − θ_b − z·sd(θ_a − θ_b), from statsmodels' refit:
    positive iff every contrast is significant (the review's intersection–union rule)."""
    theta, cov = glm(data, cov_type)
    return min(theta[a] - theta[b] - z * np.sqrt(cov[a, a] + cov[b, b] - 2 * cov[a, b]) for a, b in pairs)
