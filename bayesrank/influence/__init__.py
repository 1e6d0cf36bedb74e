"""Spec 00: leaderboard perturbation audit (influence scores, one-step Newton, greedy audits)."""
