"""Writing live-collected switches into a bundle so that no moment leaves a half-written device.

``unifab collect`` (:mod:`unifab.collect.inventory`) writes through one :class:`BundleWriter`:

* **opening** checks that ``--out`` is (or can become) a writable directory (else a ``UsageError`` naming it)
  and takes an exclusive lock (``.unifab-staging/lock``), so two collects never write one bundle at once.
  What a killed run left in the staging directory is removed; a device directory it had moved aside and not
  yet replaced is moved back first.
* :meth:`BundleWriter.stage` gives each device a fresh directory ``.unifab-staging/<name>.<random>/``; the
  adapter writes ``switches/<name>/<os>/...`` under it (every file fsynced), then ``collect.json``.
* :meth:`BundleWriter.install` puts the complete staged device directory in the place of
  ``switches/<name>`` with one atomic rename (``renameat2(RENAME_EXCHANGE)`` on Linux; elsewhere two renames,
  which the next run repairs if it was killed between them). So ``switches/<name>`` is at every moment the
  previous device directory or the new, complete one. Before the swap, whatever unifab did not write is
  carried over (hard links) and the OS directories the previous collect wrote (``collect.json`` names them)
  are left behind: a device re-collected as another OS loses its old OS directory. A platform's OS
  directory that unifab did not write is never replaced or removed: the device fails with :class:`DeviceRefused`.
* :meth:`BundleWriter.mark_failed` keeps a device's previous data when its re-collect failed and records the
  failed attempt in its ``collect.json`` (``last_attempt``); the bundle reader reports such a device as
  ``INPUT-STALE``, never as current.
* :meth:`BundleWriter.write_manifest` records the run in ``collect-manifest.json`` (per device: OS, times,
  result and why, stale or not), merged with what earlier runs recorded for other devices.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson

from unifab import layout
from unifab.errors import UnifabError, UsageError
from unifab.platforms import PLATFORMS

__all__ = [
    "MANIFEST_VERSION",
    "BundleWriter",
    "DeviceRefused",
    "exchange",
    "os_dirs_written",
    "read_json_object",
    "write_file",
]

MANIFEST_VERSION = 1
LOCK_FILE = "lock"
PREVIOUS = "previous"  # inside a stage: the old device directory while two-rename replacement is under way
# the directories a switch's OS lives in (switches/<name>/<os>/), from the platforms
OS_DIRS = frozenset(p.name for p in PLATFORMS.values() if p.config_file is not None)


class DeviceRefused(UnifabError):
    """A device's directory holds data unifab did not write where the new collect would go."""


# --- files --------------------------------------------------------------------------------------------


def write_file(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all: a temporary file beside it, fsynced, renamed over it."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable (a no-op where directories cannot be opened, as on Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_json_object(path: Path) -> dict[str, Any] | None:
    """A JSON object file, or ``None`` when it is absent, unreadable or not an object."""
    try:
        doc = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _renameat2() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    except OSError:
        return None


_RENAMEAT2 = _renameat2()


def exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths atomically; ``False`` where the system cannot (the caller renames twice)."""
    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # a filesystem without RENAME_EXCHANGE
    raise OSError(err, os.strerror(err), str(a))


# --- what a device directory holds --------------------------------------------------------------------


def os_dirs_written(record: Mapping[str, Any] | None) -> set[str]:
    """The OS directories a device's ``collect.json`` says ``unifab collect`` wrote (``os``, else its collector)."""
    if record is None:
        return set()
    written = {record["os"]} if isinstance(record.get("os"), str) else set()
    collector = record.get("collector")
    written |= {p.name for p in PLATFORMS.values() if p.live is not None and p.live == collector}
    return written & OS_DIRS


def _carry_over(entry: Path, dest: Path) -> None:
    """Keep ``entry`` (not unifab's) in the new device directory: hard links, a copy where links fail."""
    if entry.is_symlink():
        dest.symlink_to(entry.readlink())
    elif entry.is_dir():
        shutil.copytree(entry, dest, symlinks=True, copy_function=_link_or_copy)
    else:
        _link_or_copy(str(entry), str(dest))


def _link_or_copy(src: str, dst: str) -> str:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
    return dst


# --- the writer ---------------------------------------------------------------------------------------


class BundleWriter:
    """One collect run's writes into ``out``; use as a context manager (it holds the bundle's lock)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.staging = out / layout.STAGING_DIR
        self.switches = out / layout.SWITCHES
        self._lock: int | None = None

    # -- opening and closing -------------------------------------------------------------------------

    def __enter__(self) -> BundleWriter:
        out = self.out
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {out} exists and is not a directory")
        try:
            self.switches.mkdir(parents=True, exist_ok=True)
            self.staging.mkdir(exist_ok=True)
            if not os.access(self.staging, os.W_OK | os.X_OK):
                raise PermissionError(errno.EACCES, f"{self.staging} is not writable")
            self._lock = os.open(self.staging / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise UsageError(f"cannot write to --out {out}: {exc.strerror or exc}") from None
        self._take_lock()
        try:
            self._recover()
        except OSError as exc:
            self.__exit__(None, None, None)
            raise UsageError(f"cannot repair what a killed collect left in {self.staging}: {exc}") from None
        return self

    def _take_lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # no flock (Windows): one collect at a time is the user's to keep
            return
        assert self._lock is not None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._lock)
            self._lock = None
            raise UsageError(
                f"another unifab collect is writing into {self.out} (it holds {self.staging}/lock)"
            ) from None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._lock is not None:
            os.close(self._lock)  # releases the flock
            self._lock = None

    def _recover(self) -> None:
        """Clear what a killed run left: every stage goes; a device directory it had moved aside comes back."""
        for stage in self._stages():
            name = stage.name.rpartition(".")[0]
            previous = stage / PREVIOUS
            target = self.switches / name
            if previous.is_dir() and name and not os.path.lexists(target):
                previous.rename(target)
            shutil.rmtree(stage, ignore_errors=True)

    def _stages(self) -> Iterator[Path]:
        try:
            entries = list(self.staging.iterdir())
        except OSError:
            return
        yield from (p for p in entries if p.is_dir() and not p.is_symlink())

    # -- one device ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[Path]:
        """A fresh stage for ``name``: the adapter writes ``switches/<name>/...`` under it; removed on exit."""
        stage = Path(tempfile.mkdtemp(prefix=f"{name}.", dir=self.staging))
        try:
            yield stage
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def install(self, name: str, os_name: str, stage: Path) -> None:
        """Put the staged ``switches/<name>`` in place of the bundle's, whole, in one rename."""
        staged = stage / layout.SWITCHES / name
        target = self.switches / name
        if not os.path.lexists(target):
            staged.rename(target)
            _fsync_dir(self.switches)
            return
        if target.is_symlink() or not target.is_dir():
            raise DeviceRefused(f"{layout.SWITCHES}/{name} is not a directory unifab collect wrote; move it away")
        written = os_dirs_written(read_json_object(target / layout.COLLECT_JSON))
        for entry in sorted(target.iterdir()):
            if entry.name == layout.COLLECT_JSON:
                continue
            if entry.name in OS_DIRS:
                if entry.name not in written:
                    raise DeviceRefused(
                        f"{layout.SWITCHES}/{name}/{entry.name}/ holds files unifab collect did not write; "
                        f"move it away to collect {name} live"
                    )
                continue  # the previous collect's: replaced (same OS) or dropped (the device runs another OS now)
            if not os.path.lexists(staged / entry.name):
                _carry_over(entry, staged / entry.name)
        if exchange(staged, target):
            _fsync_dir(self.switches)
            return  # the stage now holds the previous directory; it goes with the stage
        previous = stage / PREVIOUS
        target.rename(previous)  # killed between these two renames: the next run's _recover moves it back
        staged.rename(target)
        _fsync_dir(self.switches)

    def mark_failed(self, name: str, attempt: Mapping[str, Any]) -> str | None:
        """Keep a device's previous data and record the failed ``attempt`` beside it.

        Returns when the kept data was collected (``collect.json``'s ``finished``; ``"unknown"`` when it does
        not say), or ``None`` when the device has no previous data (nothing is written then).
        """
        target = self.switches / name
        if not target.is_dir() or target.is_symlink():
            return None
        record = read_json_object(target / layout.COLLECT_JSON) or {"version": 1}
        record["last_attempt"] = dict(attempt)
        write_file(target / layout.COLLECT_JSON, orjson.dumps(record, option=orjson.OPT_INDENT_2) + b"\n")
        finished = record.get("finished")
        return finished if isinstance(finished, str) else "unknown"

    # -- the run -------------------------------------------------------------------------------------

    def write_manifest(self, entries: Iterable[Mapping[str, Any]], updated: str) -> Path:
        """Record this run's devices in ``collect-manifest.json``; devices of earlier runs keep their entries."""
        path = self.out / layout.COLLECT_MANIFEST
        old = read_json_object(path) or {}
        devices = old.get("devices") if isinstance(old.get("devices"), dict) else {}
        assert isinstance(devices, dict)
        for entry in entries:
            devices[str(entry["name"])] = {k: v for k, v in entry.items() if k != "name" and v is not None}
        doc = {"version": MANIFEST_VERSION, "updated": updated, "devices": dict(sorted(devices.items()))}
        write_file(path, orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
        return path
