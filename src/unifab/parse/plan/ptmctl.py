"""Cumulus PTM's own verdicts: ``ptmctl``, ``ptmctl -d`` and ``ptmctl -l`` tables.

::

    --------------------------------------------------------------------------------------
    port  cbl    exp     act      sysname  portID  portDescr  match  last    BFD   BFD
          status nbr     nbr                                  on     upd     Type  state
    --------------------------------------------------------------------------------------
    swp45 pass   h1:swp1 h1:swp1  h1       swp1    swp1       IfName 5m: 5s  N/A   N/A

A table is a dashed rule, one or two header rows (a column's name is its words stacked over both
rows, joined by a space: ``cbl status``, ``exp nbr``), another rule, then one row per port until a
blank line. Cells are read by the columns' start positions, since a value may hold a space
(``last upd`` = ``5m: 5s``); a row with exactly one whitespace-separated value per column is split on
whitespace instead, which survives a value wider than its column or padding collapsed in a paste. A
row that has neither (a cut at a column start would split a word) is an error rather than a guess.
``N/A`` becomes ``None``. Shell prompt lines (``cumulus@switch:~$ sudo ptmctl -d``, ``# ptmctl``, see
:func:`unifab.parse._text.prompt_command`) name the command of the table that follows.

``cbl status`` is PTM's cable verdict: ``pass`` (planned in topology.dot, LLDP heard, matches), ``fail``
(planned, LLDP heard, mismatch), ``N/A`` (planned, no LLDP yet).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unifab.errors import ParseError
from unifab.parse._text import fixed_cells, is_prompt, prompt_command

__all__ = ["PtmCable", "PtmTable", "cables", "parse"]

_RULE = re.compile(r"^-{10,}\s*$")


@dataclass(frozen=True, slots=True)
class PtmTable:
    command: str | None  # "ptmctl -d" when a prompt line named it
    columns: tuple[str, ...]  # "port", "cbl status", "exp nbr", ...
    rows: tuple[dict[str, str | None], ...]


@dataclass(frozen=True, slots=True)
class PtmCable:
    """One port's cable verdict from a table that has ``cbl status``."""

    port: str
    status: str | None  # "pass" | "fail" | None (planned, no LLDP heard)
    expected: str | None  # "h1:swp1" (``ptmctl -d`` only)
    actual: str | None


def parse(text: str, source: str = "<input>") -> tuple[PtmTable, ...]:
    lines = text.splitlines()
    tables: list[PtmTable] = []
    command: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if is_prompt(line) and not _RULE.match(line):
            command = re.sub(r"^sudo\s+", "", prompt_command(line) or "") or None
            i += 1
            continue
        if not _RULE.match(line):
            raise ParseError(source, "expected a ptmctl table (a '-----' rule) or a shell prompt line", line=i + 1)
        table, i = _table(lines, i + 1, source, command)
        tables.append(table)
        command = None
    if not tables:
        raise ParseError(source, "expected at least one ptmctl table", line=1)
    return tuple(tables)


def _table(lines: list[str], i: int, source: str, command: str | None) -> tuple[PtmTable, int]:
    headers: list[tuple[int, str]] = []  # (line number, text)
    while i < len(lines) and not _RULE.match(lines[i]):
        if not lines[i].strip() or len(headers) == 2:
            raise ParseError(source, "expected one or two header rows closed by a '-----' rule", line=i + 1)
        headers.append((i + 1, lines[i]))
        i += 1
    if not headers or i >= len(lines):
        raise ParseError(source, "expected header rows and a closing '-----' rule", line=min(i, len(lines)) or 1)
    starts = [m.start() for m in re.finditer(r"\S+", headers[0][1])]
    names = [m.group() for m in re.finditer(r"\S+", headers[0][1])]
    if not names or names[0] != "port" or starts[0] != 0:
        raise ParseError(source, "expected the first header row to start with 'port'", line=headers[0][0])
    if len(headers) == 2:
        for m in re.finditer(r"\S+", headers[1][1]):
            if m.start() not in starts:
                raise ParseError(
                    source, f"expected {m.group()!r} under a column of the first header row", line=headers[1][0]
                )
            k = starts.index(m.start())
            names[k] = f"{names[k]} {m.group()}"
    columns = tuple(names)
    rows: list[dict[str, str | None]] = []
    i += 1
    while i < len(lines) and lines[i].strip() and not is_prompt(lines[i]):
        rows.append(_row(lines[i], starts, columns, source, i + 1))
        i += 1
    return PtmTable(command, columns, tuple(rows)), i


def _row(line: str, starts: list[int], columns: tuple[str, ...], source: str, number: int) -> dict[str, str | None]:
    words = line.split()
    if len(words) == len(columns):
        cells = words
    else:
        found = fixed_cells(line, starts)
        if found is None:
            raise ParseError(
                source,
                f"expected {len(columns)} columns ({', '.join(columns)}) under the header, or one word each",
                line=number,
            )
        cells = found
    return {c: (None if v in ("", "N/A") else v) for c, v in zip(columns, cells, strict=True)}


def cables(tables: tuple[PtmTable, ...]) -> tuple[PtmCable, ...]:
    """Per-port cable verdicts of every table that reports ``cbl status`` (the last table wins per port)."""
    found: dict[str, PtmCable] = {}
    for table in tables:
        if "cbl status" not in table.columns:
            continue
        for row in table.rows:
            port = row.get("port")
            if port:
                found[port] = PtmCable(port, row.get("cbl status"), row.get("exp nbr"), row.get("act nbr"))
    return tuple(found.values())
