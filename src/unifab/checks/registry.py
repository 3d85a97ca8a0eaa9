"""The check catalog: every check id, what it looks at, why it hurts, how to fix it.

The registry is an explicit dict built from the check modules listed in :data:`CHECK_MODULES`;
input checks (``INPUT-*``) have no function because the collector emits them while reading.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from unifab.checks.context import CheckContext
    from unifab.model import Finding

__all__ = ["CHECK_MODULES", "INPUT_CHECKS", "CheckFn", "CheckSpec", "registry"]

CheckFn = Callable[["CheckContext"], Iterable["Finding"]]


@dataclass(frozen=True, slots=True)
class CheckSpec:
    id: str
    title: str
    why: str
    fix: str
    run: CheckFn | None = None


CHECK_MODULES = (
    "unifab.checks.qos",
    "unifab.checks.congestion",
    "unifab.checks.headroom",
    "unifab.checks.link",
    "unifab.checks.jobs",
    "unifab.checks.topology",
)

INPUT_CHECKS = (
    CheckSpec(
        "INPUT-UNREADABLE",
        "A collected file could not be read or parsed",
        "Everything the file would have told (a NIC's QoS, a switch's ports) is unknown, so checks skip it.",
        "Re-collect the file; the finding names the line and what the parser expected there.",
    ),
    CheckSpec(
        "INPUT-MISSING",
        "A file the bundle layout needs for a device is absent",
        "The device is only partly known; checks that need the file skip it.",
        "Re-collect the device with the host agent or the switch adapter.",
    ),
)


def registry() -> dict[str, CheckSpec]:
    """All checks by id, in catalog order (input checks last)."""
    specs: dict[str, CheckSpec] = {}
    for name in CHECK_MODULES:
        module_specs: tuple[CheckSpec, ...] = importlib.import_module(name).CHECKS
        specs.update((s.id, s) for s in module_specs)
    specs.update((s.id, s) for s in INPUT_CHECKS)
    return specs
