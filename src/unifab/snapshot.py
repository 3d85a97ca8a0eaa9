"""A fabric as read at one moment: the model, where and when each device was read, and what could not be.

A :class:`Snapshot` is immutable: readers build one, sessions make the next one from a change (an earlier
snapshot never changes under whoever holds it), and a store keeps several. ``collected_at`` is when the
device's collector says it read the device (``collect.json``'s ``finished``, written by ``unifab agent
collect`` and ``unifab collect``); ``None`` when the bundle does not say (a twin, a hand-made bundle).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

from unifab.model import Fabric, Finding

__all__ = ["DeviceOrigin", "Snapshot"]


@dataclass(frozen=True, slots=True)
class DeviceOrigin:
    """Where one device's state came from."""

    device: str  # entity id: host:<name> | switch:<name>
    location: str  # the directory, archive member or upload path its files were read from
    collector: str | None = None  # "agent", "sonic-redis", "eos-eapi", ... as recorded by the collector
    collected_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The fabric, each device's origin, the input problems, and when unifab read it (UTC)."""

    fabric: Fabric
    read_at: datetime
    source: str  # the bundle's label: a directory path, an archive, upload:<id>
    origins: Mapping[str, DeviceOrigin] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def problems(self) -> tuple[Finding, ...]:
        """What could not be read (the ``INPUT-*`` findings), in reading order."""
        return tuple(self.fabric.input_findings)

    def origin(self, device: str) -> DeviceOrigin | None:
        """The origin of ``host:<name>`` / ``switch:<name>``."""
        return self.origins.get(device)
