"""Where a bundle's files come from: a directory, a tarball, or bytes in memory (an upload, an agent's push).

Every reader goes through a :class:`Source`: read a relative path, list a directory, stat a file. The readers
see it as a :class:`SourcePath`, a small ``pathlib``-like handle (``/``, ``name``, ``is_file()``,
``iterdir()``, ``read_text()``, ...) over one source, so the same reader serves a bundle on disk, a tarball
posted to a server and a live host. Paths are bundle-relative POSIX strings; ``..`` and absolute paths are
refused, so a hostile bundle cannot make a reader leave its source.

Every read is bounded (:func:`max_file_bytes`: :data:`MAX_FILE_BYTES` unless ``UNIFAB_MAX_FILE_BYTES`` or the
CLI's ``--max-file-size`` says otherwise): a larger file raises :class:`OSError`, which the readers report as an
unreadable file like any other.

A bundle is untrusted input (docs/security.md). :class:`DirectorySource` follows symbolic links only while
they stay inside the bundle: a file or directory whose real location is outside it (a link to
``/etc/shadow``) is refused with :class:`OutsideBundleError` (an :class:`OSError`, so the readers report it as
an unreadable file naming the path) and never read; FIFOs and devices are never opened for reading (a FIFO
would block forever). What could not be read for either reason, or for lack of permission, is also kept in
:attr:`DirectorySource.refused`, so that a directory that could not even be listed is reported too.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import tarfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Protocol

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_FILE_BYTES_ENV",
    "DirectorySource",
    "MemorySource",
    "OutsideBundleError",
    "Source",
    "SourcePath",
    "Stamp",
    "as_source_path",
    "batched",
    "max_file_bytes",
    "open_source",
    "parse_size",
]

MAX_FILE_BYTES = 256 * 1024 * 1024  # no artifact unifab reads is near this; a larger one is not an artifact
MAX_FILE_BYTES_ENV = "UNIFAB_MAX_FILE_BYTES"  # overrides MAX_FILE_BYTES: a byte count or 64K, 512M, 2G
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


def parse_size(text: str, what: str = "a size") -> int:
    """``"4096"``, ``"64K"``, ``"512M"``, ``"2G"`` (powers of 1024, an optional ``B``/``iB``) as bytes.

    Raises :class:`~unifab.errors.UsageError` naming ``what`` for anything else, or a size below 1 byte.
    """
    from unifab.errors import UsageError

    raw = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = raw[-1:] if raw[-1:] in _UNITS else ""
    digits = raw[: len(raw) - len(unit)].strip()
    if not digits.isdigit() or len(digits) > 15 or int(digits) < 1:
        raise UsageError(f"{what} must be a positive byte count such as 4096, 64K, 512M or 2G, got {text!r}")
    return int(digits) * _UNITS[unit]


def max_file_bytes() -> int:
    """The largest file a bundle reader reads: ``UNIFAB_MAX_FILE_BYTES`` when set, else :data:`MAX_FILE_BYTES`."""
    configured = os.environ.get(MAX_FILE_BYTES_ENV)
    if configured is None or not configured.strip():
        return MAX_FILE_BYTES
    return parse_size(configured, MAX_FILE_BYTES_ENV)


_max_file_bytes = max_file_bytes  # for the classes whose parameter of that name hides the function


@dataclass(frozen=True, slots=True)
class Stamp:
    """When a file last changed and how big it is (what ``--watch`` and a store compare)."""

    mtime_ns: int
    size: int


class Source(Protocol):
    """Read-only access to the files of one bundle, by bundle-relative POSIX path (``""`` is the root)."""

    @property
    def label(self) -> str:
        """Where the files come from, for messages: a directory path, ``upload:<name>``, a tarball's path."""
        ...

    def read_bytes(self, rel: str) -> bytes:
        """The file's contents; :class:`OSError` (``FileNotFoundError`` when absent) if it cannot be read."""
        ...

    def kind(self, rel: str) -> str | None:
        """``"file"``, ``"dir"``, or ``None`` when nothing is there."""
        ...

    def names(self, rel: str) -> list[str]:
        """The names directly inside directory ``rel``, sorted; empty when it is not a directory."""
        ...

    def stamp(self, rel: str) -> Stamp | None:
        """The file's :class:`Stamp`; ``None`` when it is not a file."""
        ...


def _clean(rel: str) -> str:
    """A normalized relative path; refuses absolute paths and ``..`` (a bundle never names a place outside)."""
    if rel.startswith("/") or "\\" in rel or "\0" in rel:
        raise ValueError(f"not a bundle-relative path: {rel!r}")
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ValueError(f"not a bundle-relative path: {rel!r}")
    return "/".join(parts)


class OutsideBundleError(PermissionError):
    """A path whose real location (symbolic links followed) is outside the bundle: refused, never read."""

    def __init__(self, rel: str) -> None:
        super().__init__(errno.EACCES, "a symbolic link that leaves the bundle (not followed)", rel)


_NOT_THERE = (errno.ENOENT, errno.ENOTDIR)
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)  # a FIFO must not block


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
MAX_HELD_DIRS = 256  # directory descriptors a batch keeps open (one device's directories, typically < 100)


def _read_fd(fd: int, want: int) -> bytes:
    """Up to ``want`` bytes of ``fd``, fewer at its end (a regular file gives them in one ``read``)."""
    first = os.read(fd, want)
    if len(first) == want or not first:
        return first
    chunks = [first]
    got = len(first)
    while got < want:
        more = os.read(fd, want - got)
        if not more:
            break
        chunks.append(more)
        got += len(more)
    return b"".join(chunks)


@dataclass(slots=True)
class _Listing:
    """One directory listed in a batch: its names, the kind of each plain (non-link) file or directory in it,
    and the descriptor it was listed from (``None`` once too many are open)."""

    names: list[str]
    kinds: dict[str, str]
    fd: int | None
    absent: bool = False  # nothing there (ENOENT, ENOTDIR): every path below is absent too


_ABSENT = _Listing([], {}, None, absent=True)  # shared: never changed
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class DirectorySource:
    """A bundle directory on disk. Symbolic links are followed only while they stay inside the bundle.

    Inside :meth:`batch` (one device directory read, say) each directory is listed once with ``os.scandir``:
    the kinds of its plain entries answer :meth:`kind` without a ``stat``, and its files are opened relative to
    the listed directory's descriptor (``openat`` with ``O_NOFOLLOW``), so a file is known to be inside the
    bundle without asking the kernel where it is. Links, other entries and anything that fails take the
    ordinary path. The listings are dropped when the batch ends: a later read sees the files as they are then.
    """

    __slots__ = ("_batch", "_held", "_listed", "_owner", "_prefix", "_real_root", "max_file_bytes", "refused", "root")

    def __init__(self, root: Path, max_file_bytes: int | None = None) -> None:
        self.root = root
        self._prefix = str(root)
        self.max_file_bytes = max_file_bytes if max_file_bytes is not None else _max_file_bytes()
        self._real_root: str | None = None
        # bundle-relative path -> why it could not be read (outside the bundle, permission, not a file)
        self.refused: dict[str, str] = {}
        self._batch = 0
        self._held = 0  # listings holding their directory's descriptor open
        self._owner: int | None = None  # the thread whose batch is open
        self._listed: dict[str, _Listing | None] = {}  # during a batch: directory -> listing (None: not listable)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """List each directory once while the block runs (see the class doc); nestable. The listings belong to
        the thread that opened the batch: another thread reading the same source meanwhile takes the ordinary
        path (its reads never see descriptors the owner may close)."""
        me = threading.get_ident()
        if self._batch and self._owner != me:
            yield
            return
        self._owner = me
        self._batch += 1
        try:
            yield
        finally:
            self._batch -= 1
            if self._batch == 0:
                listed, self._listed, self._held, self._owner = self._listed, {}, 0, None
                for listing in listed.values():
                    if listing is not None and listing.fd is not None:
                        os.close(listing.fd)

    def _batched(self) -> bool:
        """Whether this thread reads inside its batch."""
        return self._batch > 0 and self._owner == threading.get_ident()

    def _listing(self, rel: str) -> _Listing | None:
        """The batch's listing of directory ``rel``, made on first use; ``None`` when it cannot be listed here
        (absent, not permitted, outside the bundle, not searchable): the caller then takes the ordinary path,
        which reports whatever it must. Never records a refusal itself."""
        try:
            return self._listed[rel]
        except KeyError:
            pass
        listing: _Listing | None = None
        fd: int | None = None
        inside = False
        parent_rel, _, name = rel.rpartition("/")
        parent = self._listed.get(parent_rel) if rel else None
        if parent is not None and (parent.absent or name not in parent.names):
            self._listed[rel] = _ABSENT  # below nothing, or not in its listed directory: nothing there
            return _ABSENT
        if parent is not None and parent.fd is not None and parent.kinds.get(name) == "dir":
            try:  # a plain directory of a listed one: inside the bundle by construction, no readlink needed
                fd = os.open(name, _OPEN_FLAGS | _DIRECTORY | _NOFOLLOW, dir_fd=parent.fd)
                inside = True
            except OSError:
                fd = None  # changed since: the ordinary path below decides
        path = self._os(rel)
        if fd is None:
            try:
                fd = os.open(path, _OPEN_FLAGS | _DIRECTORY)
            except OSError as exc:
                absent = exc.errno in _NOT_THERE and not os.path.islink(path)
                self._listed[rel] = _ABSENT if absent else None
                return self._listed[rel]
        keep = False
        try:
            if inside or self._inside(fd, path):
                names: list[str] = []
                kinds: dict[str, str] = {}
                with os.scandir(fd) as entries:
                    for entry in entries:
                        names.append(entry.name)
                        if entry.is_symlink():
                            continue
                        if entry.is_dir(follow_symlinks=False):
                            kinds[entry.name] = "dir"
                        elif entry.is_file(follow_symlinks=False):
                            kinds[entry.name] = "file"
                if names:  # a directory that can be read but not searched: its entries cannot be opened
                    os.stat(names[0], dir_fd=fd, follow_symlinks=False)
                names.sort()
                keep = self._held < MAX_HELD_DIRS
                self._held += keep
                listing = _Listing(names, kinds, fd if keep else None)
        except OSError:
            listing = None
            keep = False
        finally:
            if not keep:
                os.close(fd)
        self._listed[rel] = listing
        return listing

    def _listed_kind(self, rel: str) -> str | bool | None:
        """The kind of ``rel`` from its directory's batch listing: ``"file"``, ``"dir"``, ``None`` when absent,
        ``False`` when the listing cannot say (no batch, a link, a FIFO, a directory not listable here)."""
        if not rel or not self._batched():
            return False
        parent, _, name = rel.rpartition("/")
        listing = self._listing(parent)
        if listing is None:
            return False
        kind = listing.kinds.get(name)
        if kind is not None:
            return kind
        return False if name in listing.names else None

    @property
    def label(self) -> str:
        return self._prefix

    def _os(self, rel: str) -> str:
        return os.path.join(self._prefix, rel) if rel else self._prefix

    def _inside(self, fd: int, path: str) -> bool:
        """Whether the open file ``fd`` (opened from ``path``) really lies inside the bundle.

        Asks the kernel where the open file is (``/proc/self/fd``), so the answer is about the file that
        will be read, not a path that could change in between; without ``/proc``, resolves ``path``.
        """
        if self._real_root is None:
            self._real_root = os.path.realpath(self._prefix)
        try:
            real = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            real = os.path.realpath(path)
        root = self._real_root
        return root in (os.sep, real) or real.startswith(root + os.sep)

    def _refuse(self, rel: str, exc: OSError) -> None:
        if exc.errno not in _NOT_THERE:
            self.refused.setdefault(rel, exc.strerror or str(exc))
        elif exc.errno == errno.ENOENT and os.path.islink(self._os(rel)):  # there, but as a link to nothing
            self.refused.setdefault(rel, "a symbolic link to nothing (its target does not exist; not followed)")

    def _open_listed(self, rel: str) -> int | None:
        """In a batch: ``rel`` opened relative to its listed directory's descriptor, without following a link
        (so it is inside the bundle); ``None`` when that cannot be done (the ordinary path then opens it)."""
        if not rel or not self._batched():
            return None
        parent, _, name = rel.rpartition("/")
        listing = self._listing(parent)
        if listing is None or listing.fd is None or listing.kinds.get(name) != "file":
            return None
        try:
            return os.open(name, _OPEN_FLAGS | _NOFOLLOW, dir_fd=listing.fd)
        except OSError:
            return None  # changed since it was listed (now a link, say): the ordinary path decides

    def read_bytes(self, rel: str) -> bytes:
        fd = self._open_listed(rel)
        inside = fd is not None
        path = "" if inside else self._os(rel)
        if fd is None:
            try:
                fd = os.open(path, _OPEN_FLAGS)
            except OSError as exc:
                self._refuse(rel, exc)
                raise
        error: OSError | None = None
        try:
            st = os.fstat(fd)
            if not inside and not self._inside(fd, path):
                error = OutsideBundleError(rel)
            elif not stat.S_ISREG(st.st_mode):
                error = OSError(errno.EINVAL, "not a regular file (a directory, FIFO or device is not read)", rel)
            elif st.st_size > self.max_file_bytes:
                error = OSError(f"{st.st_size:,} bytes, more than the {self.max_file_bytes:,} bytes a file may have")
            else:
                # the size it has, plus one byte to see growth (a buffer of the whole cap per read is slow);
                # sysfs and procfs files may report another size than they hold, so read on if it grew
                data = _read_fd(fd, st.st_size + 1)
                if len(data) > st.st_size:
                    data += _read_fd(fd, self.max_file_bytes + 1 - len(data))
                if len(data) <= self.max_file_bytes:
                    return data
                error = OSError(f"more than the {self.max_file_bytes:,} bytes a file may have")  # grew while read
        finally:
            os.close(fd)
        self._refuse(rel, error)
        raise error

    def kind(self, rel: str) -> str | None:
        listed = self._listed_kind(rel)
        if listed is not False:
            return listed  # type: ignore[return-value]
        try:
            mode = os.stat(self._os(rel)).st_mode
        except OSError as exc:
            if exc.errno == errno.EACCES:  # a directory on the way may not be searched: name that directory
                self._refuse(self._unsearchable(rel), exc)
            else:
                self._refuse(rel, exc)
            return None
        except ValueError:
            return None
        if stat.S_ISDIR(mode):
            return "dir"
        if stat.S_ISREG(mode):
            return "file"
        self.refused.setdefault(rel, "not a regular file (a FIFO, socket or device is not read)")
        return None

    def _unsearchable(self, rel: str) -> str:
        """The directory above ``rel`` that may not be searched (the parent of the first path that cannot be
        stat'ed), for one problem per directory rather than one per file in it."""
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            try:
                os.stat(self._os("/".join(parts[:depth])))
            except PermissionError:
                return "/".join(parts[: depth - 1])
            except OSError:
                break
        return "/".join(parts[:-1])

    def names(self, rel: str) -> list[str]:
        """The entries of a directory inside the bundle; one that cannot be listed (permission, or a link
        leaving the bundle) is empty and recorded in :attr:`refused`."""
        if self._batched():
            listing = self._listing(rel)
            if listing is not None and not listing.absent:
                return list(listing.names)
        path = self._os(rel)
        try:
            fd = os.open(path, _OPEN_FLAGS | getattr(os, "O_DIRECTORY", 0))
        except OSError as exc:
            self._refuse(rel, exc)
            return []
        try:
            if not self._inside(fd, path):
                self._refuse(rel, OutsideBundleError(rel))
                return []
            return sorted(os.listdir(fd))
        except OSError as exc:
            self._refuse(rel, exc)
            return []
        finally:
            os.close(fd)

    def stamp(self, rel: str) -> Stamp | None:
        try:
            st = os.stat(self._os(rel))
        except (OSError, ValueError):
            return None
        return Stamp(st.st_mtime_ns, st.st_size) if stat.S_ISREG(st.st_mode) else None


class MemorySource:
    """A bundle held in memory: an upload, an agent's push, a tarball's members, a test's files."""

    __slots__ = ("_dirs", "_files", "_label", "_mtime_ns")

    def __init__(self, files: Mapping[str, bytes], label: str = "memory", mtime_ns: int = 0) -> None:
        self._files = {_clean(rel): data for rel, data in files.items()}
        self._label = label
        self._mtime_ns = mtime_ns
        self._dirs: dict[str, set[str]] = {"": set()}
        for rel in self._files:
            parts = rel.split("/")
            for depth in range(len(parts)):
                parent = "/".join(parts[:depth])
                self._dirs.setdefault(parent, set()).add(parts[depth])

    @classmethod
    def from_tar(cls, data: bytes, label: str, max_bytes: int | None = None) -> MemorySource:
        """The regular files of a (possibly gzipped) tarball; links, devices and paths outside it are refused.

        A single top directory holding the bundle (``bundle/hosts/...``) is stripped. No member may be larger
        than :func:`max_file_bytes`, nor all of them together than ``max_bytes`` (default four times that).
        """
        per_file = max_file_bytes()
        max_bytes = 4 * per_file if max_bytes is None else max_bytes
        files: dict[str, bytes] = {}
        total = 0
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
                for member in tar:
                    if member.isdir():
                        continue
                    if not member.isfile():
                        raise ValueError(f"{label}: {member.name!r} is not a regular file")
                    total += member.size
                    if member.size > per_file or total > max_bytes:
                        raise ValueError(f"{label}: larger than {max_bytes:,} bytes unpacked")
                    extracted = tar.extractfile(member)
                    if extracted is None:
                        continue
                    files[_clean(member.name)] = extracted.read()
        except tarfile.TarError as exc:
            raise ValueError(f"{label}: not a tar archive ({exc})") from None
        tops = {rel.split("/", 1)[0] for rel in files}
        if len(tops) == 1 and all("/" in rel for rel in files):
            top = next(iter(tops))
            if top not in ("hosts", "switches", "plan", "ib", "scheduler"):
                files = {rel.split("/", 1)[1]: body for rel, body in files.items()}
        return cls(files, label)

    @property
    def label(self) -> str:
        return self._label

    def read_bytes(self, rel: str) -> bytes:
        try:
            return self._files[rel]
        except KeyError:
            raise FileNotFoundError(f"{self._label}: no file {rel}") from None

    def kind(self, rel: str) -> str | None:
        return "file" if rel in self._files else "dir" if rel in self._dirs else None

    def names(self, rel: str) -> list[str]:
        return sorted(self._dirs.get(rel, ()))

    def stamp(self, rel: str) -> Stamp | None:
        data = self._files.get(rel)
        return None if data is None else Stamp(self._mtime_ns, len(data))


_DOTS = ("", ".", "..")


class SourcePath:
    """A ``pathlib``-like handle on one path of a :class:`Source` (the subset the readers use)."""

    __slots__ = ("rel", "source")

    def __init__(self, source: Source, rel: str = "") -> None:
        self.source = source
        self.rel = rel

    def __truediv__(self, name: str | Path) -> SourcePath:
        if type(name) is str and "/" not in name and "\\" not in name and "\0" not in name and name not in _DOTS:
            child = name  # one plain name (the readers' usual step): nothing to clean
        else:
            child = _clean(str(name).replace(os.sep, "/"))
        return SourcePath(self.source, f"{self.rel}/{child}" if self.rel else child)

    def __str__(self) -> str:
        label = self.source.label
        return f"{label}/{self.rel}" if self.rel else label

    def __repr__(self) -> str:
        return f"SourcePath({self.source.label!r}, {self.rel!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SourcePath) and other.source is self.source and other.rel == self.rel

    def __hash__(self) -> int:
        return hash(self.rel)

    def __lt__(self, other: SourcePath) -> bool:
        return self.rel < other.rel

    @property
    def name(self) -> str:
        return self.rel.rpartition("/")[2]

    @property
    def stem(self) -> str:
        name = self.name
        dot = name.rfind(".")
        return name[:dot] if dot > 0 else name

    @property
    def suffix(self) -> str:
        name = self.name
        dot = name.rfind(".")
        return name[dot:] if dot > 0 else ""

    @property
    def parent(self) -> SourcePath:
        return SourcePath(self.source, self.rel.rpartition("/")[0])

    def with_name(self, name: str) -> SourcePath:
        return self.parent / name

    def relative_to(self, other: SourcePath) -> str:
        """This path relative to ``other`` (an ancestor), as a POSIX string."""
        if not other.rel:
            return self.rel
        if self.rel == other.rel:
            return ""
        if not self.rel.startswith(other.rel + "/"):
            raise ValueError(f"{self.rel!r} is not under {other.rel!r}")
        return self.rel[len(other.rel) + 1 :]

    def is_file(self) -> bool:
        return self.source.kind(self.rel) == "file"

    def is_dir(self) -> bool:
        return self.source.kind(self.rel) == "dir"

    def exists(self) -> bool:
        return self.source.kind(self.rel) is not None

    def iterdir(self) -> Iterator[SourcePath]:
        for name in self.source.names(self.rel):
            yield self / name

    def glob(self, pattern: str) -> Iterator[SourcePath]:
        """Entries directly inside this directory whose name matches ``pattern`` (one level, no ``**``)."""
        for name in self.source.names(self.rel):
            if fnmatchcase(name, pattern):
                yield self / name

    def walk_files(self) -> Iterator[SourcePath]:
        """Every file below this directory, depth first in name order."""
        for child in self.iterdir():
            kind = self.source.kind(child.rel)
            if kind == "dir":
                yield from child.walk_files()
            elif kind == "file":
                yield child

    def read_bytes(self) -> bytes:
        return self.source.read_bytes(self.rel)

    def read_text(self, encoding: str = "utf-8") -> str:
        return self.source.read_bytes(self.rel).decode(encoding)

    def stamp(self) -> Stamp | None:
        return self.source.stamp(self.rel)


def batched(source: Source) -> AbstractContextManager[object]:
    """:meth:`DirectorySource.batch` for a directory source (each directory listed once while the block runs);
    nothing for another source."""
    batch = getattr(source, "batch", None)
    return batch() if batch is not None else nullcontext()


def open_source(location: Path) -> Source:
    """A directory, or a ``.tar``/``.tar.gz``/``.tgz`` file, as a :class:`Source`."""
    if location.is_file() and location.name.endswith((".tar", ".tar.gz", ".tgz")):
        size = location.stat().st_size
        if size > 4 * max_file_bytes():
            raise ValueError(f"{location}: {size:,} bytes is larger than a bundle archive may be")
        return MemorySource.from_tar(location.read_bytes(), str(location))
    return DirectorySource(location)


def as_source_path(location: str | os.PathLike[str] | Source | SourcePath) -> SourcePath:
    """The root of a bundle given as a directory or an archive (a path, or its name as a string), a
    :class:`Source` or a :class:`SourcePath`."""
    if isinstance(location, SourcePath):
        return location
    if isinstance(location, str | os.PathLike):
        return SourcePath(open_source(Path(location)))
    return SourcePath(location)
