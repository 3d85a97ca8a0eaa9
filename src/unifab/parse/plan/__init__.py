"""Planned topology formats (cabling CSV)."""
