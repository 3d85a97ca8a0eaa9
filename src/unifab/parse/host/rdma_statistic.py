"""``rdma statistic show [link <dev>/<port>]`` and ``rdma statistic mode`` (iproute2 ``rdma``, 5.x-6.x).

``show`` prints one line per port, counter names and values alternating, and (kernel >= 5.16 with
mlx5 optional counters enabled by ``rdma statistic add link X/1 optional-set ...``) an indented
``Optional-set:`` line with the optional counters and their values::

    link rocep8s0f0/1 rx_write_requests 0 rx_read_requests 0 ... rx_icrc_encapsulated 0
        Optional-set: cc_rx_ce_pkts 0 cc_tx_cnp_pkts 0

``-p`` (pretty) puts every ``name value`` pair on its own indented line after ``link <dev>/<port>``.
``mode`` prints the link and the names of the enabled optional counters only::

    link rocep8s0f0/1
        Optional-set: cc_rx_ce_pkts cc_tx_cnp_pkts

Accepted as well: lines continuing the pairs of the link above (a long line wrapped by a mail
client or a terminal), blank lines, and shell prompt lines starting with ``$ `` or ``# `` (captures
that show the command). QP counters (``rdma statistic qp show``, ``cntn``/``LQPN``) are not read.
A link printed by both ``mode`` and ``show`` is one record; a counter may appear once per link.

With a :class:`~unifab.errors.ParseProblems` collector a counter whose value is not a number costs that
counter; a token where a counter name should be (the pairs no longer line up) costs the rest of that link's
counters on that line run. A text with no link read raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import pasted

__all__ = ["RdmaStatLink", "RdmaStatistic", "dump", "parse"]

_LINK = re.compile(r"^link (\S+)/(\d+)(?:\s+(.*))?$")
_OPTIONAL = "Optional-set:"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.+-]*$")
_NUM = re.compile(r"^\d+$")


@dataclass(frozen=True, slots=True)
class RdmaStatLink:
    dev: str
    port: int
    counters: dict[str, int]  # every counter shown, optional ones included
    optional_counters: tuple[str, ...]  # names on the Optional-set line (mode: enabled ones)


@dataclass(frozen=True, slots=True)
class RdmaStatistic:
    links: tuple[RdmaStatLink, ...]

    def link(self, dev: str, port: int = 1) -> RdmaStatLink | None:
        return next((x for x in self.links if (x.dev, x.port) == (dev, port)), None)


@dataclass(slots=True)
class _Link:
    dev: str
    port: int
    counters: dict[str, int] = field(default_factory=dict)
    optional: list[str] = field(default_factory=list)
    pending: list[tuple[str, int]] = field(default_factory=list)  # (token, line) not yet paired


class _Parser:
    def __init__(self, source: str, log: ParseProblems) -> None:
        self.source = source
        self.log = log
        self.links: dict[tuple[str, int], _Link] = {}
        self.current: _Link | None = None

    def fail(self, expected: str, line: int) -> ParseError:
        return ParseError(self.source, expected, line=line)

    def flush(self) -> None:
        """Pair the tokens collected for the current link (they may span wrapped lines)."""
        link = self.current
        if link is None:
            return
        tokens, link.pending = link.pending, []
        where = f"link {link.dev}/{link.port}"
        for i in range(0, len(tokens), 2):
            name, line = tokens[i]
            if not _NAME.match(name):
                rest = f"the counters of {where} from line {line} on"
                self.log.add(f"expected a counter name, got {name!r}", rest, line=line)
                return
            if i + 1 == len(tokens):
                self.log.add(f"expected a value after {name}", f"counter {name} of {where}", line=line)
                return
            value, value_line = tokens[i + 1]
            with self.log.skipping(f"counter {name} of {where}"):
                if not _NUM.match(value):
                    raise self.fail(f"expected an unsigned integer after {name}, got {value!r}", value_line)
                self.add(link, name, int(value), value_line)

    def add(self, link: _Link, name: str, value: int, line: int) -> None:
        if name in link.counters:
            raise self.fail(f"expected {name} once for link {link.dev}/{link.port}", line)
        link.counters[name] = value

    def optional_set(self, rest: list[str], line: int) -> None:
        link = self.current
        if link is None:
            raise self.fail("expected 'link <dev>/<port>' before 'Optional-set:'", line)
        self.flush()
        valued = len(rest) % 2 == 0 and all(_NUM.match(v) for v in rest[1::2])
        names = rest[0::2] if valued and rest else rest
        for i, name in enumerate(names):
            if not _NAME.match(name):
                raise self.fail(f"expected an optional counter name, got {name!r}", line)
            if valued:
                self.add(link, name, int(rest[2 * i + 1]), line)
            if name not in link.optional:
                link.optional.append(name)

    def line(self, text: str, number: int) -> None:
        if m := _LINK.match(text):
            self.flush()
            key = (m[1], int(m[2]))
            self.current = self.links.setdefault(key, _Link(*key))
            self.current.pending += [(t, number) for t in (m[3] or "").split()]
        elif text.startswith(_OPTIONAL):
            self.optional_set(text.removeprefix(_OPTIONAL).split(), number)
        elif self.current is None:
            raise self.fail(f"expected 'link <dev>/<port> ...', got {text[:60]!r}", number)
        else:
            self.current.pending += [(t, number) for t in text.split()]


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> RdmaStatistic:
    """Read ``rdma statistic show`` / ``rdma statistic mode`` output (plain or ``-p``)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    parser = _Parser(source, log)
    orphan = False
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith(("$ ", "# ")) or line in ("$", "#"):
            continue
        if orphan and not _LINK.match(line):
            continue  # the lines of a link whose own line could not be read go with it
        after = " and the lines after it up to the next link" if parser.current is None else ""
        with log.skipping(f"line {number} ({line[:40]!r}){after}") as row:
            parser.line(line, number)
        orphan = row.failed and parser.current is None
    parser.flush()
    if not parser.links and log.problems:
        raise log.problems[0].error()
    if not parser.links:
        raise ParseError(source, "expected 'link <dev>/<port>' lines of rdma statistic", line=1)
    links = tuple(RdmaStatLink(x.dev, x.port, dict(x.counters), tuple(x.optional)) for x in parser.links.values())
    return RdmaStatistic(links)


def dump(record: RdmaStatistic) -> str:
    """``rdma statistic show`` (one line per link, counters in the record's order), optional counters on the
    indented ``Optional-set:`` line with their values -- or, when some of them have no value (``mode``), by
    name only, the valued ones then staying on the link line."""
    lines = []
    for link in record.links:
        optional = set(link.optional_counters)
        valued = all(name in link.counters for name in link.optional_counters)
        main = [f"{k} {v}" for k, v in link.counters.items() if not (valued and k in optional)]
        lines.append(" ".join([f"link {link.dev}/{link.port}", *main]))
        if link.optional_counters:
            names = link.optional_counters
            pairs = [f"{n} {link.counters[n]}" for n in names] if valued else list(names)
            lines.append("    " + " ".join([_OPTIONAL, *pairs]))
    return "\n".join(lines) + "\n"
