"""Fixtures of the session tests: small hand-built fabrics."""

from fabric_factory import FabricFactory, make_fabric

__all__ = ["FabricFactory", "make_fabric"]
