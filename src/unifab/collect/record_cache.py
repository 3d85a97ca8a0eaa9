"""The parsed-record cache: one device directory's read, kept on disk, reused while its files are unchanged.

A second ``unifab check`` of an unchanged bundle should cost little more than a ``stat`` per file. The unit is
one device directory (``hosts/<h>/``, ``switches/<s>/``): its read (:class:`~unifab.collect.parallel.DeviceRead`:
the model record, its links, its ``INPUT-*`` findings, what the source refused) is pickled into one entry file,
and used again only when all of this is what it was when the entry was written:

* every entry below the device directory: relative name, kind, and for a file its size, ``mtime_ns``,
  ``ctime_ns``, inode and device (so a file changed, added, removed or renamed is a miss; an edit whose mtime was
  put back with ``os.utime`` still changes ``ctime``, which only the kernel sets);
* the bundle (its real path and the label messages name it by), the device's kind, the per-file read limit,
  and the unifab code that reads (:func:`code_fingerprint`: the version, the Python, and a hash of the source
  of every module a device read can import);
* not racy: the device's newest ``mtime``/``ctime`` is more than :data:`RACY_NS` older than the time the entry
  was written (git's "racy index" rule). A file changed in the same clock tick as it was read may keep its
  stamps; such an entry is never written, and never trusted if found.

Not catchable, and why that is acceptable: a change that keeps a file's size, mtime *and* ctime, which needs the
system clock set back (or raw access to the block device) by someone who can write the bundle; a file system
that does not keep ``ctime`` or inode numbers (some FUSE and network mounts); clocks skewed by more than
:data:`RACY_NS` between the machine writing the files and the one reading them (a file stamped in the future is
racy, hence re-read, so only a clock running *behind* matters). ``--no-cache`` reads everything.

A device directory holding anything but plain files and directories (a symbolic link, a FIFO, something that
cannot be listed) is not cached: its read depends on more than its own stamps.

A bundle held in memory (the server's store, an upload, a tarball's members) has no stamps to trust, so its
devices are keyed by content instead (:func:`content_key`: every entry's name, kind, size and bytes, hashed):
hashing a device's few tens of kilobytes costs far less than parsing them, and the racy rule has nothing to
guard (content cannot change under its own hash). ``unifab serve`` restarting over its store then reads each
unchanged device from the cache.

The directory is unifab's own: created with mode 0700 and a ``CACHEDIR.TAG`` marker; a directory that is not
empty and has no marker, is not owned by the user or can be written by others is refused. Entries are written
to a temporary file and renamed into place (two processes writing the same entry: the last rename wins, both are
whole). An entry that is truncated, corrupt (its payload's BLAKE2b hash), from another code version or not
unifab's is a miss and is replaced, never trusted and never a traceback. The cache is bounded
(:data:`DEFAULT_MAX_BYTES`, ``UNIFAB_CACHE_MAX``): after a read that wrote entries, the least recently used
entries beyond the bound are deleted. Eviction only deletes files whose names are an entry's or its temporary
file's; nothing else in the directory is touched. Pickle runs code on load, which is why only files in a
directory owned by the user, not writable by others, and owned by the user themselves are loaded.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import hashlib
import io
import marshal
import os
import pickle
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from unifab.sources import Source

__all__ = [
    "CACHE_ENV",
    "CACHE_MAX_ENV",
    "DEFAULT_MAX_BYTES",
    "MARKER",
    "RACY_NS",
    "CacheDirError",
    "CacheStats",
    "DeviceKey",
    "RecordCache",
    "code_fingerprint",
    "content_key",
    "default_cache_dir",
    "device_key",
    "dumps",
]

CACHE_ENV = "UNIFAB_CACHE_DIR"  # where the cache lives; "off" turns the default cache off
CACHE_MAX_ENV = "UNIFAB_CACHE_MAX"  # its bound: a byte count or 512M, 2G
DEFAULT_MAX_BYTES = 2 * 2**30
RACY_NS = 2_000_000_000  # an entry written less than this after its device's newest change is not trusted
MARKER = "CACHEDIR.TAG"
MARKER_TEXT = (
    b"Signature: 8a477f597d28d172789f06886806bc55\n"
    b"# unifab's parsed-record cache (docs/architecture.md, Performance). unifab deletes only the entries it\n"
    b"# wrote here (<2 hex digits>/<30 hex digits>.rec); the directory can be removed at any time.\n"
)
MAGIC = b"unifab-record-cache 1\n"
MAX_ENTRY_BYTES = 256 * 2**20
_ENTRY_SUFFIX = ".rec"
_TMP_PREFIX = ".tmp-"
_STALE_TMP_NS = 3600 * 10**9  # a temporary file this old is a writer that died
_HEX = frozenset("0123456789abcdef")
# the layers above collect (tests/test_layers.py): a device read cannot import them, so they do not change it
_NOT_READING = frozenset(
    {
        "session",
        "fabric_plan.py",
        "change_plan.py",
        "report",
        "health",
        "twin",
        "api.py",
        "serve",
        "agent",
        "cli",
        "__main__.py",
        "__init__.py",
    }
)


class CacheDirError(OSError):
    """The cache directory cannot be used (not unifab's, not the user's, not writable): the message says why."""


@functools.cache
def code_fingerprint() -> str | None:
    """The unifab code a device read runs: version, Python, and a hash of every module it can import (all but
    the layers above ``collect``). ``None`` when the sources cannot be read (a zipped install): no cache."""
    from importlib import metadata

    package = Path(__file__).resolve().parents[1]  # unifab/ (not imported: the package root is above every layer)
    try:
        version = metadata.version("unifab")
    except metadata.PackageNotFoundError:
        version = "?"
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{version}\0{sys.version}\0{sys.implementation.cache_tag}\0".encode())
    try:
        files = sorted(p for p in package.rglob("*.py") if p.relative_to(package).parts[0] not in _NOT_READING)
        for path in files:
            h.update(path.relative_to(package).as_posix().encode() + b"\0")
            h.update(path.read_bytes())
    except OSError:
        return None
    return h.hexdigest() if files else None


def default_cache_dir() -> Path | None:
    """``UNIFAB_CACHE_DIR``, else ``${XDG_CACHE_HOME:-~/.cache}/unifab/records``; ``None`` when set to ``off``
    (or when there is no home to put it in)."""
    configured = os.environ.get(CACHE_ENV, "").strip()
    if configured.lower() in ("off", "0", "no", "none"):
        return None
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    if base and Path(base).is_absolute():
        return Path(base) / "unifab" / "records"
    home = Path("~").expanduser()
    return None if home == Path("~") else home / ".cache" / "unifab" / "records"


@dataclass(slots=True)
class CacheStats:
    """What one read did with the cache: devices found unchanged (``hits``), read and written (``stored``),
    read and not written (``missed``: racy, or the directory refused it), never cacheable (``bypassed``)."""

    hits: int = 0
    stored: int = 0
    missed: int = 0
    bypassed: int = 0
    evicted: int = 0


@dataclass(frozen=True, slots=True)
class DeviceKey:
    """What a device directory's read depends on in the file system: a digest of every entry's stamps, and
    the newest mtime/ctime among them (for the racy rule)."""

    digest: str
    newest_ns: int


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

# one record per entry: (path, inode, device) for a directory, (path, size, mtime, ctime, inode, device) for a file
_Part = tuple[str, int, int] | tuple[str, int, int, int, int, int]


def device_key(bundle_dir: str, rel: str) -> DeviceKey | None:
    """The :class:`DeviceKey` of directory ``rel`` of the bundle at ``bundle_dir``; ``None`` when it holds
    anything but plain files and directories, or cannot be listed (then it is read, never cached).

    Entries are taken in the order the directory lists them (no sort): a listing whose order changed without a
    change of its entries is a miss, never a false hit, and the common case costs no sort."""
    parts: list[_Part] = []
    changes: list[int] = []
    try:
        fd = os.open(f"{bundle_dir}/{rel}" if rel else bundle_dir, _DIR_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        parts.append(("", st.st_ino, st.st_dev))
        if not _walk(fd, "", parts, changes):
            return None
    except OSError:
        return None
    finally:
        os.close(fd)
    digest = hashlib.blake2b(marshal.dumps(parts), digest_size=20).hexdigest()
    return DeviceKey(digest, max(changes, default=0))


def content_key(source: Source, rel: str) -> DeviceKey | None:
    """The :class:`DeviceKey` of directory ``rel`` of an in-memory ``source``, from what it holds: each entry's
    name and kind, and for a file its size and bytes. ``newest_ns`` is 0: content never races its own hash.
    ``None`` when ``rel`` is not a directory or a file cannot be read (then the device is read, never cached)."""
    if source.kind(rel) != "dir":
        return None
    digest = hashlib.blake2b(digest_size=20)
    pending = [rel]
    try:
        while pending:
            directory = pending.pop()
            for name in source.names(directory):
                path = f"{directory}/{name}" if directory else name
                kind = source.kind(path)
                if kind == "dir":
                    digest.update(b"d\0" + path.encode() + b"\0")
                    pending.append(path)
                elif kind == "file":
                    data = source.read_bytes(path)
                    digest.update(b"f\0%s\0%d\0" % (path.encode(), len(data)))
                    digest.update(data)
                else:
                    return None
    except (OSError, UnicodeError):
        return None
    return DeviceKey(digest.hexdigest(), 0)


def _walk(fd: int, prefix: str, parts: list[_Part], changes: list[int]) -> bool:
    with os.scandir(fd) as it:
        entries = list(it)
    for entry in entries:
        name = f"{prefix}/{entry.name}"
        if entry.is_dir(follow_symlinks=False):
            sub = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
            try:
                parts.append((name, entry.inode(), 0))
                if not _walk(sub, name, parts, changes):
                    return False
            finally:
                os.close(sub)
        elif entry.is_file(follow_symlinks=False):
            s = entry.stat(follow_symlinks=False)
            parts.append((name, s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_ino, s.st_dev))
            changes.append(s.st_mtime_ns)
            changes.append(s.st_ctime_ns)
        else:
            return False  # a link, FIFO, socket or device: the read depends on more than these stamps
    return True


# --- pickling the model fast ------------------------------------------------------------------------------

_setstate = getattr(dataclasses, "_dataclass_setstate", None)


@functools.cache
def _builder(cls: type) -> Callable[[tuple[object, ...]], object]:
    """A function that makes a ``cls`` from its field values, one slot descriptor call per field, generated once
    per class (a loop over the fields costs about twice as much, and this is most of a cached read)."""
    if not (
        isinstance(cls, type) and dataclasses.is_dataclass(cls) and getattr(cls, "__setstate__", None) is _setstate
    ):
        raise pickle.UnpicklingError(f"not a frozen slotted dataclass: {cls!r}")
    names = [f.name for f in dataclasses.fields(cls)]
    scope: dict[str, Any] = {"new": object.__new__, "cls": cls}
    lines = ["def build(v):", "    o = new(cls)"]
    for i, name in enumerate(names):
        scope[f"set{i}"] = getattr(cls, name).__set__
        lines.append(f"    set{i}(o, v[{i}])")
    lines.append("    return o")
    exec("\n".join(lines), scope)  # names come from the class's own fields, never from data
    build: Callable[[tuple[object, ...]], object] = scope["build"]
    return build


def _rebuild(cls: type, values: tuple[object, ...]) -> object:
    """A frozen slotted dataclass from its field values (what ``pickle`` calls for :func:`dumps`' objects)."""
    return _builder(cls)(values)


class _Pickler(pickle.Pickler):
    """Frozen slotted dataclasses (most of the model) by their field values: the standard library's
    ``__setstate__`` for them looks the fields up again for every object, most of the time a cached read takes."""

    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        if _setstate is not None and getattr(cls, "__setstate__", None) is _setstate:
            return _rebuild, (cls, tuple(getattr(obj, f.name) for f in dataclasses.fields(cls)))
        return NotImplemented


def dumps(value: object) -> bytes:
    """``value`` pickled for the cache (and for the pool's way back): loads with :func:`pickle.loads`."""
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return out.getvalue()


@dataclass(frozen=True, slots=True)
class RecordCache:
    """One cache directory (see the module doc). Picklable: the pool's workers look entries up themselves."""

    directory: Path
    fingerprint: str
    max_bytes: int = DEFAULT_MAX_BYTES
    racy_ns: int = RACY_NS

    @classmethod
    def open(cls, directory: Path, max_bytes: int | None = None) -> RecordCache | None:
        """The cache in ``directory``, created (mode 0700, with its marker) when absent or empty.

        Raises :class:`CacheDirError` when the directory is not usable; ``None`` when this unifab cannot cache
        (:func:`code_fingerprint` is ``None``)."""
        fingerprint = code_fingerprint()
        if fingerprint is None:
            return None
        if max_bytes is None:
            configured = os.environ.get(CACHE_MAX_ENV, "").strip()
            if configured:
                from unifab.sources import parse_size

                max_bytes = parse_size(configured, CACHE_MAX_ENV)
        _prepare(directory)
        return cls(directory, fingerprint, DEFAULT_MAX_BYTES if max_bytes is None else max_bytes)

    def _entry(self, bundle_real: str, label: str, kind: str, rel: str) -> tuple[Path, bytes]:
        """The entry's path and the identity its header must carry. The code's fingerprint is in the identity
        but not in the name: a new unifab replaces its predecessor's entries instead of adding to them."""
        name = hashlib.blake2b(orjson.dumps([bundle_real, label, kind, rel]), digest_size=16).hexdigest()
        ident = orjson.dumps([self.fingerprint, bundle_real, label, kind, rel])
        return self.directory / name[:2] / f"{name[2:]}{_ENTRY_SUFFIX}", ident

    def lookup(self, bundle_real: str, label: str, kind: str, rel: str, key: DeviceKey) -> bytes | None:
        """The pickled read stored for this device and key, or ``None`` (absent, changed, racy, corrupt,
        foreign: all a miss)."""
        path, ident = self._entry(bundle_real, label, kind, rel)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_size > MAX_ENTRY_BYTES:
                return None
            data = _read_all(fd, st.st_size)
        except OSError:
            return None
        finally:
            os.close(fd)
        payload = _unpack(data, ident, key, self.racy_ns)
        if payload is not None:
            with contextlib.suppress(OSError):  # least recently used first out: a hit counts as a use
                os.utime(path)
        return payload

    def store(self, bundle_real: str, label: str, kind: str, rel: str, key: DeviceKey, payload: bytes) -> bool:
        """Write the entry (temporary file + rename); ``False`` when it is not written: racy, too large, or
        the directory cannot take it (a full disk is no reason to fail a check)."""
        written_ns = time.time_ns()
        if key.newest_ns >= written_ns - self.racy_ns or len(payload) > MAX_ENTRY_BYTES:
            return False
        path, ident = self._entry(bundle_real, label, kind, rel)
        header = orjson.dumps(
            {
                "id": ident.decode(),
                "files": key.digest,
                "newest_ns": key.newest_ns,
                "written_ns": written_ns,
                "size": len(payload),
                "blake2b": hashlib.blake2b(payload).hexdigest(),
            }
        )
        blob = b"".join((MAGIC, len(header).to_bytes(4, "big"), header, payload))
        tmp = path.with_name(f"{_TMP_PREFIX}{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
        try:
            path.parent.mkdir(mode=0o700, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
            try:
                view = memoryview(blob)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            tmp.replace(path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()
            return False
        return True

    def evict(self) -> int:
        """Delete the least recently used entries until the cache is within its bound, and temporary files a
        dead writer left; only files named as unifab names them. Returns how many files were deleted."""
        entries: list[tuple[int, int, Path]] = []
        stale: list[Path] = []
        now = time.time_ns()
        try:
            subdirs = [d for d in os.scandir(self.directory) if _is_fan_out(d.name) and d.is_dir(follow_symlinks=False)]
        except OSError:
            return 0
        for sub in subdirs:
            try:
                with os.scandir(sub.path) as it:
                    for e in it:
                        if not e.is_file(follow_symlinks=False):
                            continue
                        if _is_entry_name(e.name):
                            st = e.stat(follow_symlinks=False)
                            entries.append((st.st_mtime_ns, st.st_size, Path(e.path)))
                        elif _is_tmp_name(e.name) and now - e.stat(follow_symlinks=False).st_mtime_ns > _STALE_TMP_NS:
                            stale.append(Path(e.path))
            except OSError:
                continue
        total = sum(size for _, size, _ in entries)
        doomed = list(stale)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            doomed.append(path)
            total -= size
        removed = 0
        for path in doomed:
            try:
                path.unlink()
                removed += 1
            except OSError:
                continue
        return removed


def _is_fan_out(name: str) -> bool:
    return len(name) == 2 and set(name) <= _HEX


def _is_entry_name(name: str) -> bool:
    stem = name.removesuffix(_ENTRY_SUFFIX)
    return name.endswith(_ENTRY_SUFFIX) and len(stem) == 30 and set(stem) <= _HEX


def _is_tmp_name(name: str) -> bool:
    """``.tmp-<entry name>.<pid>.<8 hex digits>``, as :meth:`RecordCache.store` names its temporary files."""
    if not name.startswith(_TMP_PREFIX):
        return False
    entry, _, rest = name[len(_TMP_PREFIX) :].partition(f"{_ENTRY_SUFFIX}.")
    pid, _, tag = rest.partition(".")
    return _is_entry_name(entry + _ENTRY_SUFFIX) and pid.isdigit() and len(tag) == 8 and set(tag) <= _HEX


def _read_all(fd: int, size: int) -> bytes:
    chunks = []
    got = 0
    while got <= size:
        chunk = os.read(fd, size + 1 - got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _unpack(data: bytes, ident: bytes, key: DeviceKey, racy_ns: int) -> bytes | None:
    """The payload of an entry's bytes when every field matches, else ``None``."""
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 4:
        return None
    start = len(MAGIC) + 4
    length = int.from_bytes(data[len(MAGIC) : start], "big")
    try:
        header = orjson.loads(data[start : start + length])
    except orjson.JSONDecodeError:
        return None
    if not isinstance(header, dict):
        return None
    payload = data[start + length :]
    written = header.get("written_ns")
    if (
        header.get("id") != ident.decode()
        or header.get("files") != key.digest
        or header.get("newest_ns") != key.newest_ns
        or not isinstance(written, int)
        or key.newest_ns >= written - racy_ns
        or header.get("size") != len(payload)
        or header.get("blake2b") != hashlib.blake2b(payload).hexdigest()
    ):
        return None
    return payload


def _prepare(directory: Path) -> None:
    """Create the cache directory (0700, marker first) or check that an existing one is unifab's and safe."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = directory.lstat()
        if not stat.S_ISDIR(st.st_mode):
            raise CacheDirError(errno.ENOTDIR, "not a directory (a link is not followed)", str(directory))
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise CacheDirError(
                errno.EPERM, "not owned by this user, or writable by others: not used as a cache", str(directory)
            )
        marker = directory / MARKER
        if not marker.is_file():
            if any(os.scandir(directory)):
                raise CacheDirError(
                    errno.EEXIST, f"not empty and without unifab's {MARKER}: not used as a cache", str(directory)
                )
            marker.write_bytes(MARKER_TEXT)
        elif not marker.read_bytes().startswith(MARKER_TEXT.split(b"\n", 1)[0]):
            raise CacheDirError(errno.EEXIST, f"its {MARKER} is not a cache directory tag", str(directory))
    except CacheDirError:
        raise
    except OSError as exc:
        raise CacheDirError(exc.errno or errno.EIO, exc.strerror or str(exc), str(directory)) from None
