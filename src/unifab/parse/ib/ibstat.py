"""``ibstat`` and ``ibstatus`` (infiniband-diags 1.x .. 50.x): the local channel adapters and their ports.

``ibstat``::

    CA 'mlx5_0'
            CA type: MT4129
            Number of ports: 1
            Firmware version: 28.43.2026
            Hardware version: 0
            Node GUID: 0xa088c2030074cfda
            System image GUID: 0xa088c2030074cfda
            Port 1:
                    State: Active
                    Physical state: LinkUp
                    Rate: 400
                    Base lid: 50
                    LMC: 0
                    SM lid: 1
                    Capability mask: 0xa751e848
                    Port GUID: 0xa088c2030074cfda
                    Link layer: InfiniBand

``ibstatus`` (a script printing sysfs)::

    Infiniband device 'mlx5_0' port 1 status:
            default gid:     fe80:0000:0000:0000:a088:c203:0074:cfda
            base lid:        0x32
            sm lid:          0x1
            state:           4: ACTIVE
            phys state:      5: LinkUp
            rate:            400 Gb/sec (4X NDR)
            link_layer:      InfiniBand

:func:`parse` reads either (it tells them apart by the first line). Port states are given in libibmad's names
(``Down``, ``Initialize``, ``Armed``, ``Active``); ibsim's CAs print ``Rate: 104`` and ``CA type: simulator``.
ibstatus prints ``unknown`` for a sysfs file it cannot read (a port without ``lid``/``sm_lid``/``gids``: an
Ethernet port, a sysfs copy): that field is ``None``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse.ib._common import PHYS_STATES, PORT_STATES, content_lines, lanes, parse_guid, parse_hex, skippable

__all__ = ["Ibstat", "IbstatCa", "IbstatPort", "parse"]

# ibstat's and sysfs' spellings of PortState -> libibmad's.
_STATE_NAMES = {
    "down": "Down",
    "initializing": "Initialize",
    "initialize": "Initialize",
    "init": "Initialize",
    "armed": "Armed",
    "active": "Active",
    "active_defer": "Active",
}

_CA = re.compile(r"^CA '([^']*)'\s*$")
_PORT = re.compile(r"^Port (\d+):\s*$")
_KEY = re.compile(r"^([A-Za-z][A-Za-z _]*?):\s*(.*)$")
_STATUS = re.compile(r"^Infiniband device '([^']*)' port (\d+) status:\s*$")
_NUMBERED = re.compile(r"^(\d+):\s*(\S+)$")
_UNKNOWN = "unknown"  # what ibstatus prints for a sysfs file that is missing (``base lid: unknown``)
_RATE = re.compile(r"^(\d+(?:\.\d+)?)(?:\s*Gb/sec)?(?:\s*\((\d+X)\s*(\w+)\))?$")


@dataclass(frozen=True, slots=True)
class IbstatPort:
    """One port: ``state`` ``Down``/``Initialize``/``Armed``/``Active``, ``physical_state`` ``LinkUp``/``Polling``/
    ``Disabled``/..., ``rate_gbps`` (the port's total rate), ``width``/``speed`` (``4X``/``NDR``, ibstatus only),
    LIDs, ``capability_mask``, ``port_guid`` (ibstat) or ``gid`` (ibstatus), ``link_layer`` as printed."""

    port: int
    state: str | None
    physical_state: str | None
    rate_gbps: float | None
    width: str | None
    speed: str | None
    base_lid: int | None
    lmc: int | None
    sm_lid: int | None
    capability_mask: int | None
    port_guid: int | None
    gid: str | None
    link_layer: str | None

    @property
    def lanes(self) -> int | None:
        return lanes(self.width)

    @property
    def is_infiniband(self) -> bool:
        return (self.link_layer or "").lower() in ("infiniband", "ib")


@dataclass(frozen=True, slots=True)
class IbstatCa:
    """A CA: its RDMA device ``name`` (``mlx5_0``), ``ca_type`` (``MT4129``), firmware/hardware versions and
    GUIDs (ibstat only; ``None`` from ibstatus), its ``ports``."""

    name: str
    ca_type: str | None
    nports: int | None
    firmware: str | None
    hardware: str | None
    node_guid: int | None
    sys_image_guid: int | None
    ports: tuple[IbstatPort, ...]


@dataclass(frozen=True, slots=True)
class Ibstat:
    cas: tuple[IbstatCa, ...]

    def ca(self, name: str) -> IbstatCa | None:
        return next((c for c in self.cas if c.name == name), None)


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> Ibstat:
    """``ibstat`` or ``ibstatus`` output; with a lenient ``problems`` a bad field costs its port (or CA)."""
    problems = problems if problems is not None else ParseProblems.strict(source)
    lines = [(n, line) for n, line in content_lines(text) if not (skippable(line) and not line[0].isspace())]
    if not lines:
        raise ParseError(source, "expected ibstat ('CA ...') or ibstatus ('Infiniband device ...') output", line=1)
    first = lines[0][1].strip()
    if _STATUS.match(first):
        return _ibstatus(lines, source, problems)
    if _CA.match(first):
        return _ibstat(lines, source, problems)
    raise ParseError(
        source, "expected \"CA '<name>'\" (ibstat) or \"Infiniband device '<name>' port N status:\"", line=lines[0][0]
    )


def _state(value: str) -> str:
    m = _NUMBERED.match(value)
    if m is not None:
        number = int(m.group(1))
        return PORT_STATES[number] if number < len(PORT_STATES) else m.group(2).capitalize()
    return _STATE_NAMES.get(value.lower(), value)


def _phys(value: str) -> str:
    m = _NUMBERED.match(value)
    if m is not None:
        number = int(m.group(1))
        return PHYS_STATES[number] if number < len(PHYS_STATES) else m.group(2)
    return value


def _int(value: str, source: str, number: int, what: str) -> int:
    text = value.strip()
    if text[:2].lower() == "0x":
        return parse_hex(text, source, number, what)
    if not (text.isascii() and text.isdigit()):
        raise ParseError(source, f"expected {what} as an integer, got {value!r}", line=number)
    return int(text)


def _rate(value: str, source: str, number: int) -> tuple[float, str | None, str | None]:
    m = _RATE.match(value.strip())
    if m is None:
        raise ParseError(source, f"expected a rate ('400' or '400 Gb/sec (4X NDR)'), got {value!r}", line=number)
    return float(m.group(1)), m.group(2), m.group(3)


def _port(port: int, fields: dict[str, tuple[int, str]], source: str) -> IbstatPort:
    def get(*keys: str) -> tuple[int, str] | None:
        """The field, ``None`` also for ibstatus' ``unknown`` (its word for a sysfs file it could not read)."""
        found = next((fields[k] for k in keys if k in fields), None)
        return None if found is None or found[1].lower() == _UNKNOWN else found

    rate = width = speed = None
    if (r := get("rate")) is not None:
        rate, width, speed = _rate(r[1], source, r[0])
    state = get("state")
    phys = get("physical state", "phys state")
    guid = get("port guid")
    mask = get("capability mask")
    gid = get("default gid")
    layer = get("link layer", "link_layer")
    values: dict[str, int | None] = {}
    for key, what in (("base lid", "the base LID"), ("lmc", "the LMC"), ("sm lid", "the SM LID")):
        item = get(key)
        values[key] = None if item is None else _int(item[1], source, item[0], what)
    return IbstatPort(
        port=port,
        state=None if state is None else _state(state[1]),
        physical_state=None if phys is None else _phys(phys[1]),
        rate_gbps=rate,
        width=width,
        speed=speed,
        base_lid=values["base lid"],
        lmc=values["lmc"],
        sm_lid=values["sm lid"],
        capability_mask=None if mask is None else parse_hex(mask[1], source, mask[0], "the capability mask"),
        port_guid=None if guid is None else parse_guid(guid[1], source, guid[0], "the port GUID"),
        gid=None if gid is None else gid[1],
        link_layer=None if layer is None else layer[1] or None,
    )


def _ibstat(lines: list[tuple[int, str]], source: str, problems: ParseProblems) -> Ibstat:
    cas: list[IbstatCa] = []
    name: str | None = None
    ca_fields: dict[str, tuple[int, str]] = {}
    port_no: int | None = None
    port_fields: dict[str, tuple[int, str]] = {}
    ports: list[IbstatPort] = []

    def close_port() -> None:
        if port_no is not None:
            with problems.skipping(f"port {port_no} of {name}"):
                ports.append(_port(port_no, port_fields, source))

    def close_ca() -> None:
        if name is None:
            return
        with problems.skipping(f"CA {name}"):
            cas.append(_ca(name, ca_fields, tuple(ports), source))

    for number, line in lines:
        stripped = line.strip()
        if (m := _CA.match(stripped)) is not None:
            close_port()
            close_ca()
            name, ca_fields, port_no, port_fields, ports = m.group(1), {}, None, {}, []
            continue
        if name is None:
            raise ParseError(source, "expected \"CA '<name>'\" first", line=number)
        if (m := _PORT.match(stripped)) is not None:
            close_port()
            port_no, port_fields = int(m.group(1)), {}
            continue
        if (m := _KEY.match(stripped)) is None:
            raise ParseError(source, "expected 'Key: value', 'Port N:' or \"CA '<name>'\"", line=number)
        target = ca_fields if port_no is None else port_fields
        target[m.group(1).strip().lower()] = (number, m.group(2).strip())
    close_port()
    close_ca()
    if not cas:
        raise problems.problems[0].error() if problems.problems else ParseError(source, "expected a CA", line=1)
    return Ibstat(tuple(cas))


def _ca(name: str, fields: dict[str, tuple[int, str]], ports: tuple[IbstatPort, ...], source: str) -> IbstatCa:
    def text(key: str) -> str | None:
        return fields[key][1] if key in fields else None

    def guid(key: str, what: str) -> int | None:
        return parse_guid(fields[key][1], source, fields[key][0], what) if key in fields else None

    nports = fields.get("number of ports")
    return IbstatCa(
        name=name,
        ca_type=text("ca type"),
        nports=None if nports is None else _int(nports[1], source, nports[0], "the number of ports"),
        firmware=text("firmware version"),
        hardware=text("hardware version"),
        node_guid=guid("node guid", "the node GUID"),
        sys_image_guid=guid("system image guid", "the system image GUID"),
        ports=ports,
    )


def _ibstatus(lines: list[tuple[int, str]], source: str, problems: ParseProblems) -> Ibstat:
    by_ca: dict[str, list[IbstatPort]] = {}
    head: tuple[str, int] | None = None
    fields: dict[str, tuple[int, str]] = {}

    def close() -> None:
        if head is not None:
            with problems.skipping(f"port {head[1]} of {head[0]}"):
                by_ca.setdefault(head[0], []).append(_port(head[1], fields, source))

    for number, line in lines:
        stripped = line.strip()
        if (m := _STATUS.match(stripped)) is not None:
            close()
            head, fields = (m.group(1), int(m.group(2))), {}
            continue
        if head is None or (m := _KEY.match(stripped)) is None:
            raise ParseError(
                source, "expected 'key: value' under \"Infiniband device '<name>' port N status:\"", line=number
            )
        fields[m.group(1).strip().lower()] = (number, m.group(2).strip())
    close()
    if not by_ca:
        raise problems.problems[0].error() if problems.problems else ParseError(source, "expected a port", line=1)
    return Ibstat(tuple(IbstatCa(n, None, len(p), None, None, None, None, tuple(p)) for n, p in by_ca.items()))
