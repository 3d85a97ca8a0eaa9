"""What each registered check's findings depend on, so a device change re-runs only what it can move.

* ``LINK`` — one finding per link from that link's two ends, the baseline and the switch-link
  majorities (``CheckContext.fabric_values``): re-run over the links touching the changed device.
* ``SWITCH`` — like ``LINK``, but findings of one switch-wide setting are merged per switch
  (:class:`~unifab.checks.findings.SwitchWide`): re-run over every host link of the switches involved.
* ``JOBS`` — per job, from its hosts' NICs, their links and leaf ports: re-run for the jobs on those hosts.
* ``HOST`` — per host, from the host and its own links: re-run for a changed host, kept for a switch.
* ``UPLINKS`` — per leaf, from the links and the leaf's port speeds: kept for a host; for a switch, kept
  unless its OS or a port speed changed (then re-run whole).
* ``CABLING`` / ``DEGRADED`` — fabric-wide groupings (plan vs LLDP, swaps and cycles; per-switch speed
  majorities): kept when the device's inputs to them (:func:`cabling_key`, :func:`degraded_key`) are
  unchanged, else re-run over the whole (already parsed) fabric.
* anything not listed is ``FABRIC``: re-run in full on every change (correct, only slower), so a new
  check is never silently stale.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from unifab.checks.context import NicLink, PortLink
from unifab.checks.topology_common import nic_rail
from unifab.model import Endpoint, Fabric

__all__ = ["SCOPES", "Resolved", "Scope", "cabling_key", "degraded_key", "scope_of", "uplinks_key"]


class Scope(enum.Enum):
    LINK = "link"
    SWITCH = "switch"
    JOBS = "jobs"
    HOST = "host"
    UPLINKS = "uplinks"
    CABLING = "cabling"
    DEGRADED = "degraded"
    FABRIC = "fabric"


SCOPES: dict[str, Scope] = {
    "QOS-TRUST": Scope.FABRIC,  # switch-link ends are grouped per switch (checks.uplink_qos)
    "QOS-PFC-MISMATCH": Scope.LINK,
    "QOS-PFC-LOSSY-ROCE": Scope.LINK,
    "QOS-TC-OVERRIDE": Scope.LINK,
    "QOS-GLOBAL-PAUSE": Scope.LINK,
    # grouped per switch over host and switch links, from switch-wide facts (start_default, the poll interval)
    "QOS-PFCWD": Scope.FABRIC,
    "QOS-ECN-OFF": Scope.LINK,
    "QOS-DCQCN-OFF": Scope.LINK,
    "QOS-CNP": Scope.FABRIC,  # switch-link ends are grouped per switch (checks.uplink_qos)
    "QOS-HEADROOM": Scope.FABRIC,  # a profile many uplinks share is one finding per switch
    "QOS-MTU": Scope.LINK,
    "QOS-CABLE-LEN": Scope.LINK,
    "LINK-SPEED": Scope.LINK,
    "LINK-FEC": Scope.LINK,
    "QOS-DSCP-MAP": Scope.SWITCH,
    "QOS-ECN-THRESH": Scope.SWITCH,
    "QOS-JOB-TC": Scope.JOBS,
    "TOPO-NCCL-HCA": Scope.JOBS,
    "TOPO-PCIE-AFFINITY": Scope.HOST,
    "TOPO-UPLINKS": Scope.UPLINKS,
    "TOPO-MISSING": Scope.CABLING,
    "TOPO-UNEXPECTED": Scope.CABLING,
    "TOPO-MISWIRED": Scope.CABLING,
    "TOPO-RAIL": Scope.CABLING,
    "TOPO-DEGRADED": Scope.DEGRADED,
}


def scope_of(check: str) -> Scope:
    return SCOPES.get(check, Scope.FABRIC)


Resolved = NicLink | PortLink


def cabling_key(fabric: Fabric, kind: str, name: str, ends: Iterable[Endpoint]) -> tuple[object, ...]:
    """What the cabling checks read from one device besides the links: a host NIC's rail and RDMA port state
    (a dark port is TOPO-MISSING evidence of its own), a switch's OS.

    ``ends`` are the device's own endpoints on its links; the links themselves are compared separately.
    """
    if kind == "switch":
        switch = fabric.switches.get(name)
        return ("switch", switch.os if switch is not None else None)
    return (
        "host",
        tuple(
            (str(end), nic_rail(fabric, end), nic.port_state if (nic := fabric.nic_at(end)) is not None else None)
            for end in sorted(ends, key=str)
        ),
    )


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
