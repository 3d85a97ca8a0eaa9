"""The agent's on-disk outbox: snapshots wait here, oldest first, until the controller has stored them.

Every snapshot the agent produces is written here before it is pushed, so a controller that is down, a
refused token or a crash of the agent loses nothing that fits the bound. Layout of the spool directory
(only these names are unifab's; nothing else in the directory is ever touched):

* ``snap-<seq:012d>.ufs``: one snapshot: a one-line JSON header (its id, sequence number, SHA-256 and
  size of the payload, the dropped-snapshots note it carries) and then the payload, the tar.gz upload;
* ``agent-state.json``: the last sequence number, the content digest of the last snapshot (what
  "changed" is measured against), the dropped total, the snapshot whose push is in doubt;
* ``.snap-<seq>.ufs.<pid>.tmp``, ``.agent-state.json.<pid>.tmp``: a write in progress. Every write is
  tmp + fsync + rename + fsync of the directory, so a crash leaves either the whole file or a tmp file,
  and :meth:`Spool.open` removes the tmp files (by this pattern only);
* ``collect/``: the private staging directory of the collector (emptied at start);
* ``snap-….ufs.corrupt``: an entry whose header or checksum did not verify, set aside (never replayed).

**Bound.** At most ``max_snapshots`` entries and ``max_bytes`` bytes. Adding a snapshot to a full spool
drops the OLDEST entries until the new one fits; the new one (the latest state of the host) is always
kept, even alone over ``max_bytes``. The one entry whose last push got no answer (the controller may have
stored it) is not dropped either: it is replayed and the controller's idempotent snapshot id decides, so
it is never counted both as stored and as dropped (the bound can be exceeded by that one entry). Each
host snapshot is a full copy of the host part, so dropping an old one loses history, never the latest
state. The new entry's header carries how many were dropped before it (plus what the dropped ones were
carrying), sent as ``X-Unifab-Dropped-Snapshots`` when it is pushed: written atomically with the entry,
the note reaches the controller exactly once. The dropped ids are written in that header too, before the
old files are removed, so a crash in between finishes the drop at the next start.

**A full disk.** A write that fails (ENOSPC, EIO, ...) raises :class:`SpoolError` and changes nothing:
the old entries stay as they were, the tmp file is removed.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

__all__ = [
    "COLLECT_DIR",
    "ENTRY_NAME",
    "STATE_NAME",
    "TMP_NAME",
    "Added",
    "AgentState",
    "Entry",
    "Spool",
    "SpoolError",
]

ENTRY_NAME = re.compile(r"snap-(\d{12})\.ufs")
TMP_NAME = re.compile(r"\.(?:snap-\d{12}\.ufs|agent-state\.json)\.\d{1,10}\.tmp")
STATE_NAME = "agent-state.json"
COLLECT_DIR = "collect"
_HEADER_MAX = 64 * 1024
Log = Callable[..., None]


class SpoolError(Exception):
    """A spool that cannot be written (or opened): one line naming the file and why."""

    def __init__(self, message: str, errno_: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno_


@dataclass(frozen=True, slots=True)
class Entry:
    """One spooled snapshot (its payload stays on disk until :meth:`Spool.payload`)."""

    path: Path
    seq: int
    id: str
    sha256: str  # of the payload
    size: int  # payload bytes
    file_size: int
    dropped: int  # snapshots dropped before this one (the note its push carries)
    dropped_ids: tuple[str, ...]  # the entries this one's add dropped (a crash mid-drop is finished at start)


@dataclass(frozen=True, slots=True)
class Added:
    entry: Entry
    dropped: tuple[Entry, ...]  # the oldest entries dropped to make room
    oversize: bool  # the new entry alone is over max_bytes (kept anyway: it is the latest)


@dataclass(slots=True)
class AgentState:
    last_seq: int = 0
    last_digest: str | None = None  # content digest of the last snapshot produced
    last_snapshot: str | None = None
    dropped_total: int = 0
    in_doubt: str | None = None  # id of the entry whose last push got no answer

    def to_json(self) -> bytes:
        return orjson.dumps(
            {
                "version": 1,
                "last_seq": self.last_seq,
                "last_digest": self.last_digest,
                "last_snapshot": self.last_snapshot,
                "dropped_total": self.dropped_total,
                "in_doubt": self.in_doubt,
            }
        )

    @classmethod
    def from_json(cls, data: bytes) -> AgentState:
        doc = orjson.loads(data)
        if not isinstance(doc, dict):
            raise ValueError("not an object")
        return cls(
            last_seq=int(doc.get("last_seq") or 0),
            last_digest=_opt_str(doc.get("last_digest")),
            last_snapshot=_opt_str(doc.get("last_snapshot")),
            dropped_total=int(doc.get("dropped_total") or 0),
            in_doubt=_opt_str(doc.get("in_doubt")),
        )


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


@dataclass(slots=True)
class Spool:
    """The spool directory (see the module docstring). Not thread-safe: one agent loop owns it."""

    directory: Path
    max_bytes: int
    max_snapshots: int
    log: Log = field(default=lambda *a, **k: None)
    state: AgentState = field(default_factory=AgentState)
    entries: list[Entry] = field(default_factory=list)

    # ------------------------------------------------------------------------------------- opening

    def open(self) -> None:
        """Create the directory (mode 0700), remove stray tmp files, load the state and the entries,
        finish a drop a crash interrupted. :class:`SpoolError` when the directory is unusable."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            names = sorted(p.name for p in self.directory.iterdir())
        except OSError as exc:
            raise SpoolError(f"spool_dir {self.directory}: {_why(exc)}", exc.errno) from None
        if not os.access(self.directory, os.W_OK | os.X_OK):
            raise SpoolError(f"spool_dir {self.directory}: not writable by this user", errno.EACCES)
        for name in names:
            if TMP_NAME.fullmatch(name):
                with contextlib.suppress(OSError):
                    (self.directory / name).unlink()
                    self.log("info", "spool_tmp_removed", file=str(self.directory / name))
        shutil.rmtree(self.directory / COLLECT_DIR, ignore_errors=True)
        self.state = self._load_state()
        entries = []
        for name in names:
            if ENTRY_NAME.fullmatch(name):
                entry = self._read_entry(self.directory / name)
                if entry is not None:
                    entries.append(entry)
        entries.sort(key=lambda e: e.seq)
        dropped_by = {i: e.seq for e in entries for i in e.dropped_ids}
        kept = []
        for entry in entries:
            if entry.id in dropped_by and dropped_by[entry.id] > entry.seq:
                self._unlink(entry, "finishing a drop a crash interrupted")
            else:
                kept.append(entry)
        self.entries = kept
        self.state.last_seq = max([self.state.last_seq, *(e.seq for e in kept)])

    def _load_state(self) -> AgentState:
        path = self.directory / STATE_NAME
        try:
            return AgentState.from_json(path.read_bytes())
        except FileNotFoundError:
            return AgentState()
        except (OSError, ValueError, TypeError, orjson.JSONDecodeError) as exc:
            self.log("warning", "spool_state_unreadable", file=str(path), reason=str(exc)[:200])
            return AgentState()

    def _read_entry(self, path: Path) -> Entry | None:
        """An entry's header (the payload is verified when it is read); a bad one is set aside."""
        try:
            with path.open("rb") as f:
                line = f.readline(_HEADER_MAX)
                file_size = os.fstat(f.fileno()).st_size
            head = orjson.loads(line)
            entry = Entry(
                path=path,
                seq=int(head["seq"]),
                id=str(head["id"]),
                sha256=str(head["sha256"]),
                size=int(head["size"]),
                file_size=file_size,
                dropped=int(head.get("dropped", 0)),
                dropped_ids=tuple(str(i) for i in head.get("dropped_ids", ())),
            )
            match = ENTRY_NAME.fullmatch(path.name)
            if not line.endswith(b"\n") or file_size != len(line) + entry.size or not match:
                raise ValueError(f"{file_size} bytes, the header says {len(line) + entry.size}")
            if int(match.group(1)) != entry.seq:
                raise ValueError("the sequence number does not match the file name")
            return entry
        except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError) as exc:
            self._set_aside(path, str(exc)[:200])
            return None

    def _set_aside(self, path: Path, reason: str) -> None:
        target = path.with_name(path.name + ".corrupt")
        try:
            path.rename(target)
            self.log("error", "spool_entry_corrupt", file=str(path), reason=reason, moved_to=str(target))
        except OSError as exc:
            self.log("error", "spool_entry_corrupt", file=str(path), reason=f"{reason}; cannot move it: {_why(exc)}")

    # ------------------------------------------------------------------------------------- reading

    @property
    def depth(self) -> int:
        return len(self.entries)

    @property
    def size_bytes(self) -> int:
        return sum(e.file_size for e in self.entries)

    def payload(self, entry: Entry) -> bytes | None:
        """The entry's upload, checked against its SHA-256; ``None`` (and set aside) when it does not verify."""
        try:
            with entry.path.open("rb") as f:
                f.readline(_HEADER_MAX)
                data = f.read()
        except OSError as exc:
            self.log("error", "spool_entry_unreadable", file=str(entry.path), reason=_why(exc))
            return None
        if len(data) != entry.size or hashlib.sha256(data).hexdigest() != entry.sha256:
            self._set_aside(entry.path, "the payload does not match its checksum")
            self.entries = [e for e in self.entries if e.path != entry.path]
            return None
        return data

    # ------------------------------------------------------------------------------------- writing

    def next_seq(self) -> int:
        return self.state.last_seq + 1

    def add(self, snapshot_id: str, seq: int, data: bytes, *, also_dropped: int = 0) -> Added:
        """Spool a new snapshot (see "Bound" in the module docstring); :class:`SpoolError` changes nothing.

        ``also_dropped``: snapshots the agent lost before this one without spooling them (added to the note).
        """
        head_probe = len(snapshot_id) + 400
        remaining = list(self.entries)
        drop: list[Entry] = []
        droppable = [e for e in remaining if e.id != self.state.in_doubt]

        def over() -> bool:
            size = sum(e.file_size for e in remaining) + len(data) + head_probe
            return len(remaining) + 1 > self.max_snapshots or size > self.max_bytes

        while droppable and over():
            victim = droppable.pop(0)
            remaining.remove(victim)
            drop.append(victim)
        carried = also_dropped + len(drop) + sum(e.dropped for e in drop)
        digest = hashlib.sha256(data).hexdigest()
        header = orjson.dumps(
            {
                "version": 1,
                "id": snapshot_id,
                "seq": seq,
                "sha256": digest,
                "size": len(data),
                "dropped": carried,
                "dropped_ids": [e.id for e in drop],
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        )
        path = self.directory / f"snap-{seq:012d}.ufs"
        self._atomic_write(path, [header, b"\n", data])
        file_size = len(header) + 1 + len(data)
        entry = Entry(path, seq, snapshot_id, digest, len(data), file_size, carried, tuple(e.id for e in drop))
        for victim in drop:
            self._unlink(victim, "spool full")
        self.entries = [*remaining, entry]
        return Added(entry, tuple(drop), entry.file_size > self.max_bytes)

    def remove(self, entry: Entry) -> None:
        """The controller stored ``entry``: delete it (a failed delete is finished at the next start)."""
        self.entries = [e for e in self.entries if e.path != entry.path]
        try:
            entry.path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            self.log("warning", "spool_remove_failed", file=str(entry.path), reason=_why(exc))

    def save_state(self) -> None:
        """Write ``agent-state.json`` atomically; :class:`SpoolError` when it cannot be written."""
        self._atomic_write(self.directory / STATE_NAME, [self.state.to_json(), b"\n"])

    def _unlink(self, entry: Entry, why: str) -> None:
        try:
            entry.path.unlink()
        except FileNotFoundError:
            return
        except OSError as exc:
            self.log("warning", "spool_remove_failed", file=str(entry.path), reason=f"{why}: {_why(exc)}")

    def _atomic_write(self, path: Path, chunks: list[bytes]) -> None:
        """tmp (O_EXCL, 0600) + write + fsync + rename + fsync of the directory; on failure nothing changed."""
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_EXCL, 0o600)
        except FileExistsError:
            tmp.unlink(missing_ok=True)  # a tmp of an earlier crash of a process with our pid
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except OSError as exc:
                raise SpoolError(f"{tmp}: cannot write: {_why(exc)}", exc.errno) from None
        except OSError as exc:
            raise SpoolError(f"{tmp}: cannot write: {_why(exc)}", exc.errno) from None
        try:
            try:
                for chunk in chunks:
                    view = memoryview(chunk)
                    while view:
                        written = os.write(fd, view)
                        view = view[written:]
                os.fsync(fd)
            finally:
                os.close(fd)
            tmp.replace(path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise SpoolError(f"{path}: cannot write: {_why(exc)}", exc.errno) from None
        self._fsync_dir()

    def _fsync_dir(self) -> None:
        try:
            fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass  # some file systems cannot fsync a directory; the rename is still atomic
        finally:
            os.close(fd)
