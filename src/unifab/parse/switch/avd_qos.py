"""Arista AVD structured configuration (``eos_cli_config_gen`` input YAML): the QoS data model.

Reads the host_vars YAML AVD renders into an EOS running-config (AVD 4.x/5.x schema): ``qos.map``
(``cos``/``dscp``/``traffic_class`` strings ``"8 9 10 to traffic-class 1 [drop-precedence 2]"``;
``exp`` is not modelled), ``qos.rewrite_dscp``, ``qos.random_detect.ecn.allow_non_ect``,
``priority_flow_control`` (``all_off``, global ``watchdog``), ``qos_profiles`` (trust, default cos/dscp,
``service_policy.type.qos_input``, ``shape.rate``, ``tx_queues``/``uc_tx_queues``/``mc_tx_queues`` with
bandwidth, priority, ``random_detect.ecn`` thresholds/count, and ``priority_flow_control`` with
priorities and watchdog), and the QoS keys of ``ethernet_interfaces``/``port_channel_interfaces``
(``service_profile``, ``qos``, ``service_policy.qos.input``, queues). Other keys are ignored; WRED drop
thresholds (``random_detect.drop``) are not modelled, as in :mod:`unifab.parse.switch.eos_config`.

The records are :mod:`~unifab.parse.switch.eos_config`'s (``EosQosMaps``, ``EosQosProfile``,
``EosQosSettings``, ``EosQueueConfig``, ``EosThreshold``, ``EosPfcWatchdogGlobal``), filled the way
AVD renders the model into CLI, so the data model and the intended config compare field by field.
Times are seconds in the model and milliseconds in the records.

The YAML is loaded with ``yaml.safe_load`` semantics (``CSafeLoader`` when available). Aliases are
expanded within a depth and size budget, so a self-referencing alias or a "billion laughs" document is
a :class:`~unifab.errors.ParseError`, never a hang or ``RecursionError``. Errors name the key path
(``qos_profiles[0].tx_queues[2].id``) or, for YAML syntax, the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from unifab.errors import ParseError, load_yaml
from unifab.parse._json import type_name
from unifab.parse._text import decode_utf8, pasted
from unifab.parse.switch.eos_config import (
    UNIT_BYTES,
    EosPfcWatchdogGlobal,
    EosQosMaps,
    EosQosProfile,
    EosQosSettings,
    EosQueueConfig,
    EosThreshold,
    EosWatchdogTimer,
)

__all__ = ["AvdInterfaceQos", "AvdQos", "parse"]

_MAX_DEPTH = 64
_MAX_NODES = 1_000_000
_MAP = re.compile(
    r"((?:\d+\s+)+)to\s+(traffic-class|cos|dscp|tx-queue|uc-tx-queue)\s+(\d+)(?:\s+drop-precedence\s+(\d+))?"
)
_TRUST = ("dscp", "cos", "disabled")


@dataclass(frozen=True, slots=True)
class AvdInterfaceQos:
    """The QoS keys of one ``ethernet_interfaces``/``port_channel_interfaces`` item."""

    name: str
    service_profile: str | None
    qos: EosQosSettings


@dataclass(frozen=True, slots=True)
class AvdQos:
    qos_maps: EosQosMaps
    qos_rewrite_dscp: bool
    ecn_allow_non_ect: bool
    ecn_allow_non_ect_chip_based: bool
    pfc_all_off: bool
    pfc_watchdog: EosPfcWatchdogGlobal
    qos_profiles: dict[str, EosQosProfile]
    interfaces: dict[str, AvdInterfaceQos]


# --- YAML ---------------------------------------------------------------------------------------


def _load(text: str | bytes, source: str) -> Any:
    text = decode_utf8(text, source)
    if not text.strip():
        raise ParseError(source, "an AVD structured configuration (YAML), got empty input", line=1)
    doc = load_yaml(text, source)  # the safe loader, bounded (YamlError is a ParseError)
    _bounded(doc, source, "", [_MAX_NODES], 0)
    return doc


def _bounded(obj: Any, source: str, path: str, budget: list[int], depth: int) -> None:
    """Walk the document once (aliases expanded) within a depth and node budget."""
    if depth >= _MAX_DEPTH:
        raise ParseError(
            source, f"a document at most {_MAX_DEPTH} levels deep (a recursive YAML alias?)", key=path or None
        )
    if not isinstance(obj, dict | list):
        return
    budget[0] -= len(obj) + 1
    if budget[0] < 0:
        raise ParseError(source, f"a document of at most {_MAX_NODES} entries once YAML aliases are expanded")
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    for key, value in items:
        if isinstance(value, dict | list):
            _bounded(value, source, _join(path, key), budget, depth + 1)


def _join(path: str, key: object) -> str:
    if isinstance(key, int) and not isinstance(key, bool):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


# --- typed readers ------------------------------------------------------------------------------


class _R:
    def __init__(self, source: str) -> None:
        self.source = source

    def err(self, path: str, expected: str) -> ParseError:
        return ParseError(self.source, expected, key=path or "<root>")

    def obj(self, value: Any, path: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.err(path, f"expected an object, got {type_name(value)}")
        for key in value:
            if not isinstance(key, str):
                raise self.err(path, f"expected names as keys, got {key!r}")
        return value

    def items(self, value: Any, path: str) -> list[tuple[str, dict[str, Any]]]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.err(path, f"expected a list, got {type_name(value)}")
        return [(_join(path, i), self.obj(item, _join(path, i))) for i, item in enumerate(value)]

    def num(self, value: Any, path: str, hi: int | None = None) -> int:
        if isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0 or (hi is not None and value > hi):
            limit = f" (0-{hi})" if hi is not None else ""
            raise self.err(path, f"expected a non-negative integer{limit}, got {value!r}")
        return value

    def opt_int(self, obj: dict[str, Any], key: str, path: str, hi: int | None = None) -> int | None:
        return None if obj.get(key) is None else self.num(obj[key], _join(path, key), hi)

    def flag(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.err(path, f"expected true or false, got {type_name(value)}")
        return value

    def opt_bool(self, obj: dict[str, Any], key: str, path: str) -> bool | None:
        return None if obj.get(key) is None else self.flag(obj[key], _join(path, key))

    def text(self, value: Any, path: str) -> str:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.err(path, f"expected a string, got {type_name(value)}")
        return str(value)

    def opt_str(self, obj: dict[str, Any], key: str, path: str) -> str | None:
        return None if obj.get(key) is None else self.text(obj[key], _join(path, key))

    def ms(self, obj: dict[str, Any], key: str, path: str) -> int | None:
        """Seconds (``"0.05"``, ``1.22``) -> milliseconds."""
        if obj.get(key) is None:
            return None
        value = obj[key]
        kpath = _join(path, key)
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.err(kpath, f"expected seconds, got {type_name(value)}")
        try:
            ms = Decimal(str(value).strip()) * 1000
        except InvalidOperation:
            raise self.err(kpath, f"expected seconds, got {value!r}") from None
        if not ms.is_finite() or ms < 0 or ms != ms.to_integral_value():
            raise self.err(kpath, f"expected seconds with at most millisecond precision, got {value!r}")
        return int(ms)


# --- model --------------------------------------------------------------------------------------


def _maps(r: _R, qos: dict[str, Any]) -> EosQosMaps:
    maps = r.obj(qos.get("map"), "qos.map")
    dscp_to_tc: dict[int, int] = {}
    dscp_dp: dict[int, int] = {}
    cos_to_tc: dict[int, int] = {}
    tc_to: dict[str, dict[int, int]] = {"tx-queue": {}, "uc-tx-queue": {}, "dscp": {}, "cos": {}}
    for key, hi in (("dscp", 63), ("cos", 7), ("traffic_class", 7)):
        raw = maps.get(key)
        if raw is None:
            continue
        path = f"qos.map.{key}"
        if not isinstance(raw, list):
            raise r.err(path, f"expected a list of 'VALUES to ...' strings, got {type_name(raw)}")
        for i, entry in enumerate(raw):
            ipath = _join(path, i)
            m = _MAP.fullmatch(entry.strip()) if isinstance(entry, str) else None
            if m is None or (key != "traffic_class") != (m.group(2) == "traffic-class"):
                target = "traffic-class N" if key != "traffic_class" else "cos|dscp|tx-queue|uc-tx-queue N"
                raise r.err(ipath, f"expected 'VALUES to {target}', got {entry!r}")
            values = [int(v) for v in m.group(1).split()]
            target_value = int(m.group(3))
            if any(v > hi for v in values) or target_value > (63 if m.group(2) == "dscp" else 7):
                raise r.err(ipath, f"expected values 0-{hi} and a target in range, got {entry!r}")
            for v in values:
                if key == "dscp":
                    dscp_to_tc[v] = target_value
                    if m.group(4) is not None:
                        dscp_dp[v] = int(m.group(4))
                elif key == "cos":
                    cos_to_tc[v] = target_value
                else:
                    tc_to[m.group(2)][v] = target_value
    tc_to_queue = dict(tc_to["tx-queue"]) | tc_to["uc-tx-queue"]
    return EosQosMaps(
        dscp_to_tc=dict(sorted(dscp_to_tc.items())),
        dscp_drop_precedence=dict(sorted(dscp_dp.items())),
        cos_to_tc=dict(sorted(cos_to_tc.items())),
        tc_to_queue=dict(sorted(tc_to_queue.items())),
        tc_to_dscp=dict(sorted(tc_to["dscp"].items())),
        tc_to_cos=dict(sorted(tc_to["cos"].items())),
    )


def _threshold(r: _R, value: int, unit: str, path: str) -> EosThreshold:
    if unit not in UNIT_BYTES:
        raise r.err(path, f"expected a unit of {', '.join(UNIT_BYTES)}, got {unit!r}")
    per = UNIT_BYTES[unit]
    return EosThreshold(value=value, unit=unit, bytes=value * per if per is not None else None)


def _queue(r: _R, q: dict[str, Any], path: str) -> EosQueueConfig:
    if q.get("id") is None:
        raise r.err(path, "expected an 'id'")
    index = r.num(q["id"], _join(path, "id"), 7)
    strict: bool | None = None
    priority = r.opt_str(q, "priority", path)
    if priority is not None:
        if priority not in ("priority strict", "no priority"):
            raise r.err(_join(path, "priority"), f"expected 'priority strict' or 'no priority', got {priority!r}")
        strict = priority == "priority strict"
    shape = r.obj(q.get("shape"), _join(path, "shape"))
    rd = r.obj(q.get("random_detect"), _join(path, "random_detect"))
    ecn = r.obj(rd.get("ecn"), _join(path, "random_detect.ecn"))
    epath = _join(path, "random_detect.ecn")
    th = r.obj(ecn.get("threshold"), _join(epath, "threshold"))
    tpath = _join(epath, "threshold")
    lo = hi = None
    if th:
        unit = r.text(th.get("units", "bytes"), _join(tpath, "units"))
        if th.get("min") is None or th.get("max") is None:
            raise r.err(tpath, "expected 'min' and 'max'")
        lo = _threshold(r, r.num(th["min"], _join(tpath, "min")), unit, _join(tpath, "units"))
        hi = _threshold(r, r.num(th["max"], _join(tpath, "max")), unit, _join(tpath, "units"))
    count = r.opt_bool(ecn, "count", epath)
    return EosQueueConfig(
        index=index,
        strict=strict,
        bandwidth_percent=r.opt_int(q, "bandwidth_percent", path, 100),
        bandwidth_guaranteed_percent=r.opt_int(q, "bandwidth_guaranteed_percent", path, 100),
        shape_rate=r.opt_str(shape, "rate", _join(path, "shape")),
        ecn=True if th else None,
        min_threshold=lo,
        max_threshold=hi,
        max_mark_probability=r.opt_int(th, "max_probability", tpath, 100),
        weight=r.opt_int(th, "weight", tpath),
        ecn_count=True if count else None,
    )


def _queues(r: _R, value: Any, path: str) -> dict[int, EosQueueConfig]:
    out = {}
    for qpath, q in r.items(value, path):
        queue = _queue(r, q, qpath)
        out[queue.index] = queue
    return dict(sorted(out.items()))


def _settings(r: _R, obj: dict[str, Any], path: str, *, interface: bool) -> EosQosSettings:
    if interface:
        qos = r.obj(obj.get("qos"), _join(path, "qos"))
        qpath = _join(path, "qos")
        policy = r.obj(
            r.obj(obj.get("service_policy"), _join(path, "service_policy")).get("qos"),
            _join(path, "service_policy.qos"),
        )
        service_policy = r.opt_str(policy, "input", _join(path, "service_policy.qos"))
    else:
        qos, qpath = obj, path
        ptype = r.obj(
            r.obj(obj.get("service_policy"), _join(path, "service_policy")).get("type"),
            _join(path, "service_policy.type"),
        )
        service_policy = r.opt_str(ptype, "qos_input", _join(path, "service_policy.type"))
    trust = r.opt_str(qos, "trust", qpath)
    if trust is not None and trust not in _TRUST:
        raise r.err(_join(qpath, "trust"), f"expected dscp, cos or disabled, got {trust!r}")
    pfc = r.obj(obj.get("priority_flow_control"), _join(path, "priority_flow_control"))
    ppath = _join(path, "priority_flow_control")
    priorities: dict[int, bool] = {}
    for ipath, item in r.items(pfc.get("priorities"), _join(ppath, "priorities")):
        if item.get("priority") is None:
            raise r.err(ipath, "expected a 'priority'")
        priorities[r.num(item["priority"], _join(ipath, "priority"), 7)] = bool(r.opt_bool(item, "no_drop", ipath))
    wd = r.obj(pfc.get("watchdog"), _join(ppath, "watchdog"))
    wpath = _join(ppath, "watchdog")
    timer_obj = r.obj(wd.get("timer"), _join(wpath, "timer"))
    tpath = _join(wpath, "timer")
    timer = None
    if timer_obj:
        auto = timer_obj.get("polling_interval") == "auto"
        timer = EosWatchdogTimer(
            timeout_ms=r.ms(timer_obj, "timeout", tpath),
            polling_interval_ms=None if auto else r.ms(timer_obj, "polling_interval", tpath),
            polling_auto=auto,
            recovery_time_ms=r.ms(timer_obj, "recovery_time", tpath),
            forced=bool(r.opt_bool(timer_obj, "forced", tpath)),
        )
    shape = r.obj(obj.get("shape"), _join(path, "shape"))
    return EosQosSettings(
        trust=trust,
        default_cos=r.opt_int(qos, "cos", qpath, 7),
        default_dscp=r.opt_int(qos, "dscp", qpath, 63),
        service_policy=service_policy,
        shape_rate=r.opt_str(shape, "rate", _join(path, "shape")),
        pfc_on=r.opt_bool(pfc, "enabled", ppath),
        pfc_priorities=dict(sorted(priorities.items())),
        pfcwd_enabled=r.opt_bool(wd, "enabled", wpath),
        pfcwd_action=r.opt_str(wd, "action", wpath),
        pfcwd_timer=timer,
        tx_queues=_queues(r, obj.get("tx_queues"), _join(path, "tx_queues")),
        uc_tx_queues=_queues(r, obj.get("uc_tx_queues"), _join(path, "uc_tx_queues")),
        mc_tx_queues=_queues(r, obj.get("mc_tx_queues"), _join(path, "mc_tx_queues")),
    )


@pasted
def parse(text: str | bytes, source: str = "<input>") -> AvdQos:
    """Read AVD structured-configuration YAML into the QoS model."""
    r = _R(source)
    doc = r.obj(_load(text, source), "")
    qos = r.obj(doc.get("qos"), "qos")
    rd = r.obj(r.obj(qos.get("random_detect"), "qos.random_detect").get("ecn"), "qos.random_detect.ecn")
    non_ect = r.obj(rd.get("allow_non_ect"), "qos.random_detect.ecn.allow_non_ect")
    npath = "qos.random_detect.ecn.allow_non_ect"
    pfc = r.obj(doc.get("priority_flow_control"), "priority_flow_control")
    wd = r.obj(pfc.get("watchdog"), "priority_flow_control.watchdog")
    wpath = "priority_flow_control.watchdog"
    profiles: dict[str, EosQosProfile] = {}
    for ppath, item in r.items(doc.get("qos_profiles"), "qos_profiles"):
        name = r.opt_str(item, "name", ppath)
        if name is None:
            raise r.err(ppath, "expected a 'name'")
        profiles[name] = EosQosProfile(name=name, qos=_settings(r, item, ppath, interface=False))
    interfaces: dict[str, AvdInterfaceQos] = {}
    for list_key in ("ethernet_interfaces", "port_channel_interfaces"):
        for ipath, item in r.items(doc.get(list_key), list_key):
            name = r.opt_str(item, "name", ipath)
            if name is None:
                raise r.err(ipath, "expected a 'name'")
            interfaces[name] = AvdInterfaceQos(
                name=name,
                service_profile=r.opt_str(item, "service_profile", ipath),
                qos=_settings(r, item, ipath, interface=True),
            )
    return AvdQos(
        qos_maps=_maps(r, qos),
        qos_rewrite_dscp=bool(r.opt_bool(qos, "rewrite_dscp", "qos")),
        ecn_allow_non_ect=bool(r.opt_bool(non_ect, "enabled", npath)),
        ecn_allow_non_ect_chip_based=bool(r.opt_bool(non_ect, "chip_based", npath)),
        pfc_all_off=bool(r.opt_bool(pfc, "all_off", "priority_flow_control")),
        pfc_watchdog=EosPfcWatchdogGlobal(
            action=r.opt_str(wd, "action", wpath),
            timeout_ms=r.ms(wd, "timeout", wpath),
            polling_interval_ms=r.ms(wd, "polling_interval", wpath),
            recovery_time_ms=r.ms(wd, "recovery_time", wpath),
            override_action_drop=bool(r.opt_bool(wd, "override_action_drop", wpath)),
        ),
        qos_profiles=dict(sorted(profiles.items())),
        interfaces=interfaces,
    )
