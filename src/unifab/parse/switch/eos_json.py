"""Arista EOS eAPI JSON outputs (``| json`` or ``runCmds`` with ``"format": "json"``), EOS 4.2x.

Commands read, recognised by the shape of the reply:

====================================================  ===============================================
command                                               shape
====================================================  ===============================================
``show interfaces``                                   ``interfaces.<if>.{mtu, bandwidth, ...}``
``show lldp neighbors detail``                        ``lldpNeighbors.<if>.lldpNeighborInfo[]``
``show priority-flow-control counters`` (rev 3)       ``interfaceCounters.<if>.{rxFrames, txFrames}``
``show priority-flow-control counters detail``        ``interfaces.<if>.priorities.<n>.{rxFrames, txFrames}``
``show qos interfaces ecn counters queue``            ``intfQueueCounters.<if>.queueCounters.<q>``
``show interfaces counters queue detail``             ``egressQueueCounters.interfaces.<if>...``
``show version``                                      ``{modelName, version, internalVersion, ...}``
====================================================  ===============================================

The ``counters detail`` shape is inferred from code that reads it (no captured sample exists; reference
§2.3). Each reader accepts a bare eAPI ``result[i]`` object or a whole JSON-RPC response
(``{"jsonrpc": "2.0", "result": [...]}``; the first result is read). Empty strings (EOS prints ``""``
for an unset description or serial number) are read as ``None``. LLDP ``interfaceId`` values of type
``interfaceName``/``local`` come quoted (``"\\"Ethernet1\\""``); the quotes are removed.

:func:`parse_suzieq_gather` reads a SuzieQ ``sq-poller --run-once gather`` file (concatenated JSON
lists of ``{hostname, devtype, cmd, status, data, ...}`` records) and feeds each EOS host's
``show interfaces``, ``show lldp neighbors detail`` and ``show version`` replies to the readers here.

Bad input raises :class:`~unifab.errors.ParseError` whose ``key`` is the JSON path of the bad value.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from unifab.errors import ParseError

__all__ = [
    "COMMANDS",
    "EosEcnCounters",
    "EosEcnQueueCounters",
    "EosInterfaceQueueCounters",
    "EosInterfaceStatus",
    "EosInterfaces",
    "EosJson",
    "EosLldpNeighbor",
    "EosLldpNeighbors",
    "EosPfcCounters",
    "EosPfcInterfaceCounters",
    "EosQueueCounters",
    "EosQueueDropCounter",
    "EosVersion",
    "SuzieqEosHost",
    "SuzieqGather",
    "detect",
    "ecn_counters_from",
    "interfaces_from",
    "lldp_neighbors_from",
    "merge_gathers",
    "parse",
    "parse_ecn_counters",
    "parse_lldp_neighbors_detail",
    "parse_pfc_counters",
    "parse_queue_counters_detail",
    "parse_show_interfaces",
    "parse_show_version",
    "parse_suzieq_gather",
    "pfc_counters_from",
    "queue_counters_from",
    "version_from",
]

SHOW_INTERFACES = "show interfaces"
SHOW_LLDP_DETAIL = "show lldp neighbors detail"
SHOW_PFC_COUNTERS = "show priority-flow-control counters"
SHOW_PFC_COUNTERS_DETAIL = "show priority-flow-control counters detail"
SHOW_ECN_COUNTERS = "show qos interfaces ecn counters queue"
SHOW_QUEUE_DETAIL = "show interfaces counters queue detail"
SHOW_VERSION = "show version"
SUZIEQ_GATHER = "suzieq gather"
COMMANDS = (
    SHOW_INTERFACES,
    SHOW_LLDP_DETAIL,
    SHOW_PFC_COUNTERS,
    SHOW_PFC_COUNTERS_DETAIL,
    SHOW_ECN_COUNTERS,
    SHOW_QUEUE_DETAIL,
    SHOW_VERSION,
)
QUEUE_TYPES = {"ucastQueues": "unicast", "mcastQueues": "multicast"}
# interfaceCounters sub-objects flattened into EosInterfaceStatus.counters (their keys do not clash)
_COUNTER_DETAILS = ("inputErrorsDetail", "outputErrorsDetail")


# --- records -------------------------------------------------------------------------------------


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


# --- JSON helpers --------------------------------------------------------------------------------


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _obj(value: object, path: str, source: str, what: str = "an object") -> dict[str, object]:
    if not isinstance(value, dict):
        raise ParseError(source, f"{what}, got {_kind(value)}", key=path or "<root>")
    return value


def _list(value: object, path: str, source: str) -> list[object]:
    if not isinstance(value, list):
        raise ParseError(source, f"a list, got {_kind(value)}", key=path)
    return value


def _opt_str(obj: dict[str, object], key: str, path: str, source: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ParseError(source, f"a string, got {_kind(value)}", key=_child(path, key))
    return value or None


def _int(value: object, path: str, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
            return int(value)
        raise ParseError(source, f"an integer, got {_kind(value)}", key=path)
    return value


def _opt_int(obj: dict[str, object], key: str, path: str, source: str) -> int | None:
    value = obj.get(key)
    return None if value is None else _int(value, _child(path, key), source)


def _opt_float(obj: dict[str, object], key: str, path: str, source: str) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParseError(source, f"a number, got {_kind(value)}", key=_child(path, key))
    return float(value)


def _numbered(key: str, prefix: str, path: str, source: str) -> int:
    """``"TC3"`` -> 3 (``prefix="TC"``); ``"3"`` -> 3 (``prefix=""``)."""
    digits = key[len(prefix) :] if key.startswith(prefix) else ""
    if not (digits.isdigit() and digits.isascii() and len(digits) <= 6):
        raise ParseError(source, f"a key such as '{prefix}0', got {key!r}", key=_child(path, key))
    return int(digits)


def _load(text: str | bytes, source: str) -> object:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ParseError(source, f"a JSON document ({exc.msg})", line=exc.lineno) from None


def _result(doc: object, source: str) -> tuple[dict[str, object], str]:
    """A bare eAPI result, or the first result of a JSON-RPC response, and its key path."""
    root = _obj(doc, "", source, "a JSON object (an eAPI result or JSON-RPC response)")
    if "jsonrpc" not in root:
        return root, ""
    error = root.get("error")
    if error is not None:
        err = error if isinstance(error, dict) else {}
        raise ParseError(
            source,
            f"a JSON-RPC result, got error {err.get('code')!r}: {err.get('message')!r}",
            key="error",
        )
    results = _list(root.get("result"), "result", source)
    if not results:
        raise ParseError(source, "at least one result", key="result")
    return _obj(results[0], "result[0]", source), "result[0]"


def _member(obj: dict[str, object], key: str, path: str, source: str, command: str) -> dict[str, object]:
    if key not in obj:
        raise ParseError(source, f"'{key}' (the {command!r} reply)", key=path or "<root>")
    return _obj(obj[key], _child(path, key), source)


# --- show interfaces -----------------------------------------------------------------------------


def _ipv4(addresses: object, path: str, source: str) -> tuple[str, ...]:
    if addresses is None:
        return ()
    out: list[str] = []
    for i, entry in enumerate(_list(addresses, path, source)):
        ep = _child(path, i)
        primary = _obj(entry, ep, source).get("primaryIp")
        if primary is None:
            continue
        pp = _child(ep, "primaryIp")
        p = _obj(primary, pp, source)
        address = _opt_str(p, "address", pp, source)
        mask = _opt_int(p, "maskLen", pp, source)
        if address and address != "0.0.0.0" and mask is not None:
            out.append(f"{address}/{mask}")
    return tuple(out)


def _interface(name: str, value: object, path: str, source: str) -> EosInterfaceStatus:
    e = _obj(value, path, source)
    counters: dict[str, int] = {}
    raw_counters = e.get("interfaceCounters")
    if raw_counters is not None:
        cp = _child(path, "interfaceCounters")
        c = _obj(raw_counters, cp, source)
        for key, v in c.items():
            if key in _COUNTER_DETAILS:
                dp = _child(cp, key)
                for dk, dv in _obj(v, dp, source).items():
                    if isinstance(dv, int) and not isinstance(dv, bool):
                        counters[dk] = dv
            elif isinstance(v, int) and not isinstance(v, bool):
                counters[key] = v
    bandwidth = _opt_int(e, "bandwidth", path, source)
    speed = bandwidth // 10**6 if bandwidth and bandwidth > 0 and bandwidth % 10**6 == 0 else None
    membership = _opt_str(e, "interfaceMembership", path, source)
    members = e.get("memberInterfaces")
    return EosInterfaceStatus(
        name=name,
        description=_opt_str(e, "description", path, source),
        mtu=_opt_int(e, "mtu", path, source),
        bandwidth_bps=bandwidth,
        speed_mbps=speed,
        line_protocol_status=_opt_str(e, "lineProtocolStatus", path, source),
        interface_status=_opt_str(e, "interfaceStatus", path, source),
        hardware=_opt_str(e, "hardware", path, source),
        forwarding_model=_opt_str(e, "forwardingModel", path, source),
        duplex=_opt_str(e, "duplex", path, source),
        physical_address=_opt_str(e, "physicalAddress", path, source),
        burned_in_address=_opt_str(e, "burnedInAddress", path, source),
        member_of=membership.removeprefix("Member of ").strip() or None if membership else None,
        members=tuple(_obj(members, _child(path, "memberInterfaces"), source)) if members is not None else (),
        ipv4_addresses=_ipv4(e.get("interfaceAddress"), _child(path, "interfaceAddress"), source),
        rx_pause=counters.get("rxPause"),
        tx_pause=counters.get("txPause"),
        counters=counters,
    )


def interfaces_from(obj: object, source: str = "<input>", path: str = "") -> EosInterfaces:
    """Read a decoded ``show interfaces`` reply."""
    root = _obj(obj, path, source)
    body = _member(root, "interfaces", path, source, SHOW_INTERFACES)
    ip = _child(path, "interfaces")
    return EosInterfaces({name: _interface(name, v, _child(ip, name), source) for name, v in body.items()})


# --- show lldp neighbors detail ------------------------------------------------------------------


def _port_id(value: str | None) -> str | None:
    if value and len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1] or None
    return value


def _neighbor(local: str, value: object, path: str, source: str) -> EosLldpNeighbor:
    n = _obj(value, path, source)
    info_raw = n.get("neighborInterfaceInfo")
    ip = _child(path, "neighborInterfaceInfo")
    info = _obj(info_raw, ip, source) if info_raw is not None else {}
    mgmt: list[str] = []
    raw_mgmt = n.get("managementAddresses")
    if raw_mgmt is not None:
        mp = _child(path, "managementAddresses")
        for i, m in enumerate(_list(raw_mgmt, mp, source)):
            address = _opt_str(_obj(m, _child(mp, i), source), "address", _child(mp, i), source)
            if address:
                mgmt.append(address)
    caps: list[str] = []
    raw_caps = n.get("systemCapabilities")
    if raw_caps is not None:
        cp = _child(path, "systemCapabilities")
        for cap, enabled in _obj(raw_caps, cp, source).items():
            if not isinstance(enabled, bool):
                raise ParseError(source, f"a boolean, got {_kind(enabled)}", key=_child(cp, cap))
            if enabled:
                caps.append(cap)
    return EosLldpNeighbor(
        local_interface=local,
        chassis_id=_opt_str(n, "chassisId", path, source),
        chassis_id_type=_opt_str(n, "chassisIdType", path, source),
        system_name=_opt_str(n, "systemName", path, source),
        system_description=_opt_str(n, "systemDescription", path, source),
        port_id=_port_id(_opt_str(info, "interfaceId", ip, source)),
        port_id_type=_opt_str(info, "interfaceIdType", ip, source),
        port_description=_opt_str(info, "interfaceDescription", ip, source),
        max_frame_size=_opt_int(info, "maxFrameSize", ip, source),
        management_addresses=tuple(mgmt),
        capabilities=tuple(sorted(caps)),
        ttl=_opt_int(n, "ttl", path, source),
    )


def lldp_neighbors_from(obj: object, source: str = "<input>", path: str = "") -> EosLldpNeighbors:
    """Read a decoded ``show lldp neighbors detail`` reply."""
    root = _obj(obj, path, source)
    body = _member(root, "lldpNeighbors", path, source, SHOW_LLDP_DETAIL)
    lp = _child(path, "lldpNeighbors")
    out: dict[str, tuple[EosLldpNeighbor, ...]] = {}
    for local, value in body.items():
        p = _child(lp, local)
        entry = _obj(value, p, source)
        infos = entry.get("lldpNeighborInfo", [])
        ip = _child(p, "lldpNeighborInfo")
        out[local] = tuple(_neighbor(local, v, _child(ip, i), source) for i, v in enumerate(_list(infos, ip, source)))
    return EosLldpNeighbors(out)


# --- PFC, ECN and queue counters -----------------------------------------------------------------


def _pfc_detail(name: str, e: dict[str, object], path: str, source: str) -> EosPfcInterfaceCounters:
    rx: dict[int, int] = {}
    tx: dict[int, int] = {}
    pp = _child(path, "priorities")
    for key, value in _obj(e.get("priorities"), pp, source).items():
        prio = _numbered(key, "", pp, source)
        p = _obj(value, _child(pp, key), source)
        r = _opt_int(p, "rxFrames", _child(pp, key), source)
        t = _opt_int(p, "txFrames", _child(pp, key), source)
        if r is not None:
            rx[prio] = r
        if t is not None:
            tx[prio] = t
    return EosPfcInterfaceCounters(
        interface=name,
        rx_frames=_opt_int(e, "rxFrames", path, source),
        tx_frames=_opt_int(e, "txFrames", path, source),
        rx_frames_by_priority=dict(sorted(rx.items())),
        tx_frames_by_priority=dict(sorted(tx.items())),
    )


def pfc_counters_from(obj: object, source: str = "<input>", path: str = "") -> EosPfcCounters:
    """Read ``show priority-flow-control counters`` (totals) or ``... counters detail`` (per priority)."""
    root = _obj(obj, path, source)
    detail = "interfaceCounters" not in root
    key = "interfaces" if detail else "interfaceCounters"
    command = SHOW_PFC_COUNTERS_DETAIL if detail else SHOW_PFC_COUNTERS
    body = _member(root, key, path, source, command)
    bp = _child(path, key)
    out: dict[str, EosPfcInterfaceCounters] = {}
    for name, value in body.items():
        p = _child(bp, name)
        e = _obj(value, p, source)
        if detail:
            out[name] = _pfc_detail(name, e, p, source)
        else:
            out[name] = EosPfcInterfaceCounters(
                interface=name,
                rx_frames=_opt_int(e, "rxFrames", p, source),
                tx_frames=_opt_int(e, "txFrames", p, source),
                rx_frames_by_priority={},
                tx_frames_by_priority={},
            )
    return EosPfcCounters(detail=detail, interfaces=out)


def _ecn_count(value: object, path: str, source: str) -> int | None:
    if value == "-":
        return None
    if isinstance(value, str):
        if value.isdigit() and value.isascii() and len(value) <= 20:
            return int(value)
        raise ParseError(source, f"a count or '-', got {value!r}", key=path)
    return _int(value, path, source)


def ecn_counters_from(obj: object, source: str = "<input>", path: str = "") -> EosEcnCounters:
    """Read a decoded ``show qos interfaces ecn counters queue`` reply."""
    root = _obj(obj, path, source)
    body = _member(root, "intfQueueCounters", path, source, SHOW_ECN_COUNTERS)
    bp = _child(path, "intfQueueCounters")
    out: dict[str, EosEcnQueueCounters] = {}
    for name, value in body.items():
        p = _child(bp, name)
        qp = _child(p, "queueCounters")
        queues = _obj(_obj(value, p, source).get("queueCounters", {}), qp, source)
        counts = {_numbered(q, "", qp, source): _ecn_count(v, _child(qp, q), source) for q, v in queues.items()}
        out[name] = EosEcnQueueCounters(name, dict(sorted(counts.items())))
    return EosEcnCounters(out)


def _queue_interface(name: str, value: object, path: str, source: str) -> EosInterfaceQueueCounters:
    e = _obj(value, path, source)
    entries: list[EosQueueDropCounter] = []
    dropped: dict[str, dict[int, int]] = {"unicast": {}, "multicast": {}}
    for raw_type, queue_type in QUEUE_TYPES.items():
        if raw_type not in e:
            continue
        qp = _child(path, raw_type)
        tcs_path = _child(qp, "trafficClasses")
        tcs = _obj(_obj(e[raw_type], qp, source).get("trafficClasses", {}), tcs_path, source)
        for tc_key, tc_value in tcs.items():
            tc = _numbered(tc_key, "TC", tcs_path, source)
            tp = _child(tcs_path, tc_key)
            dps_path = _child(tp, "dropPrecedences")
            dps = _obj(_obj(tc_value, tp, source).get("dropPrecedences", {}), dps_path, source)
            for dp_key, dp_value in dps.items():
                dp = _numbered(dp_key, "DP", dps_path, source)
                dpp = _child(dps_path, dp_key)
                d = _obj(dp_value, dpp, source)
                counters = {k: v for k, v in d.items() if isinstance(v, int) and not isinstance(v, bool)}
                packets = _opt_int(d, "droppedPackets", dpp, source)
                entries.append(EosQueueDropCounter(queue_type, tc, dp, packets, counters))
                if packets is not None:
                    bucket = dropped[queue_type]
                    bucket[tc] = bucket.get(tc, 0) + packets
    entries.sort(key=lambda x: (x.queue_type != "unicast", x.traffic_class, x.drop_precedence))
    return EosInterfaceQueueCounters(
        interface=name,
        entries=tuple(entries),
        unicast_dropped=dict(sorted(dropped["unicast"].items())),
        multicast_dropped=dict(sorted(dropped["multicast"].items())),
    )


def queue_counters_from(obj: object, source: str = "<input>", path: str = "") -> EosQueueCounters:
    """Read a decoded ``show interfaces counters queue detail`` reply."""
    root = _obj(obj, path, source)
    egress = _member(root, "egressQueueCounters", path, source, SHOW_QUEUE_DETAIL)
    ep = _child(path, "egressQueueCounters")
    body = _member(egress, "interfaces", ep, source, SHOW_QUEUE_DETAIL)
    bp = _child(ep, "interfaces")
    return EosQueueCounters({name: _queue_interface(name, v, _child(bp, name), source) for name, v in body.items()})


# --- show version --------------------------------------------------------------------------------


def version_from(obj: object, source: str = "<input>", path: str = "") -> EosVersion:
    """Read a decoded ``show version`` reply."""
    v = _obj(obj, path, source)
    if "modelName" not in v and "version" not in v:
        raise ParseError(source, f"'modelName' and 'version' (the {SHOW_VERSION!r} reply)", key=path or "<root>")
    return EosVersion(
        model_name=_opt_str(v, "modelName", path, source),
        version=_opt_str(v, "version", path, source),
        internal_version=_opt_str(v, "internalVersion", path, source),
        serial_number=_opt_str(v, "serialNumber", path, source),
        system_mac_address=_opt_str(v, "systemMacAddress", path, source),
        hardware_revision=_opt_str(v, "hardwareRevision", path, source),
        architecture=_opt_str(v, "architecture", path, source),
        mfg_name=_opt_str(v, "mfgName", path, source),
        uptime_s=_opt_float(v, "uptime", path, source),
        mem_total_kb=_opt_int(v, "memTotal", path, source),
        mem_free_kb=_opt_int(v, "memFree", path, source),
        bootup_timestamp=_opt_float(v, "bootupTimestamp", path, source),
    )


# --- detection and entry points ------------------------------------------------------------------


def _is_pfc_detail(obj: dict[str, object]) -> bool:
    body = obj.get("interfaces")
    if not isinstance(body, dict) or not body:
        return False
    return all(isinstance(v, dict) and "priorities" in v for v in body.values())


def detect(obj: dict[str, object]) -> str | None:
    """The command whose reply ``obj`` looks like (one of :data:`COMMANDS`), or ``None``."""
    if "egressQueueCounters" in obj:
        return SHOW_QUEUE_DETAIL
    if "lldpNeighbors" in obj:
        return SHOW_LLDP_DETAIL
    if "intfQueueCounters" in obj:
        return SHOW_ECN_COUNTERS
    if "interfaceCounters" in obj:
        return SHOW_PFC_COUNTERS
    if _is_pfc_detail(obj):
        return SHOW_PFC_COUNTERS_DETAIL
    if "interfaces" in obj:
        return SHOW_INTERFACES
    if "modelName" in obj or ("version" in obj and "internalVersion" in obj):
        return SHOW_VERSION
    return None


_READERS: dict[str, Callable[[object, str, str], EosJsonData]] = {
    SHOW_INTERFACES: interfaces_from,
    SHOW_LLDP_DETAIL: lldp_neighbors_from,
    SHOW_PFC_COUNTERS: pfc_counters_from,
    SHOW_PFC_COUNTERS_DETAIL: pfc_counters_from,
    SHOW_ECN_COUNTERS: ecn_counters_from,
    SHOW_QUEUE_DETAIL: queue_counters_from,
    SHOW_VERSION: version_from,
}


def _read(text: str | bytes, source: str) -> tuple[dict[str, object], str]:
    return _result(_load(text, source), source)


def parse_show_interfaces(text: str | bytes, source: str = "<input>") -> EosInterfaces:
    obj, path = _read(text, source)
    return interfaces_from(obj, source, path)


def parse_lldp_neighbors_detail(text: str | bytes, source: str = "<input>") -> EosLldpNeighbors:
    obj, path = _read(text, source)
    return lldp_neighbors_from(obj, source, path)


def parse_pfc_counters(text: str | bytes, source: str = "<input>") -> EosPfcCounters:
    obj, path = _read(text, source)
    return pfc_counters_from(obj, source, path)


def parse_ecn_counters(text: str | bytes, source: str = "<input>") -> EosEcnCounters:
    obj, path = _read(text, source)
    return ecn_counters_from(obj, source, path)


def parse_queue_counters_detail(text: str | bytes, source: str = "<input>") -> EosQueueCounters:
    obj, path = _read(text, source)
    return queue_counters_from(obj, source, path)


def parse_show_version(text: str | bytes, source: str = "<input>") -> EosVersion:
    obj, path = _read(text, source)
    return version_from(obj, source, path)


def parse(text: str | bytes, source: str = "<input>") -> EosJson:
    """Recognise which command printed ``text`` (see :data:`COMMANDS`) and read it.

    A JSON list (or several concatenated lists) is read as a SuzieQ gather file (command
    ``"suzieq gather"``, data :class:`SuzieqGather`).
    """
    head = text.lstrip()[:1]
    if head in ("[", b"["):
        return EosJson(SUZIEQ_GATHER, parse_suzieq_gather(text, source))
    obj, path = _read(text, source)
    command = detect(obj)
    if command is None:
        keys = ", ".join(sorted(obj)[:5]) or "none"
        raise ParseError(
            source,
            f"the reply of one of {', '.join(repr(c) for c in COMMANDS)} (top-level keys: {keys})",
            key=path or "<root>",
        )
    return EosJson(command, _READERS[command](obj, source, path))


# --- SuzieQ gather files -------------------------------------------------------------------------


def _chunks(text: str, source: str) -> list[tuple[int, object]]:
    """The concatenated JSON values of ``text`` with the line each starts on."""
    decoder = json.JSONDecoder()
    out: list[tuple[int, object]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            return out
        line = text.count("\n", 0, i) + 1
        try:
            value, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise ParseError(source, f"a JSON list of SuzieQ records ({exc.msg})", line=exc.lineno) from None
        except ValueError as exc:  # e.g. an integer literal longer than Python converts
            raise ParseError(source, f"a JSON list of SuzieQ records ({exc})", line=line) from None
        except RecursionError:
            raise ParseError(source, "JSON nested less deeply", line=line) from None
        out.append((line, value))


_GATHER_COMMANDS = {"show interfaces": "interfaces", "show lldp neighbors detail": "lldp", "show version": "version"}


def parse_suzieq_gather(text: str | bytes, source: str = "<input>") -> SuzieqGather:
    """Read a SuzieQ gather file and the EOS replies it holds (see the module docstring)."""
    if isinstance(text, bytes):
        try:
            text = text.decode()
        except UnicodeDecodeError as exc:
            raise ParseError(source, f"UTF-8 text (bad byte at offset {exc.start})") from None
    chunks = _chunks(text, source)
    if not chunks:
        raise ParseError(source, "a JSON list of SuzieQ records, got no data")
    found: dict[str, dict[str, object]] = {}
    meta: dict[str, tuple[str | None, str | None]] = {}
    other_cmds: dict[str, set[str]] = {}
    failed: dict[str, set[str]] = {}
    others: dict[str, str] = {}
    for ci, (line, chunk) in enumerate(chunks):
        records = chunk if isinstance(chunk, list) else [chunk]
        for ri, record in enumerate(records):
            rp = f"[{ci}][{ri}]"
            r = _obj(record, rp, source, f"a SuzieQ record object (list starting on line {line})")
            host = _opt_str(r, "hostname", rp, source)
            devtype = _opt_str(r, "devtype", rp, source)
            cmd = _opt_str(r, "cmd", rp, source)
            if host is None or devtype is None or cmd is None:
                raise ParseError(source, "a record with 'hostname', 'devtype' and 'cmd'", key=rp)
            if devtype != "eos":
                others.setdefault(host, devtype)
                continue
            meta[host] = (_opt_str(r, "namespace", rp, source), _opt_str(r, "address", rp, source))
            found.setdefault(host, {})
            cmd = cmd.removesuffix("| json").strip()
            status = _opt_int(r, "status", rp, source)
            if status != 200:
                failed.setdefault(host, set()).add(cmd)
                continue
            slot = _GATHER_COMMANDS.get(cmd)
            if slot is None:
                other_cmds.setdefault(host, set()).add(cmd)
                continue
            data = r.get("data")
            dp = _child(rp, "data")
            if isinstance(data, str):
                try:
                    data = orjson.loads(data)
                except orjson.JSONDecodeError as exc:
                    raise ParseError(source, f"the {cmd!r} reply as JSON ({exc.msg})", key=dp) from None
            if slot == "interfaces":
                found[host][slot] = interfaces_from(data, source, dp)
            elif slot == "lldp":
                found[host][slot] = lldp_neighbors_from(data, source, dp)
            else:
                found[host][slot] = version_from(data, source, dp)
    hosts: dict[str, SuzieqEosHost] = {}
    for host in sorted(found):
        got = found[host]
        namespace, address = meta[host]
        version = got.get("version")
        interfaces = got.get("interfaces")
        lldp = got.get("lldp")
        hosts[host] = SuzieqEosHost(
            hostname=host,
            namespace=namespace,
            address=address,
            version=version if isinstance(version, EosVersion) else None,
            interfaces=interfaces if isinstance(interfaces, EosInterfaces) else None,
            lldp=lldp if isinstance(lldp, EosLldpNeighbors) else None,
            other_commands=tuple(sorted(other_cmds.get(host, ()))),
            failed_commands=tuple(sorted(failed.get(host, ()))),
        )
    return SuzieqGather(hosts=hosts, other_hosts=dict(sorted(others.items())))


def merge_gathers(*gathers: SuzieqGather) -> SuzieqGather:
    """One view of several gather files (SuzieQ writes one per service: device, interfaces, lldp, ...).

    For each host, a command captured in a later gather replaces the same command from an earlier one.
    """
    hosts: dict[str, SuzieqEosHost] = {}
    others: dict[str, str] = {}
    for gather in gathers:
        others.update(gather.other_hosts)
        for name, h in gather.hosts.items():
            old = hosts.get(name)
            if old is None:
                hosts[name] = h
                continue
            hosts[name] = SuzieqEosHost(
                hostname=name,
                namespace=h.namespace or old.namespace,
                address=h.address or old.address,
                version=h.version or old.version,
                interfaces=h.interfaces or old.interfaces,
                lldp=h.lldp or old.lldp,
                other_commands=tuple(sorted(set(old.other_commands) | set(h.other_commands))),
                failed_commands=tuple(sorted(set(old.failed_commands) | set(h.failed_commands))),
            )
    return SuzieqGather(hosts=dict(sorted(hosts.items())), other_hosts=dict(sorted(others.items())))
