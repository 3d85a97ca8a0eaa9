"""Helpers shared by the scheduler parsers: JSON access with key paths, Slurm's ``Key=Value`` text,
column tables, GRES strings, times."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import orjson

from unifab.errors import ParseError, ParseProblems
from unifab.parse._json import child, json_list, type_name

__all__ = [
    "Column",
    "Gres",
    "Pair",
    "epoch_time",
    "gpu_count",
    "gpu_indices",
    "header_columns",
    "key_values",
    "load_json",
    "normalize_gres",
    "null",
    "opt_number",
    "opt_str",
    "opt_str_list",
    "parse_gres",
    "split_aligned",
    "split_top",
    "text_time",
]

# --- JSON -----------------------------------------------------------------------------------------


def load_json(text: str, source: str) -> object:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ParseError(source, f"expected JSON: {exc.msg}", line=max(exc.lineno, 1)) from None
    except RecursionError:
        raise ParseError(source, "expected JSON nested less deeply", line=1) from None


def opt_str(o: dict[str, object], key: str, path: str, source: str) -> str | None:
    value = o.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ParseError(source, f"expected a string, got {type_name(value)}", key=child(path, key))
    return value


def opt_str_list(o: dict[str, object], key: str, path: str, source: str) -> tuple[str, ...]:
    """A list of strings; a bare string (older schemas) reads as a one-element list, absent as ()."""
    value = o.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    items = json_list(value, child(path, key), source)
    out: list[str] = []
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise ParseError(source, f"expected a string, got {type_name(item)}", key=child(child(path, key), i))
        out.append(item)
    return tuple(out)


def opt_number(o: dict[str, object], key: str, path: str, source: str) -> int | None:
    """An integer written plainly (openapi v0.0.38) or as ``{"set", "infinite", "number"}`` (data_parser v0.0.39+).

    Unset or infinite reads as None.
    """
    value = o.get(key)
    where = child(path, key)
    if isinstance(value, dict):
        is_set, infinite, number = value.get("set", True), value.get("infinite", False), value.get("number")
        if not isinstance(is_set, bool) or not isinstance(infinite, bool):
            raise ParseError(source, "expected 'set' and 'infinite' to be booleans", key=where)
        if not is_set or infinite:
            return None
        value, where = number, child(where, "number")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParseError(source, f"expected an integer, got {type_name(value)}", key=where)
    if isinstance(value, float):
        if not value.is_integer():
            raise ParseError(source, f"expected an integer, got {value!r}", key=where)
        value = int(value)
    return value


# --- times ----------------------------------------------------------------------------------------

_SLURM_TIME = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$")
_NO_TIME = ("Unknown", "None", "N/A", "(null)", "")


def epoch_time(seconds: int | None, where: str, source: str) -> str | None:
    """Epoch seconds as ISO 8601 UTC (``2026-11-30T02:14:11Z``); 0 and None mean not set."""
    if not seconds:
        return None
    try:
        return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        raise ParseError(source, f"expected a time in epoch seconds, got {seconds}", key=where) from None


def text_time(value: str | None, source: str, line: int | None) -> str | None:
    """A Slurm text timestamp (``2026-11-30T02:14:11``, the cluster's local time) as printed; Unknown -> None."""
    if value is None or value.strip() in _NO_TIME:
        return None
    value = value.strip()
    if not _SLURM_TIME.match(value):
        raise ParseError(source, f"expected a time YYYY-MM-DDTHH:MM:SS, got {value!r}", line=line)
    return value


# --- Key=Value text (scontrol) ----------------------------------------------------------------------

_KEY_TOKEN = re.compile(r"^([A-Za-z][A-Za-z0-9_:/]*)=(.*)$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Pair:
    key: str
    value: str
    line: int


def key_values(lines: list[tuple[int, str]], rest_of_line: frozenset[str]) -> list[Pair]:
    """``Key=Value`` pairs in order (keys may repeat). A token without ``Key=`` continues the previous value
    (``Reason=IB port mlx5_3 LinkDowned; cable check``); a key in ``rest_of_line`` that starts a line takes the
    whole line (detail format: ``Command=``, ``WorkDir=``, ``OS=``, ``Reason=``). Raises ValueError on a
    leading token that is not ``Key=Value`` (the caller turns it into a ParseError)."""
    pairs: list[Pair] = []
    for number, raw in lines:
        text = raw.strip()
        if not text:
            continue
        first = _KEY_TOKEN.match(text)
        if first is not None and first[1] in rest_of_line and len(lines) > 1:
            pairs.append(Pair(first[1], first[2].strip(), number))
            continue
        for token in text.split():
            m = _KEY_TOKEN.match(token)
            if m is not None:
                pairs.append(Pair(m[1], m[2], number))
            elif pairs:
                last = pairs[-1]
                pairs[-1] = Pair(last.key, f"{last.value} {token}" if last.value else token, last.line)
            else:
                raise ValueError(token)
    return pairs


# --- column tables (squeue, sinfo) ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    start: int
    end: int


def header_columns(header: str) -> list[Column]:
    return [Column(m[0], m.start(), m.end()) for m in re.finditer(r"\S+", header)]


def split_aligned(row: str, columns: list[Column], text_columns: frozenset[str]) -> list[str]:
    """Cells of one squeue row. squeue pads each field to its width (right-justified with ``%.N``) and truncates
    longer values, so a field usually ends where its header ends; a field without a width (``%N``, ``%b``) runs
    to the next space and shifts the rest. Empty cells (a pending job's ``%N``) are kept as ''. The last column
    takes the rest of the row."""
    cells: list[str] = []
    cursor = 0
    shift = 0
    for j, col in enumerate(columns):
        if j == len(columns) - 1:
            cells.append(row[cursor:].strip())
            break
        end = col.end + shift
        cell = row[cursor:end]
        fits = end <= len(row) and (end == len(row) or row[end] == " ") and cell.strip() != ""
        inner = cell.strip()
        if fits and (" " not in inner or col.name in text_columns):
            cells.append(inner)
            cursor = end + 1
            continue
        # no width: the value runs to the next space; a space here means an empty cell when too few values remain
        rest = row[cursor:]
        if rest[:1] == " " and len(rest.split()) < len(columns) - j:
            value_start = cursor
        else:
            value_start = cursor + (len(rest) - len(rest.lstrip(" ")))
        value_end = row.find(" ", value_start)
        if value_end < 0:
            value_end = len(row)
        cells.append(row[value_start:value_end])
        shift = value_end - col.end
        cursor = value_end + 1
    return cells


# --- GRES -----------------------------------------------------------------------------------------

_IDX = re.compile(r"\(IDX:([^)]*)\)")
_IDX_RANGE = re.compile(r"^([0-9]+)(?:-([0-9]+))?$")
_DIGITS = re.compile(r"^[0-9]{1,9}$")


@dataclass(frozen=True, slots=True)
class Gres:
    name: str  # "gpu"
    type: str | None  # "h100"
    count: int
    indices: tuple[int, ...] | None  # from (IDX:...), None when not printed


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside parentheses."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def normalize_gres(text: str | None) -> str | None:
    """``gres:gpu:h100:8`` (22.05 TRES per node), ``gres/gpu:4`` (23.02+), ``gres/gpu=4`` -> ``gpu:h100:8``,
    ``gpu:4``; several entries stay comma-separated. Empty, ``N/A`` and ``(null)`` -> None."""
    if text is None or text.strip() in ("", "N/A", "(null)", "none"):
        return None
    out = []
    for part in split_top(text.strip()):
        item = part.strip()
        for prefix in ("gres:", "gres/"):
            if item.startswith(prefix):
                item = item[len(prefix) :]
        out.append(item.replace("=", ":"))
    return ",".join(p for p in out if p) or None


def parse_gres(text: str, source: str, line: int | None = None, key: str | None = None) -> list[Gres]:
    """``gpu:h100:2(IDX:0-1),gpu:h200:4(IDX:2-5)`` and the other GRES spellings Slurm prints."""
    out: list[Gres] = []
    norm = normalize_gres(text)
    if norm is None:
        return out
    for part in split_top(norm):
        item = part.strip()
        if not item:
            continue
        paren = item.find("(")
        head, tail = (item, "") if paren < 0 else (item[:paren], item[paren:])
        fields = head.split(":")
        name = fields[0]
        if not name or any(not f for f in fields):
            raise ParseError(source, f"expected a GRES 'name[:type][:count]', got {item!r}", line=line, key=key)
        count = 1
        gtype: str | None = None
        rest = fields[1:]
        if rest and _DIGITS.match(rest[-1]):
            count = int(rest[-1])
            rest = rest[:-1]
        if rest:
            gtype = ":".join(rest)
        indices: tuple[int, ...] | None = None
        m = _IDX.search(tail)
        if m is not None:
            indices = _index_list(m[1], item, source, line, key)
        out.append(Gres(name, gtype, count, indices))
    return out


def _index_list(body: str, item: str, source: str, line: int | None, key: str | None) -> tuple[int, ...]:
    if body.strip() in ("N/A", ""):
        return ()
    values: list[int] = []
    for part in body.split(","):
        m = _IDX_RANGE.match(part.strip())
        if m is None or (m[2] is not None and int(m[2]) < int(m[1])) or int(m[2] or m[1]) > 4095:
            raise ParseError(source, f"expected GPU indices like 0-3,5 in (IDX:...), got {item!r}", line=line, key=key)
        values.extend(range(int(m[1]), int(m[2] or m[1]) + 1))
    return tuple(values)


def gpu_count(items: list[Gres]) -> int | None:
    gpus = [g for g in items if g.name == "gpu"]
    return sum(g.count for g in gpus) if gpus else None


def gpu_indices(items: list[Gres]) -> tuple[int, ...] | None:
    gpus = [g for g in items if g.name == "gpu" and g.indices is not None]
    if not gpus:
        return None
    return tuple(sorted({i for g in gpus for i in g.indices or ()}))


def null(value: str | None) -> str | None:
    """Slurm's placeholders for nothing -> None."""
    if value is None:
        return None
    value = value.strip()
    return None if value in ("", "(null)", "N/A", "None", "none") else value


R = TypeVar("R")


def read_in_part(
    read: Callable[[str, str, ParseProblems], tuple[R, ...]], text: str, source: str, problems: ParseProblems | None
) -> tuple[R, ...]:
    """``read`` with the scheduler parsers' contract: with ``problems`` an entry that cannot be read is one
    problem there and the other entries are returned; without it the first problem raises. Output whose every
    entry is bad is refused either way (its first problem raises)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    records = read(text, source, log)
    if not records and log.problems:
        raise log.problems[0].error()
    return records
