"""Independent references for audits of the style-controlled BT: replay a logged audit on the
battles (own code, not the package's ``apply``) and refit them with statsmodels' logistic GLM
(player 0 as reference, ±1 player columns and the style features, frequency weights). Battles are
read as (``share`` won by player a, ``total`` battles) per row."""

from types import SimpleNamespace

import numpy as np


def replay(data, actions):
    """Re-apply a logged audit's actions to a copy of the battles' arrays — written here, not with
    the package's ``apply`` — checking that each logged battle (pair, outcome, features) is the
    replayed row. Row indices refer to the data at each step: partial flips and adds append rows
    at the end. Returns an object with the arrays :func:`glm` reads."""
    b = SimpleNamespace(players=data.players, features=list(data.features), i=data.i.copy(), j=data.j.copy(),
                        share=data.share.astype(float).copy(), total=data.total.astype(float).copy(),
                        X=data.X.copy())
    records = actions.to_dict(orient="records") if hasattr(actions, "to_dict") else list(actions)
    for act in records:
        n, m = int(act["row"]), float(act["count"])
        assert (str(b.players[b.i[n]]), str(b.players[b.j[n]]), b.share[n]) == (act["player_a"], act["player_b"], act["y"])
        np.testing.assert_allclose([act[f] for f in data.features], b.X[n], atol=1e-12)
        if act["kind"] == "drop":
            b.total[n] -= m
        elif act["kind"] == "flip" and m >= b.total[n]:
            b.share[n] = act["y_new"]
        else:
            if act["kind"] == "flip":
                b.total[n] -= m
            b.i, b.j = np.append(b.i, b.i[n]), np.append(b.j, b.j[n])
            b.share, b.total = np.append(b.share, act["y_new"]), np.append(b.total, m)
            b.X = np.vstack([b.X, b.X[n]])
    assert (b.total >= 0).all()
    b.n_players, b.n_rows = len(b.players), len(b.share)
    return b


def glm_fit(data, cov_type: str = "nonrobust"):
    """statsmodels' logistic GLM of the battles (player 0 as reference, ±1 player columns, then the
    features; frequency weights): the fitted results object."""
    import statsmodels.api as sm

    k = data.n_players
    keep = data.total > 0
    z = np.zeros((data.n_rows, k))
    z[np.arange(data.n_rows), data.i] += 1
    z[np.arange(data.n_rows), data.j] -= 1
    return sm.GLM(data.share[keep], np.column_stack([z[keep, 1:], data.X[keep]]), family=sm.families.Binomial(),
                  freq_weights=data.total[keep]).fit(tol=1e-13, cov_type=cov_type)


def glm(data, cov_type: str = "nonrobust"):
    """statsmodels' refit of the battles: (θ on Σθ = 0, its covariance: Fisher, or ``cov_type="HC0"``
    — the sandwich, = the style fit's with one battle per row)."""
    k = data.n_players
    res = glm_fit(data, cov_type)
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


def validate_audit_result(result) -> None:
    """One audit (``AuditResult.to_dict()``) against the ``audit`` schema's ``audit_result``."""
    from jsonschema import Draft202012Validator

    from bayesrank.protocol import schema

    full = schema("audit")
    sub = {"$schema": full["$schema"], "$defs": full["$defs"], "$ref": "#/$defs/audit_result"}
    Draft202012Validator(sub).validate(result.to_dict() if hasattr(result, "to_dict") else result)


def audit_of(state, kind, objective="top1", pair=None, k=None, **options):
    """The one engine's greedy audit with the objective given as a spec, a pair or a k."""
    from bayesrank.influence.greedy import greedy_audit

    if pair is not None:
        objective = f"pair:{pair[0]}>{pair[1]}"
    elif k is not None:
        objective = "top1" if k == 1 else f"topk:{k}"
    return greedy_audit(state, objective, kind, **options)
