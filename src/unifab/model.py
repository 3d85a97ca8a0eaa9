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
class EtsClass:
    """One traffic class of the NIC's transmit scheduler."""

    tc: int
    tsa: str  # "ets" | "strict" | "vendor"
    bw_percent: int | None


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
    ets: tuple[EtsClass, ...] = ()
    rx_buffer_sizes: tuple[int, ...] | None = None  # bytes per receive buffer
    prio2buffer: tuple[int, ...] | None = None  # receive buffer of each priority
    roce_tos: int | None = None  # rdma_cm default_roce_tos
    roce_mode: str | None = None  # rdma_cm default_roce_mode: "RoCE v2" | "IB/RoCE v1"


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
    """One egress queue: ECN marking thresholds (bytes) and its scheduler."""

    index: int
    ecn_enabled: bool
    wred_profile: str | None
    scheduler_type: str | None  # "STRICT" | "DWRR" | "WRR"
    ecn_min_bytes: int | None = None
    ecn_max_bytes: int | None = None
    ecn_max_probability: int | None = None  # percent
    weight: int | None = None
    scheduler: str | None = None  # the switch's name for the scheduler profile


@dataclass(frozen=True, slots=True)
class Headroom:
    """Ingress priority-group buffer of a lossless PG, in bytes (None where the model computes it)."""

    profile: str | None
    size: int | None
    xon: int | None
    xoff: int | None
    dynamic: bool = False  # headroom computed by the switch (SONiC dynamic model, profile NULL)


@dataclass(frozen=True, slots=True)
class PfcWatchdog:
    action: str | None  # "drop" | "forward" | "alert"
    detection_ms: int | None
    restoration_ms: int | None


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
    trust: str | None = None  # "dscp" | "pcp" | None when the port does not classify
    headroom: dict[int, Headroom] = field(default_factory=dict)  # by PG
    pfcwd: PfcWatchdog | None = None
    pfcwd_priorities: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class Port:
    switch: str
    name: str
    mtu: int | None
    speed_mbps: int | None
    admin_status: str | None
    qos: PortQos | None
    fec: str | None = None
    description: str | None = None

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
    platform: str | None = None
    version: str | None = None


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
