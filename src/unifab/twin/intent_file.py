"""The intent the twin is built from (``fabric.yaml``) and the profile it resolves to per switch.

The twin's switch writers render each switch's clean configuration from this profile with the same
renderers ``unifab render`` uses, so that a clean twin is exactly what its intent renders; scenarios
then change the rendered configuration where they broke the device.
"""

from __future__ import annotations

import functools
import re

import yaml

from unifab.intent import Device, Intent, parse_intent, resolve
from unifab.profile import PortSpec, QosProfile
from unifab.twin import cluster as c
from unifab.twin.cluster import TwinPort, TwinSwitch
from unifab.twin.hardware import ETS_BW

__all__ = ["intent", "intent_yaml", "port_spec", "switch_profile"]

_RAIL = re.compile(r"-r(\d+)$")


@functools.cache
def intent_yaml() -> str:
    """The intent the twin builds its devices from (``fabric.yaml``): NVIDIA's Spectrum-X preset with the
    twin's own values, so that the clean twin is exactly what its intent asks for."""
    # the NICs' values; imported here because the host writer imports the switch writers, which import this
    from unifab.intent_presets import MLX5_DCQCN

    ets = [
        {"tc": tc, "tsa": "strict"} if tc == c.CNP_PRIO else {"tc": tc, "tsa": "ets", "bw_percent": bw}
        for tc, bw in enumerate(ETS_BW)
    ]
    qos = {
        "roce": {"dscp": c.ROCE_DSCP, "priority": c.ROCE_PRIO},
        "cnp": {"dscp": c.CNP_DSCP, "priority": c.CNP_PRIO},
        "lossless_priorities": [c.ROCE_PRIO],
        "priority_to_tc": {p: p for p in range(8)},
        "ets": ets,
        "ecn": [{"queue": c.ROCE_PRIO, "min_bytes": c.ECN_MIN_BYTES, "max_bytes": c.ECN_MAX_BYTES, "probability": 100}],
        "dcqcn": dict(MLX5_DCQCN),
        "mtu": {"host": c.HOST_MTU, "switch": c.SWITCH_MTU},
        "pfc_watchdog": {"detection_ms": 200, "restoration_ms": 200, "action": "drop"},
        "headroom": {"cable_m": {"host": int(c.HOST_CABLE_M), "fabric": int(c.SPINE_CABLE_M)}},
        "nccl": {"traffic_class": c.ROCE_TCLASS},
    }
    doc = {"version": 1, "preset": "nvidia-spectrum-x", "qos": qos}
    header = "# The QoS intent this fabric was generated from (see docs/intent.md).\n"
    return header + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=120)


@functools.cache
def intent() -> Intent:
    return parse_intent(intent_yaml(), "fabric.yaml")


def switch_profile(switch: TwinSwitch) -> QosProfile:
    """The profile ``unifab render`` resolves for ``switch`` (a leaf serves the rail in its name)."""
    rail = _RAIL.search(switch.name) if switch.role == "leaf" else None
    return _resolve(Device(switch.name, switch.role, rail=int(rail.group(1)) if rail else None, os=switch.os))


@functools.cache
def _resolve(device: Device) -> QosProfile:
    return resolve(intent(), device)


def port_spec(port: TwinPort) -> PortSpec:
    """The port as ``unifab render`` sees it: its speed, what it faces and its cable length (the one the
    switch is configured with when a scenario set one, else the plan's, in whole metres)."""
    role = "fabric" if port.peer_node.startswith(("spine", "leaf")) else "host"
    cable = port.configured_cable_m if port.configured_cable_m is not None else max(1, round(port.cable_m))
    return PortSpec(port.name, port.speed_mbps, role, cable)
