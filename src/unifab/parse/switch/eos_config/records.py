"""The records of an EOS running-config: interfaces, QoS settings, profiles and maps as written, and
the resolved QoS of a port (:class:`EosInterfaceQos`)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "EosConfig",
    "EosInterface",
    "EosInterfaceQos",
    "EosPfcWatchdog",
    "EosPfcWatchdogGlobal",
    "EosQosMaps",
    "EosQosProfile",
    "EosQosSettings",
    "EosQueue",
    "EosQueueConfig",
    "EosThreshold",
    "EosWatchdogTimer",
]


@dataclass(frozen=True, slots=True)
class EosThreshold:
    """An ECN threshold as configured; ``bytes`` only for byte units (see :data:`UNIT_BYTES`)."""

    value: int
    unit: str
    bytes: int | None


@dataclass(frozen=True, slots=True)
class EosQueueConfig:
    """One ``tx-queue``/``uc-tx-queue``/``mc-tx-queue`` sub-block as written (``None`` = not said)."""

    index: int
    strict: bool | None = None
    bandwidth_percent: int | None = None
    bandwidth_guaranteed_percent: int | None = None
    shape_rate: str | None = None
    ecn: bool | None = None  # True: `random-detect ecn minimum-threshold ...`; False: `no random-detect ecn`
    min_threshold: EosThreshold | None = None
    max_threshold: EosThreshold | None = None
    max_mark_probability: int | None = None
    weight: int | None = None
    ecn_count: bool | None = None


@dataclass(frozen=True, slots=True)
class EosWatchdogTimer:
    """``priority-flow-control pause watchdog port timer ...`` (``polling-interval auto`` sets ``polling_auto``)."""

    timeout_ms: int | None = None
    polling_interval_ms: int | None = None
    polling_auto: bool = False
    recovery_time_ms: int | None = None
    forced: bool = False


@dataclass(frozen=True, slots=True)
class EosQosSettings:
    """The QoS commands an interface or a ``qos profile`` body holds, as written."""

    trust: str | None = None
    default_cos: int | None = None
    default_dscp: int | None = None
    service_policy: str | None = None
    shape_rate: str | None = None
    pfc_on: bool | None = None
    pfc_priorities: dict[int, bool] = field(default_factory=dict)  # priority -> no-drop
    pfcwd_enabled: bool | None = None
    pfcwd_action: str | None = None
    pfcwd_timer: EosWatchdogTimer | None = None
    tx_queues: dict[int, EosQueueConfig] = field(default_factory=dict)
    uc_tx_queues: dict[int, EosQueueConfig] = field(default_factory=dict)
    mc_tx_queues: dict[int, EosQueueConfig] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EosQosProfile:
    name: str
    qos: EosQosSettings


@dataclass(frozen=True, slots=True)
class EosInterface:
    """An ``interface`` block as written; ``speed_mbps`` is read from ``speed`` (see :func:`speed_to_mbps`)."""

    name: str
    description: str | None = None
    shutdown: bool = False
    mtu: int | None = None
    speed: str | None = None
    speed_mbps: int | None = None
    switchport: bool | None = None
    ip_address: str | None = None
    channel_group: int | None = None
    channel_group_mode: str | None = None
    service_profile: str | None = None
    qos: EosQosSettings = field(default_factory=EosQosSettings)


@dataclass(frozen=True, slots=True)
class EosQosMaps:
    """Global ``qos map`` entries as configured (the defaults are not merged in here)."""

    dscp_to_tc: dict[int, int] = field(default_factory=dict)
    dscp_drop_precedence: dict[int, int] = field(default_factory=dict)
    cos_to_tc: dict[int, int] = field(default_factory=dict)
    tc_to_queue: dict[int, int] = field(default_factory=dict)
    tc_to_dscp: dict[int, int] = field(default_factory=dict)
    tc_to_cos: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EosPfcWatchdogGlobal:
    """Global ``priority-flow-control pause watchdog`` settings (``default ...`` timers, action)."""

    action: str | None = None
    timeout_ms: int | None = None
    polling_interval_ms: int | None = None
    recovery_time_ms: int | None = None
    override_action_drop: bool = False


@dataclass(frozen=True, slots=True)
class EosPfcWatchdog:
    """Resolved PFC watchdog of one port: port timer over global ``default`` timers over unknown."""

    enabled: bool
    action: str
    timeout_ms: int | None
    polling_interval_ms: int | None
    polling_interval_auto: bool
    recovery_time_ms: int | None
    forced: bool


@dataclass(frozen=True, slots=True)
class EosQueue:
    """Resolved unicast egress queue (``tx-queue`` and ``uc-tx-queue`` merged; profile, then interface)."""

    index: int
    ecn_enabled: bool
    min_threshold: EosThreshold | None
    max_threshold: EosThreshold | None
    max_mark_probability: int | None
    weight: int | None
    ecn_count: bool
    bandwidth_percent: int | None
    bandwidth_guaranteed_percent: int | None
    strict: bool
    shape_rate: str | None


@dataclass(frozen=True, slots=True)
class EosInterfaceQos:
    """The QoS an Ethernet or Port-Channel interface ends up with.

    ``pfc_no_drop`` is what is configured ``no-drop``; ``pfc_enabled`` is the same set when PFC is on
    (interface/profile ``on`` and no global ``priority-flow-control all off``), else empty.
    ``assumed`` names the fields that rely, wholly or partly, on the unverified defaults above.
    """

    interface: str
    service_profile: str | None
    routed: bool
    trust: str
    dscp_to_tc: dict[int, int]
    cos_to_tc: dict[int, int]
    tc_to_queue: dict[int, int]
    default_cos: int | None
    default_dscp: int | None
    service_policy: str | None
    pfc_on: bool
    pfc_no_drop: frozenset[int]
    pfc_enabled: frozenset[int]
    pfcwd: EosPfcWatchdog
    queues: dict[int, EosQueue]
    mc_queues: dict[int, EosQueue]
    shape_rate: str | None
    mtu: int
    speed_mbps: int | None
    shutdown: bool
    assumed: frozenset[str]


@dataclass(frozen=True, slots=True)
class EosConfig:
    """A parsed running-config. ``interface_qos`` is derived: build the rest, then call :func:`resolve`."""

    hostname: str | None
    interfaces: dict[str, EosInterface]
    interface_qos: dict[str, EosInterfaceQos] = field(default_factory=dict)
    qos_profiles: dict[str, EosQosProfile] = field(default_factory=dict)
    qos_maps: EosQosMaps = field(default_factory=EosQosMaps)
    qos_rewrite_dscp: bool = False
    ecn_allow_non_ect: bool = False
    pfc_all_off: bool = False
    pfc_watchdog: EosPfcWatchdogGlobal = field(default_factory=EosPfcWatchdogGlobal)
