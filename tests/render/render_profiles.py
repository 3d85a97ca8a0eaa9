"""Hand-written profiles for the switch renderer tests."""

from __future__ import annotations

import dataclasses

from unifab.profile import EcnQueue, EtsWeight, PortSpec, QosProfile, WatchdogProfile

ROCE = QosProfile(
    name="ROCE",
    roce_dscp=26,
    roce_priority=3,
    lossless_priorities=frozenset({3}),
    roce_queue=3,
    cnp_dscp=48,
    cnp_priority=6,
    cnp_queue=6,
    dscp_to_priority=dict.fromkeys(range(64), 0) | {26: 3, 48: 6},
    priority_to_tc={p: p for p in range(8)},
    ets=(EtsWeight(0, "ets", 50), EtsWeight(3, "ets", 50), EtsWeight(6, "strict", 0)),
    ecn=(EcnQueue(3, 150_000, 1_500_000, 100),),
    dcqcn={},
    host_mtu=9000,
    switch_mtu=9100,
    pfcwd=WatchdogProfile(detection_ms=200, restoration_ms=200, action="drop"),
    cable_length_m=3,
    nccl_ib_tc=106,
)


def with_(profile: QosProfile, **changes: object) -> QosProfile:
    return dataclasses.replace(profile, **changes)  # type: ignore[arg-type]


def mixed_ports(prefix: str, numbers: tuple[int, ...] = (0, 8, 16, 24)) -> list[PortSpec]:
    """Ports at 100G/200G/400G/800G on 1 m, profile default, 30 m and 100 m cables."""
    speeds = (100_000, 200_000, 400_000, 800_000)
    cables = (1, None, 30, 100)
    return [
        PortSpec(f"{prefix}{n}", speed, "host" if i < 2 else "fabric", cable)
        for i, (n, speed, cable) in enumerate(zip(numbers, speeds, cables, strict=True))
    ]
