"""Planned cabling: ``a_node,a_port,z_node,z_port[,cable_m]`` CSV with a header row."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass

from unifab.errors import ParseError
from unifab.parse._text import pasted

__all__ = ["HEADER", "PlannedCable", "dump", "parse"]

HEADER = ("a_node", "a_port", "z_node", "z_port")


@dataclass(frozen=True, slots=True)
class PlannedCable:
    a_node: str
    a_port: str
    z_node: str
    z_port: str
    cable_m: float | None


@pasted
def parse(text: str, source: str = "<input>") -> tuple[PlannedCable, ...]:
    rows = csv.reader(text.splitlines())
    try:
        return _parse(rows, source)
    except csv.Error as exc:
        raise ParseError(source, f"expected comma-separated fields ({exc})", line=rows.line_num or 1) from None


def _parse(rows: Iterator[list[str]], source: str) -> tuple[PlannedCable, ...]:
    header = next(rows, None)
    start = 1
    while header is not None and not any(cell.strip() for cell in header):  # blank lines (a blanked prompt) above it
        header, start = next(rows, None), start + 1
    if header is None or tuple(h.strip() for h in header[:4]) != HEADER:
        raise ParseError(source, f"expected header '{','.join(HEADER)}[,cable_m]'", line=start)
    out: list[PlannedCable] = []
    for number, row in enumerate(rows, start=start + 1):
        cells = [c.strip() for c in row]
        if not any(cells):
            continue
        if len(cells) not in (4, 5) or not all(cells[:4]):
            raise ParseError(source, "expected 4 non-empty fields and an optional cable_m", line=number)
        cable: float | None = None
        if len(cells) == 5 and cells[4]:
            try:
                cable = float(cells[4])
            except ValueError:
                raise ParseError(source, f"expected cable_m in metres, got {cells[4]!r}", line=number) from None
        out.append(PlannedCable(cells[0], cells[1], cells[2], cells[3], cable))
    return tuple(out)


def dump(cables: tuple[PlannedCable, ...]) -> str:
    lines = [",".join((*HEADER, "cable_m"))]
    for c in cables:
        cable = "" if c.cable_m is None else f"{c.cable_m:g}"
        lines.append(f"{c.a_node},{c.a_port},{c.z_node},{c.z_port},{cable}")
    return "\n".join(lines) + "\n"
