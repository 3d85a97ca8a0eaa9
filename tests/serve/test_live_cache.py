"""``unifab serve`` restarting over its store reads each unchanged device from the parsed-record cache (keyed by
content: the store's parts are in memory), with the findings of a read without it; a device pushed since the
last load is read afresh."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from unifab.cli import app
from unifab.collect.record_cache import CacheStats, RecordCache
from unifab.jsonify import dumps
from unifab.report.findings_json import document
from unifab.serve.auth import Principal
from unifab.serve.service import Server, Settings
from unifab.twin.generate import generate

ADMIN = Principal("cli", "admin")


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    out = tmp_path / "bundle"
    generate(out, gpus=32, seed=4, scenarios=("pfc-mismatch", "mtu-mismatch"))
    return out


def _devices(bundle: Path) -> int:
    return sum(1 for top in ("hosts", "switches") for p in (bundle / top).iterdir() if p.is_dir())


def _findings(server: Server) -> str:
    return dumps(document("serve", server.live.findings()))


def _started(db: str, cache: RecordCache | None, bundle: Path | None = None) -> tuple[CacheStats | None, str]:
    """What one start-up of a server over ``db`` did with the cache, and the findings it then holds."""
    server = Server(Settings(db=db, bundle=bundle, cache=cache))
    try:
        return server.live.cache_stats, _findings(server)
    finally:
        server.close()


def test_a_restart_reads_unchanged_devices_from_the_cache(
    tmp_path: Path,
    bundle: Path,
    host_files: Callable[..., dict[str, bytes]],
    tar_of: Callable[..., bytes],
) -> None:
    cache = RecordCache.open(tmp_path / "cache")
    assert cache is not None
    db = str(tmp_path / "serve.db")
    devices = _devices(bundle)
    stats, expected = _started(db, cache, bundle)
    assert stats == CacheStats(stored=devices) and "QOS-PFC-MISMATCH" in expected
    assert _started(db, None) == (None, expected)  # what a read without the cache holds
    assert _started(db, cache) == (CacheStats(hits=devices), expected)
    # one host pushed with another MTU: the next start reads that host afresh, and holds what a plain read holds
    host = sorted(p.name for p in (bundle / "hosts").iterdir())[0]
    mtu = next((bundle / "hosts" / host / "sys" / "class" / "net").glob("*/mtu"))
    server = Server(Settings(db=db))
    try:
        rel = mtu.relative_to(bundle / "hosts" / host).as_posix()
        created, _ = server.ingest(tar_of(host_files(bundle, host, {rel: b"1500\n"})), None, ADMIN)
        assert created
    finally:
        server.close()
    _, changed = _started(db, None)
    assert changed != expected
    assert _started(db, cache) == (CacheStats(hits=devices - 1, stored=1), changed)


def test_serve_help_names_the_cache_options() -> None:
    result = CliRunner().invoke(app, ["serve", "--help"])
    assert result.exit_code == 0 and "--cache" in result.stdout and "--no-cache" in result.stdout
