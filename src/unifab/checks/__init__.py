"""Checks: pure functions from a fabric snapshot to findings, registered by stable id."""

__all__ = []
