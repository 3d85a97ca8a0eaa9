"""MLNX_OFED ECN/DCQCN sysfs tree ``/sys/class/net/<if>/ecn/``.

Layout (mlx5 ``en_sysfs.c``): ``roce_np/enable/<prio>`` and ``roce_rp/enable/<prio>`` hold ``0``/``1``
per priority; ``roce_np/`` also has ``cnp_dscp``, ``cnp_802p_prio`` and ``min_time_between_cnps``;
``roce_rp/`` has the DCQCN reaction-point parameters (``rpg_*``, ``dce_tcp_*``, ...).
The input is a mapping from the path relative to ``ecn/`` to the file's contents, or the same tree
flattened as ``relative/path: value`` lines. The flattened form also reads what people paste: ``grep -r .
/sys/class/net/eth0/ecn`` output (``/sys/class/net/eth0/ecn/roce_np/enable/3:1``, everything up to
``ecn/`` is dropped), prompt and ``#`` lines (:func:`unifab.parse._text.is_prompt`) and blank lines
between the blocks of several commands.

With a :class:`~unifab.errors.ParseProblems` collector a file (or flattened line) that cannot be read
costs that value only, and the problem names the file (line). A bad ``enable/<p>`` file leaves priority
``p`` in :attr:`EcnPoint.unknown`, never in or out of ``enabled``: a reader that cannot tell whether ECN is
on for a priority must not read it as off (the bundle reader then leaves the point's enabled set unknown).
A tree whose every file is bad raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import is_prompt, parse_int

__all__ = ["POINTS", "EcnPoint", "SysfsEcn", "parse", "parse_tree"]

POINTS = ("roce_np", "roce_rp")


@dataclass(frozen=True, slots=True)
class EcnPoint:
    enabled: frozenset[int]  # priorities whose enable/<p> reads 1
    params: dict[str, int]
    unknown: frozenset[int] = field(default=frozenset())  # priorities whose enable/<p> could not be read


@dataclass(frozen=True, slots=True)
class SysfsEcn:
    roce_np: EcnPoint | None
    roce_rp: EcnPoint | None


def _value(parts: list[str], content: str, where: str, line: int) -> tuple[int | None, int]:
    """(priority or None for a parameter, value) of one file; raises a located :class:`ParseError`."""
    value = parse_int(content, where, line, "an integer")
    if len(parts) == 3 and parts[1] == "enable":
        prio = parse_int(parts[2], where, line, "a priority 0-7 in the path")
        if not 0 <= prio <= 7 or value not in (0, 1):
            raise ParseError(where, f"expected enable/<0-7> holding 0 or 1, got {value}", line=line)
        return prio, value
    return None, value


def _read(files: Mapping[str, str], locate: Mapping[str, tuple[str, int]], source: str, log: ParseProblems) -> SysfsEcn:
    enabled: dict[str, set[int]] = {p: set() for p in POINTS}
    unknown: dict[str, set[int]] = {p: set() for p in POINTS}
    params: dict[str, dict[str, int]] = {p: {} for p in POINTS}
    seen: set[str] = set()
    read = 0
    for rel, content in files.items():
        parts = rel.strip("/").split("/")
        if (
            not parts
            or parts[0] not in POINTS
            or len(parts) not in (2, 3)
            or (len(parts) == 3 and parts[1] != "enable")
        ):
            continue
        point = parts[0]
        where, line = locate.get(rel, (f"{source}/{rel}" if source != "<input>" else rel, 1))
        seen.add(point)
        with log.skipping(rel.strip("/")) as row:
            prio, value = _value(parts, content, where, line)
            if prio is None:
                params[point][parts[1]] = value
            elif value:
                enabled[point].add(prio)
            read += 1
        if row.failed and len(parts) == 3:
            prio_text = parts[2]
            if prio_text.isdigit() and int(prio_text) <= 7:
                unknown[point].add(int(prio_text))
    if not read and log.problems:
        raise log.problems[0].error()
    return SysfsEcn(
        *(
            EcnPoint(frozenset(enabled[p]), dict(sorted(params[p].items())), frozenset(unknown[p]))
            if p in seen
            else None
            for p in POINTS
        )
    )


def parse_tree(files: Mapping[str, str], source: str = "<input>", problems: ParseProblems | None = None) -> SysfsEcn:
    """Read the ``ecn/`` tree from ``{relative path: contents}``; unknown paths are ignored."""
    return _read(files, {}, source, problems if problems is not None else ParseProblems.strict(source))


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> SysfsEcn:
    """Parse the flattened form: one ``relative/path: value`` line per file (see the module doc)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    files: dict[str, str] = {}
    locate: dict[str, tuple[str, int]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or is_prompt(raw) or line.startswith("#"):
            continue
        with log.skipping(f"line {number} ({line[:40]!r})"):
            path, sep, value = line.partition(":")
            path = path.strip()
            path = path.rpartition("/ecn/")[2] if "/ecn/" in path else path.removeprefix("ecn/")
            if not sep or not path:
                raise ParseError(source, "expected 'relative/path: value'", line=number)
            if path in files:
                raise ParseError(source, f"expected {path} once", line=number)
            files[path], locate[path] = value, (source, number)
    if not files and log.problems:
        raise log.problems[0].error()
    return _read(files, locate, source, log)
