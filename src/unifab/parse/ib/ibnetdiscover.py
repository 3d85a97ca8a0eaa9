"""``ibnetdiscover`` topology file (infiniband-diags 1.x .. 50.x): the default output and ``-g`` (grouped).

One block per node::

    vendid=0x2c9
    devid=0xcf08
    sysimgguid=0xb83fd20300a10007
    switchguid=0xb83fd20300a10007(b83fd20300a10007)
    Switch	40 "S-b83fd20300a10007"		# "MF0;ib-leaf-r7:MQM8700/U1" base port 0 lid 11 lmc 0
    [1]	"H-a088c20300b1000e"[1](a088c20300b1000f) 		# "dgx-001 mlx5_7" lid 20 4xHDR

    Ca	1 "H-a088c20300b1003e"		# "dgx-004 mlx5_7"
    [1](a088c20300b1003f) 	"S-b83fd20300a10007"[4]		# lid 43 lmc 0 "MF0;ib-leaf-r7:MQM8700/U1" lid 11 4xHDR

Node header ``Switch|Ca|Rt <nports> "<S|H|R>-<node guid>" # "<NodeDescription>" ...``; a port line names its
local port (and, on CAs, its own port GUID), the remote node id and port (and the remote CA's port GUID), then
after ``#`` the remote description, the remote LID and the link's ``<width>x<speed>`` (``4xHDR``; a link
trained at one lane prints ``1xHDR``). Unconnected ports are absent. Every link appears twice, once from each
end; :func:`links` folds them into one record per cable.

``-g`` adds chassis grouping: ``Chassis N (guid 0x...)`` / ``Non-Chassis Nodes`` headings, ``# Chassis N``
after ``sysimgguid``, a ``# <chassis type> <slot>`` comment after ``switchguid``, and ``[ext N]`` external port
numbers after port numbers; ``-f`` adds `` s=N w=N v=N`` after the rate. ``-p`` (ports report) is
:mod:`unifab.parse.ib.ibnetdiscover_ports`, ``-l`` (node list) :mod:`unifab.parse.ib.ibnodes`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import pasted

__all__ = [
    "KINDS",
    "LANE_RATE_MBPS",
    "IbLink",
    "IbNode",
    "IbPort",
    "IbTopology",
    "NamedLink",
    "ca_device",
    "links",
    "named_links",
    "node_name",
    "parse",
]

# Data rate of one lane, Mb/s, by the speed name ibnetdiscover prints (IBTA rates, encoding included).
LANE_RATE_MBPS = {
    "SDR": 2_500,
    "DDR": 5_000,
    "QDR": 10_000,
    "FDR10": 10_000,
    "FDR": 14_000,
    "EDR": 25_000,
    "HDR": 50_000,
    "NDR": 100_000,
    "XDR": 200_000,
}

KINDS = {"Switch": "switch", "Ca": "ca", "Rt": "router"}
_KIND_OF_PREFIX = {"S-": "switch", "H-": "ca", "R-": "router"}

_HEADER = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]*)"\s*(?:#\s*(.*))?$')
_PORT = re.compile(
    r'^\[(\d+)\](?:\[ext (\d+)\])?(?:\(([0-9a-fA-F]+)\))?\s*"([^"]*)"\[(\d+)\](?:\[ext (\d+)\])?'
    r"(?:\s*\(([0-9a-fA-F]+)\))?\s*(?:#\s*(.*))?$"
)
_QUOTED = re.compile(r'"([^"]*)"')
_LID = re.compile(r"\blid (\d+)")
_RATE = re.compile(r"\b(\d+)x([A-Za-z0-9?]+)(?:\s+s=\d+ w=\d+ v=\d+)?(?:\s+slot \d+|\s+\(scp\))?\s*$")
_ATTR = re.compile(
    r"^(vendid|devid|sysimgguid|switchguid|caguid|rtguid)=(0x[0-9a-fA-F]+)(?:\(([0-9a-fA-F]+)\))?\s*(?:#\s*(.*))?$"
)
_CHASSIS_COMMENT = re.compile(r"^Chassis (\d+)")
# -g headings: "Chassis 1 (guid 0x...)", "Non-Chassis Nodes", a Xsigo chassis' "Hostname: ..."
_GROUP_HEADING = re.compile(r"^(?:Chassis \d+(?: \(guid 0x[0-9a-fA-F]+\))?|Non-Chassis Nodes|Hostname: .*)$")


@dataclass(frozen=True, slots=True)
class IbPort:
    """One connected port of a node and what is at its other end."""

    port: int
    port_guid: str | None  # own port GUID (printed on CA ports)
    remote_id: str  # "S-<guid>" | "H-<guid>" | "R-<guid>"
    remote_port: int
    remote_port_guid: str | None
    remote_description: str | None
    remote_lid: int | None
    width: int | None  # active lanes (4 in "4xHDR")
    speed: str | None  # "HDR", "NDR", ...
    ext_port: int | None = None  # chassis external port number (-g "[ext N]")
    remote_ext_port: int | None = None

    @property
    def rate_mbps(self) -> int | None:
        """Link data rate: lanes times the lane rate of the speed (``4xHDR`` = 200,000)."""
        lane = LANE_RATE_MBPS.get(self.speed or "")
        return None if lane is None or self.width is None else lane * self.width


@dataclass(frozen=True, slots=True)
class IbNode:
    kind: str  # "switch" | "ca" | "router"
    id: str  # "S-<guid>" as ibnetdiscover names it
    guid: str | None  # node GUID (switchguid / caguid / rtguid), "0x..."
    nports: int
    description: str | None  # NodeDescription: "MF0;ib-leaf-r7:MQM8700/U1", "dgx-001 mlx5_7"
    lid: int | None  # switch base-port LID (CAs carry theirs on the port line)
    vendid: str | None
    devid: str | None
    sysimgguid: str | None
    ports: tuple[IbPort, ...]
    chassis: int | None = None  # -g: the chassis number the node belongs to

    @property
    def name(self) -> str:
        """The device's name: a switch's hostname (``MF0;<host>:<model>/U1``), a CA's ``<host>``."""
        return node_name(self.kind, self.description) or self.id


@dataclass(frozen=True, slots=True)
class IbTopology:
    nodes: tuple[IbNode, ...]


@dataclass(frozen=True, slots=True)
class IbLink:
    """One cable, both ends as (node id, port); ``a`` sorts first."""

    a_id: str
    a_port: int
    b_id: str
    b_port: int
    width: int | None
    speed: str | None

    @property
    def rate_mbps(self) -> int | None:
        lane = LANE_RATE_MBPS.get(self.speed or "")
        return None if lane is None or self.width is None else lane * self.width


def node_name(kind: str, description: str | None) -> str | None:
    """Hostname from a NodeDescription.

    ``MF0;ib-leaf-r7:MQM8700/U1`` → ``ib-leaf-r7`` (NVIDIA switches), ``dgx-001 mlx5_7`` → ``dgx-001`` (rdma-ndd).
    """
    if not description:
        return None
    if kind == "switch" or ";" in description:
        rest = description.split(";", 1)[-1]
        return rest.split(":", 1)[0] or None
    return description.split(" ", 1)[0] or None


def ca_device(description: str | None) -> str | None:
    """The RDMA device of a CA's NodeDescription (``dgx-001 mlx5_7`` → ``mlx5_7``), ``None`` without one."""
    if not description or " " not in description:
        return None
    return description.split(" ", 1)[1].strip() or None


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> IbTopology:
    """The nodes of a topology file (plain or ``-g``). With a lenient ``problems`` a bad port line costs that
    port only; anything else that is not the format raises."""
    problems = problems if problems is not None else ParseProblems.strict(source)
    nodes: list[IbNode] = []
    chassis: int | None = None
    attrs: dict[str, str] = {}
    guid: str | None = None
    header: tuple[str, str, int, str | None, int | None] | None = None
    ports: list[IbPort] = []
    seen_header = False

    def close() -> None:
        if header is not None:
            kind, node_id, nports, desc, lid = header
            nodes.append(
                IbNode(
                    kind,
                    node_id,
                    guid,
                    nports,
                    desc,
                    lid,
                    attrs.get("vendid"),
                    attrs.get("devid"),
                    attrs.get("sysimgguid"),
                    tuple(ports),
                    chassis,
                )
            )

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if _GROUP_HEADING.match(line):
            continue
        if (m := _ATTR.match(line)) is not None:
            if header is not None:
                close()
                header, ports, attrs, guid, chassis = None, [], {}, None, None
            key, value = m.group(1), m.group(2)
            if key == "sysimgguid" and (c := _CHASSIS_COMMENT.match(m.group(4) or "")) is not None:
                chassis = int(c.group(1))
            if key in ("switchguid", "caguid", "rtguid"):
                guid = value
            else:
                attrs[key] = value
            continue
        if (m := _HEADER.match(line)) is not None:
            close()
            seen_header = True
            comment = m.group(4) or ""
            desc = _QUOTED.search(comment)
            lid = _LID.search(comment)
            header = (
                KINDS[m.group(1)],
                m.group(3),
                int(m.group(2)),
                desc.group(1) if desc else None,
                int(lid.group(1)) if lid else None,
            )
            ports = []
            continue
        if (m := _PORT.match(line)) is not None:
            if header is None:
                raise ParseError(source, "expected a Switch/Ca/Rt node header before a port line", line=number)
            with problems.skipping(f"port [{m.group(1)}] of {header[1]}"):
                ports.append(_port(m, source, number))
            continue
        raise ParseError(
            source,
            "expected a node attribute (vendid=...), a 'Switch|Ca|Rt <ports> \"<id>\"' header or a '[port]' line",
            line=number,
        )
    close()
    if not seen_header:
        raise ParseError(source, "expected at least one Switch/Ca/Rt node", line=1)
    return IbTopology(tuple(nodes))


def _port(m: re.Match[str], source: str, number: int) -> IbPort:
    comment = m.group(8) or ""
    desc = _QUOTED.search(comment)
    # A CA port comment carries its own lid first ("lid 43 lmc 0 "<desc>" lid 11");
    # the remote lid follows the description.
    after = comment[desc.end() :] if desc else comment
    lid = _LID.search(after)
    rate = _RATE.search(comment)
    width = int(rate.group(1)) if rate else None
    port, remote_port = int(m.group(1)), int(m.group(5))
    if port > 255 or remote_port > 255:
        raise ParseError(source, f"expected port numbers in 0..255, got [{port}] and [{remote_port}]", line=number)
    return IbPort(
        port=port,
        port_guid=m.group(3),
        remote_id=m.group(4),
        remote_port=remote_port,
        remote_port_guid=m.group(7),
        remote_description=desc.group(1) if desc else None,
        remote_lid=int(lid.group(1)) if lid else None,
        width=width,
        speed=rate.group(2) if rate else None,
        ext_port=int(m.group(2)) if m.group(2) else None,
        remote_ext_port=int(m.group(6)) if m.group(6) else None,
    )


def links(topology: IbTopology) -> tuple[IbLink, ...]:
    """One record per cable (both ends print it), keyed by the sorted ends; order of first appearance."""
    found: dict[tuple[str, int, str, int], IbLink] = {}
    for node in topology.nodes:
        for p in node.ports:
            (a_id, a_port), (b_id, b_port) = sorted(((node.id, p.port), (p.remote_id, p.remote_port)))
            key = (a_id, a_port, b_id, b_port)
            if key not in found:
                found[key] = IbLink(a_id, a_port, b_id, b_port, p.width, p.speed)
    return tuple(found.values())


@dataclass(frozen=True, slots=True)
class NamedLink:
    """A cable in the names the rest of unifab uses: a CA end is (host, RDMA device), a switch end
    (switch hostname, port number as text); ``a`` sorts first."""

    a_node: str
    a_port: str
    b_node: str
    b_port: str
    width: int | None
    speed: str | None
    rate_mbps: int | None


def named_links(topology: IbTopology) -> tuple[NamedLink, ...]:
    """:func:`links` with GUID ids replaced by NodeDescription names (the GUID when a node has none)."""
    described: dict[str, tuple[str, str | None]] = {}  # node id -> (kind, description)
    for node in topology.nodes:
        for p in node.ports:
            kind = _KIND_OF_PREFIX.get(p.remote_id[:2], "ca")
            described.setdefault(p.remote_id, (kind, p.remote_description))
    for node in topology.nodes:
        described[node.id] = (node.kind, node.description)

    def end(node_id: str, port: int) -> tuple[str, str]:
        kind, description = described.get(node_id, ("ca", None))
        name = node_name(kind, description) or node_id
        if kind == "ca":
            device = ca_device(description)
            return name, device if device is not None else str(port)
        return name, str(port)

    out: list[NamedLink] = []
    for lk in links(topology):
        a, b = sorted((end(lk.a_id, lk.a_port), end(lk.b_id, lk.b_port)))
        out.append(NamedLink(a[0], a[1], b[0], b[1], lk.width, lk.speed, lk.rate_mbps))
    return tuple(out)
