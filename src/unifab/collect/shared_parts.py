"""One object for each distinct value of a device's small repeated records.

A switch's ports mostly carry the same queue, headroom and PFC-watchdog settings, and a host's NICs the same
ETS classes and PCIe link: at 100,000 GPUs that is millions of equal frozen records, each a separate object
(about a third of a fabric's objects); and every NIC's counters dict spells out the same ~90 counter names
afresh. Sharing one object per distinct value within a device, and one string per counter name within the
process (``sys.intern``), keeps memory and the record cache's reads small (a pickle stores a shared object
once and loads it once). The records are frozen and compare by value, so nothing a check or a report does can
tell the difference; the mutable containers (a port's ``queues`` dict, a NIC's counters) stay each record's own.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import TypeVar

from unifab.model import Host, Switch

__all__ = ["share_host_parts", "share_switch_parts"]

T = TypeVar("T")


class _Pool:
    """Canonical objects by value (each pooled type is frozen and hashable: scalar fields only)."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[object, object] = {}

    def one(self, value: T) -> T:
        if value is None:
            return value
        found = self._seen.setdefault(value, value)
        return found  # type: ignore[return-value]  # equal value, same type


def share_switch_parts(switch: Switch | None) -> Switch | None:
    """``switch`` with equal queues, headroom records and PFC watchdogs shared among its ports (in place: the
    ports dict and each port's queue and headroom dicts are this read's own)."""
    if switch is None:
        return None
    pool = _Pool()
    for name, port in switch.ports.items():
        qos = port.qos
        if qos is None:
            continue
        queues, headroom = qos.queues, qos.headroom
        for index, queue in queues.items():
            queues[index] = pool.one(queue)
        for pg, buffer in headroom.items():
            headroom[pg] = pool.one(buffer)
        watchdog = pool.one(qos.pfcwd)
        if watchdog is not qos.pfcwd:
            switch.ports[name] = dataclasses.replace(port, qos=dataclasses.replace(qos, pfcwd=watchdog))
    return switch


def share_host_parts(host: Host) -> Host:
    """``host`` with equal ETS classes and PCIe links shared among its NICs and GPUs, and its NICs' counter
    names interned (in place, as above)."""
    pool = _Pool()
    for netdev, nic in host.nics.items():
        counters = nic.counters
        if counters:
            named = [(sys.intern(name), value) for name, value in counters.items()]
            counters.clear()
            counters.update(named)
        qos, pcie = nic.qos, pool.one(nic.pcie)
        ets = tuple(pool.one(c) for c in qos.ets) if qos is not None else ()
        if qos is not None and any(a is not b for a, b in zip(ets, qos.ets, strict=True)):
            qos = dataclasses.replace(qos, ets=ets)
        if qos is not nic.qos or pcie is not nic.pcie:
            host.nics[netdev] = dataclasses.replace(nic, qos=qos, pcie=pcie)
    for index, gpu in host.gpus.items():
        pcie = pool.one(gpu.pcie)
        if pcie is not gpu.pcie:
            host.gpus[index] = dataclasses.replace(gpu, pcie=pcie)
    return host
