"""Host facts that break RDMA even when the fabric is right: PCIe training, GIDs, RoCE MTU, DCBX, ETS, ACS, peer memory."""

from __future__ import annotations

from unifab.checks.registry import CheckSpec

__all__ = ["CHECKS"]

CHECKS: tuple[CheckSpec, ...] = ()
