"""``ibdev2netdev`` (MLNX_OFED): ``<ibdev> port <n> ==> <netdev> (Up|Down)`` per line."""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError

__all__ = ["IbDevNetdev", "dump", "parse"]

_LINE = re.compile(r"^(?P<dev>\S+) port (?P<port>\d+) ==> (?P<netdev>\S+) \((?P<state>[^)]*)\)$")


@dataclass(frozen=True, slots=True)
class IbDevNetdev:
    rdma_dev: str
    port: int
    netdev: str
    state: str


def parse(text: str, source: str = "<input>") -> tuple[IbDevNetdev, ...]:
    out: list[IbDevNetdev] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        m = _LINE.match(line)
        if m is None:
            raise ParseError(source, "expected '<ibdev> port <n> ==> <netdev> (Up|Down)'", line=number)
        out.append(IbDevNetdev(m["dev"], int(m["port"]), m["netdev"], m["state"]))
    return tuple(out)


def dump(rows: tuple[IbDevNetdev, ...]) -> str:
    return "".join(f"{r.rdma_dev} port {r.port} ==> {r.netdev} ({r.state})\n" for r in rows)
