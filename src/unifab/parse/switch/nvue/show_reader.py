"""The generic ``nv show`` text reader: a key/value tree under an ``operational  applied
[description]`` header and dashed rule, then titled tables (``Title`` / ``=====`` / header / dashed
rule / rows), with columns placed by the dashed rules.

Sizes are printed in **binary** units (``146.48 KB`` = 150000 B / 1024, ``1.43 MB`` = 1500000 B /
1048576, ``25000 B``); :func:`size_bytes` converts them to bytes, rounded, so a value printed with two
decimals is exact only to 0.005 of its unit (<= 6 B for KB, <= 5243 B for MB): compare with that
tolerance. A leading shell prompt line is skipped; a second one is an error (one command's output per
call). Bad input raises :class:`~unifab.errors.ParseError` with a line number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from unifab.errors import ParseError
from unifab.parse._text import decode_utf8
from unifab.parse.switch.nvue.defaults import _OFF, _ON
from unifab.parse.switch.nvue.records import NvueScheduler

__all__ = ["ShowReader", "read_show", "size_bytes"]

_PROMPT = re.compile(r"\S+@\S+?:\S*\s*[$#]\s")
_TOKEN = re.compile(r"\S+(?: \S+)*")
_RULE = re.compile(r" *-+(?: +-+)* *")
_TITLE_RULE = re.compile(r" *=+ *")
_SIZE = re.compile(r"(\d+(?:\.\d+)?) ?(B|Bytes|KB|MB|GB|TB)")
_SIZE_UNITS = {"B": 1, "Bytes": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}


@dataclass(slots=True)
class _KvRow:
    path: tuple[str, ...]
    values: list[str]  # operational, applied (description dropped)
    line: int


@dataclass(slots=True)
class _Table:
    title: str
    line: int
    columns: list[str]
    rows: list[tuple[int, list[str]]]


@dataclass(slots=True)
class _Show:
    rows: list[_KvRow]
    tables: dict[str, _Table]

    def value(self, *path: str) -> tuple[str | None, int]:
        for row in self.rows:
            if row.path == path:
                for v in row.values:
                    if v:
                        return v, row.line
                return None, row.line
        return None, 0


def _spans(rule: str) -> list[int]:
    return [m.start() for m in re.finditer(r"-+", rule)]


def _cells(text: str, starts: list[int]) -> list[str]:
    """Tokens (runs separated by two or more blanks) placed in the columns the rule defines."""
    cells = [""] * len(starts)
    last = -1
    for m in _TOKEN.finditer(text):
        col = 0
        for i, start in enumerate(starts):
            if m.start() >= start:
                col = i
        col = max(col, last + 1)
        if col >= len(starts):
            cells[-1] = (cells[-1] + "  " + m.group()).strip()
            continue
        cells[col] = m.group()
        last = col
    return cells


def read_show(text: str | bytes, source: str) -> _Show:
    """The key/value rows and the titled tables of one ``nv show`` output."""
    lines = [ln.rstrip("\r") for ln in decode_utf8(text, source).split("\n")]
    n = len(lines)
    i = 0
    while i < n and not lines[i].strip():
        i += 1
    if i < n and _PROMPT.match(lines[i]):
        i += 1
    for j in range(i, n):
        if _PROMPT.match(lines[j]):
            raise ParseError(source, "the output of one command (a second shell prompt starts here)", line=j + 1)
    while i < n and not lines[i].strip():
        i += 1
    if i >= n:
        raise ParseError(source, "nv show output, got empty input")
    if i + 1 >= n or not _RULE.fullmatch(lines[i + 1]) or "-" not in lines[i + 1]:
        raise ParseError(source, "an nv show header ('operational  applied') over a dashed rule", line=i + 1)
    starts = _spans(lines[i + 1])
    if len(starts) < 2:
        raise ParseError(source, "a dashed rule with a key column and a value column", line=i + 2)
    i += 2
    rows: list[_KvRow] = []
    stack: list[tuple[int, str]] = []  # (indent, key)
    tables: dict[str, _Table] = {}
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if i + 1 < n and _TITLE_RULE.fullmatch(lines[i + 1]) and "=" in lines[i + 1]:
            table, i = _read_table(lines, i, source)
            tables[table.title] = table
            continue
        if tables:
            raise ParseError(source, "a table title over a '=====' rule, or the end of the output", line=i + 1)
        cells = _cells(line, starts)
        indent = len(line) - len(line.lstrip(" "))
        if not cells[0] or indent >= starts[1]:
            if not rows:
                raise ParseError(source, "a key in the first column", line=i + 1)
            rows[-1].values = [a or b for a, b in zip(rows[-1].values, cells[1:3], strict=False)]
            i += 1
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, cells[0]))
        rows.append(_KvRow(tuple(k for _, k in stack), [*cells[1:3], "", ""][:2], i + 1))
        i += 1
    return _Show(rows, tables)


def _read_table(lines: list[str], i: int, source: str) -> tuple[_Table, int]:
    title, title_line = lines[i].strip(), i + 1
    n = len(lines)
    i += 2
    while i < n and not lines[i].strip():
        i += 1
    if i + 1 < n and _RULE.fullmatch(lines[i + 1]) and "-" in lines[i + 1]:
        starts = _spans(lines[i + 1])
        header = _cells(lines[i], starts)
        i += 2
        rows: list[tuple[int, list[str]]] = []
        while i < n:
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            if not line.startswith(" ") or (i + 1 < n and _TITLE_RULE.fullmatch(lines[i + 1]) and "=" in lines[i + 1]):
                break
            rows.append((i + 1, _cells(line, starts)))
            i += 1
        return _Table(title, title_line, header, rows), i
    # a message block ("No Data") instead of a table
    text_rows: list[tuple[int, list[str]]] = []
    while i < n and lines[i].strip():
        if i + 1 < n and _TITLE_RULE.fullmatch(lines[i + 1]) and "=" in lines[i + 1]:
            break
        text_rows.append((i + 1, [lines[i].strip()]))
        i += 1
    if not text_rows:
        raise ParseError(source, f"a header, a dashed rule and rows (or a message) under {title!r}", line=title_line)
    return _Table(title, title_line, [], text_rows), i


def size_bytes(text: str) -> int | None:
    """``"146.48 KB"`` -> 149996, ``"25000 B"`` -> 25000, ``"0 Bytes"`` -> 0 (binary units, rounded);
    ``None`` when ``text`` is not a size."""
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        return None
    try:
        value = Decimal(match.group(1)) * _SIZE_UNITS[match.group(2)]
    except InvalidOperation:
        return None
    return int(value.to_integral_value())


class ShowReader:
    """Typed access to one ``nv show`` output; every error names its line."""

    def __init__(self, show: _Show, source: str) -> None:
        self.show = show
        self.source = source

    def err(self, line: int, expected: str) -> ParseError:
        return ParseError(self.source, expected, line=line or None)

    def text(self, *path: str) -> str | None:
        return self.show.value(*path)[0]

    def number(self, *path: str) -> int | None:
        value, line = self.show.value(*path)
        return None if value is None else self.to_int(value, line, "/".join(path))

    def to_int(self, value: str, line: int, what: str) -> int:
        text = value.strip()
        if not (text.isdigit() and text.isascii()):
            raise self.err(line, f"{what} as a number, got {value!r}")
        return int(text)

    def size(self, *path: str) -> int | None:
        value, line = self.show.value(*path)
        return None if value is None else self.to_bytes(value, line, "/".join(path))

    def to_bytes(self, value: str, line: int, what: str) -> int:
        text = value.strip()
        if text.isdigit() and text.isascii():
            return int(text)
        size = size_bytes(text)
        if size is None:
            raise self.err(line, f"{what} as a size such as '146.48 KB' or '25000 B', got {value!r}")
        return size

    def flag(self, *path: str) -> bool | None:
        value, line = self.show.value(*path)
        return None if value is None else self.to_flag(value, line, "/".join(path))

    def to_flag(self, value: str, line: int, what: str) -> bool:
        low = value.strip().lower()
        if low in _ON:
            return True
        if low in _OFF:
            return False
        raise self.err(line, f"{what} as enabled/disabled, got {value!r}")

    def numbers(self, value: str, line: int, what: str, hi: int) -> list[int]:
        text = value.strip()
        if text in ("", "-"):
            return []
        out: list[int] = []
        for item in text.split(","):
            lo_s, dash, hi_s = item.strip().partition("-")
            lo_n = self.to_int(lo_s, line, what)
            hi_n = self.to_int(hi_s, line, what) if dash else lo_n
            if hi_n < lo_n or hi_n > hi:
                raise self.err(line, f"{what} in 0..{hi}, got {item!r}")
            out.extend(range(lo_n, hi_n + 1))
        return out

    def table(self, *titles: str) -> _Table | None:
        for title in titles:
            table = self.show.tables.get(title)
            if table is not None:
                return table
        return None

    def column(self, table: _Table, *names: str) -> int:
        for name in names:
            if name in table.columns:
                return table.columns.index(name)
        raise self.err(table.line, f"a column {' or '.join(repr(n) for n in names)} in table {table.title!r}")

    def scheduler(self, value: str, line: int) -> NvueScheduler:
        low = value.strip().lower()
        if low.startswith("strict"):
            return NvueScheduler("strict", None)
        match = re.fullmatch(r"dwrr-(\d+)%", low)
        if match is None:
            raise self.err(line, f"a scheduler weight such as 'DWRR-50%' or 'strict-priority', got {value!r}")
        return NvueScheduler("dwrr", int(match.group(1)))
