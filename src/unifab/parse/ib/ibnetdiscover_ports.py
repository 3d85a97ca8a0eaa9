"""``ibnetdiscover -p`` (infiniband-diags 1.5 .. 50.x): the ports report, one line per port of every node::

    CA    22  1 0xa088c20300b10013 1x HDR - SW     3  2 0xb83fd20300a10001 ( 'dgx-002 mlx5_1' - 'MF0;ib-leaf-r1:...' )
    SW    11 40 0xb83fd20300a10007 4x SDR                                    'MF0;ib-leaf-r7:MQM8700/U1'

``<type> <lid> <port> <port guid> <width> <speed>`` then, on a cabled port, `` - <type> <lid> <port> <guid>
( '<own description>' - '<remote description>' )``, else just the own description. A switch port's LID is the
switch's; an unconnected port's width/speed are whatever PortInfo held (``4x SDR`` in ibsim) and mean nothing.
Every cable appears twice, once from each end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse.ib._common import LANE_GBPS, content_lines, lanes, parse_guid, skippable

__all__ = ["PortReport", "PortReportEntry", "parse"]

_KINDS = {"SW": "switch", "CA": "ca", "RT": "router"}
_END = r"(SW|CA|RT|\?\?)\s+(\d+)\s+(\d+)\s+(0x[0-9a-fA-F]+)"
_LINE = re.compile(rf"^{_END}\s+(\S+)\s+(\S+)(?:\s+-\s+{_END}\s+\(\s*'(.*)'\s+-\s+'(.*)'\s*\)|\s+'(.*)')\s*$")


@dataclass(frozen=True, slots=True)
class PortReportEntry:
    """One port: ``kind``/``lid``/``port``/``guid`` (the port GUID; a switch's ports share the switch's),
    ``width`` (``4X``), ``speed`` (``HDR``; ``???`` unknown), ``description``; the peer's ``remote_*`` when cabled."""

    kind: str
    lid: int
    port: int
    guid: int
    width: str
    speed: str
    description: str
    remote_kind: str | None
    remote_lid: int | None
    remote_port: int | None
    remote_guid: int | None
    remote_description: str | None

    @property
    def connected(self) -> bool:
        return self.remote_port is not None

    @property
    def lanes(self) -> int | None:
        return lanes(self.width)

    @property
    def rate_gbps(self) -> float | None:
        n = self.lanes
        lane = LANE_GBPS.get(self.speed)
        return None if n is None or lane is None else n * lane


@dataclass(frozen=True, slots=True)
class PortReport:
    ports: tuple[PortReportEntry, ...]

    def connected(self) -> tuple[PortReportEntry, ...]:
        return tuple(p for p in self.ports if p.connected)


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> PortReport:
    """Every port line; with a lenient ``problems`` a bad line costs that port only."""
    problems = problems if problems is not None else ParseProblems.strict(source)
    ports: list[PortReportEntry] = []
    seen = False
    for number, line in content_lines(text):
        stripped = line.strip()
        m = _LINE.match(stripped)
        if m is None and skippable(line):
            continue
        seen = True
        with problems.skipping(f"the port on line {number}"):
            if m is None:
                raise ParseError(
                    source,
                    "expected '<SW|CA|RT> <lid> <port> 0x<guid> <width> <speed> [- <SW|CA|RT> <lid> <port> 0x<guid> "
                    "( '<desc>' - '<desc>' )]'",
                    line=number,
                )
            ports.append(_entry(m, source, number))
    if not seen:
        raise ParseError(source, "expected ibnetdiscover -p port lines", line=1)
    if not ports:
        raise problems.problems[0].error()
    return PortReport(tuple(ports))


def _entry(m: re.Match[str], source: str, number: int) -> PortReportEntry:
    lid, port = int(m.group(2)), int(m.group(3))
    if lid > 0xFFFF or port > 255:
        raise ParseError(source, f"expected a LID in 0..65535 and a port in 0..255, got {lid} and {port}", line=number)
    connected = m.group(7) is not None
    return PortReportEntry(
        kind=_KINDS.get(m.group(1), "unknown"),
        lid=lid,
        port=port,
        guid=parse_guid(m.group(4), source, number, "the port GUID"),
        width=m.group(5).upper(),
        speed=m.group(6),
        description=m.group(11) if connected else m.group(13),
        remote_kind=_KINDS.get(m.group(7), "unknown") if connected else None,
        remote_lid=int(m.group(8)) if connected else None,
        remote_port=int(m.group(9)) if connected else None,
        remote_guid=parse_guid(m.group(10), source, number, "the remote port GUID") if connected else None,
        remote_description=m.group(12) if connected else None,
    )
