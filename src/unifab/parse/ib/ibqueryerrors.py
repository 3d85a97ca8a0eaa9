"""``ibqueryerrors`` (infiniband-diags 1.5 .. 50.x): the ports whose PMA error counters are past threshold.

::

    Errors for 0xb83fd20300a10001 "MF0;ib-leaf-r1:MQM8700/U1"
       GUID 0xb83fd20300a10001 port ALL: [SymbolErrorCounter == 65535] [LinkDownedCounter == 12]
       GUID 0xb83fd20300a10001 port 2: [SymbolErrorCounter == 65535] [LinkDownedCounter == 12]
    Errors for "dgx-002 mlx5_1"
       GUID 0xa088c20300b10013 port 1: [SymbolErrorCounter == 4312] [PortRcvErrors == 347]

    ## Summary: 43 nodes checked, 4 bad nodes found
    ##          511 ports checked, 4 ports have errors beyond threshold
    ## Thresholds:
    ## Suppressed:

A switch header names the node GUID, a CA header only its description (its port lines carry the port GUID).
``port ALL`` is the switch's AllPortSelect aggregate. Counter widths and saturation:
:data:`unifab.parse.ib.perfquery.COUNTER_BITS`. No ``Errors for`` block at all is a clean fabric.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse.ib._common import content_lines, parse_guid, skippable

__all__ = ["IbErrorNode", "IbErrorPort", "IbQueryErrors", "parse"]

_NODE = re.compile(r'^Errors for\s+(?:(0x[0-9a-fA-F]+)\s+)?"(.*)"\s*$')
_PORT = re.compile(r"^GUID\s+(0x[0-9a-fA-F]+)\s+port\s+(ALL|\d+):\s*(.*)$")
_COUNTER = re.compile(r"\[(\w+) == (\d+)\]")
_SUMMARY_NODES = re.compile(r"^##\s*Summary:\s*(\d+) nodes checked,\s*(\d+) bad nodes found")
_SUMMARY_PORTS = re.compile(r"^##\s*(\d+) ports checked,\s*(\d+) ports have errors beyond threshold")
_THRESHOLDS = re.compile(r"^##\s*Thresholds:\s*(.*)$")
_SUPPRESSED = re.compile(r"^##\s*Suppressed:\s*(.*)$")
_PAIR = re.compile(r"(\w+)\s*=\s*(\d+)")


@dataclass(frozen=True, slots=True)
class IbErrorPort:
    """One ``GUID ... port N:`` line: ``port`` ``None`` for ``port ALL``; ``counters`` {name: value}."""

    guid: int
    port: int | None
    counters: dict[str, int]


@dataclass(frozen=True, slots=True)
class IbErrorNode:
    """An ``Errors for`` block: ``guid`` (the node GUID; ``None`` on a CA header, see the ports'),
    ``description`` (NodeDescription), ``ports``."""

    guid: int | None
    description: str
    ports: tuple[IbErrorPort, ...]

    @property
    def is_switch(self) -> bool:
        """Switch blocks name the node GUID and carry a ``port ALL`` line."""
        return self.guid is not None


@dataclass(frozen=True, slots=True)
class IbQueryErrors:
    """Every bad node; the summary counts (``None`` when the capture lacks the summary); the thresholds and
    suppressed counters the summary lists."""

    nodes: tuple[IbErrorNode, ...]
    nodes_checked: int | None
    bad_nodes: int | None
    ports_checked: int | None
    bad_ports: int | None
    thresholds: dict[str, int]
    suppressed: tuple[str, ...]


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> IbQueryErrors:
    """The blocks and summary; with a lenient ``problems`` a bad port line costs that line only."""
    problems = problems if problems is not None else ParseProblems.strict(source)
    nodes: list[IbErrorNode] = []
    head: tuple[int | None, str] | None = None
    ports: list[IbErrorPort] = []
    counts: dict[str, int] = {}
    thresholds: dict[str, int] = {}
    suppressed: list[str] = []
    seen = False

    def close() -> None:
        if head is not None:
            nodes.append(IbErrorNode(head[0], head[1], tuple(ports)))

    for number, line in content_lines(text):
        stripped = line.strip()
        if (m := _NODE.match(stripped)) is not None:
            close()
            seen = True
            guid = parse_guid(m.group(1), source, number, "the node GUID") if m.group(1) else None
            head, ports = (guid, m.group(2)), []
            continue
        if (m := _PORT.match(stripped)) is not None:
            if head is None:
                raise ParseError(source, "expected an 'Errors for ...' header before a GUID line", line=number)
            with problems.skipping(f"the error counters on line {number}"):
                ports.append(_port(m, source, number))
            continue
        if stripped.startswith("##"):
            seen = True
            if (m := _SUMMARY_NODES.match(stripped)) is not None:
                counts["nodes_checked"], counts["bad_nodes"] = int(m.group(1)), int(m.group(2))
            elif (m := _SUMMARY_PORTS.match(stripped)) is not None:
                counts["ports_checked"], counts["bad_ports"] = int(m.group(1)), int(m.group(2))
            elif (m := _THRESHOLDS.match(stripped)) is not None:
                thresholds.update((k, int(v)) for k, v in _PAIR.findall(m.group(1)))
            elif (m := _SUPPRESSED.match(stripped)) is not None:
                suppressed.extend(w for w in re.split(r"[\s,]+", m.group(1)) if w)
            continue  # other '##' lines are comments
        if skippable(line):
            continue
        raise ParseError(
            source,
            "expected 'Errors for ...', 'GUID 0x... port N: [Counter == N] ...' or a '## Summary' line",
            line=number,
        )
    close()
    if not seen:
        raise ParseError(source, "expected 'Errors for ...' blocks or the '## Summary' of ibqueryerrors", line=1)
    return IbQueryErrors(
        tuple(nodes),
        counts.get("nodes_checked"),
        counts.get("bad_nodes"),
        counts.get("ports_checked"),
        counts.get("bad_ports"),
        thresholds,
        tuple(suppressed),
    )


def _port(m: re.Match[str], source: str, number: int) -> IbErrorPort:
    guid = parse_guid(m.group(1), source, number, "the port GUID")
    port = None if m.group(2) == "ALL" else int(m.group(2))
    if port is not None and port > 255:
        raise ParseError(source, f"expected a port number in 0..255, got {port}", line=number)
    counters: dict[str, int] = {}
    for name, value in _COUNTER.findall(m.group(3)):
        counters[name] = int(value)
    if not counters and m.group(3).strip():
        raise ParseError(source, "expected '[Counter == N]' items after the port", line=number)
    return IbErrorPort(guid, port, counters)
