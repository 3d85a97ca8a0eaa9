"""unifab: one model of a GPU cluster's NICs, links and switches, checked end to end."""

__all__ = ["__version__"]

__version__ = "0.1.0"
