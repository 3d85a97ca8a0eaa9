"""What each registered check's findings depend on, so a device change re-runs only what it can move.

* ``LINK`` — one finding per link from that link's two ends, the baseline and the switch-link
  majorities (``CheckContext.fabric_values``): re-run over the links touching the changed device.
* ``SWITCH`` — like ``LINK``, but findings of one switch-wide setting are merged per switch
  (:class:`~unifab.checks.findings.SwitchWide`): re-run over every host link of the switches involved.
* ``TIERS`` — a host-facing part like ``SWITCH`` and a switch-link part grouped per switch
  (:class:`~unifab.checks.uplink_qos.PerSwitch`) that reads switches only: re-run like ``SWITCH``; the
  switch-link part is kept unless the changed switch's inputs to it (:func:`tiers_key`) moved (then whole).
* ``PER_SWITCH`` — one finding per switch (its subject) from that switch's own ports on every link tier:
  kept for a host; for a switch, re-run over its host and switch links, its own findings replaced.
* ``JOBS`` — per job, from its hosts' NICs, their links and leaf ports: re-run for the jobs on those hosts.
* ``HOST`` — per host (subjects: the host, its NICs, its GPUs), from the host, its own links and the jobs
  on it: re-run for a changed host, kept for a switch.
* ``UPLINKS`` — per leaf, from the links and the leaf's port speeds: kept for a host; for a switch, kept
  unless its OS or a port speed changed (then re-run whole).
* ``CABLING`` / ``DEGRADED`` — fabric-wide groupings (plan vs LLDP, swaps and cycles; per-switch speed
  majorities): kept when the device's inputs to them (:func:`cabling_key`, :func:`degraded_key`) are
  unchanged, else re-run over the whole (already parsed) fabric.
* ``KEYED`` — fabric-wide comparisons (a version against its group's majority, the NICs' DCBX majority, IB
  LIDs and MTUs): kept while the projection :data:`KEYS` gives of the changed device is unchanged, else
  re-run whole. The projection holds everything the check reads of one device.
* ``FABRIC`` — re-run in full on every change (correct, only slower). No registered check is left here:
  ``tests/session`` fails when a registered check has no entry in :data:`SCOPES`.

Any check with a :data:`KEYS` entry is re-run whole when its projection of the changed device moved,
whatever its scope (``TIERS`` and ``DSCP-MAP``'s "already reported" pairs use that).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from unifab.checks.context import Baseline, NicLink, PortLink, overrides_fabric_dscp
from unifab.checks.fleet_versions import FIELDS, fleet_facts
from unifab.checks.topology_common import nic_rail
from unifab.model import Endpoint, Fabric, Finding, Host, Nic, Switch
from unifab.render.nic_cli import dcbx_of, dialect_of

__all__ = [
    "KEYS",
    "SCOPES",
    "KeyFn",
    "Probe",
    "Resolved",
    "Scope",
    "cabling_key",
    "degraded_key",
    "scope_of",
    "tiers_key",
    "uplinks_key",
]


class Scope(enum.Enum):
    LINK = "link"
    SWITCH = "switch"
    TIERS = "tiers"
    PER_SWITCH = "per-switch"
    JOBS = "jobs"
    HOST = "host"
    UPLINKS = "uplinks"
    CABLING = "cabling"
    DEGRADED = "degraded"
    KEYED = "keyed"
    FABRIC = "fabric"


SCOPES: dict[str, Scope] = {
    "QOS-TRUST": Scope.TIERS,  # per host link; switch-link ends grouped per switch (checks.uplink_qos)
    "QOS-PFC-MISMATCH": Scope.LINK,
    "QOS-PFC-LOSSY-ROCE": Scope.LINK,
    "QOS-TC-OVERRIDE": Scope.LINK,
    "QOS-GLOBAL-PAUSE": Scope.LINK,
    # host ports merged per switch, switch-link ends grouped per switch; switch-wide facts (start_default, poll)
    "QOS-PFCWD": Scope.TIERS,
    "QOS-ECN-OFF": Scope.LINK,
    "QOS-DCQCN-OFF": Scope.LINK,
    "QOS-CNP": Scope.TIERS,  # per host link; switch-link ends grouped per switch
    "QOS-HEADROOM": Scope.TIERS,  # per host link from its switch's buffer facts; uplink profiles per switch
    "QOS-MTU": Scope.LINK,
    "QOS-CABLE-LEN": Scope.LINK,
    "LINK-SPEED": Scope.LINK,
    "LINK-FEC": Scope.LINK,
    # one map per switch for host and uplink ports; the host part's reported (switch, map) pairs gate the uplinks'
    "QOS-DSCP-MAP": Scope.TIERS,
    "QOS-ECN-THRESH": Scope.SWITCH,
    "QOS-ECN-COLOR": Scope.PER_SWITCH,  # one finding per (switch, WRED profile) over its ports of every tier
    "QOS-WRED-DROP": Scope.PER_SWITCH,
    "QOS-ETS": Scope.KEYED,  # the RoCE priority may be the NICs' majority; per NIC and per host-facing port
    "QOS-DCBX": Scope.KEYED,  # the wanted mode is the NICs' majority without an intent
    "QOS-JOB-TC": Scope.JOBS,
    "TOPO-NCCL-HCA": Scope.JOBS,
    "TOPO-PCIE-AFFINITY": Scope.HOST,
    "HOST-GID": Scope.HOST,  # the host's GIDs and the NCCL_IB_GID_INDEX of the jobs on it
    "HOST-ROCE-MTU": Scope.HOST,
    "HOST-PEERMEM": Scope.HOST,
    "HOST-PCIE-DOWNGRADED": Scope.HOST,
    "HOST-ACS": Scope.HOST,
    "TOPO-UPLINKS": Scope.UPLINKS,
    "TOPO-MISSING": Scope.CABLING,
    "TOPO-UNVERIFIED": Scope.CABLING,
    "TOPO-UNEXPECTED": Scope.CABLING,
    "TOPO-MISWIRED": Scope.CABLING,
    "TOPO-RAIL": Scope.CABLING,
    "TOPO-DEGRADED": Scope.DEGRADED,
    "COVERAGE": Scope.KEYED,  # planned devices not collected: names collected devices use, INPUT-* paths
    "FLEET-FIRMWARE": Scope.KEYED,  # a device's versions against its group's majority
    "FLEET-DRIVER": Scope.KEYED,
    "FLEET-OS": Scope.KEYED,
    "IB-SM": Scope.KEYED,  # IB ports' GUIDs, LIDs, MTUs, counters: subnet-wide duplicates and majorities
    "IB-DUPLICATE": Scope.KEYED,
    "IB-COUNTERS": Scope.KEYED,
    "IB-MTU": Scope.KEYED,
    "IB-SL": Scope.KEYED,
}


def scope_of(check: str) -> Scope:
    return SCOPES.get(check, Scope.FABRIC)


Resolved = NicLink | PortLink


@dataclass(frozen=True, slots=True)
class Probe:
    """One device as a key sees it: its kind and name, the fabric holding it (before or after the change), its
    resolved links then, the INPUT-* findings its read gave, and the baseline (unchanged on this path)."""

    fabric: Fabric
    kind: str  # "host" | "switch"
    name: str
    links: tuple[Resolved, ...]
    inputs: tuple[Finding, ...]
    baseline: Baseline

    @property
    def host(self) -> Host | None:
        return self.fabric.hosts.get(self.name) if self.kind == "host" else None

    @property
    def switch(self) -> Switch | None:
        return self.fabric.switches.get(self.name) if self.kind == "switch" else None


KeyFn = Callable[[Probe], object]


def _fleet_key(check: str) -> KeyFn:
    """The device's version facts of ``check`` (its NICs as the fixes name them), as ``fleet_judgement`` groups."""

    def key(p: Probe) -> object:
        host, switch = p.host, p.switch
        one = Fabric(hosts={p.name: host} if host else {}, switches={p.name: switch} if switch else {})
        return tuple(
            (
                f.field,
                f.group,
                f.version,
                f.entities,
                tuple(sorted(f.attrs.items())),
                tuple((n.id, n.netdev, n.rdma_dev, n.pci_address) for n in f.nics),
            )
            for f in fleet_facts(one)
            if FIELDS[f.field].check == check
        )

    return key


def _dcbx_key(p: Probe) -> object:
    """What QOS-DCBX reads of a host: each NIC's mode (the majority's votes), dialect and netdev."""
    host = p.host
    if host is None:
        return ()
    return tuple(
        (k, nic.id, dcbx_of(nic) if nic.qos is not None else None, dialect_of(nic))
        for k, nic in sorted(host.nics.items())
    )


def _ets_key(p: Probe) -> object:
    """What QOS-ETS reads: a host's NICs' ETS, priority maps and trust (the fallback RoCE priority is their
    majority); a switch's OS and the queues of its host-facing ports."""
    host, switch = p.host, p.switch
    if host is not None:
        out: list[object] = []
        for k, nic in sorted(host.nics.items()):
            q = nic.qos
            if q is None:
                out.append((k, nic.id, None))
                continue
            out.append((k, nic.id, q.ets, q.prio_tc, q.cnp_prio, q.trust, q.dscp2prio, dialect_of(nic), dcbx_of(nic)))
        return tuple(out)
    ports = tuple(
        (lk.port.id, None if lk.port.qos is None else (lk.port.qos.tc_to_queue, lk.port.qos.queues))
        for lk in p.links
        if isinstance(lk, NicLink)
    )
    return (switch.os if switch is not None else None, ports)


def _ib_key(p: Probe) -> object:
    """What the IB checks read of a device: every IB port (GUIDs, LID, MTU, states, counters) and what tells an
    HCA (link layer, RDMA name, active MTU); a switch's GUID and LID."""
    host, switch = p.host, p.switch
    if host is not None:
        return tuple((k, nic.rdma_dev, nic.ib, nic.link_layer, nic.active_mtu) for k, nic in sorted(host.nics.items()))
    if switch is None:
        return ()
    return (switch.os, switch.guid, switch.lid, tuple((k, port.ib) for k, port in sorted(switch.ports.items())))


def _coverage_key(p: Probe) -> object:
    """What COVERAGE reads of a collected device: the names of its NICs or ports, the paths its INPUT-* name."""
    host, switch = p.host, p.switch
    names = frozenset(host.nics) if host is not None else frozenset(switch.ports) if switch is not None else None
    return (names, tuple((f.subject.get("device"), f.subject.get("path")) for f in p.inputs))


def tiers_key(p: Probe) -> object:
    """What the switch-link part of a ``TIERS`` check reads of one switch: its switch-wide facts (OS, buffers,
    watchdog settings), every port's QoS (the names its maps, profiles and schedulers have, its PORT rows) and
    its switch-link ports whole (a neighbour's findings show them as the peer). A host reads into none of it."""
    switch = p.switch
    if p.kind != "switch":
        return ()
    if switch is None:
        return None
    return (
        switch.os,
        switch.hwsku,
        switch.platform,
        switch.buffers,
        switch.pfcwd_poll_ms,
        switch.pfcwd_default,
        tuple((k, port.admin_status is not None, port.qos) for k, port in sorted(switch.ports.items())),
        tuple(end for lk in p.links if isinstance(lk, PortLink) for end in (lk.a, lk.b) if end.switch == p.name),
    )


def _dscp_map_key(p: Probe) -> object:
    """QOS-DSCP-MAP's switch-link part skips the (switch, map) pairs its host part reported, and a host link
    counts there only when its NIC trusts DSCP without overriding the fabric's: that per link, for a host."""
    if p.kind == "switch":
        return tiers_key(p)
    return tuple(
        (
            lk.link.id,
            lk.nic.qos is not None and lk.nic.qos.trust == "dscp" and not overrides_fabric_dscp(lk.nic, p.baseline),
        )
        for lk in p.links
        if isinstance(lk, NicLink)
    )


# The projection of one device that each keyed check (and the switch-link part of each TIERS check) reads.
KEYS: dict[str, KeyFn] = {
    "QOS-TRUST": tiers_key,
    "QOS-PFCWD": tiers_key,
    "QOS-CNP": tiers_key,
    "QOS-HEADROOM": tiers_key,
    "QOS-DSCP-MAP": _dscp_map_key,
    "QOS-ETS": _ets_key,
    "QOS-DCBX": _dcbx_key,
    "COVERAGE": _coverage_key,
    "FLEET-FIRMWARE": _fleet_key("FLEET-FIRMWARE"),
    "FLEET-DRIVER": _fleet_key("FLEET-DRIVER"),
    "FLEET-OS": _fleet_key("FLEET-OS"),
    "IB-SM": _ib_key,
    "IB-DUPLICATE": _ib_key,
    "IB-COUNTERS": _ib_key,
    "IB-MTU": _ib_key,
    "IB-SL": _ib_key,
}


def cabling_key(fabric: Fabric, kind: str, name: str, ends: Iterable[Endpoint]) -> tuple[object, ...]:
    """What the cabling checks read from one device besides the links: a host NIC's rail and whether its port is
    dark (RDMA port state, link layer, netdev operstate and carrier: a dark port is TOPO-MISSING evidence of its
    own, an up one TOPO-UNVERIFIED's), a switch's OS.

    ``ends`` are the device's own endpoints on its links; the links themselves are compared separately.
    """
    if kind == "switch":
        switch = fabric.switches.get(name)
        return ("switch", switch.os if switch is not None else None)
    return (
        "host",
        tuple((str(end), nic_rail(fabric, end), _port_light(fabric.nic_at(end))) for end in sorted(ends, key=str)),
    )


def _port_light(nic: Nic | None) -> tuple[object, ...] | None:
    return None if nic is None else (nic.port_state, nic.link_layer, nic.operstate, nic.carrier)


def uplinks_key(fabric: Fabric, name: str) -> tuple[object, ...]:
    """What TOPO-UPLINKS reads from one switch besides the links: its OS and its ports' speeds."""
    switch = fabric.switches.get(name)
    if switch is None:
        return ()
    return (switch.os, tuple(sorted((p, port.speed_mbps) for p, port in switch.ports.items())))


def degraded_key(links: Iterable[Resolved]) -> tuple[object, ...]:
    """What TOPO-DEGRADED reads from the links touching one device: both ends' ids and speeds."""
    out: list[object] = []
    for lk in links:
        if isinstance(lk, NicLink):
            out.append(("n", lk.link.id, lk.nic.id, lk.nic.speed_mbps, lk.port.id, lk.port.speed_mbps))
        else:
            out.append(("p", lk.link.id, lk.a.id, lk.a.speed_mbps, lk.b.id, lk.b.speed_mbps))
    return tuple(out)
