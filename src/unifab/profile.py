"""One device's resolved QoS intent: the values both ends of every RoCE link must agree on.

:mod:`unifab.intent` validates ``fabric.yaml`` (presets, group overrides) and resolves it, per device,
into a :class:`QosProfile`; every renderer (NIC mlx5/bnxt scripts, SONiC CONFIG_DB, EOS, NVUE, NCCL
environment) takes one and writes it in its device's language. Keeping this record free of any
vendor's vocabulary is what lets one intent configure both sides so that they agree by construction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["EcnQueue", "EtsWeight", "PortSpec", "QosProfile", "WatchdogProfile"]


@dataclass(frozen=True, slots=True)
class EtsWeight:
    """Transmit scheduling of one traffic class (NIC ETS, switch egress queue scheduler)."""

    tc: int
    tsa: str  # "ets" (weighted: DWRR on switches) | "strict"
    bw_percent: int  # share among the "ets" classes; 0 for strict classes


@dataclass(frozen=True, slots=True)
class EcnQueue:
    """ECN marking (WRED with ECN, no early drop) on one egress queue; thresholds in bytes."""

    queue: int
    min_bytes: int
    max_bytes: int
    max_probability: int  # percent


@dataclass(frozen=True, slots=True)
class WatchdogProfile:
    detection_ms: int
    restoration_ms: int
    action: str  # "drop" | "forward" | "alert"


@dataclass(frozen=True, slots=True)
class QosProfile:
    """The QoS a device must run, in vendor-neutral terms.

    Priorities are 802.1p priorities (what PFC pauses); on switches a priority maps to the traffic
    class/queue of the same number unless ``priority_to_tc`` says otherwise.
    """

    name: str  # the profile's name; switches use it for map and profile names (SONiC "ROCE")
    roce_dscp: int
    roce_priority: int
    lossless_priorities: frozenset[int]
    roce_queue: int  # traffic class / egress queue RoCE data uses on switches (and NIC TC)
    cnp_dscp: int
    cnp_priority: int
    cnp_queue: int
    dscp_to_priority: Mapping[int, int]  # all 64 DSCPs
    priority_to_tc: Mapping[int, int]  # all 8 priorities
    ets: tuple[EtsWeight, ...]
    ecn: tuple[EcnQueue, ...]
    dcqcn: Mapping[str, int]  # DCQCN parameters by MLNX_OFED ecn/ sysfs name (rpg_*, min_time_between_cnps, ...)
    host_mtu: int
    switch_mtu: int
    pfcwd: WatchdogProfile | None
    cable_length_m: int  # default cable length for headroom where no link class or per-link length applies
    nccl_ib_tc: int  # the traffic class (TOS byte) jobs set as NCCL_IB_TC
    port_cable_m: Mapping[str, int] = field(default_factory=dict)  # per-port (switch) / per-netdev (host) lengths
    dcbx: str = "os"  # who runs the NICs' DCBX: "os" (host settings stand, mlnx_qos -d os) | "fw" (the switch's TLVs)
    # the end-to-end congestion control the fabric runs: "dcqcn" (switch ECN marks, NIC CNPs and rate limiting),
    # "spectrum-x" (NVIDIA Spectrum-X programmable CC on the SuperNICs: DCQCN and ECN settings are not its
    # controls) | "none" (PFC alone)
    congestion_control: str = "dcqcn"

    @property
    def roce_tclass(self) -> int:
        """The TOS byte of RoCE data: DSCP in the upper six bits, ECT(0) in the ECN bits."""
        return (self.roce_dscp << 2) | 0b10

    def cable_m(self, port: str) -> int:
        return self.port_cable_m.get(port, self.cable_length_m)


@dataclass(frozen=True, slots=True)
class PortSpec:
    """A switch port the renderer configures: name, speed and what it faces."""

    name: str
    speed_mbps: int
    role: str  # "host" (downlink to a NIC) | "fabric" (leaf-spine link)
    cable_m: int | None = None  # overrides the profile's length for this port
