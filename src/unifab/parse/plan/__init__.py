"""Planned topology formats (cabling CSV)."""

__all__ = []
