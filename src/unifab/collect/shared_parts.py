"""One object for each distinct value of a device's small repeated records.

A switch's ports mostly carry the same queue, headroom and PFC-watchdog settings and the same DSCP/TC/PG/queue
maps, and a host's NICs the same ETS classes, QoS maps and PCIe link: at 100,000 GPUs that is millions of equal
records and dicts, each a separate object (at 8,192 GPUs, half the fabric's memory); and every NIC's counters
dict spells out the same ~90 counter names afresh. Sharing one object per distinct value within a device, and
one string per counter name within the process (``sys.intern``), keeps memory and the record cache's reads
small (a pickle stores a shared object once and loads it once). The records are frozen and compare by value,
and nothing writes into the model's maps once a device is read, so nothing a check or a report does can tell
the difference. A NIC's counters dict stays its own (its values differ); the ports and NICs dicts of the
device are rebound in place, record by record.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import TypeVar

from unifab.model import Host, Switch

__all__ = ["share_host_parts", "share_switch_parts"]

T = TypeVar("T")
R = TypeVar("R")


class _Pool:
    """Canonical objects by value within one device read. Frozen records, frozensets and tuples are shared by
    equality; a dict by its items *in order* (two equal dicts that iterate differently stay apart, so no output
    order can change). Model dicts are never changed after the read (the model's records are frozen, and
    nothing writes into their maps), which is what makes sharing one among records safe."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[object, object] = {}

    def one(self, value: T) -> T:
        if value is None:
            return value
        key: object = ("dict", tuple(value.items())) if isinstance(value, dict) else value
        try:
            found = self._seen.setdefault(key, value)
        except TypeError:  # something unhashable inside: kept as it is
            return value
        return found  # type: ignore[return-value]  # an equal value of the same type

    def fields(self, record: R, names: tuple[str, ...]) -> R:
        """``record`` with each of the ``names`` fields shared, a tuple's items first (the same record when all
        already were)."""
        changed = {}
        for name in names:
            value = getattr(record, name)
            shared = self.one(tuple(self.one(v) for v in value) if isinstance(value, tuple) else value)
            if shared is not value:
                changed[name] = shared
        return dataclasses.replace(record, **changed) if changed else record  # type: ignore[type-var]


_PORT_QOS = ("dscp_to_tc", "tc_to_pg", "tc_to_queue", "pfc_enabled", "queues", "headroom", "pfcwd", "pfcwd_priorities")
_NIC_QOS = ("dscp2prio", "pfc_enabled", "prio_tc", "ecn_np_enabled", "ecn_rp_enabled", "ets", "rx_buffer_sizes")


def share_switch_parts(switch: Switch | None) -> Switch | None:
    """``switch`` with equal queues, headroom records, PFC watchdogs and QoS maps shared among its ports (in
    place: the ports dict is this read's own)."""
    if switch is None:
        return None
    pool = _Pool()
    for name, port in switch.ports.items():
        qos = port.qos
        if qos is None:
            continue
        queues, headroom = qos.queues, qos.headroom
        for index, queue in queues.items():  # the values first: equal dicts of them are then shared whole
            queues[index] = pool.one(queue)
        for pg, buffer in headroom.items():
            headroom[pg] = pool.one(buffer)
        shared = pool.fields(qos, _PORT_QOS)
        if shared is not qos:
            switch.ports[name] = dataclasses.replace(port, qos=shared)
    return switch


def share_host_parts(host: Host) -> Host:
    """``host`` with equal ETS classes, QoS maps and PCIe links shared among its NICs and GPUs, and its NICs'
    counter names interned (in place, as above)."""
    pool = _Pool()
    for netdev, nic in host.nics.items():
        counters = nic.counters
        if counters:
            named = [(sys.intern(name), value) for name, value in counters.items()]
            counters.clear()
            counters.update(named)
        qos = pool.fields(nic.qos, _NIC_QOS) if nic.qos is not None else None
        pcie = pool.one(nic.pcie)
        if qos is not nic.qos or pcie is not nic.pcie:
            host.nics[netdev] = dataclasses.replace(nic, qos=qos, pcie=pcie)
    for index, gpu in host.gpus.items():
        pcie = pool.one(gpu.pcie)
        if pcie is not gpu.pcie:
            host.gpus[index] = dataclasses.replace(gpu, pcie=pcie)
    return host
