"""One switch configuration, any OS, as the vendor-neutral per-port view ``unifab parse`` prints.

The keys are the CLI contract for a port: ``trust``, ``dscp_to_tc``, ``tc_to_pg``, ``tc_to_queue``,
``pfc_enabled``, ``ecn`` (per queue: ``enabled``, ``min_bytes``, ``max_bytes``, ``max_probability``, and
``configured`` when the vendor's unit has no settled byte size), ``schedulers``, ``headroom``,
``cable_length_m``, ``pfcwd``, ``mtu``, ``speed_mbps``. It is the model the checks read, so what
``unifab parse`` shows is exactly what ``unifab check`` judges.
"""

from __future__ import annotations

from dataclasses import dataclass

from unifab.errors import ParseProblems
from unifab.model import Headroom, Port, Switch

__all__ = [
    "EcnView",
    "PfcwdView",
    "PortView",
    "SchedulerView",
    "SwitchView",
    "parse_eos",
    "parse_nvue",
    "parse_sonic",
    "port_view",
    "switch_view",
]


@dataclass(frozen=True, slots=True)
class EcnView:
    enabled: bool
    min_bytes: int | None
    max_bytes: int | None
    max_probability: int | None
    configured: str | None


@dataclass(frozen=True, slots=True)
class SchedulerView:
    type: str | None
    weight: int | None


@dataclass(frozen=True, slots=True)
class PfcwdView:
    priorities: tuple[int, ...]
    action: str | None
    detection_ms: int | None
    restoration_ms: int | None


@dataclass(frozen=True, slots=True)
class PortView:
    mtu: int | None
    speed_mbps: int | None
    fec: str | None
    trust: str | None
    dscp_to_tc: dict[int, int]
    tc_to_pg: dict[int, int]
    tc_to_queue: dict[int, int]
    pfc_enabled: tuple[int, ...]
    ecn: dict[int, EcnView]
    schedulers: dict[int, SchedulerView]
    headroom: dict[int, Headroom]
    cable_length_m: int | None
    pfcwd: PfcwdView | None


@dataclass(frozen=True, slots=True)
class SwitchView:
    name: str
    os: str
    hwsku: str | None
    ports: dict[str, PortView]


def port_view(port: Port) -> PortView:
    q = port.qos
    if q is None:
        return PortView(port.mtu, port.speed_mbps, port.fec, None, {}, {}, {}, (), {}, {}, {}, None, None)
    wd = q.pfcwd
    return PortView(
        mtu=port.mtu,
        speed_mbps=port.speed_mbps,
        fec=port.fec,
        trust=q.trust,
        dscp_to_tc=q.dscp_to_tc,
        tc_to_pg=q.tc_to_pg,
        tc_to_queue=q.tc_to_queue,
        pfc_enabled=tuple(sorted(q.pfc_enabled)),
        ecn={
            i: EcnView(x.ecn_enabled, x.ecn_min_bytes, x.ecn_max_bytes, x.ecn_max_probability, x.ecn_configured)
            for i, x in sorted(q.queues.items())
        },
        schedulers={i: SchedulerView(x.scheduler_type, x.weight) for i, x in sorted(q.queues.items())},
        headroom=q.headroom,
        cable_length_m=q.cable_len_m,
        pfcwd=None
        if wd is None
        else PfcwdView(tuple(sorted(q.pfcwd_priorities)), wd.action, wd.detection_ms, wd.restoration_ms),
    )


def switch_view(switch: Switch) -> SwitchView:
    return SwitchView(switch.name, switch.os, switch.hwsku, {name: port_view(p) for name, p in switch.ports.items()})


def parse_sonic(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> SwitchView:
    """The view of a CONFIG_DB; with ``problems``, bad rows are recorded there and cost only what they touch."""
    from unifab.collect.sonic import switch_from_sonic
    from unifab.parse.switch import sonic_qos

    resolved = sonic_qos.parse(text, source, problems)
    return switch_view(switch_from_sonic(resolved.hostname or "switch", source, resolved))


def parse_eos(text: str, source: str = "<input>") -> SwitchView:
    from unifab.collect.eos import switch_from_eos_config
    from unifab.parse.switch import eos_config

    cfg = eos_config.parse(text, source)
    return switch_view(switch_from_eos_config(cfg.hostname or "switch", source, cfg))


def parse_nvue(text: str, source: str = "<input>") -> SwitchView:
    from unifab.collect.nvue import switch_from_nvue_config
    from unifab.parse.switch import nvue

    cfg = nvue.parse(text, source)
    return switch_view(switch_from_nvue_config(cfg.hostname or "switch", source, cfg))
