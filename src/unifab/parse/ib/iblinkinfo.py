"""``iblinkinfo`` (infiniband-diags 1.5 .. 50.x): every port of every node with its trained link, plain or ``-l``
(one line per port), ``-p`` (HOQ / VL stall) included.

Plain: a header per node, then one line per port::

    Switch: 0xb83fd20300a10007 MF0;ib-leaf-r7:MQM8700/U1:
              11    1[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>      20    1[  ] "dgx-001 mlx5_7" ( )
              11    5[  ] ==(                Down/ Polling)==>             [  ] "" ( )
    CA: dgx-002 mlx5_1:
          0xa088c20300b10013     22    1[  ] ==( 1X        53.125 Gbps Active/  LinkUp)==>       3    2[  ] "MF0;.." ( )

``-l``: ``0x<port guid> "<node description, right-aligned>" <lid> <port>[ext] ==(...)==>  0x<remote port guid>
<remote lid> <remote port>[ext] "<remote description>" ( <comment> )``; no node type is printed there.

The link is ``(<width> <per-lane signalling rate> <PortState>/<PhysState>)``; a Down port prints only the
states and an empty peer. The speed name comes from the rate (``53.125 Gbps`` = HDR, ``106.25 Gbps`` = NDR;
:data:`unifab.parse.ib._common.SIGNAL_SPEEDS`). The comment says ``Could be 12X`` / ``Could be 106.25 Gbps``
when the ends could train higher (ibsim always claims 12X). A pulled cable and a never-cabled port look the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse.ib._common import LANE_GBPS, SIGNAL_SPEEDS, content_lines, lanes, parse_guid, skippable

__all__ = ["IbLinkInfo", "LinkInfoPort", "parse"]

_KINDS = {"Switch": "switch", "CA": "ca", "Router": "router"}
_HEADER = re.compile(r"^(Switch|CA|Router):\s+(?:(0x[0-9a-fA-F]+)\s+)?(.*):\s*$")
_LINK = re.compile(r"==\(\s*(?:(\S+)\s+(.+?)\s+)?(\w+)/\s*(\w+)\)(?:\s*\(HOQ:(\d+) VL_Stall:(\d+)\))?==>")
_LEFT_SWITCH = re.compile(r"^(\d+)\s+(\d+)\[\s*(\d*)\s*\]$")
_LEFT_CA = re.compile(r"^(0x[0-9a-fA-F]+)\s+(\d+)\s+(\d+)\[\s*(\d*)\s*\]$")
_LEFT_LINE = re.compile(r'^(0x[0-9a-fA-F]+)\s+"(.*)"\s+(\d+)\s+(\d+)\[\s*(\d*)\s*\]$')
_REMOTE = re.compile(r'^(?:(0x[0-9a-fA-F]+)\s+)?(\d+)\s+(\d+)\[\s*(\d*)\s*\]\s+"(.*?)"\s+\((.*)\)$')
_DOWN = re.compile(r'^\[\s*\]\s*""\s*\(\s*\)$')
_UNAVAILABLE = re.compile(r'^"Port not available"$')
_GBPS = re.compile(r"^(\d+(?:\.\d+)?) Gbps")


@dataclass(frozen=True, slots=True)
class LinkInfoPort:
    """One port line.

    ``node_kind`` ``switch``/``ca``/``router`` (``None`` in ``-l`` output, which does not say);
    ``node_guid``: the GUID a Switch header names; ``port_guid``: the port GUID a CA line (or any ``-l`` line)
    starts with; ``lid`` (a switch's base LID on every port), ``port``, ``ext_port`` (chassis external port).
    ``width`` ``"4X"``, ``speed`` ``"HDR"`` (``None`` on a Down port or an unknown rate), ``lane_gbps`` the
    signalling rate printed (53.125), ``state`` ``Active``/``Down``/``Initialize``/``Armed``, ``phys_state``
    ``LinkUp``/``Polling``/``Disabled``/...; the peer's ``remote_*`` (``remote_guid`` only with ``-l``);
    ``comment`` the text in the final parentheses (``Could be 12X``); ``hoq``/``vl_stall`` with ``-p``;
    ``available`` ``False`` for ``"Port not available"``.
    """

    node_kind: str | None
    node_description: str
    node_guid: int | None
    port_guid: int | None
    lid: int
    port: int
    ext_port: int | None
    width: str | None
    speed: str | None
    lane_gbps: float | None
    state: str
    phys_state: str
    remote_guid: int | None
    remote_lid: int | None
    remote_port: int | None
    remote_ext_port: int | None
    remote_description: str | None
    comment: str
    hoq: int | None = None
    vl_stall: int | None = None
    available: bool = True

    @property
    def lanes(self) -> int | None:
        return lanes(self.width)

    @property
    def rate_gbps(self) -> float | None:
        """Lanes times the lane data rate (``4X`` HDR = 200.0)."""
        n = self.lanes
        lane = LANE_GBPS.get(self.speed or "")
        return None if n is None or lane is None else n * lane

    @property
    def connected(self) -> bool:
        return self.remote_port is not None


@dataclass(frozen=True, slots=True)
class IbLinkInfo:
    ports: tuple[LinkInfoPort, ...]

    def connected(self) -> tuple[LinkInfoPort, ...]:
        return tuple(p for p in self.ports if p.connected)


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> IbLinkInfo:
    """Every port line; with a lenient ``problems`` a bad port line costs that port only."""
    problems = problems if problems is not None else ParseProblems.strict(source)
    ports: list[LinkInfoPort] = []
    node: tuple[str, int | None, str] | None = None  # kind, guid, description
    seen = False
    for number, line in content_lines(text):
        stripped = line.strip()
        if "==(" in stripped:
            seen = True
            with problems.skipping(f"the port on line {number}"):
                ports.append(_port(stripped, node, source, number))
            continue
        if (m := _HEADER.match(stripped)) is not None and not line[0].isspace():
            seen = True
            guid = parse_guid(m.group(2), source, number, "the switch GUID") if m.group(2) else None
            node = (_KINDS[m.group(1)], guid, m.group(3).strip())
            continue
        if skippable(line):
            continue
        raise ParseError(
            source, "expected a 'Switch:|CA:|Router: <node>:' header or a port '==( ... )==>' line", line=number
        )
    if not seen:
        raise ParseError(source, "expected iblinkinfo node headers and port lines", line=1)
    if not ports:
        if problems.problems:
            raise problems.problems[0].error()
        raise ParseError(source, "expected at least one port '==( ... )==>' line", line=1)
    return IbLinkInfo(tuple(ports))


def _ext(token: str) -> int | None:
    return int(token) if token else None


def _port(line: str, node: tuple[str, int | None, str] | None, source: str, number: int) -> LinkInfoPort:
    link = _LINK.search(line)
    if link is None:
        raise ParseError(source, "expected '==( <width> <speed> <State>/<PhysState>)==>'", line=number)
    left, right = line[: link.start()].strip(), line[link.end() :].strip()
    kind, node_guid, description = node if node is not None else (None, None, "")
    port_guid: int | None = None
    if (m := _LEFT_LINE.match(left)) is not None:
        kind, node_guid = None, None
        port_guid = parse_guid(m.group(1), source, number, "the port GUID")
        description = m.group(2).strip()
        lid, port, ext = int(m.group(3)), int(m.group(4)), _ext(m.group(5))
    elif node is None:
        raise ParseError(source, "expected a 'Switch:|CA: <node>:' header before the port lines", line=number)
    elif (m := _LEFT_CA.match(left)) is not None:
        port_guid = parse_guid(m.group(1), source, number, "the port GUID")
        lid, port, ext = int(m.group(2)), int(m.group(3)), _ext(m.group(4))
    elif (m := _LEFT_SWITCH.match(left)) is not None:
        lid, port, ext = int(m.group(1)), int(m.group(2)), _ext(m.group(3))
    else:
        raise ParseError(source, "expected '[0x<port guid>] <lid> <port>[<ext>]' before the link", line=number)
    if lid > 0xFFFF or port > 255:
        raise ParseError(source, f"expected a LID in 0..65535 and a port in 0..255, got {lid} and {port}", line=number)
    width, rate = link.group(1), link.group(2)
    speed = SIGNAL_SPEEDS.get(rate) if rate else None
    gbps = _GBPS.match(rate) if rate else None
    r_guid: int | None = None
    r_lid: int | None = None
    r_port: int | None = None
    r_ext: int | None = None
    r_desc: str | None = None
    comment = ""
    available = True
    if (r := _REMOTE.match(right)) is not None:
        r_guid = parse_guid(r.group(1), source, number, "the remote port GUID") if r.group(1) else None
        r_lid, r_port, r_ext = int(r.group(2)), int(r.group(3)), _ext(r.group(4))
        r_desc, comment = r.group(5), r.group(6).strip()
    elif _UNAVAILABLE.match(right) is not None:
        available = False
    elif _DOWN.match(right) is None:
        raise ParseError(
            source, "expected '<lid> <port>[<ext>] \"<remote>\" ( ... )' or an empty peer after '==>'", line=number
        )
    return LinkInfoPort(
        node_kind=kind,
        node_description=description,
        node_guid=node_guid,
        port_guid=port_guid,
        lid=lid,
        port=port,
        ext_port=ext,
        width=width.upper() if width else None,
        speed=speed,
        lane_gbps=float(gbps.group(1)) if gbps else None,
        state=link.group(3),
        phys_state=link.group(4),
        remote_guid=r_guid,
        remote_lid=r_lid,
        remote_port=r_port,
        remote_ext_port=r_ext,
        remote_description=r_desc,
        comment=comment,
        hoq=int(link.group(5)) if link.group(5) else None,
        vl_stall=int(link.group(6)) if link.group(6) else None,
        available=available,
    )
