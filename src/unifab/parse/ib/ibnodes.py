"""The node listings of infiniband-diags (1.x .. 50.x): ``ibswitches``, ``ibhosts``, ``ibrouters``, ``ibnodes`` and
``ibnetdiscover -l`` / ``-S`` / ``-H`` / ``-R``. One line per node::

    Switch  : 0xb83fd20300a10007 ports 40 "MF0;ib-leaf-r7:MQM8700/U1" base port 0 lid 11 lmc 0   (ibswitches)
    Ca      : 0xa088c20300b1003e ports 1 "dgx-004 mlx5_7"                                       (ibhosts)
    Ca       : 0xa088c20300b1003e ports 1 devid 0x101b vendid 0x2c9 "dgx-004 mlx5_7"           (ibnetdiscover -l)

The scripts print what they can see; a switch's ``lid`` is its base-port-0 LID (``None`` in ``ibnetdiscover -l``,
which prints device and vendor ids instead).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse.ib._common import content_lines, parse_guid, parse_hex, skippable

__all__ = ["IbNodeEntry", "IbNodeList", "parse"]

_KINDS = {"switch": "switch", "ca": "ca", "router": "router", "rt": "router"}
_LINE = re.compile(
    r"^(Switch|Ca|Router|Rt)\s*:\s*(0x[0-9a-fA-F]+)\s+ports\s+(\d+)"
    r"(?:\s+devid\s+(0x[0-9a-fA-F]+)\s+vendid\s+(0x[0-9a-fA-F]+))?"
    r'\s+"(.*)"'
    r"(?:\s+(base|enhanced)\s+port\s+0\s+lid\s+(\d+)\s+lmc\s+(\d+))?\s*$"
)


@dataclass(frozen=True, slots=True)
class IbNodeEntry:
    """One node: ``kind`` ``switch``/``ca``/``router``, node ``guid``, ``nports``, ``description``
    (NodeDescription); ``devid``/``vendid`` (ibnetdiscover -l); a switch's ``lid``/``lmc`` and whether port 0
    is ``enhanced`` (ibswitches)."""

    kind: str
    guid: int
    nports: int
    description: str
    devid: int | None
    vendid: int | None
    lid: int | None
    lmc: int | None
    enhanced: bool | None


@dataclass(frozen=True, slots=True)
class IbNodeList:
    nodes: tuple[IbNodeEntry, ...]

    def of_kind(self, kind: str) -> tuple[IbNodeEntry, ...]:
        return tuple(n for n in self.nodes if n.kind == kind)


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> IbNodeList:
    """Every node line; with a lenient ``problems`` a bad line costs that node only."""
    problems = problems if problems is not None else ParseProblems.strict(source)
    nodes: list[IbNodeEntry] = []
    seen = False
    for number, line in content_lines(text):
        stripped = line.strip()
        if (m := _LINE.match(stripped)) is not None:
            seen = True
            with problems.skipping(f"the node on line {number}"):
                nodes.append(_node(m, source, number))
            continue
        if skippable(line):
            continue
        if re.match(r"^(Switch|Ca|Router|Rt)\s*:", stripped):
            seen = True
            problems.add(
                "expected '<Type> : 0x<guid> ports N [devid 0x.. vendid 0x..] \"<description>\" ...'",
                f"the node on line {number}",
                line=number,
            )
            continue
        raise ParseError(source, "expected a 'Switch|Ca|Router : 0x<guid> ports N \"<description>\"' line", line=number)
    if not seen:
        raise ParseError(source, "expected at least one 'Switch|Ca|Router : 0x<guid> ...' line", line=1)
    if not nodes:
        raise problems.problems[0].error()
    return IbNodeList(tuple(nodes))


def _node(m: re.Match[str], source: str, number: int) -> IbNodeEntry:
    nports = int(m.group(3))
    if nports > 255:
        raise ParseError(source, f"expected at most 255 ports, got {nports}", line=number)
    lid = int(m.group(8)) if m.group(8) else None
    if lid is not None and lid > 0xFFFF:
        raise ParseError(source, f"expected a LID in 0..65535, got {lid}", line=number)
    return IbNodeEntry(
        kind=_KINDS[m.group(1).lower()],
        guid=parse_guid(m.group(2), source, number, "the node GUID"),
        nports=nports,
        description=m.group(6),
        devid=parse_hex(m.group(4), source, number, "devid") if m.group(4) else None,
        vendid=parse_hex(m.group(5), source, number, "vendid") if m.group(5) else None,
        lid=lid,
        lmc=int(m.group(9)) if m.group(9) else None,
        enhanced=None if m.group(7) is None else m.group(7) == "enhanced",
    )
