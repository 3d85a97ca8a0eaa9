"""Arista EOS CLI text: ``show interfaces``, ``show interfaces status``, ``show lldp neighbors [detail]``.

Reads the text EOS prints on the CLI (the ntc-templates captures: EOS 4.1x-4.2x; the LLDP detail
capture is EOS 4.15.2F) into the vendor-neutral :class:`~unifab.parse.netdev.Interface` and
:class:`~unifab.parse.netdev.Neighbor` records. :func:`parse` tells the four commands apart by their
first line.

* ``show interfaces``: one block per interface, ``NAME is up|down|administratively down, line protocol
  is STATE (...)``; ``Hardware is KIND, address is MAC`` (an all-zero address, printed for an empty
  Port-Channel, is ``None``); ``Description:``; ``IP MTU N bytes [(default)]`` (routed ports, SVIs,
  loopbacks) or ``Ethernet MTU N bytes`` (switched/L2) -> ``mtu``; ``Full-duplex, 10Gb/s, ...`` ->
  ``speed_mbps`` (``Unconfigured`` -> ``None``), falling back to ``BW N kbit``. ``Member of
  Port-Channel1`` (a LAG member) and a Port-Channel's member list (``... Ethernet47 , Full-duplex,
  1Gb/s``) are not the interface's own state and are skipped, as are counter lines.
* ``show interfaces status``: a fixed-width table. Port names are abbreviated (``Et3/1/1``) and
  expanded with :data:`IFNAME_ABBREVIATIONS`; the ``Name`` column is the description (truncated by
  EOS, may contain spaces); the status maps to admin/oper state by :data:`STATUS_STATE`; the speed
  column (``a-40G`` auto-negotiated, ``100G``, ``10M``, ``auto``/``unconf`` -> ``None``) to ``speed_mbps``.
  A row whose cells do not line up under the header (padding collapsed in a paste) is read by tokens:
  the status is the last known status word followed by VLAN, duplex and a readable speed; the words
  between the port and it are the name.
* ``show lldp neighbors``: table ``Port  Neighbor Device ID  Neighbor Port ID  TTL``. The device id is
  the neighbor's system name (or its chassis id when it sends none); it is reported as ``system_name``.
  The dashed rule EOS 4.2x prints under the header (``---------- ----...``) is skipped.
* ``show lldp neighbors detail``: ``Interface X detected N LLDP neighbors:`` then one ``Neighbor`` block
  each, with TLV lines ``- Chassis ID type``, ``Port ID type`` (+ ``Port ID``), ``Port Description``,
  ``System Name``, ``Management Address Subtype`` (+ ``Management Address``; only IPv4/IPv6 addresses
  become ``mgmt_ip``, an ``Ethernet`` subtype carries a MAC) and ``IEEE802.3 Maximum Frame Size: N bytes``
  -> ``mfs``. The ``Port ID`` line inside the Link Aggregation TLV is not the neighbor's port id. The
  number of neighbor blocks must match the count in the ``Interface`` line (a truncated capture is an
  error).

With a :class:`~unifab.errors.ParseProblems` collector the three tables read past a bad row: in ``show
interfaces`` an interface whose header or a detail line cannot be read is skipped with all its lines (an
indented line starting with no word, number or ``...`` is named and skipped with the lines under it), in
``show interfaces status`` and ``show lldp neighbors`` a bad row costs that row. The header is still
required and a text with no row read raises. (``show lldp neighbors detail`` stays all-or-nothing: its
neighbour count per interface is what tells a truncated capture.)

Pasted captures may carry prompt and comment lines before and after the output (``leaf1#show lldp
neighbors``, ``$ ssh leaf1 ...``, a Markdown fence, see :func:`unifab.parse._text.blank_prompts`); they
are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import blank_prompts, column_starts, fixed_cells
from unifab.parse.netdev import Interface, Neighbor, mac_if, normalize_mac, port_id_subtype

__all__ = [
    "IFNAME_ABBREVIATIONS",
    "KIND_BY_HARDWARE",
    "STATUS_STATE",
    "detect",
    "expand_ifname",
    "parse",
    "parse_lldp_neighbors",
    "parse_lldp_neighbors_detail",
    "parse_show_interfaces",
    "parse_show_interfaces_status",
    "speed_column_to_mbps",
]

# EOS short interface names (status and lldp tables) -> the names ``show interfaces`` prints.
IFNAME_ABBREVIATIONS: dict[str, str] = {
    "Et": "Ethernet",
    "Ma": "Management",
    "Po": "Port-Channel",
    "Lo": "Loopback",
    "Vl": "Vlan",
    "Vx": "Vxlan",
}

# ``Hardware is X`` -> netdev kind.
KIND_BY_HARDWARE: dict[str, str] = {
    "Ethernet": "ethernet",
    "Port-Channel": "bond",
    "Vlan": "vlan",
    "Loopback": "loopback",
    "Vxlan": "vxlan",
    "Tunnel": "tunnel",
}

# ``show interfaces status`` Status column -> (admin_up, oper_up); unknown words give (None, None).
# ``disabled`` is ``shutdown``; ``errdisabled`` is enabled but shut by the switch; ``inactive`` (e.g. an
# unused breakout lane or a suspended LAG member) and ``notpresent`` do not say the admin state.
STATUS_STATE: dict[str, tuple[bool | None, bool | None]] = {
    "connected": (True, True),
    "notconnect": (True, False),
    "disabled": (False, False),
    "errdisabled": (True, False),
    "inactive": (None, False),
    "notpresent": (None, False),
}

_ABBREVIATED = re.compile(r"([A-Za-z]+)(\d.*)")
_IF_HEADER = re.compile(r"(\S+) is (up|down|administratively down), line protocol is (\S+)(?: \((\S+)\))?")
_HARDWARE = re.compile(r"Hardware is ([^,]+?)(?:, address is (\S+)(?: \(bia \S+\))?)?")
_MTU = re.compile(r"(?:IP|Ethernet) MTU (\d+) bytes(?: \(default\))?(?:\s*, BW (\d+) kbit)?")
_RATE = re.compile(r"(\d+(?:\.\d+)?)([GM])b/s")
_SPEED_COL = re.compile(r"(?:a-)?(\d+(?:\.\d+)?)([GM])(?:-\d+)?")
_DETECTED = re.compile(r"Interface (\S+) detected (\d+) LLDP neighbors?:")
_NEIGHBOR = re.compile(r"Neighbor (\S+?)/(.+), age (\d+) seconds?")
_MFS = re.compile(r"(\d+) bytes")
_SUBTYPE_CODE = re.compile(r"\s*\(\d+\)$")
_RULE = re.compile(r"-+(?:\s+-+)*")
_DUPLEX_COL = frozenset({"full", "half", "auto", "a-full", "a-half", "unconf", "-"})


def expand_ifname(name: str) -> str:
    """``Et3/1/1`` -> ``Ethernet3/1/1``; names that are not abbreviations are returned unchanged."""
    match = _ABBREVIATED.fullmatch(name)
    if match is None:
        return name
    prefix = IFNAME_ABBREVIATIONS.get(match.group(1))
    return prefix + match.group(2) if prefix else name


def _rate(number: str, unit: str) -> int | None:
    try:
        rate = Decimal(number) * (1000 if unit == "G" else 1)
    except InvalidOperation:
        return None
    if rate != rate.to_integral_value() or rate <= 0:
        return None
    return int(rate)


def speed_column_to_mbps(text: str) -> int | None:
    """``a-40G`` -> 40000, ``100G`` -> 100000, ``10M`` -> 10, ``auto``/``unconf`` -> ``None``.

    Raises ``ValueError`` for a word it cannot read."""
    word = text.strip()
    if word in ("auto", "unconf", "-", ""):
        return None
    match = _SPEED_COL.fullmatch(word)
    if match is None:
        raise ValueError(text)
    rate = _rate(match.group(1), match.group(2))
    if rate is None:
        raise ValueError(text)
    return rate


def _lines(text: str) -> list[tuple[int, str]]:
    return [(n, line.rstrip()) for n, line in enumerate(blank_prompts(text).splitlines(), 1)]


# --- show interfaces ------------------------------------------------------------------------------


@dataclass(slots=True)
class _IfBlock:
    name: str
    admin_up: bool
    oper_up: bool
    mtu: int | None = None
    bw_mbps: int | None = None
    speed_mbps: int | None = None
    mac: str | None = None
    description: str | None = None
    kind: str | None = None

    def finish(self) -> Interface:
        return Interface(
            name=self.name,
            admin_up=self.admin_up,
            oper_up=self.oper_up,
            mtu=self.mtu,
            speed_mbps=self.speed_mbps if self.speed_mbps is not None else self.bw_mbps,
            mac=self.mac,
            description=self.description,
            kind=self.kind,
        )


_DETAIL_START = re.compile(r"[\w.]")  # a detail line starts with a word, a number or `...` (LAG members)


def parse_show_interfaces(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[Interface, ...]:
    """The interfaces of EOS ``show interfaces`` CLI text (a bad interface block costs that interface)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    result: list[Interface] = []
    block: _IfBlock | None = None
    dropped = False  # inside a block that could not be read: its lines go with it
    for n, line in _lines(text):
        if not line.strip():
            continue
        if not line[0].isspace():
            if block is not None:
                result.append(block.finish())
            block, dropped = None, False
            match = _IF_HEADER.fullmatch(line)
            if match is None:
                log.add("expected 'NAME is STATE, line protocol is STATE'", f"the interface of line {n}", line=n)
                dropped = True
                continue
            block = _IfBlock(
                name=match.group(1),
                admin_up=match.group(2) != "administratively down",
                oper_up=match.group(3) == "up",
            )
            continue
        if dropped:
            continue
        if block is None:
            raise ParseError(source, "expected an interface header line before its details", line=n)
        if not _DETAIL_START.match(line.strip()):  # garbage, maybe a garbled header: its lines are not this block's
            expected = "expected an indented detail line of the interface above"
            log.add(expected, f"line {n} and the lines under it", line=n)
            dropped = True
            continue
        with log.skipping(f"interface {block.name}") as row:
            _if_detail(block, line.strip(), source, n)
        if row.failed:
            block, dropped = None, True
    if block is not None:
        result.append(block.finish())
    if not result and log.problems:
        raise log.problems[0].error()
    if not result:
        raise ParseError(source, "expected at least one interface", line=1)
    return tuple(result)


def _if_detail(block: _IfBlock, body: str, source: str, n: int) -> None:
    if body.startswith(("... ", "Member of ")):
        return  # a Port-Channel's member list, or the LAG this member belongs to
    if body.startswith("Hardware is "):
        match = _HARDWARE.fullmatch(body)
        if match is None:
            raise ParseError(source, "expected 'Hardware is KIND[, address is MAC]'", line=n)
        hardware = match.group(1).strip()
        block.kind = KIND_BY_HARDWARE.get(hardware, hardware.lower())
        if match.group(2) is not None:
            mac = normalize_mac(match.group(2))
            if mac is None:
                raise ParseError(source, "expected a MAC address after 'address is'", line=n)
            block.mac = None if mac == "00:00:00:00:00:00" else mac
    elif body.startswith("Description:"):
        block.description = body.removeprefix("Description:").strip() or None
    elif body.startswith(("IP MTU ", "Ethernet MTU ")):
        match = _MTU.fullmatch(body)
        if match is None:
            raise ParseError(source, "expected 'IP|Ethernet MTU N bytes[ , BW N kbit]'", line=n)
        block.mtu = int(match.group(1))
        if match.group(2) is not None:
            kbit = int(match.group(2))
            block.bw_mbps = kbit // 1000 if kbit >= 1000 else None
    elif body.endswith("-duplex") or "-duplex," in body:
        parts = [p.strip() for p in body.split(",")]
        if len(parts) < 2:
            raise ParseError(source, "expected 'DUPLEX, SPEED, ...'", line=n)
        if parts[1] == "Unconfigured":
            block.speed_mbps = None
            return
        match = _RATE.fullmatch(parts[1])
        if match is None:
            raise ParseError(source, "expected a speed such as '10Gb/s' after the duplex", line=n)
        block.speed_mbps = _rate(match.group(1), match.group(2))


# --- show interfaces status -----------------------------------------------------------------------


_STATUS_COLUMNS = ("Port", "Name", "Status", "Vlan", "Duplex", "Speed", "Type")


def parse_show_interfaces_status(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[Interface, ...]:
    """The interfaces of EOS ``show interfaces status`` (state, description, speed; no MTU or MAC)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    lines = [(n, line) for n, line in _lines(text) if line.strip()]
    if not lines:
        raise ParseError(source, "expected the 'Port Name Status Vlan Duplex Speed Type' header", line=1)
    n0, header = lines[0]
    words = header.split()
    if tuple(words[:7]) != _STATUS_COLUMNS:
        raise ParseError(source, "expected the 'Port Name Status Vlan Duplex Speed Type' header", line=n0)
    starts = [at for _, at in column_starts(header)[:3]]
    result: list[Interface] = []
    for n, line in lines[1:]:
        if _RULE.fullmatch(line.strip()):
            continue
        with log.skipping(f"the row of {line.split()[0][:30]!r} (line {n})"):
            result.append(_status_row(line, starts, source, n))
    if not result and log.problems:
        raise log.problems[0].error()
    return tuple(result)


def _status_row(line: str, starts: list[int], source: str, n: int) -> Interface:
    cells = _status_cells(line, starts)
    if cells is None:
        words = line.split()
        duplex = [i for i, w in enumerate(words[:-1]) if i >= 3 and w in _DUPLEX_COL]
        if duplex:
            bad = words[duplex[-1] + 1]
            raise ParseError(source, f"expected a speed such as 100G, a-10G or auto, got {bad!r}", line=n)
        raise ParseError(source, "expected a row 'PORT NAME STATUS VLAN DUPLEX SPEED TYPE'", line=n)
    port, name, status, speed = cells
    try:
        speed_mbps = speed_column_to_mbps(speed)
    except ValueError:
        raise ParseError(source, f"expected a speed such as 100G, a-10G or auto, got {speed!r}", line=n) from None
    admin_up, oper_up = STATUS_STATE.get(status, (None, None))
    description = name.strip()
    return Interface(
        name=expand_ifname(port),
        admin_up=admin_up,
        oper_up=oper_up,
        mtu=None,
        speed_mbps=speed_mbps,
        mac=None,
        description=description or None,
        kind=None,
    )


def _status_cells(line: str, starts: list[int]) -> tuple[str, str, str, str] | None:
    """(port, name, status, speed) of one status row: by the header's columns when they line up,
    else by tokens; ``None`` when neither reads."""
    words = line.split()
    port = words[0]
    cut = fixed_cells(line, starts)
    if cut is not None and cut[0] == port:
        # a description longer than its column pushes the status right: the status is then not the
        # first word of the Status column, and the row is read by tokens below
        rest = ["", *cut[2].split()]
        found = _status_run(rest)
        if found is not None and found[0] == 1:
            return port, cut[1], rest[1], rest[found[1]]
    found = _status_run(words)
    if found is None:
        return None
    return port, " ".join(words[1 : found[0]]), words[found[0]], words[found[1]]


def _status_run(words: list[str]) -> tuple[int, int] | None:
    """Indexes of STATUS and SPEED in ``PORT [NAME...] STATUS VLAN DUPLEX SPEED [TYPE...]`` words: the
    last known duplex word followed by a readable speed; VLAN is one word, or ``in Po1`` (a member)."""
    for d in range(len(words) - 2, 2, -1):
        if words[d] not in _DUPLEX_COL:
            continue
        try:
            speed_column_to_mbps(words[d + 1])
        except ValueError:
            continue
        vlan = d - 2 if d >= 4 and words[d - 2] == "in" else d - 1
        return vlan - 1, d + 1
    return None


# --- show lldp neighbors --------------------------------------------------------------------------


def parse_lldp_neighbors(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[Neighbor, ...]:
    """The neighbors of the EOS ``show lldp neighbors`` table (no chassis id, subtype, MFS)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    result: list[Neighbor] = []
    in_table = False
    for n, line in _lines(text):
        if not line.strip():
            continue
        if not in_table:
            if line.split()[:3] == ["Port", "Neighbor", "Device"]:
                in_table = True
            elif ":" not in line:
                raise ParseError(source, "expected 'Port  Neighbor Device ID  Neighbor Port ID  TTL'", line=n)
            continue
        if _RULE.fullmatch(line.strip()):
            continue  # the dashed rule under the header
        cells = line.split()
        if len(cells) < 4 or not cells[-1].isdigit():
            log.add("expected a row 'PORT DEVICE-ID PORT-ID TTL'", f"the neighbour row of line {n}", line=n)
            continue
        result.append(
            Neighbor(
                local_port=expand_ifname(cells[0]),
                system_name=" ".join(cells[1:-2]),
                chassis_id=None,
                port_id=cells[-2],
                port_id_type=None,
                port_descr=None,
                mgmt_ip=None,
                mfs=None,
            )
        )
    if not in_table:
        raise ParseError(source, "expected 'Port  Neighbor Device ID  Neighbor Port ID  TTL'", line=1)
    if not result and log.problems:
        raise log.problems[0].error()
    return tuple(result)


# --- show lldp neighbors detail -------------------------------------------------------------------


@dataclass(slots=True)
class _Nb:
    local_port: str
    system_name: str | None = None
    chassis_id: str | None = None
    chassis_type: str | None = None
    port_id: str | None = None
    port_id_type: str | None = None
    port_descr: str | None = None
    mgmt_ips: list[str] = field(default_factory=list)
    mfs: int | None = None

    def finish(self) -> Neighbor:
        return Neighbor(
            local_port=self.local_port,
            system_name=self.system_name,
            chassis_id=mac_if(self.chassis_type, self.chassis_id, guess=True),
            port_id=mac_if(self.port_id_type, self.port_id),
            port_id_type=self.port_id_type,
            port_descr=self.port_descr,
            mgmt_ip=self.mgmt_ips[0] if self.mgmt_ips else None,
            mfs=self.mfs,
        )


def _unquote(value: str) -> str | None:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return value or None


def _subtype(value: str) -> str | None:
    return port_id_subtype(_SUBTYPE_CODE.sub("", value.strip()))


def parse_lldp_neighbors_detail(text: str, source: str = "<input>") -> tuple[Neighbor, ...]:
    """The neighbors of EOS ``show lldp neighbors detail`` CLI text, with the MFS TLV."""
    result: list[Neighbor] = []
    local: str | None = None
    expected = 0
    seen = 0
    header_line = 0
    nb: _Nb | None = None
    tlv = ""  # the last ``- NAME`` TLV line, gives context to the indented lines under it

    def close_interface() -> None:
        if local is not None and seen != expected:
            raise ParseError(source, f"expected {expected} neighbor blocks for {local}, got {seen}", line=header_line)

    for n, line in _lines(text):
        body = line.strip()
        if not body:
            continue
        match = _DETECTED.fullmatch(body)
        if match is not None and not line[0].isspace():
            if nb is not None:
                result.append(nb.finish())
                nb = None
            close_interface()
            local, expected, seen, header_line = match.group(1), int(match.group(2)), 0, n
            continue
        if local is None:
            raise ParseError(source, "expected 'Interface NAME detected N LLDP neighbors:'", line=n)
        match = _NEIGHBOR.fullmatch(body)
        if match is not None:
            if nb is not None:
                result.append(nb.finish())
            nb = _Nb(local_port=local)
            seen += 1
            tlv = ""
            continue
        if nb is None:
            raise ParseError(source, "expected 'Neighbor CHASSIS/PORT, age N seconds'", line=n)
        if body.startswith("- "):
            key, sep, value = body[2:].partition(":")
            tlv = key.strip()
            if tlv == "Chassis ID type":
                nb.chassis_type = _subtype(value)
            elif tlv == "Port ID type":
                nb.port_id_type = _subtype(value)
            elif tlv == "Port Description":
                nb.port_descr = _unquote(value)
            elif tlv == "System Name":
                nb.system_name = _unquote(value)
            elif tlv == "IEEE802.3 Maximum Frame Size":
                mfs = _MFS.fullmatch(value.strip())
                if mfs is None:
                    raise ParseError(source, "expected 'IEEE802.3 Maximum Frame Size: N bytes'", line=n)
                nb.mfs = int(mfs.group(1))
            elif tlv == "Management Address Subtype":
                tlv = "mgmt-ip" if value.strip().lower().startswith("ipv") else "mgmt-other"
            continue
        key, sep, value = body.partition(":")
        key = key.strip()
        if not sep:
            continue  # hex dump of an unknown TLV, discovery times
        if key == "Chassis ID" and tlv == "Chassis ID type":
            nb.chassis_id = _unquote(value)
        elif key == "Port ID" and tlv == "Port ID type":
            nb.port_id = _unquote(value)
        elif key == "Management Address" and tlv == "mgmt-ip":
            address = value.strip()
            if address:
                nb.mgmt_ips.append(address)
    if nb is not None:
        result.append(nb.finish())
    if local is None:
        raise ParseError(source, "expected 'Interface NAME detected N LLDP neighbors:'", line=1)
    close_interface()
    return tuple(result)


# --- auto-detection -------------------------------------------------------------------------------


def detect(text: str) -> str | None:
    """Which command printed ``text``: ``show interfaces``, ``show interfaces status``,
    ``show lldp neighbors`` or ``show lldp neighbors detail`` (``None`` if none)."""
    for line in blank_prompts(text).splitlines():
        if not line.strip():
            continue
        words = line.split()
        if _DETECTED.fullmatch(line.strip()):
            return "show lldp neighbors detail"
        if words[:3] == ["Port", "Neighbor", "Device"] or line.startswith("Last table change time"):
            return "show lldp neighbors"
        if tuple(words[:7]) == _STATUS_COLUMNS:
            return "show interfaces status"
        if _IF_HEADER.fullmatch(line.rstrip()):
            return "show interfaces"
        return None
    return None


def parse(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[Interface, ...] | tuple[Neighbor, ...]:
    """Any of the four commands, told apart by :func:`detect`."""
    command = detect(text)
    if command == "show interfaces":
        return parse_show_interfaces(text, source, problems)
    if command == "show interfaces status":
        return parse_show_interfaces_status(text, source, problems)
    if command == "show lldp neighbors":
        return parse_lldp_neighbors(text, source, problems)
    if command == "show lldp neighbors detail":
        return parse_lldp_neighbors_detail(text, source)
    first = next((n for n, line in _lines(text) if line.strip()), 1)
    raise ParseError(
        source,
        "expected EOS 'show interfaces', 'show interfaces status' or 'show lldp neighbors [detail]' text",
        line=first,
    )
