"""Sources: a bundle reads the same from a directory, a tarball or memory; paths stay inside; reads are bounded."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle, load_snapshot
from unifab.jsonify import to_jsonable
from unifab.sources import DirectorySource, MemorySource, SourcePath, as_source_path, open_source


def _tar(root: Path, top: str | None = "bundle") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                rel = path.relative_to(root).as_posix()
                tar.add(path, arcname=f"{top}/{rel}" if top else rel)
    return buf.getvalue()


def _findings(location: object) -> list[object]:
    return [to_jsonable(f) for f in run_checks(load_bundle(location))]  # type: ignore[arg-type]


def test_directory_tarball_and_memory_read_the_same(twin_bundle: Path, tmp_path: Path) -> None:
    expected = _findings(twin_bundle)
    assert expected
    archive = tmp_path / "b.tar.gz"
    archive.write_bytes(_tar(twin_bundle))
    assert _findings(archive) == expected  # a single top directory is stripped
    files = {p.relative_to(twin_bundle).as_posix(): p.read_bytes() for p in twin_bundle.rglob("*") if p.is_file()}
    assert _findings(MemorySource(files, "upload:test")) == expected


def test_paths_cannot_leave_the_source(tmp_path: Path) -> None:
    root = SourcePath(DirectorySource(tmp_path))
    for bad in ("../etc/passwd", "/etc/passwd", "a/../../b"):
        with pytest.raises(ValueError, match="not a bundle-relative path"):
            _ = root / bad
    with pytest.raises(ValueError, match="not a bundle-relative path"):
        MemorySource({"../x": b""})


def test_archive_with_links_or_escapes_is_refused(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("hosts/h1/cmd/x.txt")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/shadow"
        tar.addfile(info)
    with pytest.raises(ValueError, match="not a regular file"):
        MemorySource.from_tar(buf.getvalue(), "evil.tar")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = b"x"
        info = tarfile.TarInfo("../../outside.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(ValueError, match="not a bundle-relative path"):
        MemorySource.from_tar(buf.getvalue(), "evil.tar")
    with pytest.raises(ValueError, match="not a tar archive"):
        MemorySource.from_tar(b"not a tarball", "junk.tar")


def test_an_oversized_file_is_one_unreadable_finding_not_a_crash(tmp_path: Path) -> None:
    host = tmp_path / "hosts" / "gpu001" / "cmd"
    host.mkdir(parents=True)
    (host / "ibdev2netdev.txt").write_text("mlx5_0 port 1 ==> eth0 (Up)\n" * 100)
    fabric = load_bundle(SourcePath(DirectorySource(tmp_path, max_file_bytes=64)))
    [finding] = [f for f in fabric.input_findings if f.check == "INPUT-UNREADABLE"]
    assert finding.subject["path"] == "hosts/gpu001/cmd/ibdev2netdev.txt"
    assert "more than the 64 bytes" in finding.message


def test_source_path_behaves_like_the_path_it_names(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_text("A")
    (tmp_path / "d" / "b.json").write_text("{}")
    root = as_source_path(tmp_path)
    d = root / "d"
    assert [p.name for p in d.iterdir()] == ["a.txt", "b.json"]
    assert [p.name for p in d.glob("*.txt")] == ["a.txt"]
    assert ((d / "a.txt").stem, (d / "a.txt").suffix, (d / "a.txt").read_text()) == ("a", ".txt", "A")
    assert (d / "a.txt").relative_to(root) == "d/a.txt"
    assert str(d / "a.txt") == str(tmp_path / "d" / "a.txt")
    assert not (d / "missing").exists()
    assert isinstance(open_source(tmp_path), DirectorySource)


def test_snapshot_records_origins_and_collection_time(tmp_path: Path) -> None:
    host = tmp_path / "hosts" / "gpu001"
    (host / "cmd").mkdir(parents=True)
    (host / "collect.json").write_text('{"version": 1, "collector": "agent", "finished": "2026-11-30T10:00:00Z"}')
    (tmp_path / "switches" / "leaf1" / "sonic").mkdir(parents=True)
    snap = load_snapshot(tmp_path)
    origin = snap.origin("host:gpu001")
    assert origin is not None and origin.collector == "agent"
    assert origin.collected_at is not None and origin.collected_at.isoformat() == "2026-11-30T10:00:00+00:00"
    leaf = snap.origin("switch:leaf1")
    assert leaf is not None and leaf.collected_at is None and leaf.location.endswith("switches/leaf1")
    assert snap.read_at.tzinfo is not None
    with pytest.raises(TypeError):
        snap.origins["host:x"] = origin  # type: ignore[index]
