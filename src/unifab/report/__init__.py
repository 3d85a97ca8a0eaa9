"""Findings for people (Rich tables, HTML report) and for scripts (JSON)."""

__all__ = []
