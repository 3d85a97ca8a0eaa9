"""Typed records of one fabric snapshot: hosts, NICs, switches, ports, links and findings.

Parsers produce format-specific records; :mod:`unifab.collect` turns them into these vendor-neutral
ones, and checks read only these. Entity ids follow the design's canonical strings
(``nic:gpu017:mlx5_3``, ``port:leaf03:Ethernet12``, ``link:gpu017:eth3--leaf03:Ethernet12``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Severity(enum.Enum):
    """Finding severity; ``rank`` orders them for ``--fail-on`` (higher is worse)."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls(text.lower())
        except ValueError:
            choices = ", ".join(s.value for s in cls)
            raise ValueError(f"unknown severity {text!r}; expected one of {choices}") from None


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2, Severity.CRITICAL: 3}


def host_id(host: str) -> str:
    return f"host:{host}"


def nic_id(host: str, rdma_dev: str) -> str:
    return f"nic:{host}:{rdma_dev}"


def switch_id(switch: str) -> str:
    return f"switch:{switch}"


def port_id(switch: str, port: str) -> str:
    return f"port:{switch}:{port}"


@dataclass(frozen=True, slots=True, order=True)
class Endpoint:
    """One end of a cable: a host netdev or a switch port."""

    node: str
    port: str

    def __str__(self) -> str:
        return f"{self.node}:{self.port}"


def link_id(a: Endpoint, b: Endpoint) -> str:
    """``link:<end>--<end>`` with the two ends in sorted order, so both directions name one link."""
    first, second = sorted((str(a), str(b)))
    return f"link:{first}--{second}"


@dataclass(frozen=True, slots=True)
class NicQos:
    """What a NIC does with RoCE traffic: classification, PFC, ECN/DCQCN and the TOS override."""

    trust: str | None  # "dscp" | "pcp" | "none"
    dscp2prio: dict[int, int]
    pfc_enabled: frozenset[int]
    prio_tc: dict[int, int]
    cable_len_m: int | None
    ecn_np_enabled: frozenset[int] | None  # notification point (CNP generation) per priority
    ecn_rp_enabled: frozenset[int] | None  # reaction point (rate limiting) per priority
    cnp_dscp: int | None
    cnp_prio: int | None
    traffic_class: int | None  # global TOS override from tc/<port>/traffic_class, None when unset


@dataclass(frozen=True, slots=True)
class Nic:
    host: str
    netdev: str
    rdma_dev: str | None
    mtu: int | None
    qos: NicQos | None

    @property
    def id(self) -> str:
        return nic_id(self.host, self.rdma_dev or self.netdev)

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(self.host, self.netdev)


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    nics: dict[str, Nic]  # by netdev


@dataclass(frozen=True, slots=True)
class QueueQos:
    index: int
    ecn_enabled: bool
    wred_profile: str | None
    scheduler_type: str | None


@dataclass(frozen=True, slots=True)
class PortQos:
    """The switch port's ingress classification, PFC and egress queues."""

    dscp_map_name: str | None
    dscp_to_tc: dict[int, int]
    tc_to_pg: dict[int, int]
    tc_to_queue: dict[int, int]
    pfc_enabled: frozenset[int]
    queues: dict[int, QueueQos]
    cable_len_m: int | None


@dataclass(frozen=True, slots=True)
class Port:
    switch: str
    name: str
    mtu: int | None
    speed_mbps: int | None
    admin_status: str | None
    qos: PortQos | None

    @property
    def id(self) -> str:
        return port_id(self.switch, self.name)

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(self.switch, self.name)


@dataclass(frozen=True, slots=True)
class Switch:
    name: str
    os: str  # "sonic" | "eos" | "nvue"
    config_file: str  # bundle-relative path of the config the ports came from
    ports: dict[str, Port]
    hwsku: str | None = None


@dataclass(frozen=True, slots=True)
class Link:
    """A cable between two endpoints, as discovered (LLDP) and/or planned."""

    a: Endpoint
    b: Endpoint
    sources: frozenset[str]  # {"lldp", "plan"}
    cable_m: float | None = None

    @property
    def id(self) -> str:
        return link_id(self.a, self.b)


@dataclass(frozen=True, slots=True)
class Fix:
    """Commands or config that would correct one device."""

    device: str
    commands: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Finding:
    check: str
    severity: Severity
    subject: dict[str, str]
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)
    fix: tuple[Fix, ...] = ()
    impact: dict[str, Any] = field(default_factory=dict)
    entities: tuple[str, ...] = ()  # canonical ids this finding is about (links, ports, NICs)

    def sort_key(self) -> tuple[int, str, str]:
        return (-self.severity.rank, self.check, self.entities[0] if self.entities else self.message)


@dataclass(slots=True)
class Fabric:
    """One snapshot of a fabric, assembled from a bundle or from live collection."""

    hosts: dict[str, Host] = field(default_factory=dict)
    switches: dict[str, Switch] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    input_findings: list[Finding] = field(default_factory=list)

    def nic_at(self, end: Endpoint) -> Nic | None:
        host = self.hosts.get(end.node)
        return host.nics.get(end.port) if host else None

    def port_at(self, end: Endpoint) -> Port | None:
        switch = self.switches.get(end.node)
        return switch.ports.get(end.port) if switch else None
