"""``lldpcli show neighbors [ports IF] details`` from lldpd (1.0.x) in ``-f json0``, ``-f json`` or ``-f keyvalue``.

lldpd builds one tag tree (``src/client/display.c``) and each writer prints it differently. One
``interface`` element is written **per neighbor** (two neighbors on one port give two elements with the
same name), in port order then neighbor order; that file order is kept here.

``-f json0`` (stable shape): every element is a list of objects, element text is ``[{"value": X}]``,
XML-style attributes (``name``, ``via``, ``rid``, ``age``, ``type``, ``enabled``) are plain keys, and
attribute values ``yes``/``on``/``no``/``off`` become JSON booleans::

    {"lldp": [{"interface": [{"name": "ens1np0", "via": "LLDP", "rid": "1", "age": "0 day, 00:00:06",
       "chassis": [{"id": [{"type": "mac", "value": "02:00:00:00:aa:01"}], "name": [{"value": "leaf"}],
                    "descr": [...], "mgmt-ip": [{"value": "192.0.2.1"}, ...], "mgmt-iface": [...],
                    "capability": [{"type": "Bridge", "enabled": true}, ...]}],
       "port": [{"id": [{"type": "ifname", "value": "swp1"}], "descr": [...], "ttl": [{"value": "120"}],
                 "mfs": [{"value": "9216"}], "auto-negotiation": [...]}]}]}]}

No neighbors: ``{"lldp": [{}]}``.

``-f json`` is json0 after ``json_element_cleanup`` (``src/client/json_writer.c``): a one-member array
becomes its member, ``{"value": X}`` becomes ``X``, and an object with a string ``name`` becomes
``{<name>: {rest}}``. So ``interface`` is a list of ``{"<ifname>": {...}}`` or, with one neighbor, a
single such object; ``chassis`` is ``{"<SysName>": {...}}`` when the neighbor sent a SysName and the
plain object otherwise; ``mgmt-ip``/``capability`` are a scalar/object when there is one. No neighbors:
``{"lldp": {}}``. An lldpd built with ``--enable-json0`` prints the json0 shape for ``-f json``;
:func:`parse_json` accepts that too.

``-f keyvalue`` prints ``lldp.<ifname>.<path>=<value>`` lines: an attribute named ``name`` or ``type``
replaces the last path component (``lldp.ens1np0.via``, ``chassis.mac=...`` for the chassis id of
subtype mac, ``chassis.Bridge.enabled=on``), repeated elements repeat the key (``chassis.mgmt-ip``), and
a value holding a newline (multi-line SysDescr, common on Cisco/Juniper) continues on the next lines
unprefixed; such lines are joined back with ``\\n``. A new neighbor starts at each ``via`` line.
Interface names may contain dots (VLAN devices such as ``eth0.100``): the name ends before the first
component lldpd can print at interface level (``via``, ``rid``, ``age``, ``chassis``, ``port`` ...).

All three carry every :class:`LldpNeighbor` field, so the same capture parses to equal tuples.
Not kept: ``rid``, ``mgmt-iface``, disabled capabilities, auto-negotiation/power/VLAN/LLDP-MED details.
``lldpcli show interfaces`` output (local ports, with ``status``) is rejected with a
:class:`~unifab.errors.ParseError` rather than read as neighbors.

With a :class:`~unifab.errors.ParseProblems` collector a neighbour entry that cannot be read (a bad value, a
repeated key, a ``show interfaces`` entry) costs that neighbour, named by its JSON key path or first line;
what is not JSON, has no ``lldp`` key, or has only bad entries still raises.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._json import child, json_list, json_object, json_string, load_json, type_name
from unifab.parse._text import pasted

__all__ = ["LldpNeighbor", "dump_json0", "parse", "parse_json", "parse_json0", "parse_keyvalue"]


@dataclass(frozen=True, slots=True)
class LldpNeighbor:
    """One neighbor lldpd sees on one local port (one ``interface`` element of ``show neighbors``)."""

    local_port: str  # the local interface name
    via: str | None  # "LLDP", "CDPv2", ...
    age: str | None  # lldpd's "0 day, 00:00:06", verbatim
    chassis_id: str | None
    chassis_id_type: str | None  # "mac" | "ifname" | "local" | "ip" ...
    system_name: str | None
    system_descr: str | None
    mgmt_ips: tuple[str, ...]
    capabilities_enabled: tuple[str, ...]  # e.g. ("Bridge", "Router")
    port_id: str | None
    port_id_type: str | None  # "ifname" | "mac" | "local" ...
    port_descr: str | None
    ttl: int | None
    mfs: int | None  # 802.3 max frame size TLV when present (port "mfs")


_UNSIGNED = re.compile(r"[0-9]+")

# Chassis/port id subtype names lldpd prints (lib/atoms/{chassis,port}.c maps; "unknown" from map_lookup).
_ID_SUBTYPES = frozenset({"ifname", "ifalias", "local", "mac", "ip", "unhandled", "unknown"})

# What display_interface() can print right under an interface (first component after the ifname in
# keyvalue output); "status"/"ttl" only appear in `show interfaces` output.
_KV_INTERFACE_KEYS = frozenset(
    {"via", "rid", "age", "status", "ttl", "chassis", "port", "vlan", "ppvid", "pi", "lldp-med", "unknown-tlvs"}
)

# json_attr(): these attribute values are printed as JSON booleans.
_BOOL_ATTRS = {"yes": True, "on": True, "no": False, "off": False}

_SHOW_INTERFACES = "`lldpcli show neighbors` output (this entry has 'status': it is `show interfaces` output)"


# --- JSON helpers -------------------------------------------------------------------------------


def _opt_str(obj: dict[str, object], key: str, path: str, source: str) -> str | None:
    value = obj.get(key)
    return None if value is None else json_string(value, child(path, key), source)


def _unsigned(text: str | None, path: str, source: str) -> int | None:
    if text is None:
        return None
    if not _UNSIGNED.fullmatch(text):
        raise ParseError(source, f"expected an unsigned integer, got {text!r}", key=path)
    return int(text)


def _reject_show_interfaces(entry: dict[str, object], path: str, source: str) -> None:
    if "status" in entry and "via" not in entry:
        raise ParseError(source, f"expected {_SHOW_INTERFACES}", key=child(path, "status"))


def _capabilities(items: list[object], path: str, source: str) -> tuple[str, ...]:
    enabled: list[str] = []
    for i, item in enumerate(items):
        where = f"{path}[{i}]"
        cap = json_object(item, where, source)
        name = json_string(cap.get("type"), child(where, "type"), source)
        flag = cap.get("enabled")
        if not isinstance(flag, bool):
            raise ParseError(source, f"expected true or false, got {type_name(flag)}", key=child(where, "enabled"))
        if flag:
            enabled.append(name)
    return tuple(enabled)


# --- json0 --------------------------------------------------------------------------------------


def _one0(obj: dict[str, object], key: str, path: str, source: str) -> tuple[dict[str, object] | None, str]:
    """A json0 element: absent, or a list holding exactly one object. Returns it and its path."""
    where = child(path, key)
    value = obj.get(key)
    if value is None:
        return None, where
    items = json_list(value, where, source)
    if len(items) != 1:
        raise ParseError(source, f"expected a one-element list, got {len(items)} elements", key=where)
    return json_object(items[0], f"{where}[0]", source), f"{where}[0]"


def _text0(obj: dict[str, object], key: str, path: str, source: str) -> str | None:
    element, where = _one0(obj, key, path, source)
    if element is None:
        return None
    return json_string(element.get("value"), child(where, "value"), source)


def _texts0(obj: dict[str, object], key: str, path: str, source: str) -> tuple[str, ...]:
    where = child(path, key)
    value = obj.get(key)
    if value is None:
        return ()
    texts = []
    for i, item in enumerate(json_list(value, where, source)):
        element = json_object(item, f"{where}[{i}]", source)
        texts.append(json_string(element.get("value"), f"{where}[{i}].value", source))
    return tuple(texts)


def _id0(obj: dict[str, object], path: str, source: str) -> tuple[str | None, str | None]:
    """``"id": [{"type": T, "value": V}]`` -> (V, T)."""
    element, where = _one0(obj, "id", path, source)
    if element is None:
        return None, None
    return _opt_str(element, "value", where, source), _opt_str(element, "type", where, source)


def _neighbor_json0(entry_value: object, path: str, source: str) -> LldpNeighbor:
    entry = json_object(entry_value, path, source)
    _reject_show_interfaces(entry, path, source)
    local_port = json_string(entry.get("name"), child(path, "name"), source)
    chassis, cpath = _one0(entry, "chassis", path, source)
    chassis = chassis if chassis is not None else {}
    port, ppath = _one0(entry, "port", path, source)
    port = port if port is not None else {}
    chassis_id, chassis_id_type = _id0(chassis, cpath, source)
    port_id, port_id_type = _id0(port, ppath, source)
    caps, caps_path = chassis.get("capability"), child(cpath, "capability")
    return LldpNeighbor(
        local_port=local_port,
        via=_opt_str(entry, "via", path, source),
        age=_opt_str(entry, "age", path, source),
        chassis_id=chassis_id,
        chassis_id_type=chassis_id_type,
        system_name=_text0(chassis, "name", cpath, source),
        system_descr=_text0(chassis, "descr", cpath, source),
        mgmt_ips=_texts0(chassis, "mgmt-ip", cpath, source),
        capabilities_enabled=()
        if caps is None
        else _capabilities(json_list(caps, caps_path, source), caps_path, source),
        port_id=port_id,
        port_id_type=port_id_type,
        port_descr=_text0(port, "descr", ppath, source),
        ttl=_unsigned(_text0(port, "ttl", ppath, source), f"{ppath}.ttl[0].value", source),
        mfs=_unsigned(_text0(port, "mfs", ppath, source), f"{ppath}.mfs[0].value", source),
    )


def _from_json0(root: dict[str, object], source: str, log: ParseProblems) -> tuple[LldpNeighbor, ...]:
    neighbors: list[LldpNeighbor] = []
    for i, part_value in enumerate(json_list(root.get("lldp"), "lldp", source)):
        part = json_object(part_value, f"lldp[{i}]", source)
        interfaces = part.get("interface")
        if interfaces is None:
            continue
        where = f"lldp[{i}].interface"
        for j, entry in enumerate(json_list(interfaces, where, source)):
            with log.skipping(f"the neighbour {where}[{j}]"):
                neighbors.append(_neighbor_json0(entry, f"{where}[{j}]", source))
    return _all_bad(tuple(neighbors), log)


def _all_bad(neighbors: tuple[LldpNeighbor, ...], log: ParseProblems) -> tuple[LldpNeighbor, ...]:
    """``neighbors``, unless every entry was bad: then the file has nothing usable (the first problem)."""
    if not neighbors and log.problems:
        raise log.problems[0].error()
    return neighbors


# --- json (cleaned up) --------------------------------------------------------------------------


def _many(value: object) -> list[object]:
    """A cleaned-up json list: a list, or its only member."""
    return value if isinstance(value, list) else [value]


def _is_plain_chassis_field(key: str, value: dict[str, object]) -> bool:
    """True when ``{key: value}`` is an unnamed chassis's only field rather than ``{SysName: chassis}``."""
    if key == "id":
        return bool(value) and value.keys() <= {"type", "value"}
    if key == "capability":
        return bool(value) and value.keys() <= {"type", "enabled"}
    return False  # descr, mgmt-ip, mgmt-iface are never objects


def _id_json(obj: dict[str, object], path: str, source: str) -> tuple[str | None, str | None]:
    """``"id": {"type": T, "value": V}``, or ``"id": V`` when there was no type -> (V, T)."""
    value = obj.get("id")
    where = child(path, "id")
    if value is None:
        return None, None
    if isinstance(value, str):
        return value, None
    element = json_object(value, where, source)
    return _opt_str(element, "value", where, source), _opt_str(element, "type", where, source)


def _strs_json(obj: dict[str, object], key: str, path: str, source: str) -> tuple[str, ...]:
    value = obj.get(key)
    where = child(path, key)
    if value is None:
        return ()
    if isinstance(value, list):
        return tuple(json_string(item, f"{where}[{i}]", source) for i, item in enumerate(value))
    return (json_string(value, where, source),)


def _neighbor_json(local_port: str, body_value: object, path: str, source: str) -> LldpNeighbor:
    body = json_object(body_value, path, source)
    _reject_show_interfaces(body, path, source)
    chassis: dict[str, object] = {}
    cpath = child(path, "chassis")
    system_name = None
    if "chassis" in body:
        chassis = json_object(body["chassis"], cpath, source)
        if len(chassis) == 1:
            ((key, inner),) = chassis.items()
            if isinstance(inner, dict) and not _is_plain_chassis_field(key, inner):
                system_name, chassis, cpath = key, inner, child(cpath, key)
    if system_name is None:
        system_name = _opt_str(chassis, "name", cpath, source)
    port: dict[str, object] = {}
    ppath = child(path, "port")
    if "port" in body:
        port = json_object(body["port"], ppath, source)
    chassis_id, chassis_id_type = _id_json(chassis, cpath, source)
    port_id, port_id_type = _id_json(port, ppath, source)
    caps = chassis.get("capability")
    return LldpNeighbor(
        local_port=local_port,
        via=_opt_str(body, "via", path, source),
        age=_opt_str(body, "age", path, source),
        chassis_id=chassis_id,
        chassis_id_type=chassis_id_type,
        system_name=system_name,
        system_descr=_opt_str(chassis, "descr", cpath, source),
        mgmt_ips=_strs_json(chassis, "mgmt-ip", cpath, source),
        capabilities_enabled=() if caps is None else _capabilities(_many(caps), child(cpath, "capability"), source),
        port_id=port_id,
        port_id_type=port_id_type,
        port_descr=_opt_str(port, "descr", ppath, source),
        ttl=_unsigned(_opt_str(port, "ttl", ppath, source), child(ppath, "ttl"), source),
        mfs=_unsigned(_opt_str(port, "mfs", ppath, source), child(ppath, "mfs"), source),
    )


def _from_json(root: dict[str, object], source: str, log: ParseProblems) -> tuple[LldpNeighbor, ...]:
    lldp = json_object(root.get("lldp"), "lldp", source)
    interfaces = lldp.get("interface")
    if interfaces is None:
        return ()
    listed = isinstance(interfaces, list)
    neighbors: list[LldpNeighbor] = []
    for j, entry_value in enumerate(_many(interfaces)):
        where = f"lldp.interface[{j}]" if listed else "lldp.interface"
        with log.skipping(f"the neighbour {where}"):
            entry = json_object(entry_value, where, source)
            if len(entry) != 1:
                expected = f"expected an object with the interface name as its only key, got {len(entry)} keys"
                raise ParseError(source, expected, key=where)
            ((name, body),) = entry.items()
            neighbors.append(_neighbor_json(name, body, child(where, name), source))
    return _all_bad(tuple(neighbors), log)


def _root(text: str, source: str) -> dict[str, object]:
    root = json_object(load_json(text, source), "", source)
    if "lldp" not in root:
        raise ParseError(source, "expected the top-level key 'lldp' (`lldpcli show neighbors`)", key="lldp")
    return root


# --- public parsers -----------------------------------------------------------------------------


def parse_json0(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[LldpNeighbor, ...]:
    """Parse ``lldpcli -f json0 show neighbors [details]``."""
    return _from_json0(_root(text, source), source, problems if problems is not None else ParseProblems.strict(source))


def parse_json(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[LldpNeighbor, ...]:
    """Parse ``lldpcli -f json show neighbors [details]`` (also the json0 shape of ``--enable-json0`` builds)."""
    root = _root(text, source)
    log = problems if problems is not None else ParseProblems.strict(source)
    if isinstance(root["lldp"], list):
        return _from_json0(root, source, log)
    return _from_json(root, source, log)


@dataclass(slots=True)
class _KvLine:
    number: int
    port: str
    path: list[str]  # components after the interface name
    value: str


def _kv_lines(text: str, source: str) -> list[_KvLine]:
    raw = [line.removesuffix("\r") for line in text.split("\n")]
    while raw and not raw[-1]:
        raw.pop()
    lines: list[_KvLine] = []
    for number, line in enumerate(raw, start=1):
        key, sep, value = line.partition("=")
        if not (sep and key.startswith("lldp.")):
            if not lines and not line.strip():  # blank lines above the first key (a blanked prompt)
                continue
            if not lines:
                raise ParseError(source, "expected a `lldp.<interface>.<key>=<value>` line", line=number)
            lines[-1].value += "\n" + line  # continuation of a multi-line value
            continue
        parts = key.split(".")[1:]
        cut = next((i for i in range(1, len(parts)) if parts[i] in _KV_INTERFACE_KEYS), None)
        if cut is None:
            raise ParseError(
                source,
                f"expected `lldp.<interface>.<via|age|chassis|port|...>=<value>`, got key {key!r}",
                line=number,
            )
        lines.append(_KvLine(number, ".".join(parts[:cut]), parts[cut:], value))
    return lines


def _kv_neighbor(group: list[_KvLine], source: str) -> LldpNeighbor:
    single: dict[str, tuple[str, int]] = {}
    mgmt_ips: list[str] = []
    caps: list[str] = []

    def put(name: str, value: str, line: _KvLine) -> None:
        if name in single:
            raise ParseError(
                source, f"expected one {name} per neighbor, it repeats line {single[name][1]}", line=line.number
            )
        single[name] = (value, line.number)

    for line in group:
        head, rest = line.path[0], line.path[1:]
        if head == "status" and not rest:
            raise ParseError(source, f"expected {_SHOW_INTERFACES}", line=line.number)
        if head in ("via", "age") and not rest:
            put(head, line.value, line)
        elif head == "chassis" and len(rest) == 1 and rest[0] in ("name", "descr"):
            put(f"chassis.{rest[0]}", line.value, line)
        elif head == "chassis" and rest == ["mgmt-ip"]:
            mgmt_ips.append(line.value)
        elif head == "chassis" and len(rest) == 2 and rest[1] == "enabled":
            if line.value not in ("on", "off"):
                raise ParseError(source, f"expected 'on' or 'off', got {line.value!r}", line=line.number)
            if line.value == "on":
                caps.append(rest[0])
        elif head == "port" and len(rest) == 1 and rest[0] in ("descr", "ttl", "mfs"):
            put(f"port.{rest[0]}", line.value, line)
        elif head in ("chassis", "port") and len(rest) == 1 and rest[0] in _ID_SUBTYPES:
            put(f"{head}.id", line.value, line)
            single[f"{head}.id-type"] = (rest[0], line.number)

    def get(name: str) -> str | None:
        return single[name][0] if name in single else None

    def number(name: str) -> int | None:
        if name not in single:
            return None
        value, where = single[name]
        if not _UNSIGNED.fullmatch(value):
            raise ParseError(source, f"expected an unsigned integer for {name}, got {value!r}", line=where)
        return int(value)

    return LldpNeighbor(
        local_port=group[0].port,
        via=get("via"),
        age=get("age"),
        chassis_id=get("chassis.id"),
        chassis_id_type=get("chassis.id-type"),
        system_name=get("chassis.name"),
        system_descr=get("chassis.descr"),
        mgmt_ips=tuple(mgmt_ips),
        capabilities_enabled=tuple(caps),
        port_id=get("port.id"),
        port_id_type=get("port.id-type"),
        port_descr=get("port.descr"),
        ttl=number("port.ttl"),
        mfs=number("port.mfs"),
    )


def parse_keyvalue(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[LldpNeighbor, ...]:
    """Parse ``lldpcli -f keyvalue show neighbors [details]``."""
    log = problems if problems is not None else ParseProblems.strict(source)
    groups: list[list[_KvLine]] = []
    for line in _kv_lines(text, source):
        current = groups[-1] if groups else None
        if (
            current is None
            or line.port != current[0].port
            or (line.path == ["via"] and any(seen.path == ["via"] for seen in current))
        ):
            groups.append([line])
        else:
            current.append(line)
    neighbors: list[LldpNeighbor] = []
    for group in groups:
        with log.skipping(f"the neighbour on {group[0].port} (line {group[0].number})"):
            neighbors.append(_kv_neighbor(group, source))
    return _all_bad(tuple(neighbors), log)


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[LldpNeighbor, ...]:
    """Parse any of the three formats: JSON whose ``lldp`` is a list is json0, other JSON is json,
    anything else (including empty text) is keyvalue."""
    if text.lstrip().startswith(("{", "[")):
        return parse_json(text, source, problems)
    return parse_keyvalue(text, source, problems)


# --- dumping ----------------------------------------------------------------------------------

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _quote(text: str) -> str:
    # json_string_dump(): the escapes above, \\uXXXX (upper-case hex) for other control characters,
    # everything else as is (UTF-8). lldpd tests `c < 0x1f`, so a raw 0x1f would slip through as
    # invalid JSON; it is escaped here like the other control characters.
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _dump(value: object, indent: int, out: list[str]) -> None:
    """json_element_dump(): lldpd's own printer (2-space steps, even for empty containers)."""
    if isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, str):
        out.append(_quote(value))
    elif isinstance(value, dict | list):
        is_dict = isinstance(value, dict)
        pad = " " * (indent + 2)
        out.append(("{" if is_dict else "[") + "\n" + pad)
        items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
        for i, (key, item) in enumerate(items):
            if i:
                out.append(",\n" + pad)
            if key is not None:
                out.append(f'"{key}": ')
            _dump(item, indent + 2, out)
        out.append("\n" + " " * indent + ("}" if is_dict else "]"))
    else:
        raise TypeError(f"cannot dump {type(value).__name__}")


def _dumps(value: object) -> str:
    out: list[str] = []
    _dump(value, 0, out)
    return "".join(out) + "\n\n"  # json_dump() ends the line, json_end() adds an empty one


def _attr(value: str) -> str | bool:
    """json_attr(): lldpd prints attribute values yes/on/no/off as booleans."""
    return _BOOL_ATTRS.get(value, value)


def _id_element(id_type: str | None, value: str | None) -> dict[str, object]:
    element: dict[str, object] = {}
    if id_type is not None:
        element["type"] = _attr(id_type)
    if value is not None:
        element["value"] = value
    return element


def _json0_interface(nb: LldpNeighbor, rid: int) -> dict[str, object]:
    entry: dict[str, object] = {"name": _attr(nb.local_port)}
    if nb.via is not None:
        entry["via"] = _attr(nb.via)
    entry["rid"] = str(rid)
    if nb.age is not None:
        entry["age"] = _attr(nb.age)

    chassis: dict[str, object] = {}
    if nb.chassis_id is not None or nb.chassis_id_type is not None:
        chassis["id"] = [_id_element(nb.chassis_id_type, nb.chassis_id)]
    if nb.system_name is not None:
        chassis["name"] = [{"value": nb.system_name}]
    if nb.system_descr is not None:
        chassis["descr"] = [{"value": nb.system_descr}]
    if nb.mgmt_ips:
        chassis["mgmt-ip"] = [{"value": ip} for ip in nb.mgmt_ips]
    if nb.capabilities_enabled:
        chassis["capability"] = [{"type": _attr(cap), "enabled": True} for cap in nb.capabilities_enabled]
    entry["chassis"] = [chassis]

    port: dict[str, object] = {}
    if nb.port_id is not None or nb.port_id_type is not None:
        port["id"] = [_id_element(nb.port_id_type, nb.port_id)]
    if nb.port_descr is not None:
        port["descr"] = [{"value": nb.port_descr}]
    if nb.ttl is not None:
        port["ttl"] = [{"value": str(nb.ttl)}]
    if nb.mfs is not None:
        port["mfs"] = [{"value": str(nb.mfs)}]
    entry["port"] = [port]
    return entry


def dump_json0(neighbors: Sequence[LldpNeighbor]) -> str:
    """Write ``lldpcli -f json0 show neighbors details`` as lldpd 1.0.16 prints it.

    Key order and shapes follow display.c (interface: name, via, rid, age, chassis, port; chassis: id,
    name, descr, mgmt-ip, capability; port: id, descr, ttl, mfs); None fields and empty tuples are left
    out. What the record does not hold is not invented: no ``mgmt-iface``, only the enabled
    capabilities, no auto-negotiation. ``rid`` (lldpd's remote chassis index) numbers distinct
    (chassis id type, chassis id) pairs from 1 in order of appearance. Like lldpd, attribute values
    yes/on/no/off are printed as booleans (such names do not parse back).
    """
    rids: dict[tuple[str | None, str | None], int] = {}
    entries = []
    for nb in neighbors:
        rid = rids.setdefault((nb.chassis_id_type, nb.chassis_id), len(rids) + 1)
        entries.append(_json0_interface(nb, rid))
    part: dict[str, object] = {"interface": entries} if entries else {}
    return _dumps({"lldp": [part]})
