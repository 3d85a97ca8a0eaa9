"""``perfquery`` (infiniband-diags 1.x .. 50.x): PMA PortCounters, plain, ``-x`` (PortCountersExtended) and
``-a`` (all ports: one aggregate block with PortSelect 255, or one block per port with ``-a -l``).

One block per port read::

    # Port counters: Lid 3 port 2 (CapMask: 0x1300)
    PortSelect:......................2
    CounterSelect:...................0x0000
    SymbolErrorCounter:..............65535
    ...
    # Port extended counters: Lid 3 port 2 (CapMask: 0x1300 CapMask2: 0x0000000)
    PortXmitData:....................3600

The plain counters are narrow and *saturate* (stop at their maximum, never wrap): :data:`COUNTER_BITS` gives each
one's width so the health side can tell "65535" from "at least 65535". Extended counters are 64-bit
(:data:`EXTENDED_COUNTER_BITS`). ``PortXmitData``/``PortRcvData`` count 4-byte words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from unifab.errors import ParseError, ParseProblems
from unifab.parse.ib._common import content_lines, parse_hex, skippable

__all__ = [
    "ALL_PORTS",
    "COUNTER_BITS",
    "EXTENDED_COUNTER_BITS",
    "PerfCounters",
    "PerfQuery",
    "counter_bits",
    "parse",
]

# PortCounters (IBTA vol. 1, 16.1.3.5) widths. The error counters saturate at 2**bits - 1.
COUNTER_BITS: dict[str, int] = {
    "SymbolErrorCounter": 16,
    "LinkErrorRecoveryCounter": 8,
    "LinkDownedCounter": 8,
    "PortRcvErrors": 16,
    "PortRcvRemotePhysicalErrors": 16,
    "PortRcvSwitchRelayErrors": 16,
    "PortXmitDiscards": 16,
    "PortXmitConstraintErrors": 8,
    "PortRcvConstraintErrors": 8,
    "LocalLinkIntegrityErrors": 4,
    "ExcessiveBufferOverrunErrors": 4,
    "QP1Dropped": 16,
    "VL15Dropped": 16,
    "PortXmitData": 32,
    "PortRcvData": 32,
    "PortXmitPkts": 32,
    "PortRcvPkts": 32,
    "PortXmitWait": 32,
}
# PortCountersExtended: every counter 64-bit (the data/packet counters, and the error counters a port with
# CapMask2 ExtendedPortCounters... reports there too).
EXTENDED_COUNTER_BITS = 64
ALL_PORTS = 255  # PortSelect of an AllPortSelect aggregate (``perfquery -a``)

# Fields of a block that select, not count.
_SELECTORS = frozenset({"PortSelect", "CounterSelect", "CounterSelect2"})

_HEADER = re.compile(
    r"^#\s*Port (counters|extended counters):\s*Lid (\d+) port (\d+)"
    r"(?:\s*\(CapMask:\s*(0x[0-9a-fA-F]+)(?:\s+CapMask2:\s*(0x[0-9a-fA-F]+))?\s*\))?\s*$"
)
_FIELD = re.compile(r"^(\w+):\.*\s*(\S+)\s*$")


@dataclass(frozen=True, slots=True)
class PerfCounters:
    """One block: ``kind`` ``"basic"`` (PortCounters) or ``"extended"`` (-x), the ``lid`` and ``port`` asked
    (255 = all ports aggregated), the PMA ``cap_mask`` (``cap_mask2`` on extended blocks), and the counters by
    the names perfquery prints (``SymbolErrorCounter``, ``PortXmitWait``, ...; selectors left out)."""

    kind: str
    lid: int
    port: int
    cap_mask: int | None
    cap_mask2: int | None
    counters: dict[str, int] = field(default_factory=dict)
    line: int = 0  # where the block's header is, for messages

    @property
    def all_ports(self) -> bool:
        return self.port == ALL_PORTS

    def bits(self, name: str) -> int | None:
        """The width of counter ``name`` in this block (``None`` for one unifab does not know)."""
        return counter_bits(self.kind, name)

    def saturated(self, name: str) -> bool:
        """Whether ``name`` sits at its maximum (a saturated counter no longer counts: the true value is larger)."""
        bits = self.bits(name)
        value = self.counters.get(name)
        return bits is not None and value is not None and value >= (1 << bits) - 1


@dataclass(frozen=True, slots=True)
class PerfQuery:
    blocks: tuple[PerfCounters, ...]

    def block(self, port: int, kind: str = "basic") -> PerfCounters | None:
        """The block of ``port`` (255 for the aggregate) and ``kind``, ``None`` when the capture has none."""
        return next((b for b in self.blocks if b.port == port and b.kind == kind), None)


def counter_bits(kind: str, name: str) -> int | None:
    """Width in bits of counter ``name`` in a ``basic`` or ``extended`` block."""
    if kind == "extended":
        return EXTENDED_COUNTER_BITS
    return COUNTER_BITS.get(name)


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> PerfQuery:
    """Every counter block of a perfquery capture (several runs may be pasted one after another).

    With a lenient ``problems`` a bad counter line costs its block; without one it raises.
    """
    problems = problems if problems is not None else ParseProblems.strict(source)
    blocks: list[PerfCounters] = []
    current: tuple[int, re.Match[str]] | None = None
    rows: list[tuple[int, str, str]] = []

    def close() -> None:
        if current is None:
            return
        number, head = current
        kind = "basic" if head.group(1) == "counters" else "extended"
        with problems.skipping(f"the {kind} counters of lid {head.group(2)} port {head.group(3)}"):
            blocks.append(_block(kind, number, head, rows, source))

    for number, line in content_lines(text):
        stripped = line.strip()
        if (m := _HEADER.match(stripped)) is not None:
            close()
            current, rows = (number, m), []
            continue
        if (f := _FIELD.match(stripped)) is not None:
            if current is None:
                raise ParseError(source, "expected a '# Port counters: Lid N port N' header first", line=number)
            rows.append((number, f.group(1), f.group(2)))
            continue
        if skippable(line):
            continue
        raise ParseError(
            source,
            "expected a '# Port [extended] counters: Lid N port N' header or a 'Name:....value' line",
            line=number,
        )
    close()
    if not blocks:
        if problems.problems:
            raise problems.problems[0].error()
        raise ParseError(source, "expected at least one '# Port counters: Lid N port N' block", line=1)
    return PerfQuery(tuple(blocks))


def _block(kind: str, number: int, head: re.Match[str], rows: list[tuple[int, str, str]], source: str) -> PerfCounters:
    lid, port = int(head.group(2)), int(head.group(3))
    if lid > 0xFFFF or port > 255:
        raise ParseError(
            source, f"expected a LID in 0..65535 and a port in 0..255, got lid {lid} port {port}", line=number
        )
    cap = parse_hex(head.group(4), source, number, "CapMask") if head.group(4) else None
    cap2 = parse_hex(head.group(5), source, number, "CapMask2") if head.group(5) else None
    counters: dict[str, int] = {}
    for row, name, value in rows:
        if name in _SELECTORS:
            continue
        if not (value.isascii() and value.isdigit()):
            raise ParseError(source, f"expected {name} as a non-negative integer, got {value!r}", line=row)
        count = int(value)
        bits = counter_bits(kind, name)
        if bits is not None and count >= 1 << bits:
            raise ParseError(source, f"expected {name} to fit its {bits} bits, got {count}", line=row)
        if name in counters:
            raise ParseError(source, f"expected {name} once per block, found it again", line=row)
        counters[name] = count
    if not counters:
        raise ParseError(source, "expected counter lines under the header", line=number)
    return PerfCounters(kind, lid, port, cap, cap2, counters, number)
