"""``saquery`` (infiniband-diags 1.5 .. 50.x): the subnet administrator's records as the SM holds them.

Every record is a ``<Type> dump:`` line followed by indented ``field.....value`` lines::

    NodeRecord dump:
            lid.....................11
            node_type...............Switch
            num_ports...............40
            node_guid...............0xb83fd20300a10007
            port_guid...............0xb83fd20300a10007
            device_id...............0xCF08
            port_num................0
            vendor_id...............0x2C9
            NodeDescription.........MF0;ib-leaf-r7:MQM8700/U1

:func:`parse` keeps every record (``NodeRecord``, ``PortInfoRecord`` of ``saquery -s``, ...) as text fields;
:meth:`SaQuery.node_records` types the NodeRecords: the SM's view of each node's LID, GUIDs and NodeDescription,
which names a CA's host where ibnetdiscover could not reach it. The headings ``saquery -s`` prints between its
two lists (``IsSM ports``, ``IsSMdisabled ports``) are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse.ib._common import content_lines, parse_guid, parse_hex, skippable

__all__ = ["SaNodeRecord", "SaQuery", "SaRecord", "parse"]

_HEAD = re.compile(r"^(\w+) dump:\s*$")
_FIELD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*?)\.{2,}(.*)$")
_HEADINGS = frozenset({"IsSM ports", "IsSMdisabled ports"})
_NODE_TYPES = {"channel adapter": "ca", "switch": "switch", "router": "router"}


@dataclass(frozen=True, slots=True)
class SaRecord:
    """One record: its type (``NodeRecord``), its fields by the names saquery prints, the line of its head."""

    kind: str
    fields: dict[str, str]
    line: int


@dataclass(frozen=True, slots=True)
class SaNodeRecord:
    """A NodeRecord: ``kind`` ``ca``/``switch``/``router``; a switch's ``port_num`` is 0 (its management port)."""

    lid: int
    kind: str
    num_ports: int
    sys_guid: int
    node_guid: int
    port_guid: int
    port_num: int
    device_id: int | None
    vendor_id: int | None
    description: str


@dataclass(frozen=True, slots=True)
class SaQuery:
    records: tuple[SaRecord, ...]
    source: str = "<input>"

    def node_records(self, problems: ParseProblems | None = None) -> tuple[SaNodeRecord, ...]:
        """The NodeRecords, typed; a record missing a field or holding a malformed one raises naming its line
        (with a lenient ``problems`` it costs that record only, recorded there)."""
        problems = problems if problems is not None else ParseProblems.strict(self.source)
        out: list[SaNodeRecord] = []
        for r in self.records:
            if r.kind == "NodeRecord":
                with problems.skipping(f"NodeRecord at line {r.line}"):
                    out.append(_node(r, self.source))
        return tuple(out)


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> SaQuery:
    """Every record of one or more pasted saquery runs. ``problems`` is accepted for the common signature; a
    field line outside a record, or a line that is neither, raises naming it."""
    del problems
    records: list[SaRecord] = []
    kind: str | None = None
    fields: dict[str, str] = {}
    head = 0
    for number, line in content_lines(text):
        stripped = line.strip()
        if (m := _HEAD.match(stripped)) is not None:
            if kind is not None:
                records.append(SaRecord(kind, fields, head))
            kind, fields, head = m.group(1), {}, number
            continue
        if (f := _FIELD.match(stripped)) is not None and kind is not None:
            fields[f.group(1)] = f.group(2).strip()
            continue
        if stripped in _HEADINGS or skippable(line):
            continue
        raise ParseError(source, "expected a '<Record> dump:' line or an indented 'field.....value' line", line=number)
    if kind is not None:
        records.append(SaRecord(kind, fields, head))
    if not records:
        raise ParseError(source, "expected at least one '<Record> dump:' record", line=1)
    return SaQuery(tuple(records), source)


def _node(record: SaRecord, source: str) -> SaNodeRecord:
    def need(name: str) -> str:
        value = record.fields.get(name)
        if value is None:
            raise ParseError(source, f"expected the NodeRecord to have {name}", line=record.line)
        return value

    def number(name: str) -> int:
        value = need(name)
        if not (value.isascii() and value.isdigit()):
            raise ParseError(source, f"expected {name} as an integer, got {value!r}", line=record.line)
        return int(value)

    def hexa(name: str) -> int | None:
        value = record.fields.get(name)
        return None if value is None else parse_hex(value, source, record.line, name)

    kind = _NODE_TYPES.get(need("node_type").lower())
    if kind is None:
        raise ParseError(
            source, f"expected node_type Channel Adapter, Switch or Router, got {need('node_type')!r}", line=record.line
        )
    lid = number("lid")
    if lid > 0xFFFF:
        raise ParseError(source, f"expected a LID in 0..65535, got {lid}", line=record.line)
    return SaNodeRecord(
        lid=lid,
        kind=kind,
        num_ports=number("num_ports"),
        sys_guid=parse_guid(need("sys_guid"), source, record.line, "sys_guid"),
        node_guid=parse_guid(need("node_guid"), source, record.line, "node_guid"),
        port_guid=parse_guid(need("port_guid"), source, record.line, "port_guid"),
        port_num=number("port_num"),
        device_id=hexa("device_id"),
        vendor_id=hexa("vendor_id"),
        description=record.fields.get("NodeDescription", ""),
    )
