"""The synthetic cluster ("twin"): a bundle of real-format artifacts with injected misconfigurations."""

__all__ = []
