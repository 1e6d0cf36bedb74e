"""Spec 01: calibration protocol sensitivity (verbal vs token confidence)."""
