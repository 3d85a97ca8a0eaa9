"""The parsed-record cache (unifab.collect.record_cache): a cached read is the uncached read, byte for byte, and
any change under it (a file edited with its mtime put back, added, removed; an entry corrupted; two writers)
is seen, never trusted."""

from __future__ import annotations

import multiprocessing
import os
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.collect.record_cache import (
    MARKER,
    RACY_NS,
    CacheDirError,
    CacheStats,
    DeviceKey,
    RecordCache,
    code_fingerprint,
    content_key,
    default_cache_dir,
    device_key,
)
from unifab.jsonify import dumps
from unifab.report.findings_json import document
from unifab.sources import MemorySource
from unifab.twin.generate import generate


def _devices(twin: Path) -> int:
    return sum(1 for top in ("hosts", "switches") for p in (twin / top).iterdir() if p.is_dir())


@pytest.fixture
def twin(tmp_path: Path) -> Path:
    """A small twin with misconfigurations and a broken file (so cached findings include INPUT-*)."""
    out = tmp_path / "twin"
    generate(out, 32, seed=5, scenarios=("pfc-mismatch", "ecn-off", "mtu-mismatch"))
    host = sorted((out / "hosts").iterdir())[1]
    (host / "cmd" / "uname-r.txt").write_bytes(b"\xff\xfe\x00")
    return out


def _cache(tmp_path: Path, racy_ns: int = 0) -> RecordCache:
    """A cache in the test's directory. ``racy_ns=0``: the twin's files were written a moment ago, and the
    racy rule (tested below with its real value) would otherwise refuse every entry."""
    opened = RecordCache.open(tmp_path / "cache")
    assert opened is not None
    return replace(opened, racy_ns=racy_ns)


def _text(bundle: Path, cache: RecordCache | None = None, stats: CacheStats | None = None, **kw: int) -> str:
    fabric = load_bundle(bundle, cache=cache, cache_stats=stats, **kw)  # type: ignore[arg-type]
    return dumps(document("twin", run_checks(fabric)))


def _entries(cache: RecordCache) -> list[Path]:
    return sorted(cache.directory.glob("??/*.rec"))


def test_a_cached_read_gives_byte_identical_findings_serial_and_pooled(twin: Path, tmp_path: Path) -> None:
    devices = _devices(twin)
    fresh = _text(twin, workers=1)
    cache = _cache(tmp_path)
    first, second, pooled = CacheStats(), CacheStats(), CacheStats()
    assert _text(twin, cache, first, workers=1) == fresh
    assert (first.stored, first.hits) == (devices, 0)
    assert _text(twin, cache, second, workers=1) == fresh
    assert (second.hits, second.stored, second.missed) == (devices, 0, 0)
    assert _text(twin, cache, pooled, workers=2, pool_min_devices=1) == fresh  # the workers look entries up
    assert pooled.hits == devices
    assert "INPUT-UNREADABLE" in fresh
    assert len(_entries(cache)) == devices


def test_the_pool_writes_entries_the_serial_read_uses(twin: Path, tmp_path: Path) -> None:
    devices = _devices(twin)
    cache = _cache(tmp_path)
    stored, hits = CacheStats(), CacheStats()
    pooled = load_bundle(twin, workers=2, pool_min_devices=1, cache=cache, cache_stats=stored)
    serial = load_bundle(twin, workers=1, cache=cache, cache_stats=hits)
    assert (stored.stored, hits.hits) == (devices, devices)
    fresh = load_bundle(twin, workers=1)
    for fabric in (pooled, serial):
        assert list(fabric.hosts) == list(fresh.hosts)
        assert fabric.hosts == fresh.hosts
        assert fabric.switches == fresh.switches
        assert fabric.links == fresh.links
        assert fabric.input_findings == fresh.input_findings


def _qos_file(twin: Path) -> Path:
    host = sorted((twin / "hosts").iterdir())[0]
    return sorted((host / "cmd" / "mlnx_qos").iterdir())[0]


def test_an_edit_with_the_mtime_put_back_is_caught(twin: Path, tmp_path: Path) -> None:
    devices = _devices(twin)
    cache = _cache(tmp_path)
    before = _text(twin, cache)
    target = _qos_file(twin)
    st = target.stat()
    size = st.st_size
    target.write_bytes(b"x" * size)  # same size, other content
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the mtime it had
    assert (target.stat().st_size, target.stat().st_mtime_ns) == (size, st.st_mtime_ns)
    stats = CacheStats()
    after = _text(twin, cache, stats)
    assert (stats.hits, stats.stored) == (devices - 1, 1)  # the ctime (set by the kernel) told the change
    assert after == _text(twin)
    assert after != before
    assert f"{target.relative_to(twin)}" in after


def test_a_file_added_or_removed_invalidates_its_device(twin: Path, tmp_path: Path) -> None:
    devices = _devices(twin)
    cache = _cache(tmp_path)
    _text(twin, cache)
    hosts = sorted((twin / "hosts").iterdir())
    (hosts[2] / "cmd" / "notes.txt").write_text("a file no reader reads still changes the device's key\n")
    _qos_file(twin).unlink()
    stats = CacheStats()
    assert _text(twin, cache, stats) == _text(twin)
    assert (stats.hits, stats.stored) == (devices - 2, 2)


def test_corrupt_truncated_and_foreign_entries_are_misses_and_replaced(twin: Path, tmp_path: Path) -> None:
    devices = _devices(twin)
    cache = _cache(tmp_path)
    fresh = _text(twin, cache)
    entries = _entries(cache)
    entries[0].write_bytes(entries[0].read_bytes()[:-100])  # truncated
    data = bytearray(entries[1].read_bytes())
    data[-50] ^= 0xFF  # one bit flipped in the payload: its hash says so
    entries[1].write_bytes(bytes(data))
    entries[2].write_bytes(b"not an entry at all")
    entries[3].write_bytes(b"")
    other = replace(cache, fingerprint="another unifab")  # another code version's entry
    key = device_key(str(twin), "hosts/" + sorted(p.name for p in (twin / "hosts").iterdir())[0])
    assert key is not None
    assert other.lookup("x", "x", "host", "hosts/x", key) is None
    stats = CacheStats()
    assert _text(twin, cache, stats) == fresh
    assert (stats.hits, stats.stored) == (devices - 4, 4)
    again = CacheStats()
    assert _text(twin, cache, again) == fresh
    assert again.hits == devices  # replaced by good entries


def test_entries_of_another_code_version_are_not_used(twin: Path, tmp_path: Path) -> None:
    devices = _devices(twin)
    cache = _cache(tmp_path)
    _text(twin, cache)
    stats = CacheStats()
    _text(twin, replace(cache, fingerprint="0" * 32), stats)
    assert (stats.hits, stats.stored) == (0, devices)
    assert len(_entries(cache)) == devices  # replaced in place, not added beside


def test_racy_entries_are_neither_written_nor_trusted(twin: Path, tmp_path: Path) -> None:
    devices = _devices(twin)
    racy = _cache(tmp_path, racy_ns=10**15)  # every file counts as changed "just now"
    stats = CacheStats()
    assert _text(twin, racy, stats) == _text(twin)
    assert (stats.stored, stats.missed) == (0, devices)
    assert _entries(racy) == []
    _text(twin, _cache(tmp_path))  # entries written without the rule ...
    read = CacheStats()
    _text(twin, racy, read)  # ... are not trusted by a cache that applies it
    assert read.hits == 0


def test_a_device_with_a_symbolic_link_is_not_cached(twin: Path, tmp_path: Path) -> None:
    devices = _devices(twin)
    cache = _cache(tmp_path)
    host = sorted((twin / "hosts").iterdir())[3]
    (host / "cmd" / "lsmod.txt").unlink()
    (host / "cmd" / "lsmod.txt").symlink_to("/etc/hostname")
    stats = CacheStats()
    assert _text(twin, cache, stats) == _text(twin)
    assert (stats.bypassed, stats.stored) == (1, devices - 1)
    assert device_key(str(twin), f"hosts/{host.name}") is None


def _source_text(source: MemorySource, cache: RecordCache | None = None, stats: CacheStats | None = None) -> str:
    return dumps(document("twin", run_checks(load_bundle(source, cache=cache, cache_stats=stats, workers=1))))


def test_a_bundle_in_memory_is_keyed_by_its_content(twin: Path, tmp_path: Path) -> None:
    """An upload, a tarball, the server's store: no stamps to trust, so each device is keyed by what it holds."""
    devices = _devices(twin)
    cache = _cache(tmp_path, racy_ns=RACY_NS)  # the real racy rule: content keys carry no time to race
    files = {p.relative_to(twin).as_posix(): p.read_bytes() for p in twin.rglob("*") if p.is_file()}
    plain = _source_text(MemorySource(files, "upload:twin"))
    first, second = CacheStats(), CacheStats()
    assert _source_text(MemorySource(files, "upload:twin"), cache, first) == plain
    assert first == CacheStats(stored=devices)
    assert _source_text(MemorySource(files, "upload:twin"), cache, second) == plain
    assert second == CacheStats(hits=devices)
    # a tarball of the same files under the same label: the same entries
    archive = tmp_path / "twin.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(twin, arcname="twin")
    tarred = CacheStats()
    assert _source_text(MemorySource.from_tar(archive.read_bytes(), "upload:twin"), cache, tarred) == plain
    assert tarred == CacheStats(hits=devices)
    # one file's bytes changed (same size), one file renamed, one empty file added: those devices only re-read
    qos = _qos_file(twin).relative_to(twin).as_posix()
    changed = dict(files)
    changed[qos] = b"x" * len(files[qos])
    hosts = sorted({rel.split("/")[1] for rel in files if rel.startswith("hosts/")})
    moved = next(rel for rel in sorted(files) if rel.startswith(f"hosts/{hosts[2]}/"))
    changed[f"{moved}.old"] = changed.pop(moved)
    changed[f"hosts/{hosts[3]}/cmd/notes.txt"] = b""
    edited, expected = CacheStats(), _source_text(MemorySource(changed, "upload:twin"))
    assert expected != plain and qos in expected
    assert _source_text(MemorySource(changed, "upload:twin"), cache, edited) == expected
    assert (edited.hits, edited.stored) == (devices - 3, 3)
    # another label is another bundle (messages name it): its own entries
    other = CacheStats()
    assert _source_text(MemorySource(files, "upload:other"), cache, other) == plain.replace(
        "upload:twin", "upload:other"
    )
    assert other == CacheStats(stored=devices)


def test_content_keys_see_names_kinds_and_bytes() -> None:
    base = {"hosts/h/a.txt": b"one", "hosts/h/sub/b.txt": b"two"}
    key = content_key(MemorySource(base), "hosts/h")
    assert key is not None and key.newest_ns == 0
    assert content_key(MemorySource(dict(base)), "hosts/h") == key
    variants = [
        {"hosts/h/a.txt": b"onE", "hosts/h/sub/b.txt": b"two"},  # a byte
        {"hosts/h/a.txt": b"one", "hosts/h/sub/c.txt": b"two"},  # a name
        {"hosts/h/a.txt": b"one", "hosts/h/sub/b.txt": b"two", "hosts/h/e": b""},  # an empty file more
        {"hosts/h/a.txt": b"one", "hosts/h/sub/b.txt/x": b"two"},  # a file become a directory
        {"hosts/h/a.txt": b"onetwo", "hosts/h/sub/b.txt": b""},  # bytes moved across the file boundary
    ]
    assert len({content_key(MemorySource(v), "hosts/h") for v in variants} | {key}) == len(variants) + 1
    assert content_key(MemorySource(base), "hosts/h/a.txt") is None  # a file is not a device directory
    assert content_key(MemorySource(base), "hosts/nowhere") is None


def _writer(directory: str, payload: bytes, rounds: int) -> None:
    opened = RecordCache.open(Path(directory))
    assert opened is not None
    cache = replace(opened, racy_ns=0)
    for _ in range(rounds):
        cache.store("/b", "b", "host", "hosts/h", DeviceKey("k", 1), payload)


def test_two_processes_writing_the_same_entry_leave_one_whole_entry(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    payloads = [bytes([n]) * 300_000 for n in (1, 2)]
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(cache.directory), p, 40)) for p in payloads]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
    assert [proc.exitcode for proc in procs] == [0, 0]
    assert cache.lookup("/b", "b", "host", "hosts/h", DeviceKey("k", 1)) in payloads
    assert cache.lookup("/b", "b", "host", "hosts/h", DeviceKey("other", 1)) is None
    assert [p.name for p in cache.directory.rglob(".tmp-*")] == []


def test_a_directory_that_is_not_the_caches_is_refused(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("not a cache\n")
    with pytest.raises(CacheDirError, match="not empty"):
        RecordCache.open(mine)
    assert sorted(p.name for p in mine.iterdir()) == ["thesis.tex"]
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(CacheDirError, match="writable by others"):
        RecordCache.open(shared)
    new = tmp_path / "a" / "b"
    assert RecordCache.open(new) is not None
    assert (new / MARKER).read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (new.stat().st_mode & 0o777) == 0o700


def test_eviction_keeps_the_bound_and_touches_only_its_own_files(twin: Path, tmp_path: Path) -> None:
    devices = _devices(twin)
    cache = _cache(tmp_path)
    _text(twin, cache)
    entries = _entries(cache)
    foreign = [cache.directory / "README", entries[0].parent / "keep.rec", entries[0].parent / ("f" * 30 + ".txt")]
    for path in foreign:
        path.write_text("not unifab's\n")
    oldest = entries[3]
    os.utime(oldest, ns=(1, 1))
    sizes = sum(p.stat().st_size for p in entries)
    small = replace(cache, max_bytes=sizes - 1)
    assert small.evict() == 1
    assert not oldest.exists()  # the least recently used went first
    assert all(path.exists() for path in foreign)
    assert (cache.directory / MARKER).exists()
    assert replace(cache, max_bytes=0).evict() == devices - 1
    assert all(path.exists() for path in foreign)


def test_the_fingerprint_and_the_default_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert code_fingerprint() == code_fingerprint() is not None
    monkeypatch.setenv("UNIFAB_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.setenv("UNIFAB_CACHE_DIR", "off")
    assert default_cache_dir() is None
    monkeypatch.delenv("UNIFAB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "unifab" / "records"
