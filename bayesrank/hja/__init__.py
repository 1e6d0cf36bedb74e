"""Heterogeneous judge-aware ranking (HJA, spec 02)."""
