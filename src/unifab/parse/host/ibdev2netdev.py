"""``ibdev2netdev`` (MLNX_OFED): ``<ibdev> port <n> ==> <netdev> (Up|Down)`` per line.

With a :class:`~unifab.errors.ParseProblems` collector a line of another shape costs that line only; a
file with no line read raises."""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseProblems
from unifab.parse._text import pasted

__all__ = ["IbDevNetdev", "dump", "parse"]

_LINE = re.compile(r"^(?P<dev>\S+) port (?P<port>\d+) ==> (?P<netdev>\S+) \((?P<state>[^)]*)\)$")


@dataclass(frozen=True, slots=True)
class IbDevNetdev:
    rdma_dev: str
    port: int
    netdev: str
    state: str


@pasted
def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> tuple[IbDevNetdev, ...]:
    log = problems if problems is not None else ParseProblems.strict(source)
    out: list[IbDevNetdev] = []
    skipped = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        m = _LINE.match(line)
        if m is None:
            log.add("expected '<ibdev> port <n> ==> <netdev> (Up|Down)'", f"line {number} ({line[:40]!r})", line=number)
            skipped += 1
            continue
        out.append(IbDevNetdev(m["dev"], int(m["port"]), m["netdev"], m["state"]))
    if skipped and not out:
        raise log.problems[0].error()
    return tuple(out)


def dump(rows: tuple[IbDevNetdev, ...]) -> str:
    return "".join(f"{r.rdma_dev} port {r.port} ==> {r.netdev} ({r.state})\n" for r in rows)
