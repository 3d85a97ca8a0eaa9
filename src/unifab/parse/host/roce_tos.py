"""RDMA-CM defaults: configfs ``/sys/kernel/config/rdma_cm/<dev>/ports/<p>/`` and ``cma_roce_tos``/``cma_roce_mode``.

The kernel (``drivers/infiniband/core/cma_configfs.c``) shows two files per port, created after
``mkdir /sys/kernel/config/rdma_cm/<dev>``:

- ``default_roce_tos``: ``%u\\n``, the IP TOS byte (DSCP << 2 | ECN) RDMA-CM puts on connections whose
  application set none (0 by default; ``bnxt_setupcc.sh`` writes DSCP << 2, NVIDIA guides 106);
- ``default_roce_mode``: ``IB/RoCE v1`` or ``RoCE v2``, the GID type RDMA-CM resolves to.

mlnx-tools ``cma_roce_tos -d <dev> -p <port> [-t <tos>]`` and ``cma_roce_mode -d <dev> -p <port>
[-m 1|2]`` print the file's value alone (``106``, ``RoCE v2``); the port is on their command line,
so a record read from that output has ``port`` None.

``parse_tree`` takes ``{"ports/1/default_roce_tos": "106\\n", ...}`` relative to the device directory
(other files are ignored, at least one of the two is required); ``parse`` takes the tree flattened to
``ports/<p>/<file>: value`` lines, or the one-line output of either script.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems

__all__ = ["MODES", "MODE_FILE", "TOS_FILE", "RoceDefaults", "RoceTos", "dump", "dump_tree", "parse", "parse_tree"]

MODES = ("IB/RoCE v1", "RoCE v2")
TOS_FILE = "default_roce_tos"
MODE_FILE = "default_roce_mode"

_PATH = re.compile(r"^ports/(\d+)/(default_roce_tos|default_roce_mode)$")
_NUM = re.compile(r"^\d+$")


@dataclass(frozen=True, slots=True)
class RoceDefaults:
    port: int | None  # None when read from cma_roce_tos/cma_roce_mode output
    tos: int | None  # 0..255
    mode: str | None  # "IB/RoCE v1" | "RoCE v2"

    @property
    def dscp(self) -> int | None:
        return None if self.tos is None else self.tos >> 2

    @property
    def ecn(self) -> int | None:
        """The ECN bits of the TOS (2 = ECT(0), which the NIC may set itself anyway)."""
        return None if self.tos is None else self.tos & 0b11


@dataclass(frozen=True, slots=True)
class RoceTos:
    ports: tuple[RoceDefaults, ...]


def _tos(value: str, where: str, line: int) -> int:
    if not _NUM.match(value) or int(value) > 255:
        raise ParseError(where, f"expected a TOS byte 0..255, got {value[:30]!r}", line=line)
    return int(value)


def _mode(value: str, where: str, line: int) -> str:
    if value not in MODES:
        raise ParseError(where, f"expected 'IB/RoCE v1' or 'RoCE v2', got {value[:30]!r}", line=line)
    return value


def _read(
    files: Mapping[str, str], locate: dict[str, tuple[str, int]], source: str, log: ParseProblems | None = None
) -> RoceTos:
    log = log if log is not None else ParseProblems.strict(source)
    ports: dict[int, dict[str, int | str]] = {}
    for rel, content in files.items():
        m = _PATH.match(rel.strip("/"))
        if m is None:
            continue
        where, line = locate.get(rel, (f"{source}/{rel}", 1))
        value = content.strip()
        with log.skipping(rel.strip("/")):  # a file that cannot be read leaves that default unknown
            read = _tos(value, where, line) if m[2] == TOS_FILE else _mode(value, where, line)
            ports.setdefault(int(m[1]), {})[m[2]] = read
    if not ports and log.problems:
        raise log.problems[0].error()
    if not ports:
        raise ParseError(source, "expected ports/<p>/default_roce_tos or ports/<p>/default_roce_mode", line=1)
    out = []
    for port in sorted(ports):
        tos, mode = ports[port].get(TOS_FILE), ports[port].get(MODE_FILE)
        out.append(RoceDefaults(port, tos if isinstance(tos, int) else None, mode if isinstance(mode, str) else None))
    return RoceTos(tuple(out))


def parse_tree(files: Mapping[str, str], source: str = "<input>", problems: ParseProblems | None = None) -> RoceTos:
    """Read ``rdma_cm/<dev>/`` from ``{relative path: contents}``; with a lenient ``problems`` a file that cannot
    be read costs that value only."""
    return _read(files, {}, source, problems)


def parse(text: str, source: str = "<input>") -> RoceTos:
    """Read ``cma_roce_tos``/``cma_roce_mode`` output, or ``ports/<p>/<file>: value`` lines."""
    lines = [(n, raw.strip()) for n, raw in enumerate(text.split("\n"), start=1) if raw.strip()]
    if not lines:
        raise ParseError(source, "expected a TOS, a RoCE mode or 'ports/<p>/<file>: value' lines", line=1)
    number, first = lines[0]
    if len(lines) == 1 and (_NUM.match(first) or first in MODES):
        if _NUM.match(first):
            return RoceTos((RoceDefaults(None, _tos(first, source, number), None),))
        return RoceTos((RoceDefaults(None, None, first),))
    files: dict[str, str] = {}
    locate: dict[str, tuple[str, int]] = {}
    for number, line in lines:
        path, sep, value = line.partition(":")
        path = path.strip()
        if not sep or _PATH.match(path.strip("/")) is None:
            expected = "expected 'ports/<p>/default_roce_tos: N' or 'ports/<p>/default_roce_mode: M'"
            raise ParseError(source, expected, line=number)
        if path in files:
            raise ParseError(source, f"expected {path} once", line=number)
        files[path], locate[path] = value, (source, number)
    return _read(files, locate, source)


def dump_tree(record: RoceTos) -> dict[str, str]:
    """The configfs files as the kernel shows them."""
    files: dict[str, str] = {}
    for p in record.ports:
        if p.port is None:
            raise ValueError("a configfs tree needs port numbers")
        if p.tos is not None:
            files[f"ports/{p.port}/{TOS_FILE}"] = f"{p.tos}\n"
        if p.mode is not None:
            files[f"ports/{p.port}/{MODE_FILE}"] = f"{p.mode}\n"
    return files


def dump(record: RoceTos) -> str:
    """The flattened tree, or the script output for a single port-less value."""
    if len(record.ports) == 1 and record.ports[0].port is None:
        p = record.ports[0]
        if (p.tos is None) == (p.mode is None):
            raise ValueError("cma_roce_tos/cma_roce_mode print exactly one value")
        return f"{p.tos if p.tos is not None else p.mode}\n"
    return "".join(f"{path}: {value}" for path, value in dump_tree(record).items())
