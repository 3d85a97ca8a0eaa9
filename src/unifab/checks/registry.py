"""The check catalog: every check id, what it looks at, why it hurts, how to fix it.

The registry is an explicit dict built from the check modules listed in :data:`CHECK_MODULES`;
input checks (``INPUT-*``) have no function because the collector emits them while reading.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from unifab.checks.findings import finish_fixes

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
    "unifab.checks.host",
    "unifab.checks.host_pcie",
    "unifab.checks.host_qos",
    "unifab.checks.fleet",
    "unifab.checks.ib",
    "unifab.checks.gate_catalog",  # judged on the host by unifab agent gate; listed, never run by unifab check
)

INPUT_CHECKS = (
    CheckSpec(
        "INPUT-UNREADABLE",
        "A collected file could not be read or parsed",
        "Everything the file would have told (a NIC's QoS, a switch's ports) is unknown, so checks skip it.",
        "Re-collect the file; the finding names the line and what the parser expected there.",
    ),
    CheckSpec(
        "INPUT-PARTIAL",
        "Part of a collected file could not be read; the rest was",
        "The skipped rows (a port, a queue, a map) are unknown, so the checks that need them skip those objects.",
        "Fix or re-collect what the finding names (file, line or key); everything else in the file was checked.",
    ),
    CheckSpec(
        "INPUT-MISSING",
        "A file the bundle layout needs for a device is absent",
        "The device is only partly known; checks that need the file skip it.",
        "Re-collect the device with the host agent or the switch adapter.",
    ),
    CheckSpec(
        "INPUT-STALE",
        "A switch's last collect failed; its files are older",
        "Checks judge the switch as it was when last collected, not as it is now.",
        "Fix what the finding names (reach, credentials, the answer) and collect the switch again.",
    ),
)


def _saved(run: CheckFn | None) -> CheckFn | None:
    if run is None:
        return None

    def saved(ctx: CheckContext) -> Iterator[Finding]:
        return (finish_fixes(ctx, f) for f in run(ctx))

    saved.__doc__ = run.__doc__
    return saved


def registry() -> dict[str, CheckSpec]:
    """All checks by id, in catalog order (input checks last). Every check's fixes leave through
    :func:`unifab.checks.findings.finish_fixes`: each switch fix group ends with its platform's save step."""
    specs: dict[str, CheckSpec] = {}
    for name in CHECK_MODULES:
        module_specs: tuple[CheckSpec, ...] = importlib.import_module(name).CHECKS
        specs.update((s.id, replace(s, run=_saved(s.run))) for s in module_specs)
    specs.update((s.id, s) for s in INPUT_CHECKS)
    return specs
