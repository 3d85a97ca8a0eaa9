"""RoCE TOS override ``/sys/class/infiniband/<dev>/tc/<port>/traffic_class`` (MLNX_OFED mlx5_ib).

Reads back empty when unset, ``Global tclass=106`` for a global override (which beats any per-QP
TOS, NCCL_IB_TC included), and one ``dst_ip=10.0.0.0/8,tclass=96``-style line per rule.

With a :class:`~unifab.errors.ParseProblems` collector a bad rule line costs that rule. A bad ``Global
tclass=`` line still makes the file unreadable: ``None`` would read as "no override", which it is not.
A file whose every line is bad raises (an empty file is a valid reading: nothing set).
"""

from __future__ import annotations

from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import parse_int, pasted

__all__ = ["RULE_KEYS", "TclassRule", "TrafficClass", "dump", "parse"]

RULE_KEYS = ("src_ip", "dst_ip", "src_ip6", "dst_ip6")


@dataclass(frozen=True, slots=True)
class TclassRule:
    match: str  # e.g. "dst_ip"
    prefix: str  # e.g. "10.0.0.0/8"
    tclass: int


@dataclass(frozen=True, slots=True)
class TrafficClass:
    global_tclass: int | None
    rules: tuple[TclassRule, ...]

    @property
    def dscp(self) -> int | None:
        """DSCP the override puts on every RoCE packet (``tclass >> 2``)."""
        return None if self.global_tclass is None else self.global_tclass >> 2


def _tclass(token: str, source: str, number: int) -> int:
    value = parse_int(token, source, number, "a tclass 0-255")
    if not 0 <= value <= 255:
        raise ParseError(source, f"expected a tclass 0-255, got {value}", line=number)
    return value


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> TrafficClass:
    log = problems if problems is not None else ParseProblems.strict(source)
    global_tclass: int | None = None
    rules: list[TclassRule] = []
    lines = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        lines += 1
        if line.startswith("Global tclass="):
            global_tclass = _tclass(line.removeprefix("Global tclass="), source, number)
            continue
        with log.skipping(f"the tclass rule of line {number}"):
            fields = dict(part.partition("=")[::2] for part in line.split(","))
            match = next((k for k in RULE_KEYS if k in fields), None)
            if match is None or "tclass" not in fields:
                expected = "expected 'Global tclass=N' or '<src|dst>_ip[6]=PREFIX,tclass=N'"
                raise ParseError(source, expected, line=number)
            rules.append(TclassRule(match, fields[match], _tclass(fields["tclass"], source, number)))
    if lines and len(log.problems) == lines:
        raise log.problems[0].error()
    return TrafficClass(global_tclass, tuple(rules))


def dump(tc: TrafficClass) -> str:
    """The file as the driver prints it (empty when nothing is set)."""
    lines = [] if tc.global_tclass is None else [f"Global tclass={tc.global_tclass}"]
    lines += [f"{r.match}={r.prefix},tclass={r.tclass}" for r in tc.rules]
    return "".join(f"{line}\n" for line in lines)
