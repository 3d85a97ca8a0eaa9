"""Plain-text ``lldpctl`` / ``lldpcli show neighbors [details]`` from lldpd (0.7 - 1.0.x).

This is what ``lldpctl`` prints with no ``-f`` option, on Linux hosts, Cumulus Linux and SONiC (SONiC's
``show lldp neighbors`` is this text). lldpd's text writer (``src/client/text_writer.c``) prints the
same tag tree as the JSON/keyvalue writers (:mod:`unifab.parse.host.lldpcli`)::

    -------------------------------------------------------------------------------
    LLDP neighbors:
    -------------------------------------------------------------------------------
    Interface:    eth1, via: LLDP, RID: 2, Time: 0 day, 00:06:15
      Chassis:
        ChassisID:    mac 52:54:00:7f:7a:90
        SysName:      exit01
        SysDescr:     Cumulus Linux version 4.3.0 running on QEMU Standard PC (i440FX + PIIX, 1996)
        MgmtIP:       10.0.0.101
        Capability:   Bridge, off
        Capability:   Router, on
      Port:
        PortID:       ifname swp5
        PortDescr:    swp5
        TTL:          120
        MFS:          9216
      LLDP-MED:
        Device Type:  Network Connectivity Device
    -------------------------------------------------------------------------------

A tag at depth *d* is indented ``2*(d-1)`` spaces and its label is padded to 13 columns; attributes
follow as `` value`` (no label) or ``, Label: value``; the data follows after one space. A value
holding newlines (multi-line SysDescr on Cisco/Juniper peers) continues on the next lines indented to
the value column (label indent + 14); those lines are joined back with ``\\n``. Each neighbor ends with
a separator line. ``TTL`` is under ``Port`` in the lldpd of Cumulus 3.7 and in 1.0.x, absent in 0.7.x
(Ubuntu 16.04); one under ``Chassis`` is accepted too. ``MFS`` is printed only with details when the
peer sent the 802.3 max-frame-size TLV.

:func:`parse_details` returns the full :class:`~unifab.parse.host.lldpcli.LldpNeighbor` records (equal
to what the JSON/keyvalue parsers give for the same capture); :func:`parse` returns the normalized
:class:`~unifab.parse.netdev.Neighbor`. The ``LLDP neighbors:`` header is required; ``lldpcli show
interfaces``/``statistics``/``configuration`` text is rejected. Pasted captures are read as they come:
prompt/command lines (``$ sudo lldpctl``, ``root@h1:~# lldpctl eth1``, ``#`` comments; see
:func:`unifab.parse._text.is_prompt`) anywhere, several runs each with its own dashed rules and
``LLDP neighbors:`` header, blank lines between them, and labels whose column padding was collapsed
(``SysName: exit01``). Not kept: RID, MgmtIface, disabled capabilities, VLAN/PPVID/PI, LLDP-MED,
autonegotiation, power, unknown TLVs.

With a :class:`~unifab.errors.ParseProblems` collector a bad line costs the neighbour it belongs to (from
its ``Interface:`` line to its separator; a bad ``TTL``/``MFS`` value that neighbour too), a bad
unindented line, or an indented one where an ``Interface:`` line is due (after a separator), the indented lines
under it; the problem names the line. Text that is not this format
(no ``LLDP neighbors:`` header before the first interface), or whose every neighbour is bad, raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import blank_prompts
from unifab.parse.host.lldpcli import LldpNeighbor
from unifab.parse.netdev import Neighbor, neighbor_from_lldpd

__all__ = ["parse", "parse_details"]

_SEPARATOR = re.compile(r"-{20,}")
_SECTION_HEADER = re.compile(r"LLDP ([A-Za-z -]+):")  # "LLDP neighbors:", "LLDP interfaces:", ...
_INTERFACE = re.compile(r"Interface:\s+(?P<name>[^\s,]+)(?P<attrs>,.*)?")
_VIA = re.compile(r", via: ([^,]*)")
_AGE = re.compile(r", Time: (.*)$")
_LABEL = re.compile(r"( *)(\S[^:]*):(.*)")
_UNSIGNED = re.compile(r"[0-9]+")

# Deepest label indentation lldpd prints is 6 (e.g. LLDP-MED > policy > VLAN); a value continuation is
# indented at least 14 (label indent + 14). Anything indented this much or more continues a value.
_CONTINUATION_INDENT = 8

# Single-valued tags: (section, label) -> field name.
_SINGLE = {
    ("Chassis", "ChassisID"): "chassis_id",
    ("Chassis", "SysName"): "system_name",
    ("Chassis", "SysDescr"): "system_descr",
    ("Chassis", "TTL"): "ttl",  # accepted in either section
    ("Port", "PortID"): "port_id",
    ("Port", "PortDescr"): "port_descr",
    ("Port", "TTL"): "ttl",
    ("Port", "MFS"): "mfs",
}
_EXPECTED_HEADER = "`LLDP neighbors:` (lldpctl / lldpcli show neighbors text output)"


@dataclass(slots=True)
class _Draft:
    local_port: str
    via: str | None
    age: str | None
    line: int
    single: dict[str, tuple[str, int]] = field(default_factory=dict)
    mgmt_ips: list[str] = field(default_factory=list)
    caps: list[str] = field(default_factory=list)


def _split_id(value: str) -> tuple[str | None, str | None]:
    """``"mac 52:54:00:7f:7a:90"`` -> (value, subtype)."""
    subtype, _, rest = value.partition(" ")
    if not rest:
        return None, subtype or None
    return rest, subtype


def _finish(draft: _Draft, source: str) -> LldpNeighbor:
    def get(name: str) -> str | None:
        return draft.single[name][0] if name in draft.single else None

    def number(name: str) -> int | None:
        if name not in draft.single:
            return None
        value, where = draft.single[name]
        if not _UNSIGNED.fullmatch(value):
            raise ParseError(source, f"expected an unsigned integer for {name}, got {value!r}", line=where)
        return int(value)

    chassis_id, chassis_type = _split_id(get("chassis_id") or "")
    port_id, port_type = _split_id(get("port_id") or "")
    return LldpNeighbor(
        local_port=draft.local_port,
        via=draft.via,
        age=draft.age,
        chassis_id=chassis_id,
        chassis_id_type=chassis_type,
        system_name=get("system_name"),
        system_descr=get("system_descr"),
        mgmt_ips=tuple(draft.mgmt_ips),
        capabilities_enabled=tuple(draft.caps),
        port_id=port_id,
        port_id_type=port_type,
        port_descr=get("port_descr"),
        ttl=number("ttl"),
        mfs=number("mfs"),
    )


@dataclass(slots=True)
class _Reader:
    """State of one pass over the text; :meth:`line` raises a :class:`ParseError` for a bad line."""

    source: str
    log: ParseProblems
    neighbors: list[LldpNeighbor] = field(default_factory=list)
    draft: _Draft | None = None
    seen_header: bool = False
    section: str | None = None
    # the value a continuation line extends: (field name or None when not kept, indent to strip)
    continues: tuple[str | None, int] | None = None
    skipping: bool = False  # inside the indented lines of a neighbour already given up

    def close(self) -> None:
        draft, self.draft = self.draft, None
        if draft is not None:
            with self.log.skipping(_what(draft)):
                self.neighbors.append(_finish(draft, self.source))

    def top(self, line: str, stripped: str, number: int) -> None:
        self.continues = None
        self.skipping = False
        header = _SECTION_HEADER.fullmatch(stripped)
        if header:
            if header.group(1) != "neighbors":
                raise ParseError(self.source, f"expected {_EXPECTED_HEADER}, got {stripped!r}", line=number)
            self.close()
            self.seen_header = True  # one per pasted run (`$ lldpctl eth0`, `$ lldpctl eth1`, ...)
            return
        match = _INTERFACE.fullmatch(line.rstrip())
        if match is None or not self.seen_header:
            expected = (
                f"`Interface:    <ifname>, via: ...` or a separator, got {stripped!r}"
                if match is None
                else f"{_EXPECTED_HEADER} before the first interface"
            )
            if not self.seen_header:  # not this format at all: nothing to read past
                raise ParseError(self.source, expected, line=number)
            self.close()
            self.skipping = True
            self.log.add(expected, f"line {number} and the indented lines under it", line=number)
            return
        self.close()
        attrs = match.group("attrs") or ""
        via = _VIA.search(attrs)
        age = _AGE.search(attrs)
        self.draft = _Draft(
            local_port=match.group("name"),
            via=via.group(1).strip() if via else None,
            age=age.group(1).strip() if age else None,
            line=number,
        )
        self.section = None

    def indented(self, line: str, stripped: str, indent: int, number: int) -> None:
        draft = self.draft
        if draft is None:
            raise ParseError(
                self.source, "expected `Interface:    <ifname>, via: ...` before indented lines", line=number
            )
        if indent >= _CONTINUATION_INDENT:
            if self.continues is None:
                raise ParseError(self.source, f"expected a `Label:  value` line, got {stripped!r}", line=number)
            name, strip = self.continues
            if name is not None:
                value, first = draft.single[name]
                draft.single[name] = (value + "\n" + line[min(indent, strip) :].rstrip(), first)
            return
        label = _LABEL.fullmatch(line)
        if label is None:
            raise ParseError(self.source, f"expected a `Label:  value` line, got {stripped!r}", line=number)
        name_text, value = label.group(2).strip(), label.group(3).strip()
        depth = indent // 2 + 1
        self.continues = (None, indent + 14)
        if depth == 2:
            self.section = name_text
            return
        if depth != 3:
            return
        key = _SINGLE.get((self.section or "", name_text))
        if key is not None:
            if key in draft.single:
                raise ParseError(
                    self.source,
                    f"expected one {name_text} per neighbor, it repeats line {draft.single[key][1]}",
                    line=number,
                )
            draft.single[key] = (value, number)
            self.continues = (key, indent + 14)
        elif self.section == "Chassis" and name_text == "MgmtIP":
            draft.mgmt_ips.append(value)
        elif self.section == "Chassis" and name_text == "Capability":
            cap, _, state = value.partition(", ")
            if state not in ("on", "off"):
                raise ParseError(self.source, f"expected `Capability: <name>, on|off`, got {value!r}", line=number)
            if state == "on":
                draft.caps.append(cap)


def _what(draft: _Draft) -> str:
    return f"the LLDP neighbour on {draft.local_port} (line {draft.line})"


def parse_details(
    text: str, source: str = "<input>", problems: ParseProblems | None = None
) -> tuple[LldpNeighbor, ...]:
    """Parse lldpd's plain text into full :class:`LldpNeighbor` records, in file order.

    With a collector a bad line costs the neighbour it belongs to (see the module doc).
    """
    log = problems if problems is not None else ParseProblems.strict(source)
    r = _Reader(source, log)
    for number, raw in enumerate(blank_prompts(text, anywhere=True).splitlines(), start=1):
        line = raw.rstrip("\r")
        stripped = line.strip()
        indent = len(line) - len(line.lstrip(" "))
        if not stripped:
            continue
        if _SEPARATOR.fullmatch(stripped):
            r.continues = None
            r.close()  # the neighbour ends here: an indented line after it is a garbled `Interface:` line
            continue
        if indent == 0:
            r.top(line, stripped, number)
            continue
        if r.skipping:
            continue
        draft = r.draft
        if draft is None and r.seen_header and not log.is_strict:
            expected = f"expected `Interface:    <ifname>, via: ...` before indented lines, got {stripped[:60]!r}"
            log.add(expected, f"line {number} and the indented lines under it", line=number)
            r.skipping = True
            continue
        try:
            r.indented(line, stripped, indent, number)
        except ParseError as exc:
            if draft is None or log.is_strict:
                raise
            log.record(exc, _what(draft))
            r.draft, r.skipping = None, True  # the rest of this neighbour's lines are skipped
    r.close()
    if not r.seen_header:
        raise ParseError(source, f"expected {_EXPECTED_HEADER}", line=1)
    if not r.neighbors and log.problems:
        raise log.problems[0].error()
    return tuple(r.neighbors)


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[Neighbor, ...]:
    """Parse lldpd's plain text into normalized :class:`Neighbor` records, in file order."""
    return tuple(neighbor_from_lldpd(nb) for nb in parse_details(text, source, problems))
