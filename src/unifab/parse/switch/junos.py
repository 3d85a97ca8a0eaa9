"""Juniper Junos LLDP neighbors and interface state (tested on vQFX 19.4R1, vMX 18.2R1, SRX/vSRX text).

Shapes (:func:`parse` tells them apart):

* ``show lldp neighbors [detail] | display json`` -> :func:`parse_lldp_json`. Junos JSON wraps every
  XML element as a list of objects with the text in ``data``::

      {"lldp-neighbors-information": [{"lldp-neighbor-information": [
          {"lldp-local-interface": [{"data": "xe-0/0/0"}], "lldp-local-port-id": [{"data": "516"}],
           "lldp-remote-chassis-id-subtype": [{"data": "Mac address"}], ...}]}]}

  The local port is ``lldp-local-interface`` in the ``detail`` style; the brief style (vMX 18.2) has
  only ``lldp-local-port-id``, which there holds the interface name (in ``detail`` it is the SNMP
  ifIndex). ``mfs`` is the 802.3 max-frame-size TLV, an ``lldp-org-specific-tlv`` entry with
  ``lldp-remote-subtype-mtu-size`` (printed as "MTU" by the CLI). ``mgmt_ip`` is the first
  ``lldp-remote-management-address``.
* ``show interfaces | display json`` -> :func:`parse_interfaces_json`: one record per
  ``physical-interface`` followed by one per ``logical-interface`` unit.
* CLI text ``show lldp neighbors`` -> :func:`parse_lldp_text` (the brief table) and ``show interfaces``
  -> :func:`parse_interfaces_text` (physical and logical blocks).

Interface rules (both shapes):

* Physical: ``admin_up``/``oper_up`` from admin-status/oper-status (text: "Enabled" or "Administratively
  down", "Physical link is Up|Down"); ``mtu`` is the L2 MTU (1514 on Ethernet, "Unlimited" -> None);
  ``speed_mbps`` from "10Gbps"/"1000mbps"/"800mbps" ("Unlimited", "Unspecified", "Auto" -> None);
  ``mac`` is the current address.
* Logical unit (``xe-0/0/0.0``): ``oper_up`` True with the ``Up`` flag (``iff-up``), False with ``Down``,
  ``Device-Down`` or ``Hardware-Down``, else None (``lo0.0`` shows neither); ``admin_up`` False with
  ``Down`` (unit disabled), True with ``Up``, else None; ``mtu`` is the ``inet`` family MTU (the first
  numeric family MTU when there is no inet; an L3 MTU, 1500 on a 1514 port); no speed or MAC.
* ``kind`` by name (:data:`KIND_BY_PREFIX`): ``ethernet`` (ge/xe/et/mge/em/fxp/me/bme), ``bond`` (ae),
  ``loopback`` (lo0), ``vlan`` (irb/vlan), ``vxlan`` (vtep), ``tunnel`` (gr/ip/gre/ipip/mt/fti...);
  logical units are ``subinterface`` except ``lo0.N`` (loopback) and ``irb.N``/``vlan.N`` (vlan);
  other Junos internal interfaces (dsc, lsi, pfe, cbp0, pip0, jsrv...) and their units get ``None``.

CLI text may carry the prompt banner (``{master:0}``) before or after the output, and the prompt line
with the command (``user@qfx> show interfaces xe-0/0/0``); they are skipped. ``show interfaces
xe-0/0/0.0`` prints the logical unit alone (an indented ``Logical interface xe-0/0/0.0 ...`` block
with no physical block): it is read as the unit's record.

With a :class:`~unifab.errors.ParseProblems` collector a bad physical interface of the JSON costs it and its
units, a bad logical unit that unit, a bad LLDP neighbour (JSON entry or table row) that neighbour, and in
``show interfaces`` text a block whose values cannot be read that interface (a bad ``Physical interface:``
line skips its unit blocks with it), an indented line that starts with no word or number that line; a file with
nothing read still raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeVar

from unifab.errors import ParseError, ParseProblems
from unifab.parse._json import child, json_list, json_object, json_string, load_json, type_name
from unifab.parse._text import blank_prompts
from unifab.parse.netdev import (
    Interface,
    Neighbor,
    mac_if,
    normalize_mac,
    port_id_subtype,
)

__all__ = [
    "KIND_BY_PREFIX",
    "parse",
    "parse_interfaces_json",
    "parse_interfaces_text",
    "parse_lldp_json",
    "parse_lldp_text",
]

_BANNER = re.compile(r"\{(?:master|backup|primary|secondary|linecard|hold)(?::[\w-]+)?\}")
_SPEED = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt])bps", re.IGNORECASE)
_UNIT_FACTOR = {"k": 0.001, "m": 1, "g": 1000, "t": 1_000_000}

# Interface-name prefix -> kind (longest prefix wins: "em" vs "esi" are whole names below).
KIND_BY_PREFIX: dict[str, str] = {
    "ge-": "ethernet",
    "xe-": "ethernet",
    "et-": "ethernet",
    "mge-": "ethernet",
    "fe-": "ethernet",
    "em": "ethernet",
    "fxp": "ethernet",
    "me": "ethernet",
    "bme": "ethernet",
    "ae": "bond",
    "reth": "bond",
    "lo": "loopback",
    "irb": "vlan",
    "vlan": "vlan",
    "vtep": "vxlan",
    "gr-": "tunnel",
    "ip-": "tunnel",
    "gre": "tunnel",
    "ipip": "tunnel",
    "mt-": "tunnel",
    "mtun": "tunnel",
    "fti": "tunnel",
    "st0": "tunnel",
}
_PREFIX_REST = re.compile(r"(?:\d+|-?\d+/\d+/\d+(?::\d+)?)?")  # what may follow a prefix ("em0", "ge-0/0/0")

T = TypeVar("T")


def _physical_kind(name: str) -> str | None:
    for prefix in sorted(KIND_BY_PREFIX, key=len, reverse=True):
        if name.startswith(prefix) and _PREFIX_REST.fullmatch(name[len(prefix) :]):
            return KIND_BY_PREFIX[prefix]
    return None


def _kind(name: str) -> str | None:
    base, dot, _ = name.partition(".")
    physical = _physical_kind(base)
    if not dot:
        return physical
    if physical in ("loopback", "vlan", None):
        return physical
    return "subinterface"


def _strip_banners(text: str) -> str:
    """Blank out prompt banner lines (``{master:0}``) anywhere and the pasted prompt/command lines before
    and after the output (``user@qfx> show interfaces``), keeping line numbers and endings."""
    text = "".join("\n" if _BANNER.fullmatch(line.strip()) else line for line in text.splitlines(keepends=True))
    return blank_prompts(text)


def _mtu(value: str | None, source: str, line: int | None = None, key: str | None = None) -> int | None:
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return int(value)
    if value.lower() in ("unlimited", "unspecified"):
        return None
    raise ParseError(source, f"expected an MTU (bytes or 'Unlimited'), got {value!r}", line=line, key=key)


def _speed(value: str | None, source: str, line: int | None = None, key: str | None = None) -> int | None:
    if value is None:
        return None
    value = value.strip()
    match = _SPEED.fullmatch(value)
    if match:
        mbps = float(match.group(1)) * _UNIT_FACTOR[match.group(2).lower()]
        return int(mbps) if mbps >= 1 and mbps == int(mbps) else None
    if value.isalpha():  # Unlimited, Unspecified, Auto
        return None
    raise ParseError(source, f"expected a speed such as '10Gbps' or 'Unlimited', got {value!r}", line=line, key=key)


def _status(value: str | None, path: str, source: str) -> bool | None:
    if value is None:
        return None
    if value in ("up", "down"):
        return value == "up"
    raise ParseError(source, f"expected 'up' or 'down', got {value!r}", key=path)


# --- Junos JSON -----------------------------------------------------------------------------------


def _elements(obj: dict[str, object], key: str, path: str, source: str) -> list[tuple[str, dict[str, object]]]:
    """A Junos element: a list of objects (``[]`` when absent)."""
    value = obj.get(key)
    if value is None:
        return []
    where = child(path, key)
    items = json_list(value, where, source)
    return [(child(where, i), json_object(item, child(where, i), source)) for i, item in enumerate(items)]


def _data(obj: dict[str, object], key: str, path: str, source: str) -> str | None:
    """The text of the first element ``key`` (``[{"data": "..."}]``); None when absent or empty."""
    for where, element in _elements(obj, key, path, source):
        if "data" not in element:
            return None
        return json_string(element["data"], child(where, "data"), source).strip()
    return None


def _load(text: str, source: str) -> object:
    return load_json(_strip_banners(text), source)


def _root(decoded: object, key: str, source: str) -> list[tuple[str, dict[str, object]]]:
    root = json_object(decoded, "", source)
    if key not in root:
        raise ParseError(source, f"expected top-level key {key!r}", key=key)
    return _elements(root, key, "", source)


def _lldp_json_neighbor(entry: dict[str, object], path: str, source: str) -> Neighbor:
    local = _data(entry, "lldp-local-interface", path, source) or _data(entry, "lldp-local-port-id", path, source)
    if not local:
        raise ParseError(
            source, "expected the local port (lldp-local-interface or lldp-local-port-id)", key=path or "<root>"
        )
    mfs: int | None = None
    for where, tlv in _elements(entry, "lldp-org-specific-tlv", path, source):
        size = _data(tlv, "lldp-remote-subtype-mtu-size", where, source)
        if size is not None:
            if not size.isdigit():
                raise ParseError(
                    source,
                    f"expected a frame size in bytes, got {size!r}",
                    key=child(where, "lldp-remote-subtype-mtu-size"),
                )
            mfs = int(size)
    chassis_type = port_id_subtype(_data(entry, "lldp-remote-chassis-id-subtype", path, source))
    port_type = port_id_subtype(_data(entry, "lldp-remote-port-id-subtype", path, source))
    return Neighbor(
        local_port=local,
        system_name=_data(entry, "lldp-remote-system-name", path, source) or None,
        chassis_id=mac_if(chassis_type, _data(entry, "lldp-remote-chassis-id", path, source) or None, guess=True),
        port_id=mac_if(port_type, _data(entry, "lldp-remote-port-id", path, source) or None),
        port_id_type=port_type,
        port_descr=_data(entry, "lldp-remote-port-description", path, source) or None,
        mgmt_ip=_data(entry, "lldp-remote-management-address", path, source) or None,
        mfs=mfs,
    )


def parse_lldp_json(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[Neighbor, ...]:
    """Parse ``show lldp neighbors [detail] | display json``."""
    return _lldp_json(_load(text, source), source, _log(source, problems))


def _log(source: str, problems: ParseProblems | None) -> ParseProblems:
    return problems if problems is not None else ParseProblems.strict(source)


def _usable(records: list[T], log: ParseProblems) -> tuple[T, ...]:
    """``records``, unless every entry was bad: then nothing is usable and the first problem is raised."""
    if not records and log.problems:
        raise log.problems[0].error()
    return tuple(records)


def _lldp_json(decoded: object, source: str, log: ParseProblems) -> tuple[Neighbor, ...]:
    neighbors: list[Neighbor] = []
    for where, info in _root(decoded, "lldp-neighbors-information", source):
        for entry_path, entry in _elements(info, "lldp-neighbor-information", where, source):
            with log.skipping(f"the neighbour {entry_path}"):
                neighbors.append(_lldp_json_neighbor(entry, entry_path, source))
    return _usable(neighbors, log)


def _flags(obj: dict[str, object], key: str, path: str, source: str) -> frozenset[str]:
    names: set[str] = set()
    for _, element in _elements(obj, key, path, source):
        names.update(element)
    return frozenset(names)


def _logical_state(flags: frozenset[str]) -> tuple[bool | None, bool | None]:
    """(admin_up, oper_up) of a logical unit from its flag names (JSON ``iff-*`` or text words)."""
    if "iff-up" in flags or "Up" in flags:
        return True, True
    admin = False if ("iff-down" in flags or "Down" in flags) else None
    if admin is False or flags & {"iff-device-down", "iff-hardware-down", "Device-Down", "Hardware-Down"}:
        return admin, False
    return None, None


def _family_mtu(families: list[tuple[str, str | None]], source: str, line: int | None, path: str | None) -> int | None:
    """The ``inet`` family MTU, else the first numeric one."""
    values = [(name, _mtu(mtu, source, line=line, key=path)) for name, mtu in families]
    for name, mtu in values:
        if name == "inet" and mtu is not None:
            return mtu
    return next((mtu for _, mtu in values if mtu is not None), None)


def _logical_json(unit: dict[str, object], path: str, source: str) -> Interface:
    name = _data(unit, "name", path, source)
    if not name:
        raise ParseError(source, "expected the logical interface name", key=child(path, "name"))
    families = [
        (_data(family, "address-family-name", where, source) or "", _data(family, "mtu", where, source))
        for where, family in _elements(unit, "address-family", path, source)
    ]
    admin, oper = _logical_state(_flags(unit, "if-config-flags", path, source))
    return Interface(
        name=name,
        admin_up=admin,
        oper_up=oper,
        mtu=_family_mtu(families, source, None, child(path, "address-family")),
        speed_mbps=None,
        mac=None,
        description=_data(unit, "description", path, source) or None,
        kind=_kind(name),
    )


def _physical_json(phys: dict[str, object], path: str, source: str) -> Interface:
    name = _data(phys, "name", path, source)
    if not name:
        raise ParseError(source, "expected the physical interface name", key=child(path, "name"))
    return Interface(
        name=name,
        admin_up=_status(_data(phys, "admin-status", path, source), child(path, "admin-status"), source),
        oper_up=_status(_data(phys, "oper-status", path, source), child(path, "oper-status"), source),
        mtu=_mtu(_data(phys, "mtu", path, source), source, key=child(path, "mtu")),
        speed_mbps=_speed(_data(phys, "speed", path, source), source, key=child(path, "speed")),
        mac=normalize_mac(_data(phys, "current-physical-address", path, source)),
        description=_data(phys, "description", path, source) or None,
        kind=_kind(name),
    )


def parse_interfaces_json(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[Interface, ...]:
    """Parse ``show interfaces | display json``: each physical interface, then its logical units."""
    return _interfaces_json(_load(text, source), source, _log(source, problems))


def _interfaces_json(decoded: object, source: str, log: ParseProblems) -> tuple[Interface, ...]:
    interfaces: list[Interface] = []
    for where, info in _root(decoded, "interface-information", source):
        for phys_path, phys in _elements(info, "physical-interface", where, source):
            with log.skipping(f"the interface {phys_path} and its units") as row:
                physical = _physical_json(phys, phys_path, source)
                units = _elements(phys, "logical-interface", phys_path, source)
            if row.failed:
                continue
            interfaces.append(physical)
            for unit_path, unit in units:
                with log.skipping(f"the unit {unit_path}"):
                    interfaces.append(_logical_json(unit, unit_path, source))
        # `show interfaces <unit> | display json` lists the unit at top level
        for unit_path, unit in _elements(info, "logical-interface", where, source):
            with log.skipping(f"the unit {unit_path}"):
                interfaces.append(_logical_json(unit, unit_path, source))
    return _usable(interfaces, log)


# --- CLI text -------------------------------------------------------------------------------------

_LLDP_HEADER = re.compile(r"Local ?Interface\s+(?P<parent>Parent Interface\s+)?Chassis Id\s+Port info\s+System Name\s*")
_PHYSICAL = re.compile(r"Physical interface: (?P<name>[^,\s]+), (?P<admin>[^,]+), Physical link is (?P<link>\w+).*")
_LOGICAL = re.compile(r"\s*Logical interface (?P<name>\S+)(?: .*)?")
_PROTOCOL = re.compile(r"Protocol (?P<family>[^,\s]+), MTU: (?P<mtu>\w+)")


def parse_lldp_text(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[Neighbor, ...]:
    """Parse the CLI table of ``show lldp neighbors``.

    Columns: Local Interface, [Parent Interface,] Chassis Id, Port info, System Name. "Port info" is
    what Junos shows for the remote port: the port description when the peer sends one (Junos peers
    send the ifname there and an SNMP index as port id), else the port id; it is kept as
    ``port_descr``. The system name is the last word (host names have no spaces); a row with one word
    after the chassis id is the system name when it starts in the System Name column.
    """
    log = _log(source, problems)
    neighbors: list[Neighbor] = []
    header: re.Match[str] | None = None
    sysname_col = 0
    for number, raw in enumerate(_strip_banners(text).splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip():
            continue
        if header is None:
            header = _LLDP_HEADER.fullmatch(line)
            if header is None:
                raise ParseError(
                    source,
                    "expected the `Local Interface  Parent Interface  Chassis Id  Port info  System Name` header",
                    line=number,
                )
            sysname_col = line.index("System Name")
            continue
        fixed = 3 if header.group("parent") else 2
        words = [(m.group(), m.start()) for m in re.finditer(r"\S+", line)]
        if len(words) < fixed + 1:
            expected = f"expected {fixed + 2} columns (Local Interface ... System Name), got {line.strip()[:60]!r}"
            log.add(expected, f"the neighbour row of line {number}", line=number)
            continue
        local = words[0][0]
        chassis = words[fixed - 1][0]
        rest = words[fixed:]
        if len(rest) == 1:
            port_info, sysname = (None, rest[0][0]) if rest[0][1] >= sysname_col else (rest[0][0], None)
        else:
            port_info, sysname = " ".join(word for word, _ in rest[:-1]), rest[-1][0]
        neighbors.append(
            Neighbor(
                local_port=local,
                system_name=sysname,
                chassis_id=mac_if(None, chassis, guess=True),
                port_id=None,
                port_id_type=None,
                port_descr=port_info,
                mgmt_ip=None,
                mfs=None,
            )
        )
    if header is None:
        raise ParseError(source, "expected the `show lldp neighbors` header", line=1)
    return _usable(neighbors, log)


@dataclass(slots=True)
class _TextIf:
    name: str
    line: int
    admin_up: bool | None
    oper_up: bool | None
    physical: bool
    fields: dict[str, str]
    families: list[tuple[str, str]]


def _pairs(text: str) -> dict[str, str]:
    """``"Link-level type: Ethernet, MTU: 1514, MRU: 0, LAN-PHY mode,"`` -> {key: value}."""
    pairs: dict[str, str] = {}
    for part in text.split(", "):
        key, sep, value = part.partition(":")
        if sep:
            pairs[key.strip()] = value.strip().rstrip(",")
    return pairs


def _text_interface(entry: _TextIf, source: str) -> Interface:
    fields = entry.fields
    if entry.physical:
        return Interface(
            name=entry.name,
            admin_up=entry.admin_up,
            oper_up=entry.oper_up,
            mtu=_mtu(fields.get("MTU"), source, line=entry.line),
            speed_mbps=_speed(fields.get("Speed"), source, line=entry.line),
            mac=normalize_mac(fields.get("Current address")),
            description=fields.get("Description") or None,
            kind=_kind(entry.name),
        )
    return Interface(
        name=entry.name,
        admin_up=entry.admin_up,
        oper_up=entry.oper_up,
        mtu=_family_mtu([(f, m) for f, m in entry.families], source, entry.line, None),
        speed_mbps=None,
        mac=None,
        description=fields.get("Description") or None,
        kind=_kind(entry.name),
    )


_ADMIN = {"enabled": True, "administratively down": False, "disabled": False}


_WORD_START = re.compile(r"\w")  # every indented line of `show interfaces` starts with a word or a number


def parse_interfaces_text(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[Interface, ...]:
    """Parse ``show interfaces`` CLI text (physical blocks with their ``Logical interface`` units)."""
    log = _log(source, problems)
    entries: list[_TextIf] = []
    dropped = False  # inside a physical block whose header could not be read: its lines and units go with it
    for number, raw in enumerate(_strip_banners(text).splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip():
            continue
        physical = _PHYSICAL.fullmatch(line)
        if physical:
            admin_text = physical.group("admin").strip().lower()
            dropped = admin_text not in _ADMIN
            if dropped:
                expected = f"expected 'Enabled' or 'Administratively down', got {physical.group('admin')!r}"
                log.add(expected, f"the interface of line {number} and its units", line=number)
                continue
            entries.append(
                _TextIf(
                    name=physical.group("name"),
                    line=number,
                    admin_up=_ADMIN[admin_text],
                    oper_up=physical.group("link").lower() == "up",
                    physical=True,
                    fields={},
                    families=[],
                )
            )
            continue
        if dropped:
            continue
        logical = _LOGICAL.fullmatch(line)
        if logical:
            entries.append(_TextIf(logical.group("name"), number, None, None, physical=False, fields={}, families=[]))
            continue
        if not line[0].isspace():
            expected = f"expected `Physical interface: <name>, ...`, got {line.strip()[:60]!r}"
            log.add(expected, f"the interface of line {number} and its units", line=number)
            dropped = True
            continue
        if not entries:
            raise ParseError(
                source, "expected `Physical interface: <name>, ...` or `Logical interface <name>` first", line=number
            )
        entry = entries[-1]
        stripped = line.strip()
        if not _WORD_START.match(stripped):  # garbage (maybe a garbled `Logical interface` line): not read
            expected = f"expected an indented `<field>: <value>` line, got {stripped[:60]!r}"
            log.add(expected, f"line {number}", line=number)
            continue
        if not entry.physical and stripped.startswith("Flags:"):
            if "flags" not in entry.fields:
                entry.fields["flags"] = stripped
                entry.admin_up, entry.oper_up = _logical_state(frozenset(stripped[len("Flags:") :].split()))
            continue
        protocol = _PROTOCOL.match(stripped)
        if protocol and not entry.physical:
            entry.families.append((protocol.group("family"), protocol.group("mtu")))
            continue
        if stripped.startswith("Description:"):
            entry.fields.setdefault("Description", stripped[len("Description:") :].strip())
            continue
        depth = len(line) - len(line.lstrip())
        if entry.physical and depth <= 2:
            for key, value in _pairs(stripped).items():
                entry.fields.setdefault(key, value)
    if not entries and log.problems:
        raise log.problems[0].error()
    if not entries:
        raise ParseError(source, "expected `Physical interface: <name>, ...` or `Logical interface <name>`", line=1)
    out: list[Interface] = []
    for entry in entries:
        with log.skipping(f"interface {entry.name}"):
            out.append(_text_interface(entry, source))
    return _usable(out, log)


# --- dispatch -------------------------------------------------------------------------------------

_SHAPES = (
    "`show lldp neighbors [detail] | display json`",
    "`show interfaces | display json`",
    "`show lldp neighbors` text",
    "`show interfaces` text",
)


def parse(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[Neighbor, ...] | tuple[Interface, ...]:
    """Auto-detect the shape by its top-level JSON key or its first text line."""
    log = _log(source, problems)
    body = _strip_banners(text)
    stripped = body.lstrip()
    if stripped.startswith(("{", "[")):
        root = load_json(body, source)
        if isinstance(root, dict) and "lldp-neighbors-information" in root:
            return _lldp_json(root, source, log)
        if isinstance(root, dict) and "interface-information" in root:
            return _interfaces_json(root, source, log)
        keys = ", ".join(sorted(root)) if isinstance(root, dict) else type_name(root)
        raise ParseError(
            source,
            f"expected one of: {'; '.join(_SHAPES)} (top-level 'lldp-neighbors-information' or "
            f"'interface-information'), got {keys}",
            key="<root>",
        )
    first = next((line for line in body.splitlines() if line.strip()), "")
    if first.startswith("Physical interface:") or _LOGICAL.fullmatch(first.rstrip()):
        return parse_interfaces_text(text, source, log)
    if _LLDP_HEADER.fullmatch(first.rstrip()):
        return parse_lldp_text(text, source, log)
    raise ParseError(source, "expected one of: " + "; ".join(_SHAPES), line=1)
