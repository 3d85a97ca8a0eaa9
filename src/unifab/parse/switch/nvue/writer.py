"""NVUE records back to ``nv config show -o yaml`` text: :func:`dump`, and the small YAML emitter it uses
(keys sorted as NVUE prints them, scalars quoted only where YAML would misread them)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from unifab.errors import UsageError
from unifab.parse._text import natural_key
from unifab.parse.switch.nvue.defaults import (
    _PFC_NONE,
    _PLAIN,
    DEFAULT_PFCWD_POLLING_INTERVAL_MS,
    DEFAULT_PFCWD_ROBUSTNESS,
    DEFAULT_PORT_DEFAULT_SP,
    DEFAULT_PROFILE,
    N_DSCP,
    N_PRIORITIES,
    ROCE_DEFAULTS,
    ROCE_MODES,
    RoceDefaults,
    _Pfc,
)
from unifab.parse.switch.nvue.records import NvueConfig, NvueEcn, NvueInterfaceQos, NvueScheduler

__all__ = ["DUMP_HEADER", "dump"]

DUMP_HEADER = {"nvue-api-version": "nvue_v1", "rev-id": 1.0}


def dump(config: NvueConfig) -> str:
    """``nv config show -o yaml`` that :func:`parse` reads back to ``config``.

    Every profile an interface names is written out in full (maps as the entries that differ from the
    default :func:`parse` would start from), interfaces with equal settings share a range key
    (``swp1-32``). Raises :class:`~unifab.errors.UsageError` when ``config`` cannot be expressed in
    NVUE: two interfaces naming one profile with different contents, different ``tc_to_queue`` maps
    (NVUE has only ``egress-queue-mapping default-global``), or a RoCE mode NVUE does not have.
    """
    if config.roce_enabled and config.roce_mode not in ROCE_DEFAULTS:
        raise UsageError(f"RoCE mode {config.roce_mode!r} is not one of {', '.join(ROCE_MODES)}")
    base = ROCE_DEFAULTS[config.roce_mode] if config.roce_enabled and config.roce_mode else _PLAIN
    qos: dict[str, Any] = {}
    if config.roce_enabled:
        qos["roce"] = {"enable": True, "mode": config.roce_mode}

    mapping: dict[str, tuple[str, dict[int, int], dict[int, int], int]] = {}
    pfc: dict[str, _Pfc] = {}
    ecn: dict[str, dict[int, NvueEcn]] = {}
    sched: dict[str, dict[int, NvueScheduler]] = {}
    queue_maps = {tuple(sorted(i.tc_to_queue.items())) for i in config.interfaces.values()}
    if len(queue_maps) > 1:
        raise UsageError("interfaces differ in tc_to_queue; NVUE has only egress-queue-mapping default-global")
    for i in config.interfaces.values():
        _claim(mapping, i.mapping_profile, (i.trust, i.dscp_to_tc, i.pcp_to_tc, i.port_default_sp), "mapping")
        _claim(pfc, i.pfc_profile, _Pfc(i.pfc_enabled, i.pfc_rx, i.pfc_tx, i.pfc_cable_length_m), "pfc")
        _claim(ecn, i.congestion_control_profile, i.ecn, "congestion-control")
        _claim(sched, i.egress_scheduler_profile, i.schedulers, "egress-scheduler")

    if mapping:
        qos["mapping"] = {
            name: _dump_mapping(value, base if name == DEFAULT_PROFILE else _PLAIN) for name, value in mapping.items()
        }
    if queue_maps:
        diff = {sp: tc for sp, tc in next(iter(queue_maps)) if base.tc_to_queue.get(sp) != tc}
        if diff:
            qos["egress-queue-mapping"] = {
                DEFAULT_PROFILE: {"switch-priority": {str(sp): {"traffic-class": tc} for sp, tc in diff.items()}}
            }
    pfc_out = {name: _dump_pfc(value) for name, value in pfc.items() if value != _PFC_NONE}
    for name, value in pfc.items():
        if value == _PFC_NONE and name != DEFAULT_PROFILE:
            raise UsageError(f"pfc profile {name!r} has no PFC settings; use {DEFAULT_PROFILE}")
        if value == _PFC_NONE and base.pfc != _PFC_NONE:
            raise UsageError(f"RoCE mode {config.roce_mode} configures PFC; an interface without PFC cannot be written")
    if pfc_out:
        qos["pfc"] = pfc_out
    if ecn:
        qos["congestion-control"] = {
            name: {"traffic-class": {str(tc): _dump_ecn(e) for tc, e in value.items()}} for name, value in ecn.items()
        }
    if sched:
        qos["egress-scheduler"] = {
            name: {"traffic-class": {str(tc): _dump_sched(s) for tc, s in value.items()}}
            for name, value in sched.items()
        }
    wd: dict[str, Any] = {}
    if config.pfcwd_polling_interval_ms != DEFAULT_PFCWD_POLLING_INTERVAL_MS:
        wd["polling-interval"] = config.pfcwd_polling_interval_ms
    if config.pfcwd_robustness != DEFAULT_PFCWD_ROBUSTNESS:
        wd["robustness"] = config.pfcwd_robustness
    if wd:
        qos["pfc-watchdog"] = wd

    body: dict[str, Any] = {}
    interfaces = _dump_interfaces(config.interfaces.values())
    if interfaces:
        body["interface"] = interfaces
    if qos:
        body["qos"] = qos
    if config.hostname is not None:
        body["system"] = {"hostname": config.hostname}
    header: dict[str, Any] = dict(DUMP_HEADER)
    if config.version is not None:
        header["version"] = config.version
    lines = ["- header:"]
    _emit(header, 4, lines)
    lines.append("- set:" if body else "- set: {}")
    _emit(body, 4, lines)
    return "\n".join(lines) + "\n"


def _claim(seen: dict[str, Any], name: str, value: Any, kind: str) -> None:
    if name in seen and seen[name] != value:
        raise UsageError(f"interfaces name {kind} profile {name!r} with different settings")
    seen[name] = value


def _dump_mapping(value: tuple[str, dict[int, int], dict[int, int], int], base: RoceDefaults) -> dict[str, Any]:
    trust, dscp, pcp, default_sp = value
    if len(dscp) != N_DSCP or len(pcp) != N_PRIORITIES:
        raise UsageError("dscp_to_tc must map all 64 DSCP values and pcp_to_tc all 8 PCP values")
    out: dict[str, Any] = {"trust": trust}
    dscp_diff = {str(d): {"switch-priority": sp} for d, sp in dscp.items() if base.dscp_to_tc.get(d) != sp}
    pcp_diff = {str(p): {"switch-priority": sp} for p, sp in pcp.items() if base.pcp_to_tc.get(p) != sp}
    if dscp_diff:
        out["dscp"] = dscp_diff
    if pcp_diff:
        out["pcp"] = pcp_diff
    if default_sp != DEFAULT_PORT_DEFAULT_SP:
        out["port-default-sp"] = default_sp
    return out


def _dump_pfc(value: _Pfc) -> dict[str, Any]:
    out: dict[str, Any] = {"switch-priority": {str(sp): {} for sp in sorted(value.priorities)}}
    out["rx"] = "enable" if value.rx else "disable"
    out["tx"] = "enable" if value.tx else "disable"
    if value.cable_m is None:
        raise UsageError("a PFC profile needs a cable length")
    out["cable-length"] = value.cable_m
    return out


def _dump_ecn(e: NvueEcn) -> dict[str, Any]:
    out: dict[str, Any] = {"ecn": "enable" if e.enabled else "disable"}
    if e.red_enabled is not None:
        out["red"] = "enable" if e.red_enabled else "disable"
    for key, value in (("min-threshold", e.min_bytes), ("max-threshold", e.max_bytes), ("probability", e.probability)):
        if value is None:
            raise UsageError(f"ECN {key} is needed to write a congestion-control profile")
        out[key] = value
    return out


def _dump_sched(s: NvueScheduler) -> dict[str, Any]:
    out: dict[str, Any] = {"mode": s.mode}
    if s.bw_percent is not None:
        out["bw-percent"] = s.bw_percent
    return out


def _speed_text(mbps: int | None) -> str:
    if mbps is None:
        return "auto"
    return f"{mbps // 1000}G" if mbps % 1000 == 0 else f"{mbps}M"


def _dump_interfaces(ifaces: Iterable[NvueInterfaceQos]) -> dict[str, Any]:
    bodies: list[tuple[str, dict[str, Any]]] = []
    for i in sorted(ifaces, key=lambda x: natural_key(x.interface)):
        body: dict[str, Any] = {"link": {"mtu": i.mtu, "speed": _speed_text(i.speed_mbps)}}
        qos: dict[str, Any] = {}
        for kind, name in (
            ("mapping", i.mapping_profile),
            ("pfc", i.pfc_profile),
            ("congestion-control", i.congestion_control_profile),
            ("egress-scheduler", i.egress_scheduler_profile),
        ):
            if name != DEFAULT_PROFILE:
                qos[kind] = {"profile": name}
        if i.pfcwd:
            qos["pfc-watchdog"] = {"state": "enabled"}
        if qos:
            body["qos"] = qos
        body["type"] = "swp"
        bodies.append((i.interface, body))
    out: dict[str, Any] = {}
    group: list[tuple[str, int]] = []  # consecutive (prefix, number) sharing one body
    group_body: dict[str, Any] = {}

    def flush() -> None:
        if group:
            prefix, first = group[0]
            last = group[-1][1]
            out[f"{prefix}{first}" if first == last else f"{prefix}{first}-{last}"] = group_body

    for name, body in bodies:
        match = _NUMBERED.fullmatch(name)
        if match is None:
            flush()
            group = []
            out[name] = body
            continue
        prefix, number = match.group(1), int(match.group(2))
        if group and group_body == body and group[-1] == (prefix, number - 1):
            group.append((prefix, number))
            continue
        flush()
        group, group_body = [(prefix, number)], body
    flush()
    return out


_NUMBERED = re.compile(r"([^,\-]*[^,\-\d])(0|[1-9]\d*)")  # swp12 -> ("swp", 12); swp1s0 -> ("swp1s", 0)
_PLAIN_SCALAR = re.compile(r"[A-Za-z][A-Za-z0-9_./-]*")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"})


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    if _PLAIN_SCALAR.fullmatch(text) and text.lower() not in _YAML_WORDS:
        return text
    return "'" + text.replace("'", "''") + "'"


def _key(key: str) -> str:
    if _PLAIN_SCALAR.fullmatch(key) and key.lower() not in _YAML_WORDS:
        return key
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.,/-]*", key) and not key.isdigit() and key.lower() not in _YAML_WORDS:
        return key  # swp1-32, swp1,swp3
    return "'" + key.replace("'", "''") + "'"


def _emit(obj: Mapping[str, Any], indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for key in sorted(obj):  # NVUE prints keys in sorted order
        value = obj[key]
        if isinstance(value, Mapping):
            if value:
                lines.append(f"{pad}{_key(key)}:")
                _emit(value, indent + 2, lines)
            else:
                lines.append(f"{pad}{_key(key)}: {{}}")
        else:
            lines.append(f"{pad}{_key(key)}: {_scalar(value)}")
