"""An upload, checked and split into the bundle parts it replaces, before anything is stored or re-read.

An upload is a (gzipped) tar of the bundle layout (docs/bundle.md): a whole bundle, or only some devices'
part of one (``hosts/gpu017/...`` from ``unifab agent collect``). It is read with
:meth:`unifab.api.MemorySource.from_tar`, which refuses links, devices and paths leaving the archive, and
then split into **parts**: ``hosts/<host>``, ``switches/<switch>``, and the top-level ``plan``, ``ib``,
``scheduler``, ``fabric.yaml`` (and a twin's ``truth.json``). Each part in an upload replaces that part of
the server's bundle whole; parts the upload does not carry stay as they were.

What is refused here (a 4xx naming the file, nothing stored): not a tar archive, a link or escape, an
archive larger than allowed unpacked, nothing in it, a path outside the layout, a device name that is not a
host name, a switch directory whose OS directory unifab does not know, and a ``.json`` file that is not
JSON. What a reader cannot make sense of inside a well-formed part is not refused: like ``unifab check``,
the server reports it as an ``INPUT-*`` finding naming the file, and keeps the rest of the device.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import struct
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import orjson

from unifab.api import PLATFORMS, BundleError, DirectorySource, MemorySource, SourcePath

__all__ = [
    "DEVICE_NAME",
    "SNAPSHOT_ID",
    "TOP_PARTS",
    "IngestError",
    "Upload",
    "pack_directory",
    "pack_part",
    "pack_tar",
    "parse_upload",
    "part_of",
    "unpack_part",
    "upload_id",
]

TOP_PARTS = ("plan", "ib", "scheduler", "telemetry", "fabric.yaml", "truth.json")
DEVICE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,252}")
SNAPSHOT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,199}")
COLLECT_JSON = "collect.json"
_PART_MAGIC = b"unifab-part-1\n"


class IngestError(Exception):
    """An upload refused: the HTTP status and one line for the client (naming the file when there is one)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True, slots=True)
class Upload:
    """A checked upload: its files by part."""

    parts: dict[str, dict[str, bytes]]  # part -> {bundle-relative path: bytes}

    @property
    def devices(self) -> list[str]:
        """Entity ids of the devices the upload carries."""
        out = []
        for part in self.parts:
            top, _, name = part.partition("/")
            if top in ("hosts", "switches"):
                out.append(f"{'host' if top == 'hosts' else 'switch'}:{name}")
        return sorted(out)


def upload_id(header: str | None, data: bytes) -> str:
    """The snapshot id: the client's (``X-Unifab-Snapshot-Id``), else the upload's SHA-256 digest."""
    if header is None or header == "":
        return "sha256:" + hashlib.sha256(data).hexdigest()
    if not SNAPSHOT_ID.fullmatch(header):
        raise IngestError(400, f"snapshot id {header[:80]!r}: letters, digits and _.:@+- only, at most 200")
    return header


def part_of(rel: str) -> str | None:
    """The part a bundle-relative file belongs to, or ``None`` when the path is outside the layout."""
    parts = rel.split("/")
    if parts[0] in ("hosts", "switches"):
        return "/".join(parts[:2]) if len(parts) >= 3 else None
    if parts[0] in TOP_PARTS and (len(parts) > 1) == (parts[0] not in ("fabric.yaml", "truth.json")):
        return parts[0]
    return None


def parse_upload(data: bytes, label: str, max_unpacked: int) -> Upload:
    """Read and check an upload (see the module docstring); :class:`IngestError` says what is wrong."""
    try:
        source = MemorySource.from_tar(data, label, max_bytes=max_unpacked)
    except ValueError as exc:
        status = 413 if "larger than" in str(exc) else 400
        raise IngestError(status, str(exc)) from None
    files = {f.rel: f.read_bytes() for f in _all_files(source)}
    if not files:
        raise IngestError(422, f"{label}: the archive holds no files")
    parts: dict[str, dict[str, bytes]] = {}
    for rel, body in sorted(files.items()):
        part = part_of(rel)
        if part is None:
            raise IngestError(
                422,
                f"{rel}: not part of the bundle layout (hosts/<host>/, switches/<switch>/<os>/, plan/, ib/, "
                "scheduler/, telemetry/, fabric.yaml; see docs/bundle.md)",
            )
        _check_file(rel, part, body)
        parts.setdefault(part, {})[rel] = body
    for part, members in parts.items():
        if part.startswith("switches/"):
            _check_switch(part, members)
    return Upload(parts)


def _all_files(source: MemorySource) -> list[_File]:
    out: list[_File] = []
    stack = [""]
    while stack:
        rel = stack.pop()
        for name in source.names(rel):
            child = f"{rel}/{name}" if rel else name
            if source.kind(child) == "dir":
                stack.append(child)
            else:
                out.append(_File(source, child))
    return out


@dataclass(frozen=True, slots=True)
class _File:
    source: MemorySource
    rel: str

    def read_bytes(self) -> bytes:
        return self.source.read_bytes(self.rel)


def _check_file(rel: str, part: str, body: bytes) -> None:
    top, _, name = part.partition("/")
    if top in ("hosts", "switches") and not DEVICE_NAME.fullmatch(name):
        raise IngestError(422, f"{rel}: {name!r} is not a device name (letters, digits, '-', '_', '.')")
    if rel.endswith(".json"):
        try:
            orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise IngestError(422, f"{rel}: not valid JSON ({exc})") from None


def _check_switch(part: str, members: dict[str, bytes]) -> None:
    """A switch directory holds one OS directory named after a platform (and maybe ``collect.json``)."""
    os_dirs: set[str] = set()
    for rel in members:
        inner = rel[len(part) + 1 :]
        head, sep, _ = inner.partition("/")
        if not sep:
            if head != COLLECT_JSON:
                raise IngestError(422, f"{rel}: a switch directory holds its OS directory, not loose files")
            continue
        if head not in PLATFORMS:
            raise IngestError(422, f"{rel}: unknown switch OS directory {head!r}; unifab knows {', '.join(PLATFORMS)}")
        os_dirs.add(head)
    if len(os_dirs) > 1:
        raise IngestError(422, f"{part}: more than one OS directory ({', '.join(sorted(os_dirs))})")


def pack_tar(files: dict[str, bytes]) -> bytes:
    """Files as a tar.gz upload, in name order with fixed metadata (the same files give the same bytes)."""
    buffer = io.BytesIO()
    # the gzip header's time is fixed too (tarfile's "w:gz" would stamp the current second)
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=1, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w") as tar,
    ):
        for rel, body in sorted(files.items()):
            info = tarfile.TarInfo(rel)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return buffer.getvalue()


def pack_directory(bundle: Path, parts: list[str] | None = None) -> bytes:
    """A bundle directory as one deterministic tar.gz upload (files outside the layout are left out).

    ``parts`` (``hosts/gpu001``, ``switches/leaf01``, ``plan``, ...) keeps only those parts.
    """
    if not bundle.is_dir():
        raise BundleError(f"bundle not found: {bundle}")
    root = SourcePath(DirectorySource(bundle))
    wanted = None if parts is None else set(parts)
    files = {}
    for f in root.walk_files():
        part = part_of(f.rel)
        if part is not None and (wanted is None or part in wanted):
            files[f.rel] = f.read_bytes()
    return pack_tar(files)


def pack_part(files: dict[str, bytes]) -> bytes:
    """One part's files as the store keeps them: zlib over length-prefixed (name, body) records.

    Not a tar: Python's tarfile costs more than reading the device, and the store only ever reads back
    what it wrote. :func:`unpack_part` refuses names a bundle may not have, like the upload path does.
    """
    chunks = [_PART_MAGIC]
    for rel, body in sorted(files.items()):
        name = rel.encode()
        chunks += [struct.pack(">IQ", len(name), len(body)), name, body]
    return zlib.compress(b"".join(chunks), 1)


def unpack_part(data: bytes, label: str) -> dict[str, bytes]:
    raw = zlib.decompress(data)
    if not raw.startswith(_PART_MAGIC):
        raise ValueError(f"{label}: not a stored bundle part")
    files: dict[str, bytes] = {}
    at = len(_PART_MAGIC)
    header = struct.calcsize(">IQ")
    while at < len(raw):
        name_len, body_len = struct.unpack_from(">IQ", raw, at)
        at += header
        rel = raw[at : at + name_len].decode()
        at += name_len
        files[rel] = raw[at : at + body_len]
        at += body_len
    MemorySource(files, label)  # refuses absolute paths and ".."
    return files
