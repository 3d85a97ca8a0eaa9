"""NVUE records: the resolved QoS of ``nv config show -o yaml`` and what the ``nv show`` outputs hold."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "NvueConfig",
    "NvueCongestionControlShow",
    "NvueEcn",
    "NvueInterfaceQos",
    "NvuePfcProfileShow",
    "NvuePfcWatchdogShow",
    "NvuePfcWdClass",
    "NvueRoceClass",
    "NvueRoceCounters",
    "NvueRocePool",
    "NvueRoceStatus",
    "NvueScheduler",
]


@dataclass(frozen=True, slots=True)
class NvueEcn:
    """ECN/RED on one traffic class (egress queue)."""

    enabled: bool
    min_bytes: int | None
    max_bytes: int | None
    probability: int | None  # percent
    red_enabled: bool | None  # None where a show output does not say


@dataclass(frozen=True, slots=True)
class NvueScheduler:
    mode: str  # "dwrr" | "strict"
    bw_percent: int | None


@dataclass(frozen=True, slots=True)
class NvueInterfaceQos:
    """The resolved QoS of one swp interface."""

    interface: str
    mtu: int
    speed_mbps: int | None  # None for "auto"
    trust: str  # "l2" | "l3" | "both" | "port"
    dscp_to_tc: dict[int, int]  # DSCP -> switch priority (mapping profile)
    pcp_to_tc: dict[int, int]  # PCP -> switch priority
    port_default_sp: int
    tc_to_queue: dict[int, int]  # switch priority -> traffic class (egress-queue-mapping)
    pfc_enabled: frozenset[int]  # switch priorities
    pfc_rx: bool
    pfc_tx: bool
    pfc_cable_length_m: int | None  # None when PFC is not configured at all
    ecn: dict[int, NvueEcn]  # traffic class -> ECN/RED
    schedulers: dict[int, NvueScheduler]  # traffic class -> ETS
    pfcwd: bool
    mapping_profile: str
    pfc_profile: str
    congestion_control_profile: str
    egress_scheduler_profile: str


@dataclass(frozen=True, slots=True)
class NvueConfig:
    version: str | None  # header "Cumulus Linux 5.x"
    hostname: str | None
    roce_enabled: bool
    roce_mode: str | None  # None when RoCE is off
    pfcwd_polling_interval_ms: int
    pfcwd_robustness: int
    interfaces: dict[str, NvueInterfaceQos]


@dataclass(frozen=True, slots=True)
class NvueRoceClass:
    """A labelled row (``roce``/``cnp``) of ``nv show interface <if> qos roce status``."""

    name: str
    pcp: int | None
    dscp: int | None
    switch_priority: int | None
    traffic_class: int | None
    scheduler: NvueScheduler | None


@dataclass(frozen=True, slots=True)
class NvueRocePool:
    name: str
    mode: str  # lower case: "dynamic"
    pool_id: int | None
    switch_priorities: frozenset[int]
    traffic_classes: frozenset[int]
    size_bytes: int | None
    size_percent: int | None
    size_infinite: bool
    current_usage_bytes: int | None
    max_usage_bytes: int | None


@dataclass(frozen=True, slots=True)
class NvueRoceStatus:
    """``nv show qos roce`` (global) or ``nv show interface <if> qos roce status`` (one port)."""

    enabled: bool | None  # "enable on" (5.12) / "state enabled" (5.16); absent from the port view
    mode: str | None
    trust: str | None  # config vocabulary: "pcp,dscp" -> "both"
    pfc_enabled: frozenset[int]
    pfc_rx_enabled: bool | None
    pfc_tx_enabled: bool | None
    pfc_cable_length_m: int | None
    congestion_mode: str | None  # "ECN" / "ecn, absolute"
    ecn: dict[int, NvueEcn]  # each enabled traffic class with the shared thresholds
    lldp_app_priority: int | None
    lldp_app_protocol_id: int | None
    lldp_app_selector: str | None
    dscp_to_tc: dict[int, int]  # DSCP -> switch priority
    pcp_to_tc: dict[int, int]
    tc_to_queue: dict[int, int]  # switch priority -> traffic class
    schedulers: dict[int, NvueScheduler]  # traffic class -> ETS
    classes: dict[str, NvueRoceClass]  # port view: "roce", "cnp"
    pools: tuple[NvueRocePool, ...]
    exceptions: tuple[str, ...]
    features: dict[str, str]  # "Extended Features" (packet-trim: enabled)


@dataclass(frozen=True, slots=True)
class NvuePfcProfileShow:
    """``nv show qos pfc <profile>``."""

    switch_priorities: frozenset[int]
    rx_enabled: bool | None
    tx_enabled: bool | None
    cable_length_m: int | None
    port_buffer_bytes: int | None
    xoff_threshold_bytes: int | None
    xon_threshold_bytes: int | None


@dataclass(frozen=True, slots=True)
class NvuePfcWdClass:
    status: str  # "OK" | "DEADLOCK"
    deadlock_count: int


@dataclass(frozen=True, slots=True)
class NvuePfcWatchdogShow:
    """``nv show interface <if> qos pfc-watchdog``."""

    enabled: bool | None
    traffic_classes: dict[int, NvuePfcWdClass]


@dataclass(frozen=True, slots=True)
class NvueCongestionControlShow:
    """``nv show qos congestion-control <profile>``."""

    ecn: dict[int, NvueEcn]


@dataclass(frozen=True, slots=True)
class NvueRoceCounters:
    """``nv show interface <if> qos roce counters``: ``"tx-stats.tx-ecn-stats.ecn-marked-packets" -> n``,
    sizes in bytes."""

    counters: dict[str, int]
