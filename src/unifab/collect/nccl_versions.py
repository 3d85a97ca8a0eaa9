"""The NCCL release each host's processes loaded, from the bundle's job logs (``telemetry/nccl/*.log``).

NCCL prints ``<host>:<pid>:<tid> [<dev>] NCCL INFO NCCL version 2.21.5+cuda12.4`` when a process initialises a
communicator (:func:`unifab.parse.host.nccl_debug.scan_versions`). The library comes with the job (its container
or its ``LD_LIBRARY_PATH``), not with the host, so each host keeps ``(log, release)`` pairs: the log is the run
its ranks belong to, and ``FLEET-DRIVER`` compares the hosts of one run with each other and every host with the
fleet baseline (``fleet.groups[i].nccl``). A host the logs name that the bundle does not hold is ignored; a
fully qualified name is matched by its first label when only that is a host of the bundle. A log that cannot be
read, or a version line without a release number, is one ``INPUT-UNREADABLE`` naming the file and line; the rest
is read.
"""

from __future__ import annotations

from dataclasses import replace

from unifab import layout
from unifab.collect.problems import Problems
from unifab.errors import ParseError
from unifab.model import Fabric
from unifab.parse.host import nccl_debug
from unifab.sources import SourcePath

__all__ = ["read_nccl_versions"]


def read_nccl_versions(root: SourcePath, fabric: Fabric, problems: Problems) -> None:
    """Set :attr:`~unifab.model.Host.nccl_versions` of every host the bundle's NCCL logs name."""
    base = root / layout.NCCL_LOG_DIR
    if not base.is_dir() or not fabric.hosts:
        return
    seen: dict[str, dict[tuple[str, str], None]] = {}
    for path in sorted(p for p in base.walk_files() if p.name.endswith(layout.LOG_SUFFIX)):
        log = path.relative_to(base)
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            problems.unreadable(path, f"cannot read: {getattr(exc, 'strerror', None) or exc}")
            continue
        try:
            versions = nccl_debug.scan_versions(text, f"{layout.NCCL_LOG_DIR}/{log}")
        except ParseError as exc:
            problems.unreadable(path, exc.expected, line=exc.line)
            continue
        for v in versions:
            host = _host(v.host, fabric)
            if host is not None:
                seen.setdefault(host, {})[(log, v.release)] = None
    for host, pairs in seen.items():
        fabric.hosts[host] = replace(fabric.hosts[host], nccl_versions=tuple(pairs))


def _host(name: str, fabric: Fabric) -> str | None:
    if name in fabric.hosts:
        return name
    short = name.split(".", 1)[0]
    return short if short in fabric.hosts else None
