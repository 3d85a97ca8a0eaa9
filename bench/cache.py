"""The page cache, for measurements that must say which state they ran in: warm a bundle, evict it, describe reclaim.

Warm: read every file once (the floor's walk, in this process) right before a timed pair, so both sides of the
pair start from the same cache state. Cold: ``posix_fadvise(POSIX_FADV_DONTNEED)`` on every file drops its clean
pages without root (on tmpfs the file *is* its pages, so nothing can be dropped: :func:`evict` says so). The
machine may also reclaim idle page cache by itself (DAMON reclaim, proactive reclaim via memory.reclaim):
:func:`reclaim_note` describes what this kernel shows, for the results.
"""

from __future__ import annotations

import os
from pathlib import Path


def walk_files(root: str) -> list[str]:
    """Every regular file under ``root`` (no link followed), depth first."""
    out: list[str] = []
    stack = [root]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    out.append(entry.path)
    return out


def warm(root: Path) -> int:
    """Read every byte of every file under ``root`` (so the page cache holds what fits); the bytes read."""
    total = 0
    for path in walk_files(str(root)):
        with open(path, "rb") as fh:  # noqa: PTH123 - the plainest possible read
            total += len(fh.read())
    return total


def evict(root: Path) -> bool:
    """Ask the kernel to drop the cached pages of every file under ``root``; False when it cannot (no
    ``posix_fadvise``, or tmpfs / ramfs, whose files live only in the page cache)."""
    if not hasattr(os, "posix_fadvise") or _fs_type(root) in ("tmpfs", "ramfs"):
        return False
    for path in walk_files(str(root)):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fdatasync(fd)  # dirty pages (a twin just written) are not dropped until written back
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return True


def _fs_type(path: Path) -> str | None:
    best, kind = "", None
    target = str(path.resolve())
    try:
        mounts = Path("/proc/mounts").read_text()
    except OSError:
        return None
    for line in mounts.splitlines():
        parts = line.split()
        inside = len(parts) >= 3 and (target == parts[1] or target.startswith(parts[1].rstrip("/") + "/"))
        if inside and len(parts[1]) >= len(best):
            best, kind = parts[1], parts[2]
    return kind


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def reclaim_note() -> str:
    """What this machine shows of automatic page-cache reclaim (DAMON reclaim, an LRU-gen reclaim knob)."""
    found: list[str] = []
    damon = Path("/sys/module/damon_reclaim/parameters")
    if (damon / "enabled").is_file():
        try:
            enabled = (damon / "enabled").read_text().strip()
            min_age = (damon / "min_age").read_text().strip() if (damon / "min_age").is_file() else "?"
            found.append(f"DAMON reclaim enabled={enabled} (min_age {min_age} µs)")
        except OSError:
            found.append("DAMON reclaim present (parameters unreadable)")
    admin = Path("/sys/kernel/mm/damon/admin/kdamonds")
    if admin.is_dir():
        for kdamond in sorted(p for p in admin.iterdir() if p.name.isdigit()):
            found.append(f"DAMON kdamond {kdamond.name} {_read(kdamond / 'state') or 'state unknown'}")
            for context in sorted((kdamond / "contexts").glob("[0-9]*")):
                aggr = _read(context / "monitoring_attrs" / "intervals" / "aggr_us")
                for scheme in sorted((context / "schemes").glob("[0-9]*")):
                    action = _read(scheme / "action") or "?"
                    age = _read(scheme / "access_pattern" / "age" / "min")
                    idle = ""
                    if age.isdigit() and aggr.isdigit():
                        idle = f" of memory idle for {int(age) * int(aggr) / 1e6:.0f} s or more"
                    found[-1] += f", scheme {action}{idle}"
    if not found:
        return (
            "no automatic page-cache reclaim visible to this kernel's interfaces; a host or hypervisor may still "
            "reclaim idle pages, which the per-side storage reads would show"
        )
    return "; ".join(found) + ": pages idle for a while may be evicted, so each pair is warmed right before timing"
