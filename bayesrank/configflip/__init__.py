"""Spec 03: configuration-conditional rank instability (grids, rho_flip, tau_R, orderings, ANOVA, GRID card)."""
