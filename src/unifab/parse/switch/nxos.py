"""Cisco NX-OS LLDP neighbors and interface state (tested on NX-OSv 9.3(4) and 6.x/7.x text).

Shapes (:func:`parse` tells them apart):

* ``show lldp neighbors | json native`` -> :func:`parse_lldp_json`::

      {"TABLE_nbor": {"ROW_nbor": [{"chassis_type": "Locally Assigned", "chassis_id": "spine01",
        "l_port_id": "Eth1/1", "hold_time": 120, "port_type": "Interface Name", "port_id": "Ethernet1/1",
        "mgmt_addr_type": "IPV4", "mgmt_addr": "10.255.2.119", ...}]}, "neigh_count": 4}

  The brief table has no system-name field: ``chassis_id`` is the CLI's "Device ID" column, the
  peer's system name (9.3 labels it ``Locally Assigned``) or its chassis MAC when it sent no name
  (``Mac Address``). It is kept as ``chassis_id`` and, unless it is a MAC, also as ``system_name``.
  ``mgmt_addr_ipv6`` with type ``802`` is a MAC address, not IPv6, and is ignored.
* ``show lldp neighbors detail`` text -> :func:`parse_lldp_text`: blocks of ``Key: value`` lines
  starting at ``Chassis id:``; ``System Description`` may continue over several lines (``TAC support:
  ...``, ``Copyright ...``), so only the keys in :data:`DETAIL_KEYS` start a new field. The port-id
  subtype is not printed (``port_id_type`` None); ``not advertised``/``null`` values are None.
* ``show interface brief | json native`` -> :func:`parse_interfaces_json`.
* ``show interface`` text, full or filtered with ``| egrep '^\\w|Hardware|MTU|reset'`` ->
  :func:`parse_interfaces_text`.

Prompt and command lines pasted before or after the text (``switch# show interface``, see
:func:`unifab.parse._text.blank_prompts`) are ignored.

NX-OS prints one-row tables as an object instead of a one-element list; both are accepted. The local
port in LLDP output is abbreviated (``Eth1/1``, ``Po1``); it is expanded to the interface name the
interface commands print (``Ethernet1/1``, ``port-channel1``) with :data:`IFNAME_ABBREVIATIONS`, so
neighbors join to interfaces. Remote port ids are kept as the peer sent them.

Interface rules:

* brief JSON: ``state`` up -> admin and oper up; down with reason ``Administratively down`` -> both
  down; down for any other reason (``Link not connected``, ``XCVR not inserted``) -> admin up, oper
  down. SVIs (``VlanN``) carry only ``svi_admin_state``: oper is None unless admin is down. ``speed``
  ``1000``/``a-1000``/``10G``/``a-100G`` -> Mbit/s; ``auto``, ``--`` and ``unknown enum:<...>`` -> None.
  ``mtu`` only where the row has it (mgmt0, nve); no MAC or description.
* text: ``<name> is up|down|trunking [(reason)][, line protocol is up|down]`` (``trunking``: a (virtual)
  Fibre Channel port that is up as a trunk); ``admin state is up|down``; ``Hardware: ..., address:
  aaaa.bbbb.cccc``; ``MTU 9216 bytes``; the description, ``Description: ...`` on Ethernet, port-channel,
  Vlan, loopback, mgmt0 and nve interfaces, ``Port description is ...`` on FCoE ``vfc`` and FC ports
  (where ``Bound interface is EthernetX`` names the carrier); a counter line that lost its indentation
  in a paste (it starts with a digit) stays in its interface's block; speed only from a
  ``... 1000 Mb/s`` / ``10 Gb/s`` line, which the egrep filter drops (``BW`` is the configured bandwidth,
  not the speed, and is not used).
* ``kind`` by name (:data:`KIND_BY_PREFIX`): Ethernet -> ethernet (``Ethernet1/1.10`` ->
  subinterface), port-channel -> bond, loopback, Vlan -> vlan, mgmt -> ethernet, nve -> vxlan,
  Tunnel -> tunnel.

With a :class:`~unifab.errors.ParseProblems` collector a bad row of the JSON tables costs that row (named by
its key path), a bad neighbour block of the LLDP text that neighbour, and in ``show interface`` text a line
that is neither a header nor a detail (nor an indented line starting with a word or a number) costs the
interface it would start (its detail lines are skipped with it); a text or table with nothing read still raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeVar

from unifab.errors import ParseError, ParseProblems
from unifab.parse._json import child, json_object, load_json, type_name
from unifab.parse._text import blank_prompts, pasted
from unifab.parse.netdev import (
    Interface,
    Neighbor,
    mac_if,
    normalize_mac,
    port_id_subtype,
    rows,
)

__all__ = [
    "DETAIL_KEYS",
    "IFNAME_ABBREVIATIONS",
    "KIND_BY_PREFIX",
    "expand_ifname",
    "parse",
    "parse_interfaces_json",
    "parse_interfaces_text",
    "parse_lldp_json",
    "parse_lldp_text",
]

# Abbreviation NX-OS prints in LLDP/CDP tables -> the full interface-name prefix (case-sensitive).
IFNAME_ABBREVIATIONS: dict[str, str] = {
    "Eth": "Ethernet",
    "Po": "port-channel",
    "Lo": "loopback",
    "Vlan": "Vlan",
    "Tunnel": "Tunnel",
    "mgmt": "mgmt",
}
# Interface-name prefix (lower-case) -> kind.
KIND_BY_PREFIX: dict[str, str] = {
    "ethernet": "ethernet",
    "port-channel": "bond",
    "loopback": "loopback",
    "vlan": "vlan",
    "mgmt": "ethernet",
    "nve": "vxlan",
    "tunnel": "tunnel",
}
# Keys of `show lldp neighbors detail` that start a field; anything else continues System Description.
DETAIL_KEYS: dict[str, str] = {
    "Chassis id": "chassis_id",
    "Port id": "port_id",
    "Local Port id": "local_port",
    "Port Description": "port_descr",
    "System Name": "system_name",
    "System Description": "system_descr",
    "Time remaining": "",
    "System Capabilities": "",
    "Enabled Capabilities": "",
    "Management Address": "mgmt_ip",
    "Management Address IPV6": "mgmt_ipv6",
    "Vlan ID": "",
}
_NOT_ADVERTISED = frozenset({"", "not advertised", "null", "n/a"})
_ABBREVIATED = re.compile(r"([A-Za-z-]+)(\d.*)")
_SPEED = re.compile(r"(?:a-)?(\d+)([GM]?)")
_NO_SPEED = frozenset({"auto", "--", ""})

T = TypeVar("T")


def expand_ifname(name: str) -> str:
    """``Eth1/1`` -> ``Ethernet1/1``, ``Po1`` -> ``port-channel1``; other names unchanged."""
    match = _ABBREVIATED.fullmatch(name)
    if match is None:
        return name
    prefix = IFNAME_ABBREVIATIONS.get(match.group(1))
    return name if prefix is None else prefix + match.group(2)


def _kind(name: str) -> str | None:
    lower = name.lower()
    for prefix, kind in KIND_BY_PREFIX.items():
        if lower.startswith(prefix):
            return "subinterface" if kind == "ethernet" and "." in name else kind
    return None


def _value(text: str | None) -> str | None:
    if text is None:
        return None
    text = text.strip()
    return None if text.lower() in _NOT_ADVERTISED else text


# --- JSON -----------------------------------------------------------------------------------------


def _field(row: dict[str, object], key: str, path: str, source: str) -> str | None:
    """A scalar field as text (NX-OS prints numbers unquoted in some versions)."""
    value = row.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ParseError(source, f"expected a string or integer, got {type_name(value)}", key=child(path, key))
    return str(value)


def _table(decoded: object, table: str, row: str, source: str) -> list[tuple[str, dict[str, object]]]:
    root = json_object(decoded, "", source)
    if table not in root:
        return []
    return rows(json_object(root[table], table, source).get(row), f"{table}.{row}", source)


def _all_bad(records: tuple[T, ...], log: ParseProblems) -> tuple[T, ...]:
    """``records``, unless every row was bad: then nothing is usable and the first problem is raised."""
    if not records and log.problems:
        raise log.problems[0].error()
    return records


def _lldp_json(decoded: object, source: str, log: ParseProblems) -> tuple[Neighbor, ...]:
    root = json_object(decoded, "", source)
    if "TABLE_nbor" not in root and "neigh_count" not in root:
        raise ParseError(source, "expected 'TABLE_nbor' (show lldp neighbors | json native)", key="TABLE_nbor")
    neighbors: list[Neighbor] = []
    for path, row in _table(root, "TABLE_nbor", "ROW_nbor", source):
        with log.skipping(f"the neighbour {path}"):
            neighbors.append(_lldp_row(row, path, source))
    return _all_bad(tuple(neighbors), log)


def _lldp_row(row: dict[str, object], path: str, source: str) -> Neighbor:
    local = _value(_field(row, "l_port_id", path, source))
    if local is None:
        raise ParseError(source, "expected the local port 'l_port_id'", key=child(path, "l_port_id"))
    chassis_type = port_id_subtype(_field(row, "chassis_type", path, source))
    device = _value(_field(row, "chassis_id", path, source))
    device_is_mac = chassis_type == "mac" or (chassis_type is None and normalize_mac(device) is not None)
    port_type = port_id_subtype(_field(row, "port_type", path, source))
    return Neighbor(
        local_port=expand_ifname(local),
        system_name=None if device_is_mac else device,
        chassis_id=mac_if(chassis_type, device, guess=True),
        port_id=mac_if(port_type, _value(_field(row, "port_id", path, source))),
        port_id_type=port_type,
        port_descr=_value(_field(row, "port_desc", path, source)),
        mgmt_ip=_value(_field(row, "mgmt_addr", path, source)),
        mfs=None,
    )


def _strict(source: str, problems: ParseProblems | None) -> ParseProblems:
    return problems if problems is not None else ParseProblems.strict(source)


def parse_lldp_json(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[Neighbor, ...]:
    """Parse ``show lldp neighbors | json native`` (the brief table)."""
    return _lldp_json(load_json(text, source), source, _strict(source, problems))


def _speed(value: str | None, path: str, source: str) -> int | None:
    if value is None:
        return None
    text = value.strip()
    match = _SPEED.fullmatch(text)
    if match:
        number = int(match.group(1))
        return number * 1000 if match.group(2) == "G" else number
    if text.lower() in _NO_SPEED or text.lower().startswith("unknown"):
        return None
    raise ParseError(source, f"expected a speed such as '1000', 'a-10G' or 'auto', got {value!r}", key=path)


def _mtu(row: dict[str, object], path: str, source: str) -> int | None:
    value = _field(row, "mtu", path, source)
    if value is None:
        return None
    if not value.strip().isdigit():
        raise ParseError(source, f"expected an MTU in bytes, got {value!r}", key=child(path, "mtu"))
    return int(value)


def _up(value: str | None, path: str, source: str) -> bool | None:
    if value is None:
        return None
    if value in ("up", "down"):
        return value == "up"
    raise ParseError(source, f"expected 'up' or 'down', got {value!r}", key=path)


def _brief_row(row: dict[str, object], path: str, source: str) -> Interface:
    name = _value(_field(row, "interface", path, source))
    if name is None:
        raise ParseError(source, "expected the interface name 'interface'", key=child(path, "interface"))
    state = _up(_field(row, "state", path, source), child(path, "state"), source)
    svi_admin = _up(_field(row, "svi_admin_state", path, source), child(path, "svi_admin_state"), source)
    reason = (_field(row, "state_rsn_desc", path, source) or "").strip().lower()
    if state is True:
        admin_up: bool | None = True
        oper_up: bool | None = True
    elif state is False:
        admin_up = reason != "administratively down"
        oper_up = False
    else:
        admin_up = svi_admin
        oper_up = False if svi_admin is False else None
    return Interface(
        name=name,
        admin_up=admin_up,
        oper_up=oper_up,
        mtu=_mtu(row, path, source),
        speed_mbps=_speed(_field(row, "speed", path, source), child(path, "speed"), source),
        mac=None,
        description=_value(_field(row, "desc", path, source)),
        kind=_kind(name),
    )


def _interfaces_json(decoded: object, source: str, log: ParseProblems) -> tuple[Interface, ...]:
    root = json_object(decoded, "", source)
    if "TABLE_interface" not in root:
        raise ParseError(
            source, "expected 'TABLE_interface' (show interface brief | json native)", key="TABLE_interface"
        )
    out: list[Interface] = []
    for path, row in _table(root, "TABLE_interface", "ROW_interface", source):
        with log.skipping(f"the interface {path}"):
            out.append(_brief_row(row, path, source))
    return _all_bad(tuple(out), log)


def parse_interfaces_json(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[Interface, ...]:
    """Parse ``show interface brief | json native``."""
    return _interfaces_json(load_json(text, source), source, _strict(source, problems))


# --- text -----------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Block:
    line: int
    fields: dict[str, str] = field(default_factory=dict)
    last: str | None = None  # the field later lines continue ("?": a line that could not be read)
    headless: bool = False  # its `Chassis id:` line could not be read: passed over, named at that line


def _not_a_field(line: str) -> str:
    return f"expected a `Key: value` line of show lldp neighbors detail, got {line[:60]!r}"


def parse_lldp_text(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[Neighbor, ...]:
    """Parse ``show lldp neighbors detail`` text (blocks from ``Chassis id:``).

    A line that cannot be read is named once: the lines continuing it are passed over, and when the keys after
    it repeat those of the neighbour above (or come before any ``Chassis id:``) it was the `Chassis id:` line
    of a neighbour, so that neighbour is passed over up to the next ``Chassis id:``."""
    log = _strict(source, problems)
    blocks: list[_Block] = []
    seen_output = False
    stray: tuple[int, str] | None = None  # the last line that could not be read, named once the next tells what
    for number, raw in enumerate(blank_prompts(text).splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip():
            if blocks:
                blocks[-1].last = None
            continue
        key, sep, value = line.partition(":")
        key = key.strip()
        is_key = bool(sep) and key in DETAIL_KEYS
        if stray is not None:
            at, got = stray
            stray = None
            name = DETAIL_KEYS[key] if is_key else ""
            if is_key and key != "Chassis id" and (not blocks or (name and name in blocks[-1].fields)):
                expected = f"expected `Chassis id:` before this neighbour's {key!r} (line {number}), got {got[:60]!r}"
                log.add(expected, f"the neighbour at line {at}", line=at)
                blocks.append(_Block(at, headless=True))
            else:
                log.add(_not_a_field(got), f"line {at}", line=at)
        if blocks and blocks[-1].headless and not (is_key and key == "Chassis id"):
            continue
        if is_key:
            if key == "Chassis id":
                blocks.append(_Block(number))
            if not blocks:
                raise ParseError(source, f"expected `Chassis id:` before {key!r}", line=number)
            block = blocks[-1]
            name = DETAIL_KEYS[key]
            if name:
                if name in block.fields:
                    log.add(f"expected one {key!r} per neighbor", f"the repeated {key!r} line", line=number)
                    continue
                block.fields[name] = value.strip()
            block.last = name or None
            seen_output = True
            continue
        if blocks and blocks[-1].last == "system_descr":
            blocks[-1].fields["system_descr"] += "\n" + line
            continue
        if blocks and blocks[-1].last == "?":  # continues the line that could not be read, named there
            continue
        if line.startswith(("Capability codes", "  (", "Device ID", "Total entries displayed")):
            seen_output = True
            continue
        stray = (number, line)
        if blocks:
            blocks[-1].last = "?"
    if stray is not None:
        log.add(_not_a_field(stray[1]), f"line {stray[0]}", line=stray[0])
    if not seen_output and log.problems:
        raise log.problems[0].error()
    if not seen_output:
        raise ParseError(source, "expected `show lldp neighbors detail` output (`Chassis id: ...` blocks)", line=1)
    neighbors: list[Neighbor] = []
    for block in blocks:
        if block.headless:
            continue
        local = _value(block.fields.get("local_port"))
        if local is None:
            log.add(
                "expected `Local Port id:` in this neighbor", f"the neighbour of line {block.line}", line=block.line
            )
            continue
        neighbors.append(
            Neighbor(
                local_port=expand_ifname(local),
                system_name=_value(block.fields.get("system_name")),
                chassis_id=mac_if(None, _value(block.fields.get("chassis_id")), guess=True),
                port_id=_value(block.fields.get("port_id")),
                port_id_type=None,
                port_descr=_value(block.fields.get("port_descr")),
                mgmt_ip=_value(block.fields.get("mgmt_ip")) or _value(block.fields.get("mgmt_ipv6")),
                mfs=None,
            )
        )
    return _all_bad(tuple(neighbors), log)


_IF_HEADER = re.compile(
    r"(?P<name>\S+) is (?P<state>up|down|administratively down|trunking)"
    r"(?: \((?P<reason>[^)]*)\))?"
    r"(?:, line protocol is (?P<proto>up|down))?(?:,.*)?"
)
_ADMIN = re.compile(r"admin state is (up|down)")
_ADDRESS = re.compile(r"address(?::| is)\s+([0-9a-fA-F.:]+)")
_IF_MTU = re.compile(r"\bMTU (\d+) bytes")
_IF_SPEED = re.compile(r"\b(\d+) ([MG])b/s\b")
_WORD_START = re.compile(r"\w")  # every detail line starts with a word or a number


@dataclass(slots=True)
class _IfText:
    name: str
    line: int
    state: str
    reason: str | None
    proto: str | None
    admin: str | None = None
    mtu: int | None = None
    speed_mbps: int | None = None
    mac: str | None = None
    description: str | None = None

    def finish(self) -> Interface:
        if self.admin is not None:
            admin_up: bool | None = self.admin == "up"
        elif self.state == "administratively down" or (self.reason or "").lower() == "administratively down":
            admin_up = False
        elif self.state in ("up", "trunking"):
            admin_up = True
        else:
            admin_up = None
        oper_up = (self.proto == "up") if self.proto is not None else self.state in ("up", "trunking")
        return Interface(
            name=self.name,
            admin_up=admin_up,
            oper_up=oper_up,
            mtu=self.mtu,
            speed_mbps=self.speed_mbps,
            mac=self.mac,
            description=self.description,
            kind=_kind(self.name),
        )


def _if_text_line(entry: _IfText, text: str) -> None:
    admin = _ADMIN.search(text)
    if admin:
        entry.admin = admin.group(1)
    for label in ("Description:", "Port description is "):
        if text.startswith(label):
            entry.description = text[len(label) :].strip() or None
            return
    if "Hardware" in text:
        address = _ADDRESS.search(text)
        if address and entry.mac is None:
            entry.mac = normalize_mac(address.group(1))
    mtu = _IF_MTU.search(text)
    if mtu:
        entry.mtu = int(mtu.group(1))
    speed = _IF_SPEED.search(text)
    if speed and ("duplex" in text or "speed" in text):
        entry.speed_mbps = int(speed.group(1)) * (1000 if speed.group(2) == "G" else 1)


def parse_interfaces_text(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[Interface, ...]:
    """Parse ``show interface`` text (full, or filtered by ``egrep '^\\w|Hardware|MTU|reset'``)."""
    log = _strict(source, problems)
    entries: list[_IfText] = []
    dropped = False  # after a line that could not start an interface: its details are not the previous one's
    for number, raw in enumerate(blank_prompts(text).splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip():
            continue
        header = _IF_HEADER.fullmatch(line)
        if header and not line[0].isspace():
            dropped = False
            entries.append(
                _IfText(
                    name=header.group("name"),
                    line=number,
                    state=header.group("state"),
                    reason=header.group("reason"),
                    proto=header.group("proto"),
                )
            )
            continue
        # a counter line that lost its indentation in a paste ("143696673 unicast packets ...") is a detail
        detail = line[0].isspace() or line[0].isdigit() or line.startswith(("admin state", "Description:"))
        if dropped and detail:
            continue
        garbage = detail and not _WORD_START.match(line.strip())  # maybe a garbled header: its details go too
        if not entries or not detail or garbage:
            expected = f"expected `<interface> is up|down ...` or `admin state is ...`, got {line.strip()[:60]!r}"
            log.add(expected, f"the interface of line {number} and its detail lines", line=number)
            dropped = True
            continue
        _if_text_line(entries[-1], line.strip())
    if not entries and log.problems:
        raise log.problems[0].error()
    if not entries:
        raise ParseError(source, "expected `<interface> is up|down` (show interface output)", line=1)
    return tuple(entry.finish() for entry in entries)


# --- dispatch -------------------------------------------------------------------------------------

_SHAPES = (
    "`show lldp neighbors | json native`",
    "`show interface brief | json native`",
    "`show lldp neighbors detail` text",
    "`show interface` text",
)


@pasted
def parse(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[Neighbor, ...] | tuple[Interface, ...]:
    """Auto-detect the shape by its JSON table name or its first text line."""
    log = _strict(source, problems)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        root = load_json(text, source)
        if isinstance(root, dict) and ("TABLE_nbor" in root or "neigh_count" in root):
            return _lldp_json(root, source, log)
        if isinstance(root, dict) and "TABLE_interface" in root:
            return _interfaces_json(root, source, log)
        keys = ", ".join(sorted(root)) if isinstance(root, dict) else type_name(root)
        raise ParseError(
            source,
            f"expected one of: {'; '.join(_SHAPES)} (top-level 'TABLE_nbor' or 'TABLE_interface'), got {keys}",
            key="<root>",
        )
    first = next((line.rstrip() for line in blank_prompts(text).splitlines() if line.strip()), "")
    if first.startswith(("Capability codes", "Chassis id:")):
        return parse_lldp_text(text, source, log)
    if _IF_HEADER.fullmatch(first) and not first[0].isspace():
        return parse_interfaces_text(text, source, log)
    raise ParseError(source, "expected one of: " + "; ".join(_SHAPES), line=1)
