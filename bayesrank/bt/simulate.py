"""Comparisons with known truth for tests, benchmarks and coverage studies."""

from __future__ import annotations

import numpy as np
import pandas as pd


def simulate_style_battles(n_players: int = 10, n_battles: int = 5000, beta=(0.5,), theta_sd: float = 1.0,
                           tie_rate: float = 0.0, seed: int = 0, pair_skew: float = 0.0, position: float = 0.0):
    """Battles with known truth: ``(frame, theta, beta)``.

    Feature ``f`` of each response is log-normal (columns ``s{f}_a``, ``s{f}_b``); the battle's
    style difference is the standardised normalised difference (the default transform), so the
    fitted β estimates ``beta``. ``position`` adds that many logits for the side listed first
    (``model_a``). Ties: with probability ``tie_rate`` a battle is a tie (independent of θ).
    ``pair_skew > 0`` samples pairs unevenly (pair propensity ∝ exp(skew·z)).
    """
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    beta = np.asarray(beta, dtype=float)
    theta = rng.normal(0, theta_sd, n_players)
    theta -= theta.mean()
    ii, jj = np.triu_indices(n_players, 1)
    prop = np.exp(pair_skew * rng.normal(size=len(ii)))
    pick = rng.choice(len(ii), size=n_battles, p=prop / prop.sum())
    swap = rng.random(n_battles) < 0.5
    a = np.where(swap, jj[pick], ii[pick])
    b = np.where(swap, ii[pick], jj[pick])
    cols = {}
    d = np.zeros((n_battles, len(beta)))
    for f in range(len(beta)):
        xa = rng.lognormal(5.0, 0.6, n_battles)
        xb = rng.lognormal(5.0, 0.6, n_battles)
        raw = (xa - xb) / (xa + xb)
        d[:, f] = (raw - raw.mean()) / raw.std()
        cols[f"s{f}_a"], cols[f"s{f}_b"] = xa, xb
    p = expit(theta[a] - theta[b] + d @ beta + position)
    u = rng.random(n_battles)
    tie = rng.random(n_battles) < tie_rate
    outcome = np.where(tie, "tie", np.where(u < p, "a", "b"))
    names = np.array([f"p{k:02d}" for k in range(n_players)], dtype=object)
    frame = pd.DataFrame({"model_a": names[a], "model_b": names[b], "outcome": outcome, **cols})
    return frame, pd.Series(theta, index=names), beta


def simulate_tournament(n_players: int = 3000, games_per_player: float = 200.0, spread: float = 40.0,
                        theta_sd: float = 1.0, tie_rate: float = 0.0, seed: int = 0):
    """A chess- or tennis-like leaderboard with known truth: ``(frame, theta)``.

    Strengths θ ~ N(0, ``theta_sd``²) (centred); players are paired with opponents of nearby rank,
    as Swiss tournaments and ranked ladders do: each game picks a player uniformly and an opponent
    whose rank differs by round(N(0, ``spread``²)) (≠ 0, reflected at the ends of the ranking), so
    the comparison graph is sparse and banded in rank (each player meets ~``games_per_player``
    opponents' worth of games among a few hundred neighbours). ``n_players · games_per_player / 2``
    games; the first-listed side is random; a game is a draw with probability ``tie_rate``,
    otherwise player a wins with probability σ(θ_a − θ_b). Names ``p0000``… are in random order
    (not by strength). Columns ``model_a, model_b, outcome`` (``a``/``b``/``tie``).
    """
    from bayesrank.bt.likelihood import expit

    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, theta_sd, n_players)
    theta -= theta.mean()
    by_rank = np.argsort(-theta, kind="stable")
    n_games = int(round(n_players * games_per_player / 2))
    r = rng.integers(0, n_players, n_games)
    step = np.rint(rng.normal(0.0, spread, n_games)).astype(np.int64)
    step[step == 0] = rng.choice([-1, 1], size=int((step == 0).sum()))
    s = r + step
    s = np.where(s < 0, -s, s)
    s = np.where(s >= n_players, 2 * (n_players - 1) - s, s)
    s = np.clip(s, 0, n_players - 1)
    s = np.where(s == r, np.where(r > 0, r - 1, r + 1), s)
    swap = rng.random(n_games) < 0.5
    a = by_rank[np.where(swap, s, r)]
    b = by_rank[np.where(swap, r, s)]
    p = expit(theta[a] - theta[b])
    tie = rng.random(n_games) < tie_rate
    outcome = np.where(tie, "tie", np.where(rng.random(n_games) < p, "a", "b"))
    width = len(str(n_players - 1))
    names = np.array([f"p{k:0{width}d}" for k in rng.permutation(n_players)], dtype=object)
    frame = pd.DataFrame({"model_a": names[a], "model_b": names[b], "outcome": outcome})
    return frame, pd.Series(theta, index=names)
