"""``unifab check BUNDLE --watch``: keep the findings current while device files change.

The bundle is read and checked once (:class:`~unifab.session.incremental.Session`); then the files under
``hosts/`` and ``switches/`` are polled for changes (mtime, size, appearing, disappearing) and only the
devices that changed are re-read and re-checked. Each change prints the findings that appeared (``+``)
and disappeared (``-``) with a UTC timestamp; ``--format json`` prints one JSON object per change
(NDJSON). A change anywhere else (plan, scheduler, fabric.yaml) re-reads the bundle. Ctrl-C stops
watching with exit code 0. A bundle with no device, or nothing readable, is an input error (exit 2) as for a
plain check: watching nothing must not look like a clean fabric.

Polling stats every file once per round (about 7 µs a file here: 0.2 s for a 512-GPU bundle, some
10 s for 32,768 GPUs); the re-check itself costs only the changed devices.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import orjson

from unifab import layout
from unifab.errors import BundleError, UnifabError
from unifab.jsonify import to_jsonable
from unifab.model import Finding
from unifab.session.incremental import Session, Update

if TYPE_CHECKING:
    from unifab.collect.record_cache import RecordCache

__all__ = ["WATCHED", "WATCHED_FILES", "Stamp", "changed_paths", "report", "snapshot", "watch"]

WATCHED = tuple(p for p in layout.WATCHED if p != layout.INTENT)  # directories
WATCHED_FILES = (layout.INTENT,)
Stamp = tuple[int, int]  # (mtime_ns, size)


def snapshot(root: Path) -> dict[str, Stamp]:
    """Bundle-relative path -> (mtime, size) of every file the bundle reader may read (one scandir walk)."""
    out: dict[str, Stamp] = {}
    for top in WATCHED:
        _walk(root / top, top, out)
    for name in WATCHED_FILES:
        try:
            st = (root / name).stat()
        except OSError:
            continue
        out[name] = (st.st_mtime_ns, st.st_size)
    return out


def _walk(directory: Path, rel: str, out: dict[str, Stamp]) -> None:
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        path = f"{rel}/{entry.name}"
        try:
            if entry.is_dir(follow_symlinks=False):
                _walk(Path(entry.path), path, out)
            else:
                st = entry.stat()
                out[path] = (st.st_mtime_ns, st.st_size)
        except OSError:
            continue


def changed_paths(before: dict[str, Stamp], after: dict[str, Stamp]) -> list[str]:
    """Paths added, removed or modified between two snapshots, sorted."""
    changed = {p for p, stamp in after.items() if before.get(p) != stamp}
    changed |= before.keys() - after.keys()
    return sorted(changed)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _line(sign: str, f: Finding) -> str:
    """One changed finding as a plain line, device text made visible (:func:`unifab.report.text.display`)."""
    from unifab.report.text import display

    where = f.entities[0] if f.entities else f.subject.get("id", f.subject.get("path", ""))
    return display(f"  {sign} {f.severity.value:<8} {f.check:<20} {where}  {f.message}")


def report(update: Update, output: str, out: TextIO, stamp: str) -> None:
    """Print what changed in the findings after one update."""
    if output == "json":
        doc = {
            "time": stamp,
            "devices": update.devices,
            "mode": update.mode,
            "seconds": round(update.seconds, 4),
            "findings": len(update.findings),
            "added": to_jsonable(update.added),
            "removed": to_jsonable(update.removed),
        }
        out.write(orjson.dumps(doc).decode() + "\n")
    else:
        out.write(
            f"{stamp} {', '.join(update.devices)} changed: +{len(update.added)} -{len(update.removed)} findings "
            f"({len(update.findings)} now, {update.seconds * 1000:.0f} ms)\n"
        )
        for f in update.removed:
            out.write(_line("-", f) + "\n")
        for f in update.added:
            out.write(_line("+", f) + "\n")
    out.flush()


def _problem(message: str, output: str, out: TextIO) -> None:
    stamp = _now()
    if output == "json":
        out.write(orjson.dumps({"time": stamp, "error": message}).decode() + "\n")
    else:
        from unifab.report.text import display

        out.write(f"{stamp} cannot re-check: {display(message)}; still watching\n")
    out.flush()


def watch(
    bundle: Path,
    output: str = "table",
    interval_s: float = 1.0,
    iterations: int | None = None,
    out: TextIO | None = None,
    sleep: Callable[[float], None] = time.sleep,
    session: Session | None = None,
    cache: RecordCache | None = None,
) -> int:
    """Poll ``bundle`` and print finding changes until Ctrl-C (or ``iterations`` polls); returns the exit code.

    ``iterations``, ``sleep`` and ``session`` let a caller bound and drive the loop (tests, embedding); ``cache``
    is the record cache the first load reads through (``--cache``, or the default above 256 devices).
    """
    stream = out if out is not None else sys.stdout
    polls = 0
    try:  # Ctrl-C stops watching at any moment, loading included, with exit code 0
        current = session if session is not None else Session(bundle, cache=cache)
        from unifab.cli.common import nothing_read

        problem = nothing_read(current.fabric)
        if problem is not None:  # watching nothing must not look like a clean fabric
            raise BundleError(f"{bundle}: {problem}")
        if output != "json":
            stream.write(f"{_now()} watching {bundle}: {len(current.findings)} findings; Ctrl-C stops\n")
            stream.flush()
        seen = snapshot(bundle)
        while iterations is None or polls < iterations:
            sleep(interval_s)
            polls += 1
            now = snapshot(bundle)
            paths = changed_paths(seen, now)
            seen = now
            if not paths:
                continue
            try:
                update = current.update_paths(paths)
            except UnifabError as exc:  # e.g. the bundle directory vanished mid-change: say so, keep watching
                _problem(str(exc), output, stream)
                continue
            if update.added or update.removed or output == "json":
                report(update, output, stream, _now())
    except KeyboardInterrupt:
        pass
    return 0
