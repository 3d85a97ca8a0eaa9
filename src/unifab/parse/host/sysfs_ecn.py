"""MLNX_OFED ECN/DCQCN sysfs tree ``/sys/class/net/<if>/ecn/``.

Layout (mlx5 ``en_sysfs.c``): ``roce_np/enable/<prio>`` and ``roce_rp/enable/<prio>`` hold ``0``/``1``
per priority; ``roce_np/`` also has ``cnp_dscp``, ``cnp_802p_prio`` and ``min_time_between_cnps``;
``roce_rp/`` has the DCQCN reaction-point parameters (``rpg_*``, ``dce_tcp_*``, ...).
The input is a mapping from the path relative to ``ecn/`` to the file's contents, or the same tree
flattened as ``relative/path: value`` lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from unifab.errors import ParseError
from unifab.parse._text import parse_int

__all__ = ["POINTS", "EcnPoint", "SysfsEcn", "parse", "parse_tree"]

POINTS = ("roce_np", "roce_rp")


@dataclass(frozen=True, slots=True)
class EcnPoint:
    enabled: frozenset[int]  # priorities whose enable/<p> reads 1
    params: dict[str, int]


@dataclass(frozen=True, slots=True)
class SysfsEcn:
    roce_np: EcnPoint | None
    roce_rp: EcnPoint | None


def parse_tree(files: Mapping[str, str], source: str = "<input>") -> SysfsEcn:
    """Read the ``ecn/`` tree from ``{relative path: contents}``; unknown paths are ignored."""
    enabled: dict[str, set[int]] = {p: set() for p in POINTS}
    params: dict[str, dict[str, int]] = {p: {} for p in POINTS}
    seen: set[str] = set()
    for rel, content in files.items():
        parts = rel.strip("/").split("/")
        if not parts or parts[0] not in POINTS:
            continue
        point = parts[0]
        where = f"{source}/{rel}" if source != "<input>" else rel
        value = parse_int(content, where, 1, "an integer")
        seen.add(point)
        if len(parts) == 3 and parts[1] == "enable":
            prio = parse_int(parts[2], where, None, "a priority 0-7 in the path")
            if not 0 <= prio <= 7 or value not in (0, 1):
                raise ParseError(where, f"expected enable/<0-7> holding 0 or 1, got {value}", line=1)
            if value:
                enabled[point].add(prio)
        elif len(parts) == 2:
            params[point][parts[1]] = value
    return SysfsEcn(
        *(EcnPoint(frozenset(enabled[p]), dict(sorted(params[p].items()))) if p in seen else None for p in POINTS)
    )


def parse(text: str, source: str = "<input>") -> SysfsEcn:
    """Parse the flattened form: one ``relative/path: value`` line per file."""
    files: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        path, sep, value = line.partition(":")
        if not sep:
            raise ParseError(source, "expected 'relative/path: value'", line=number)
        files[path.strip().removeprefix("ecn/")] = value
    return parse_tree(files, source)
