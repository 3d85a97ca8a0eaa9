"""Renderers: device configuration and commands from intended values, in each device's own syntax."""

__all__ = []
