"""SONiC LLDP neighbours from APPL_DB ``LLDP_ENTRY_TABLE:<local port>`` (written by lldp_syncd).

Input: an APPL_DB dump (Redis DB 0) in the flat mock shape (sonic-snmpagent
``tests/mock_tables/appl_db.json``) or ``sonic-db-dump -n APPL_DB``; see
:func:`unifab.parse.switch.sonic_state_db.read_dump`. Only ``LLDP_ENTRY_TABLE:*`` keys are read, so
a whole APPL_DB dump works. lldp_syncd (sonic-dbsyncd) publishes one neighbour per local port:

======================================  =========================================================
``lldp_rem_sys_name``                   system name
``lldp_rem_chassis_id`` (+ ``_subtype``) chassis id; subtype per IEEE 802.1AB (4 = MAC)
``lldp_rem_port_id`` (+ ``_subtype``)   port id; subtype 5 = ifName, 3 = MAC, 7 = local
``lldp_rem_port_desc``                  port description
``lldp_rem_sys_desc``                   system description
``lldp_rem_sys_cap_supported/_enabled`` capability BITS as hex octets, ``"28 00"`` = Bridge, Router
``lldp_rem_man_addr``                   management addresses, comma-separated (newer lldp_syncd)
======================================  =========================================================

Subtype numbers become lldpd's names (``ifname``, ``mac``, ``local``, ``ifalias``, ``ip``) so the
records compare with :mod:`unifab.parse.host.lldpcli`; the two subtypes lldpd has no name for get
``port-component`` / ``agent-circuit-id`` / ``chassis-component``, and a number outside 1..7 gives
``unknown``. Capability bits are numbered from the most significant bit of the first octet
(``LldpSystemCapabilitiesMap``) and named as lldpd prints them. A description that is only blanks
(the mock's ``lldp_rem_port_desc: " "``) reads as ``None``. lldp_syncd publishes no 802.3
max-frame-size TLV, so a peer's MTU is not here.

A subtype that is not a number, or capabilities that are not hex octets, are a problem naming the Redis
key: with a :class:`~unifab.errors.ParseProblems` collector that neighbour is skipped and the others are
read; without one :class:`~unifab.errors.ParseError` is raised. :func:`dump` writes the flat shape back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import orjson

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import natural_key, pasted
from unifab.parse.switch.sonic_state_db import read_dump

__all__ = [
    "CAPABILITIES",
    "CHASSIS_ID_SUBTYPES",
    "PORT_ID_SUBTYPES",
    "TABLE",
    "SonicLldpNeighbor",
    "dump",
    "parse",
    "resolve",
]

TABLE = "LLDP_ENTRY_TABLE"
SEPARATOR = ":"

# IEEE 802.1AB PortIdSubtype / ChassisIdSubtype -> lldpd's names (lib/atoms/{port,chassis}.c).
PORT_ID_SUBTYPES: dict[int, str] = {
    1: "ifalias",
    2: "port-component",
    3: "mac",
    4: "ip",
    5: "ifname",
    6: "agent-circuit-id",
    7: "local",
}
CHASSIS_ID_SUBTYPES: dict[int, str] = {
    1: "chassis-component",
    2: "ifalias",
    3: "port-component",
    4: "mac",
    5: "ip",
    6: "ifname",
    7: "local",
}
UNKNOWN_SUBTYPE = "unknown"
# LldpSystemCapabilitiesMap bit -> lldpd's name (bit 0 is 0x80 of the first octet).
CAPABILITIES = ("Other", "Repeater", "Bridge", "Wlan", "Router", "Tel", "Docsis", "Station", "CVLAN", "SVLAN", "TPMR")

_HEX_OCTETS = re.compile(r"[0-9A-Fa-f]{2}(?: +[0-9A-Fa-f]{2})*")


@dataclass(frozen=True, slots=True)
class SonicLldpNeighbor:
    """One neighbour lldp_syncd published for one local port."""

    local_port: str
    system_name: str | None
    chassis_id: str | None
    chassis_id_subtype: str | None  # "mac" | "ifname" | "local" | "ip" | ...
    port_id: str | None
    port_id_subtype: str | None  # "ifname" | "mac" | "local" | ...
    port_descr: str | None
    system_descr: str | None
    mgmt_address: str | None  # the first management address
    mgmt_addresses: tuple[str, ...]
    capabilities_supported: tuple[str, ...]  # e.g. ("Bridge", "Router")
    capabilities_enabled: tuple[str, ...]


@pasted
def parse(
    text: str | bytes, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[SonicLldpNeighbor, ...]:
    """Every ``LLDP_ENTRY_TABLE:<port>`` entry, in natural port order."""
    dump = read_dump(text, source, problems)
    return resolve(dump.hashes, source, problems)


def resolve(
    hashes: dict[str, dict[str, str]], source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[SonicLldpNeighbor, ...]:
    """Neighbours from ``redis key -> fields`` (a dump, or hashes read from Redis)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    entries: list[tuple[str, str, dict[str, str]]] = []
    prefix = TABLE + SEPARATOR
    for key, fields in hashes.items():
        if key.startswith(prefix):
            port = key[len(prefix) :]
            if not port:
                log.add(f"a local port name after '{prefix}'", f"key {key}", key=key)
                continue
            entries.append((port, key, fields))
    entries.sort(key=lambda e: natural_key(e[0]))
    out: list[SonicLldpNeighbor] = []
    for port, key, fields in entries:
        with log.skipping(f"the LLDP neighbour of {port}"):
            out.append(_neighbor(port, key, fields, source))
    return tuple(out)


def _neighbor(port: str, key: str, f: dict[str, str], source: str) -> SonicLldpNeighbor:
    addrs = tuple(a.strip() for a in f.get("lldp_rem_man_addr", "").split(",") if a.strip())
    return SonicLldpNeighbor(
        local_port=port,
        system_name=_text(f.get("lldp_rem_sys_name")),
        chassis_id=_text(f.get("lldp_rem_chassis_id")),
        chassis_id_subtype=_subtype(f, "lldp_rem_chassis_id_subtype", CHASSIS_ID_SUBTYPES, key, source),
        port_id=_text(f.get("lldp_rem_port_id")),
        port_id_subtype=_subtype(f, "lldp_rem_port_id_subtype", PORT_ID_SUBTYPES, key, source),
        port_descr=_text(f.get("lldp_rem_port_desc")),
        system_descr=_text(f.get("lldp_rem_sys_desc")),
        mgmt_address=addrs[0] if addrs else None,
        mgmt_addresses=addrs,
        capabilities_supported=_caps(f, "lldp_rem_sys_cap_supported", key, source),
        capabilities_enabled=_caps(f, "lldp_rem_sys_cap_enabled", key, source),
    )


def _text(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    return value


def _subtype(f: dict[str, str], field: str, names: dict[int, str], key: str, source: str) -> str | None:
    raw = f.get(field)
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    if not (text.isdigit() and text.isascii()):
        raise ParseError(source, f"{field} as an IEEE 802.1AB subtype number, got {raw!r}", key=key)
    return names.get(int(text), UNKNOWN_SUBTYPE)


def _caps(f: dict[str, str], field: str, key: str, source: str) -> tuple[str, ...]:
    raw = f.get(field)
    if raw is None or not raw.strip():
        return ()
    text = raw.strip()
    if not _HEX_OCTETS.fullmatch(text):
        raise ParseError(source, f"{field} as hex octets such as '28 00', got {raw!r}", key=key)
    bits = b"".join(bytes.fromhex(octet) for octet in text.split())
    names: list[str] = []
    for i, name in enumerate(CAPABILITIES):
        octet = i // 8
        if octet < len(bits) and bits[octet] & (0x80 >> (i % 8)):
            names.append(name)
    return tuple(names)


# --- dump ---------------------------------------------------------------------------------------


def dump(neighbors: tuple[SonicLldpNeighbor, ...] | list[SonicLldpNeighbor]) -> str:
    """APPL_DB ``LLDP_ENTRY_TABLE`` entries in the flat mock shape (``parse(dump(n)) == n`` for
    records :func:`parse` can produce: subtype names from the tables, capabilities in bit order)."""
    doc: dict[str, dict[str, str]] = {}
    for nb in neighbors:
        f: dict[str, str] = {}
        _put(f, "lldp_rem_sys_name", nb.system_name)
        _put(f, "lldp_rem_chassis_id", nb.chassis_id)
        _put(f, "lldp_rem_chassis_id_subtype", _subtype_number(nb.chassis_id_subtype, CHASSIS_ID_SUBTYPES))
        _put(f, "lldp_rem_port_id", nb.port_id)
        _put(f, "lldp_rem_port_id_subtype", _subtype_number(nb.port_id_subtype, PORT_ID_SUBTYPES))
        _put(f, "lldp_rem_port_desc", nb.port_descr)
        _put(f, "lldp_rem_sys_desc", nb.system_descr)
        if nb.mgmt_addresses:
            f["lldp_rem_man_addr"] = ",".join(nb.mgmt_addresses)
        if nb.capabilities_supported:
            f["lldp_rem_sys_cap_supported"] = _caps_hex(nb.capabilities_supported)
        if nb.capabilities_enabled:
            f["lldp_rem_sys_cap_enabled"] = _caps_hex(nb.capabilities_enabled)
        f["lldp_rem_index"] = "1"
        doc[f"{TABLE}{SEPARATOR}{nb.local_port}"] = f
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"


def _put(f: dict[str, str], field: str, value: str | None) -> None:
    if value is not None:
        f[field] = value


def _subtype_number(name: str | None, names: dict[int, str]) -> str | None:
    if name is None:
        return None
    for number, known in names.items():
        if known == name:
            return str(number)
    return "0"  # "unknown" (or a name no table has) reads back as unknown


def _caps_hex(caps: tuple[str, ...]) -> str:
    bits = bytearray(2)
    for name in caps:
        i = CAPABILITIES.index(name)
        bits[i // 8] |= 0x80 >> (i % 8)
    return " ".join(f"{b:02X}" for b in bits)
