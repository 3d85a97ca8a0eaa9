"""Slurm hostlist expressions, as ``scontrol show hostnames`` expands them and ``scontrol show hostlist`` writes them.

Grammar (Slurm 22.05, checked against ``samples/scheduler/slurm_hostlist_expansion.txt``)::

    hostlist := item ((',' | whitespace) item)*          empty items are skipped
    item     := text ('[' ranges ']' text)*              the text after the last ']' must be empty
    ranges   := range (',' range)*
    range    := DIGITS | DIGITS '-' DIGITS               low <= high; the low bound's digit count sets the padding

``gpu-[001-004,010]`` is gpu-001 … gpu-004, gpu-010; several bracket groups multiply (``rack[1-2]-n[1-2]`` is
rack1-n1, rack1-n2, rack2-n1, rack2-n2, the first group outermost). A suffix after a bracket
(``node-a[01-02]b``) is "Invalid hostlist" in 22.05 and a :class:`ParseError` here. Expansion keeps the
written order and duplicates, like ``scontrol show hostnames``; more than 65536 hosts (Slurm's ``MAX_RANGE``)
is an error.

:func:`compress` writes names back the way ``scontrol show hostlist`` does: a run of names that share a
prefix and count up by one in the trailing number becomes ``lo-hi``, neighbouring runs with one prefix share
one bracket, a lone name stays bare. ``sort=True`` is ``scontrol show hostlistsorted`` (sorted by prefix and
number; duplicates are dropped).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from unifab.errors import ParseError
from unifab.parse._text import pasted

__all__ = ["MAX_HOSTS", "compress", "expand", "parse"]

MAX_HOSTS = 65536  # Slurm's MAX_RANGE: scontrol refuses longer expansions
_SEPARATORS = ", \t\r\n"
_RANGE = re.compile(r"^([0-9]+)(?:-([0-9]+))?$")
_TRAILING_NUMBER = re.compile(r"^(.*?)([0-9]+)$")
_BAD_NAME_CHARS = re.compile(r"[\[\],\s]")


def _line_of(text: str, index: int, first_line: int) -> int:
    return first_line + text.count("\n", 0, index)


def _split_items(expr: str, source: str, first_line: int) -> list[tuple[int, str]]:
    """Split at top-level separators; return (offset, item) pairs. Brackets must balance, without nesting."""
    items: list[tuple[int, str]] = []
    start = 0
    depth_at: int | None = None  # offset of the open '['
    for i, ch in enumerate(expr):
        if ch == "[":
            if depth_at is not None:
                raise ParseError(
                    source,
                    f"expected ']' before another '[' (brackets do not nest), at character {i + 1}",
                    line=_line_of(expr, i, first_line),
                )
            depth_at = i
        elif ch == "]":
            if depth_at is None:
                raise ParseError(
                    source, f"expected '[' before ']' at character {i + 1}", line=_line_of(expr, i, first_line)
                )
            depth_at = None
        elif ch in _SEPARATORS and depth_at is None:
            if i > start:
                items.append((start, expr[start:i]))
            start = i + 1
        elif ch in "\r\n" and depth_at is not None:
            break  # reported below as an unclosed bracket
    if depth_at is not None:
        raise ParseError(
            source,
            f"expected ']' closing the '[' at character {depth_at + 1}",
            line=_line_of(expr, depth_at, first_line),
        )
    if start < len(expr):
        items.append((start, expr[start:]))
    return items


def _bracket_values(body: str, where: int, expr: str, source: str, first_line: int) -> list[str]:
    if not body.strip():
        raise ParseError(
            source,
            f"expected numbers or ranges inside '[]' at character {where + 1}",
            line=_line_of(expr, where, first_line),
        )
    values: list[str] = []
    for part in body.split(","):
        m = _RANGE.match(part.strip())
        if m is None:
            raise ParseError(
                source,
                f"expected a number or a range 'lo-hi' inside '[...]', got {part!r}",
                line=_line_of(expr, where, first_line),
            )
        low, high = m[1], m[2] if m[2] is not None else m[1]
        if int(high) < int(low):
            raise ParseError(
                source,
                f"expected a range 'lo-hi' with lo <= hi, got {part.strip()!r}",
                line=_line_of(expr, where, first_line),
            )
        if int(high) - int(low) + 1 > MAX_HOSTS:
            raise ParseError(
                source,
                f"expected at most {MAX_HOSTS} hosts in a range, got {part.strip()!r}",
                line=_line_of(expr, where, first_line),
            )
        width = len(low)
        values.extend(f"{n:0{width}d}" for n in range(int(low), int(high) + 1))
        if len(values) > MAX_HOSTS:
            raise ParseError(
                source, f"expected at most {MAX_HOSTS} hosts in one bracket", line=_line_of(expr, where, first_line)
            )
    return values


def _expand_item(item: str, offset: int, expr: str, source: str, first_line: int) -> list[str]:
    pieces: list[list[str]] = []
    pos = 0
    while True:
        open_at = item.find("[", pos)
        if open_at < 0:
            tail = item[pos:]
            if pos > 0 and tail:
                raise ParseError(
                    source,
                    f"expected ',' or the end of the hostlist after ']', got suffix {tail!r} in {item!r} "
                    "(Slurm 22.05: Invalid hostlist)",
                    line=_line_of(expr, offset + pos, first_line),
                )
            pieces.append([tail])
            break
        close_at = item.index("]", open_at)  # balanced: checked by _split_items
        pieces.append([item[pos:open_at]])
        pieces.append(_bracket_values(item[open_at + 1 : close_at], offset + open_at, expr, source, first_line))
        pos = close_at + 1
    total = 1
    for values in pieces:
        total *= len(values)
    if total > MAX_HOSTS:
        raise ParseError(
            source,
            f"expected at most {MAX_HOSTS} hosts, {item!r} names {total}",
            line=_line_of(expr, offset, first_line),
        )
    return ["".join(parts) for parts in itertools.product(*pieces)]


def expand(expr: str, source: str = "<hostlist>", *, line: int = 1) -> tuple[str, ...]:
    """Host names of a Slurm hostlist expression, in written order (``scontrol show hostnames``).

    ``line`` is the line of ``source`` the expression sits on, for error messages. An empty expression
    (a pending job's ``NodeList=``) expands to ``()``.
    """
    hosts: list[str] = []
    for offset, item in _split_items(expr, source, line):
        hosts += _expand_item(item, offset, expr, source, line)
        if len(hosts) > MAX_HOSTS:
            raise ParseError(
                source, f"expected at most {MAX_HOSTS} hosts in one hostlist", line=_line_of(expr, offset, line)
            )
    return tuple(hosts)


@dataclass(slots=True)
class _Run:
    prefix: str
    low: int
    high: int
    width: int  # digits of the low bound as written
    bare: str | None  # a name without a trailing number


def _runs(names: Iterable[str]) -> list[_Run]:
    runs: list[_Run] = []
    for name in names:
        if not name or _BAD_NAME_CHARS.search(name):
            raise ValueError(f"not a host name: {name!r}")
        m = _TRAILING_NUMBER.match(name)
        if m is None:
            runs.append(_Run(name, 0, 0, 0, name))
            continue
        prefix, digits = m[1], m[2]
        number = int(digits)
        last = runs[-1] if runs else None
        if (
            last is not None
            and last.bare is None
            and last.prefix == prefix
            and number == last.high + 1
            and f"{number:0{last.width}d}" == digits
        ):
            last.high = number
        else:
            runs.append(_Run(prefix, number, number, len(digits), None))
    return runs


def _sort_key(name: str) -> tuple[str, int, int]:
    m = _TRAILING_NUMBER.match(name)
    return (name, -1, 0) if m is None else (m[1], int(m[2]), len(m[2]))


def compress(names: Iterable[str], *, sort: bool = False) -> str:
    """Write host names as a Slurm hostlist (``scontrol show hostlist``; ``sort=True``: ``hostlistsorted``).

    ``expand(compress(names)) == tuple(names)`` without ``sort``. Raises ``ValueError`` for a name holding
    brackets, commas or whitespace (not a host name).
    """
    items = list(names)
    if sort:
        items = sorted(set(items), key=_sort_key)
    out: list[str] = []
    for prefix, group in itertools.groupby(_runs(items), key=lambda r: (r.prefix, r.bare is None)):
        runs = list(group)
        if not prefix[1]:
            out += [r.prefix for r in runs]
            continue
        if len(runs) == 1 and runs[0].low == runs[0].high:
            out.append(f"{prefix[0]}{runs[0].low:0{runs[0].width}d}")
            continue
        parts = [
            f"{r.low:0{r.width}d}" if r.low == r.high else f"{r.low:0{r.width}d}-{r.high:0{r.width}d}" for r in runs
        ]
        out.append(f"{prefix[0]}[{','.join(parts)}]")
    return ",".join(out)


@pasted
def parse(text: str, source: str = "<input>") -> tuple[str, ...]:
    """Expand a hostlist read from a file (``scontrol show hostnames``); separators may include newlines."""
    if not text.strip():
        raise ParseError(source, "expected a Slurm hostlist, got empty text", line=1)
    return expand(text, source)
