"""The audit's result object: :class:`AuditReport` (``bayesrank.protocol.Result``, schema ``audit``).

One report = one objective (a claim such as ``top1``, ``topk:K``, ``A>B``, ``tau``, a CI objective)
audited with one or more action types. ``report.audits[action]`` (or ``report[action]``) is the
:class:`~bayesrank.influence.greedy.AuditResult` of that action: ``budget``, ``fraction``,
``verified``, ``actions`` (player_a, player_b, outcome, count[, to]), ``curve``. ``robustness``
holds the normalised scores R_top1, R_tau, R_CI (:mod:`bayesrank.influence.robustness`) that the
audits measured, each labelled by property, perturbation and direction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pandas as pd

from bayesrank.influence.greedy import AuditResult
from bayesrank.influence.robustness import robustness_table
from bayesrank.influence.state import BTState
from bayesrank.protocol import Diagnostics, Result

TABLE_COLUMNS = ["action", "candidate_space", "broken", "verified", "budget", "fraction", "budget_limit", "n_actions",
                 "seconds", "reason", "certified_minimum", "lower_bound"]


@dataclass(repr=False)  # the short repr of bayesrank.protocol.Result
class AuditReport(Result):
    """Audit of one objective under several action types (see the module docstring)."""

    # the columns repr and a notebook show
    _quick_columns = ("action", "broken", "verified", "budget", "fraction", "n_actions", "reason")

    schema: ClassVar[str] = "audit"

    objective: str
    objective_details: dict
    audits: dict[str, AuditResult]
    robustness_audits: list  # [(score name, AuditResult)]
    state: BTState = field(repr=False)
    settings: dict = field(default_factory=dict)
    player_removal: pd.DataFrame | None = None
    exclusions: dict = field(default_factory=dict)
    objective_object: object = field(default=None, repr=False)

    # ------------------------------------------------------------------ access
    def __getitem__(self, action: str) -> AuditResult:
        return self.audits[action]

    @property
    def n_players(self) -> int:
        return self.state.n_players

    @property
    def n_comparisons(self) -> float:
        return self.state.n_matches

    @property
    def leader(self) -> str:
        return str(self.state.players[self.state.ranking()[0]])

    @property
    def runner_up(self) -> str:
        return str(self.state.players[self.state.ranking()[1]])

    @property
    def model(self) -> str:
        """The audited model in words (tie model, features, position effect, clusters)."""
        from bayesrank.influence.greedy import model_name

        return model_name(self.state)

    @property
    def ranked_players(self) -> list[str]:
        """The players by (adjusted) score θ̂, best first."""
        return [str(p) for p in self.state.players[self.state.ranking()]]

    @property
    def coefficients(self) -> pd.Series:
        """The position effect α̂ (when modelled), β̂ by feature and Davidson's log ν: the parameters
        after θ (empty for the zero-feature binary model)."""
        st = self.state
        names = st.covariate_names + (["log_nu"] if st.n_extra else [])
        return pd.Series(st.params[st.n_players:], index=names, name="coef", dtype=float)

    style_coefficients = coefficients

    @property
    def robustness(self) -> pd.DataFrame:
        """R scores measured by this report's audits (:func:`robustness.robustness_table`)."""
        return robustness_table(self.robustness_audits)

    @property
    def other_audits(self) -> list[AuditResult]:
        """Audits run only for the robustness scores (not already among ``audits``)."""
        own = {id(r) for r in self.audits.values()}
        return [r for _, r in self.robustness_audits if id(r) not in own]

    @property
    def diagnostics(self) -> Diagnostics:
        """The base fit's Newton (optimizer status and gradient norm) and the count of exact refits,
        incl. the cold-start verification refits of every break."""
        info = self.state.fit_info or {}
        every = list(self.audits.values()) + self.other_audits
        gnorm = self.state.gradient_norm()
        return Diagnostics.optimizer(
            info.get("method", "Newton MLE"), success=bool(info.get("converged", True)), gradient_norm=gnorm,
            iterations=info.get("iterations"),
            status=("Newton step below 1e-10" if info.get("converged", True) else "Newton did not converge")
            + (f" after {info['iterations']} iterations" if "iterations" in info else ""),
            exact_refits=int(sum(r.n_refits for r in every)),
            verification_refits=int(sum(r.broken for r in every)),
            unverified_breaks=int(sum(r.broken and not r.verified for r in every)),
        )

    # ------------------------------------------------------------------ protocol views
    def table(self) -> pd.DataFrame:
        """One row per action: broken, verified, budget, fraction of the comparisons, steps, reason."""
        rows = []
        for action, r in self.audits.items():
            cert = r.certified or {}
            rows.append({"action": action, "candidate_space": r.candidate_space or "", "broken": r.broken,
                         "verified": r.verified, "budget": r.budget, "fraction": r.fraction,
                         "budget_limit": r.budget_limit, "n_actions": len(r.actions), "seconds": r.seconds,
                         "reason": r.reason, "certified_minimum": cert.get("minimum"),
                         "lower_bound": cert.get("lower_bound")})
        df = pd.DataFrame(rows, columns=TABLE_COLUMNS)
        for col in ("budget", "certified_minimum", "lower_bound"):
            whole = df[col].dropna().map(lambda v: float(v).is_integer()).all()
            df[col] = df[col].astype("Int64" if whole else float)  # weighted comparisons: fractional budgets
        df["fraction"] = df["fraction"].astype(float)
        return df

    def headline(self) -> str:
        mode = self.objective_details.get("mode")
        level = self.settings.get("level")
        how = {"ci": f" (CI-aware: a reversal counts when significant at level {level}, pairwise contrast with H^-1)",
               "significance": f" (significance: broken when the claim is no longer significant at level {level}, "
                               f"contrast test with the {self.settings.get('significance_covariance')})"}
        coef = self.coefficients
        model = "" if self.state.fast and not self.state.counts.unit else (
            f"; {self.model}" + (" (" + ", ".join(f"{f} {b:+.3f}" for f, b in coef.items()) + ")" if len(coef) else ""))
        return (f"{self.n_players} players, {self.n_comparisons:.0f} comparisons{model}; leader {self.leader!r}, "
                f"runner-up {self.runner_up!r}; objective {self.objective}" + how.get(mode, ""))

    def summary(self) -> str:
        lines = [self.headline(), self.diagnostics.line(), "",
                 "actions needed to break the objective (verified by exact refit):",
                 self.table().drop(columns=["reason"]).to_string(index=False, float_format=lambda v: f"{v:.4g}")]
        for action, r in self.audits.items():
            lines.append(f"{action}: {r.reason}")
        rob = self.robustness
        if len(rob):
            lines += ["", "robustness scores (fraction of comparisons):",
                      rob[["score", "action", "fraction", "budget", "bound"]].to_string(index=False)]
        if self.player_removal is not None:
            best = self.player_removal.sort_values("displaced", ascending=False).iloc[0]
            lines.append(f"player removal: removing {best['player']!r} displaces {best['displaced']:.0f} players")
        return "\n".join(lines)

    def player_removal_dict(self) -> dict | None:
        if self.player_removal is None:
            return None
        from bayesrank.influence.players import degree_relation

        t = self.player_removal
        best = t.sort_values("displaced", ascending=False).iloc[0]
        return {"table": t.to_dict(orient="records"),
                "largest_displacement": {"player": str(best["player"]), "displaced": best["displaced"],
                                         "top10_changes": best["top10_changes"]},
                "max_top10_changes": float(t["top10_changes"].max()), **degree_relation(t)}

    def to_dict(self) -> dict:
        return {
            **self._envelope(),
            "objective": self.objective,
            "objective_details": self.objective_details,
            "n_players": self.n_players,
            "n_comparisons": self.n_comparisons,
            "leader": self.leader,
            "runner_up": self.runner_up,
            "model": self.model,
            "coefficients": [{"name": f, "coef": float(b)} for f, b in self.coefficients.items()],
            "settings": self.settings,
            "exclusions": self.exclusions,
            "n_excluded": int(self.exclusions.get("total", 0)),
            "excluded_by_reason": dict(self.exclusions.get("by_reason", {})),
            "audits": {a: r.to_dict() for a, r in self.audits.items()},
            "other_audits": [r.to_dict() for r in self.other_audits],
            "robustness": self.robustness.to_dict(orient="records"),
            "player_removal": self.player_removal_dict(),
        }

    def plot(self, ax=None, **kwargs):
        """Objective vs budget (1sN predicted and exact refit) per action; without ``ax`` also the
        distribution of per-match first-order drop influence on the objective."""
        import matplotlib.pyplot as plt

        from bayesrank.influence.plots import plot_budget_curves, plot_influence_distribution

        if ax is not None:
            plot_budget_curves(self.audits, ax)
            return ax.figure
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        plot_budget_curves(self.audits, axes[0])
        plot_influence_distribution(self.state, self.influence_objective(), axes[1])
        fig.tight_layout()
        return fig

    def influence_objective(self):
        """The objective whose per-match influence is plotted: the audited one when it is a function
        of θ alone, else (CI objectives, CI-aware margins) the top-1 gap."""
        from bayesrank.influence.objectives import top1_gap

        obj = self.objective_object
        return obj if obj is not None and not obj.uses_hinv else top1_gap(self.state)

    def save_plots(self, outdir) -> list[Path]:
        """Influence distribution, objective vs budget and (with remove-player) displacement vs degree."""
        from bayesrank.influence.plots import save_audit_plots

        return save_audit_plots(self, outdir)
