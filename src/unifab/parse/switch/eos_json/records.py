"""The records of the EOS eAPI replies, one family per command, and of a SuzieQ gather file."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "EosEcnCounters",
    "EosEcnQueueCounters",
    "EosInterfaceQueueCounters",
    "EosInterfaceStatus",
    "EosInterfaces",
    "EosJson",
    "EosJsonData",
    "EosLldpNeighbor",
    "EosLldpNeighbors",
    "EosPfcCounters",
    "EosPfcInterfaceCounters",
    "EosQueueCounters",
    "EosQueueDropCounter",
    "EosVersion",
    "SuzieqEosHost",
    "SuzieqGather",
]


@dataclass(frozen=True, slots=True)
class EosInterfaceStatus:
    """One ``show interfaces`` entry. ``name`` is the key EOS files it under.

    ``speed_mbps`` is ``bandwidth`` in whole Mb/s, ``None`` when bandwidth is 0 (unknown: vEOS ports,
    logical interfaces) or not a whole number of Mb/s. ``member_of`` is the port-channel named in
    ``interfaceMembership``; ``members`` the port-channel's ``memberInterfaces``. ``counters`` is
    ``interfaceCounters`` with the integer fields of its ``inputErrorsDetail``/``outputErrorsDetail``
    folded in; ``rx_pause``/``tx_pause`` are the 802.3x pause frames from those.
    """

    name: str
    description: str | None
    mtu: int | None
    bandwidth_bps: int | None
    speed_mbps: int | None
    line_protocol_status: str | None
    interface_status: str | None
    hardware: str | None
    forwarding_model: str | None
    duplex: str | None
    physical_address: str | None
    burned_in_address: str | None
    member_of: str | None
    members: tuple[str, ...]
    ipv4_addresses: tuple[str, ...]
    rx_pause: int | None
    tx_pause: int | None
    counters: dict[str, int]


@dataclass(frozen=True, slots=True)
class EosInterfaces:
    interfaces: dict[str, EosInterfaceStatus]


@dataclass(frozen=True, slots=True)
class EosLldpNeighbor:
    """One ``lldpNeighborInfo`` entry; ``max_frame_size`` is the 802.3 MFS TLV (peer MTU), when sent."""

    local_interface: str
    chassis_id: str | None
    chassis_id_type: str | None
    system_name: str | None
    system_description: str | None
    port_id: str | None
    port_id_type: str | None
    port_description: str | None
    max_frame_size: int | None
    management_addresses: tuple[str, ...]
    capabilities: tuple[str, ...]  # systemCapabilities set to true, sorted
    ttl: int | None


@dataclass(frozen=True, slots=True)
class EosLldpNeighbors:
    """Every local interface EOS lists, with its neighbors (an empty tuple when it has none)."""

    interfaces: dict[str, tuple[EosLldpNeighbor, ...]]


@dataclass(frozen=True, slots=True)
class EosPfcInterfaceCounters:
    """PFC frames of one interface: totals (when reported) and per priority (``counters detail`` only)."""

    interface: str
    rx_frames: int | None
    tx_frames: int | None
    rx_frames_by_priority: dict[int, int]
    tx_frames_by_priority: dict[int, int]


@dataclass(frozen=True, slots=True)
class EosPfcCounters:
    detail: bool
    interfaces: dict[str, EosPfcInterfaceCounters]


@dataclass(frozen=True, slots=True)
class EosEcnQueueCounters:
    """ECN-marked packets per tx-queue; ``None`` where EOS prints ``"-"`` (ECN not configured)."""

    interface: str
    queues: dict[int, int | None]


@dataclass(frozen=True, slots=True)
class EosEcnCounters:
    interfaces: dict[str, EosEcnQueueCounters]


@dataclass(frozen=True, slots=True)
class EosQueueDropCounter:
    """One ``<queues>.trafficClasses.TC<n>.dropPrecedences.DP<m>`` entry; ``counters`` holds all its numbers."""

    queue_type: str  # "unicast" | "multicast"
    traffic_class: int
    drop_precedence: int
    dropped_packets: int | None
    counters: dict[str, int]


@dataclass(frozen=True, slots=True)
class EosInterfaceQueueCounters:
    """Egress queue counters of one interface; ``*_dropped`` sum ``droppedPackets`` over drop precedences."""

    interface: str
    entries: tuple[EosQueueDropCounter, ...]
    unicast_dropped: dict[int, int]
    multicast_dropped: dict[int, int]


@dataclass(frozen=True, slots=True)
class EosQueueCounters:
    interfaces: dict[str, EosInterfaceQueueCounters]


@dataclass(frozen=True, slots=True)
class EosVersion:
    model_name: str | None
    version: str | None
    internal_version: str | None
    serial_number: str | None
    system_mac_address: str | None
    hardware_revision: str | None
    architecture: str | None
    mfg_name: str | None
    uptime_s: float | None
    mem_total_kb: int | None
    mem_free_kb: int | None
    bootup_timestamp: float | None


@dataclass(frozen=True, slots=True)
class SuzieqEosHost:
    """What a SuzieQ gather holds for one EOS device; commands it did not capture are ``None``."""

    hostname: str
    namespace: str | None
    address: str | None
    version: EosVersion | None
    interfaces: EosInterfaces | None
    lldp: EosLldpNeighbors | None
    other_commands: tuple[str, ...]  # EOS commands captured but not read here, sorted
    failed_commands: tuple[str, ...]  # EOS commands whose status was not 200, sorted


@dataclass(frozen=True, slots=True)
class SuzieqGather:
    hosts: dict[str, SuzieqEosHost]
    other_hosts: dict[str, str]  # hostname -> devtype of the non-EOS devices (not read)


EosJsonData = (
    EosInterfaces | EosLldpNeighbors | EosPfcCounters | EosEcnCounters | EosQueueCounters | EosVersion | SuzieqGather
)


@dataclass(frozen=True, slots=True)
class EosJson:
    """What :func:`parse` read: the command it recognised and its record."""

    command: str
    data: EosJsonData
