"""QoS knowledge shared by checks and renderers: headroom formulas, ASIC parameters (data + pure functions)."""

__all__ = []
