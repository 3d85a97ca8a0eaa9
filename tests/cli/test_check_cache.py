"""``unifab check --cache DIR`` / ``--no-cache``: the same findings, the directory only where asked or needed."""

from __future__ import annotations

import io
import json
import shutil
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from unifab.cli import app
from unifab.cli.watch import watch
from unifab.collect.record_cache import MARKER, RACY_NS, CacheStats, RecordCache
from unifab.session.incremental import Session
from unifab.twin.generate import generate

runner = CliRunner()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small twin whose files are older than the cache's racy window (so its entries can be written)."""
    out = tmp_path_factory.mktemp("cache") / "b"
    generate(out, 32, seed=2, scenarios=("pfc-mismatch",))
    time.sleep(RACY_NS / 1e9 + 0.1)
    return out


def _check(bundle: Path, *extra: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["check", str(bundle), "--format", "json", "-q", *extra])
    return result.exit_code, result.stdout, result.stderr


def test_cache_gives_the_same_findings_and_fills_its_directory(bundle: Path, tmp_path: Path) -> None:
    cache = tmp_path / "records"
    plain = _check(bundle, "--no-cache")
    first = _check(bundle, "--cache", str(cache))
    assert (cache / MARKER).is_file()
    entries = sorted(cache.glob("??/*.rec"))
    assert len(entries) == sum(1 for top in ("hosts", "switches") for _ in (bundle / top).iterdir())
    stamps = [p.stat().st_mtime_ns for p in entries]
    second = _check(bundle, "--cache", str(cache))
    assert plain == first == second
    assert plain[0] == 1 and '"QOS-PFC-MISMATCH"' in plain[1]
    assert sorted(cache.glob("??/*.rec")) == entries
    assert [p.stat().st_mtime_ns for p in entries] != stamps  # read (and marked used), not rewritten elsewhere


def test_default_cache_is_off_for_a_small_bundle(bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNIFAB_CACHE_DIR", str(tmp_path / "default"))
    assert _check(bundle)[0] == 1
    assert not (tmp_path / "default").exists()


def test_cache_and_no_cache_and_a_foreign_directory_are_usage_errors(bundle: Path, tmp_path: Path) -> None:
    code, _, err = _check(bundle, "--cache", str(tmp_path / "c"), "--no-cache")
    assert code == 2 and "--cache and --no-cache do not combine" in err
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "cat.jpg").write_bytes(b"\xff\xd8")
    code, _, err = _check(bundle, "--cache", str(foreign))
    assert code == 2 and f"--cache {foreign}" in err and "CACHEDIR.TAG" in err
    assert sorted(p.name for p in foreign.iterdir()) == ["cat.jpg"]
    code, _, err = _check(bundle, "--watch", "--cache", str(foreign))
    assert code == 2 and f"--cache {foreign}" in err  # --watch takes the cache too, judged the same way


def test_watch_starts_from_the_cache_and_still_sees_a_change(bundle: Path, tmp_path: Path) -> None:
    """The session's first load reads through the cache (every device a hit the second time, the same findings as
    without it); a file changed afterwards is re-read by the session itself, never taken from the cache."""
    cache = RecordCache.open(tmp_path / "records")
    assert cache is not None
    devices = sum(1 for top in ("hosts", "switches") for _ in (bundle / top).iterdir())
    first, second = CacheStats(), CacheStats()
    plain = Session(bundle)
    Session(bundle, cache=cache, cache_stats=first)
    cached = Session(bundle, cache=cache, cache_stats=second)
    assert (first.stored, second.hits) == (devices, devices)
    assert cached.findings == plain.findings
    work = tmp_path / "b"
    shutil.copytree(bundle, work)
    out = io.StringIO()
    qos = sorted((work / "hosts").glob("*/cmd/mlnx_qos/*.txt"))[0]

    def edit(_seconds: float) -> None:
        qos.write_text(qos.read_text().replace("trust state: dscp", "trust state: pcp"))

    assert watch(work, "json", interval_s=0, iterations=1, out=out, sleep=edit, cache=cache) == 0
    changes = [json.loads(line) for line in out.getvalue().splitlines()]
    assert any(f["check"] == "QOS-TRUST" for c in changes for f in c["added"]), changes
